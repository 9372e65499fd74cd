/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Kernel command line splitting, root= mapping and boot parameters. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "boot/boot.h"

/* The value of @key, "<bare>" for a flag, "<absent>" when missing. */
static char *get(const char *cmdline, const char *key)
{
	char *v = NULL;

	if (!ap_cmdline_get(cmdline, key, &v)) {
		assert_null(v);
		return strdup("<absent>");
	}
	return v ? v : strdup("<bare>");
}

#define assert_get(cmdline, key, expect) do { \
		char *_v = get(cmdline, key); \
		assert_string_equal(_v, expect); \
		free(_v); \
	} while (0)

static void test_get_basic(void **state)
{
	assert_get("root=/dev/sda1 ro quiet", "root", "/dev/sda1");
	assert_get("root=/dev/sda1 ro quiet", "ro", "<bare>");
	assert_get("root=/dev/sda1 ro quiet", "quiet", "<bare>");
	assert_get("root=/dev/sda1 ro quiet", "rw", "<absent>");
	assert_get("", "root", "<absent>");
	assert_get("   \t\n ", "root", "<absent>");
	assert_get(NULL, "root", "<absent>");
	/* a prefix is not a match, in either direction */
	assert_get("rootwait rootfstype=ext4", "root", "<absent>");
	assert_get("root=x", "rootwait", "<absent>");
	assert_get("root=x", "roo", "<absent>");
	/* an empty value is a value, not a bare flag */
	assert_get("init= x", "init", "");
	/* everything after the first '=' is the value */
	assert_get("root=UUID=1234=5", "root", "UUID=1234=5");
	/* a word starting with '=' has no key the kernel would match */
	assert_get("=foo", "", "<absent>");
	/* NULL ret_value still reports presence */
	assert_true(ap_cmdline_get("a=1 b", "a", NULL));
	assert_true(ap_cmdline_get("a=1 b", "b", NULL));
	assert_false(ap_cmdline_get("a=1 b", "c", NULL));
}

static void test_get_whitespace(void **state)
{
	assert_get("\troot=a\n\nrw\r\v\finit=/bin/sh\n", "root", "a");
	assert_get("\troot=a\n\nrw\r\v\finit=/bin/sh\n", "rw", "<bare>");
	assert_get("\troot=a\n\nrw\r\v\finit=/bin/sh\n", "init", "/bin/sh");
}

static void test_get_last_wins(void **state)
{
	assert_get("root=/dev/sda1 root=/dev/sdb2", "root", "/dev/sdb2");
	assert_get("panic=5 x panic=10 y panic=-1", "panic", "-1");
	/* a later bare flag replaces an earlier value */
	assert_get("asyncprobe.trace=0 asyncprobe.trace", "asyncprobe.trace", "<bare>");
	assert_get("asyncprobe.trace asyncprobe.trace=0", "asyncprobe.trace", "0");
}

static void test_get_dash_underscore(void **state)
{
	assert_get("asyncprobe.root-timeout=5", "asyncprobe.root_timeout", "5");
	assert_get("asyncprobe.root_timeout=5", "asyncprobe.root-timeout", "5");
	assert_get("modprobe-blacklist=x", "modprobe.blacklist", "<absent>");
}

static void test_get_quotes(void **state)
{
	/* a quoted value: quotes removed, spaces kept */
	assert_get("root=\"LABEL=my root\" ro", "root", "LABEL=my root");
	assert_get("root=\"LABEL=my root\" ro", "ro", "<bare>");
	/* the whole word quoted */
	assert_get("\"root=LABEL=my root\" rw", "root", "LABEL=my root");
	assert_get("\"root=LABEL=my root\" rw", "rw", "<bare>");
	/* quotes inside a word group but stay */
	assert_get("x=a\"b c\"d y", "x", "a\"b c\"d");
	assert_get("x=a\"b c\"d y", "y", "<bare>");
	/* an unterminated quote runs to the end of the line */
	assert_get("root=\"abc def", "root", "abc def");
	assert_get("root=\"abc def", "def", "<absent>");
	/* an empty quoted value */
	assert_get("init=\"\" x", "init", "");
	assert_get("init=\" x", "init", " x");
	assert_get("init=\"", "init", "");
	/* a quoted bare flag */
	assert_get("\"rootwait\"", "rootwait", "<bare>");
	/* a quote alone */
	assert_get("\" root=1", "root", "<absent>");
	assert_get("\"\" root=1", "root", "1");
}

static void test_get_double_dash(void **state)
{
	assert_get("root=/dev/sda1 -- root=/dev/sdb1 single", "root", "/dev/sda1");
	assert_get("root=/dev/sda1 -- single", "single", "<absent>");
	assert_get("--", "root", "<absent>");
	/* "--x" or "--=1" do not end anything */
	assert_get("--x root=1", "root", "1");
	assert_get("--=1 root=1", "root", "1");
}

static void test_get_long(void **state)
{
	size_t n = 200000, i;
	char *line = malloc(n * 16 + 64), *p = line, *big, *v;

	assert_non_null(line);
	for (i = 0; i < n; i++)
		p += sprintf(p, "k%zu=%zu ", i % 1000, i);
	strcpy(p, "root=/dev/vda1");
	assert_get(line, "root", "/dev/vda1");
	assert_get(line, "k999", "199999");
	assert_get(line, "k0", "199000");
	free(line);

	/* one value of a megabyte */
	big = malloc(1 << 20);
	assert_non_null(big);
	memcpy(big, "label=", 6);
	memset(big + 6, 'x', (1 << 20) - 7);
	big[(1 << 20) - 1] = '\0';
	assert_true(ap_cmdline_get(big, "label", &v));
	assert_int_equal(strlen(v), (1 << 20) - 7);
	free(v);
	free(big);
}

static void test_get_garbage(void **state)
{
	unsigned char line[512];
	unsigned int seed = 1;
	int round, i;

	/* bytes of any value: no crash, and a key planted at the end is found */
	for (round = 0; round < 2000; round++) {
		char *v = NULL;

		for (i = 0; i < 400; i++) {
			seed = seed * 1103515245u + 12345u;
			line[i] = (unsigned char)(seed >> 16);
			if (line[i] == 0 || line[i] == '"')
				line[i] = 'a';
		}
		memcpy(line + 400, " zz=ok", 7);
		assert_true(ap_cmdline_get((char *)line, "zz", &v));
		assert_string_equal(v, "ok");
		free(v);
	}
}

static void write_file(const char *path, const char *s, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(s, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void test_read(void **state)
{
	char path[] = "/tmp/test-cmdline-XXXXXX";
	char *s = NULL, *big;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	setenv("ASYNCPROBE_CMDLINE", path, 1);

	write_file(path, "root=/dev/sda1 ro\n", 18);
	assert_int_equal(ap_cmdline_read(&s), 0);
	assert_string_equal(s, "root=/dev/sda1 ro");
	free(s);

	write_file(path, "", 0);
	assert_int_equal(ap_cmdline_read(&s), 0);
	assert_string_equal(s, "");
	free(s);

	/* longer than one read buffer */
	big = malloc(100001);
	memset(big, 'a', 100000);
	big[0] = 'x';
	big[1] = '=';
	write_file(path, big, 100000);
	assert_int_equal(ap_cmdline_read(&s), 0);
	assert_int_equal(strlen(s), 100000);
	free(s);
	free(big);

	unlink(path);
	assert_int_equal(ap_cmdline_read(&s), -ENOENT);
	unsetenv("ASYNCPROBE_CMDLINE");
}

/* root= -> path below /dev, or the error. */
static void check_root(const char *spec, int expect_parse, enum ap_root_kind kind,
		       int expect_path, const char *path)
{
	struct ap_root_spec r = { 0 };
	char *err = NULL, *p = NULL;
	int ret;

	ret = ap_root_spec_parse(spec, &r, &err);
	if (ret != expect_parse)
		fail_msg("root=%s: parse returned %d, expected %d", spec, ret, expect_parse);
	if (ret < 0) {
		/* every rejection says why, naming what it got */
		assert_non_null(err);
		assert_non_null(strstr(err, "root="));
		free(err);
		return;
	}
	assert_null(err);
	assert_int_equal(r.kind, kind);
	ret = ap_root_spec_devpath(&r, &p);
	if (ret != expect_path)
		fail_msg("root=%s: devpath returned %d, expected %d", spec, ret, expect_path);
	if (ret == 0) {
		assert_string_equal(p, path);
		free(p);
	}
	ap_root_spec_clear(&r);
}

static void test_root_tags(void **state)
{
	check_root("UUID=2b5c9d8e-3f0a-4c1b-9e7d-6a5b4c3d2e1f", 0, AP_ROOT_UUID, 0,
		   "disk/by-uuid/2b5c9d8e-3f0a-4c1b-9e7d-6a5b4c3d2e1f");
	/* case as given: vfat's UUIDs are upper case in their links */
	check_root("UUID=ABCD-1234", 0, AP_ROOT_UUID, 0, "disk/by-uuid/ABCD-1234");
	check_root("UUID=\"ABCD-1234\"", 0, AP_ROOT_UUID, 0, "disk/by-uuid/ABCD-1234");
	check_root("LABEL=root", 0, AP_ROOT_LABEL, 0, "disk/by-label/root");
	check_root("LABEL=my root", 0, AP_ROOT_LABEL, 0, "disk/by-label/my\\x20root");
	check_root("LABEL=a/b", 0, AP_ROOT_LABEL, 0, "disk/by-label/a\\x2fb");
	check_root("LABEL=a\\b", 0, AP_ROOT_LABEL, 0, "disk/by-label/a\\x5cb");
	check_root("LABEL=#+-.:=@_", 0, AP_ROOT_LABEL, 0, "disk/by-label/#+-.:=@_");
	check_root("LABEL=a$b*c", 0, AP_ROOT_LABEL, 0, "disk/by-label/a\\x24b\\x2ac");
	/* valid UTF-8 stays, invalid bytes are escaped */
	check_root("LABEL=d\xc3\xa9j\xc3\xa0", 0, AP_ROOT_LABEL, 0, "disk/by-label/d\xc3\xa9j\xc3\xa0");
	check_root("LABEL=a\xff", 0, AP_ROOT_LABEL, 0, "disk/by-label/a\\xff");
	check_root("LABEL=tab\there", 0, AP_ROOT_LABEL, 0, "disk/by-label/tab\\x09here");
	/* names that cannot be a link */
	check_root("LABEL=..", 0, AP_ROOT_LABEL, -EINVAL, NULL);
	check_root("LABEL=.", 0, AP_ROOT_LABEL, -EINVAL, NULL);
	check_root("LABEL=...", 0, AP_ROOT_LABEL, 0, "disk/by-label/...");
	check_root("LABEL=", -EINVAL, 0, 0, NULL);
	check_root("LABEL=\"\"", -EINVAL, 0, 0, NULL);
	check_root("UUID=", -EINVAL, 0, 0, NULL);
	/* tags are upper case, as in the kernel and blkid */
	check_root("uuid=1234", -EINVAL, 0, 0, NULL);
	check_root("label=x", -EINVAL, 0, 0, NULL);

	check_root("PARTUUID=5E2AB0C3-01", 0, AP_ROOT_PARTUUID, 0, "disk/by-partuuid/5e2ab0c3-01");
	check_root("PARTUUID=0fc63daf-8483-4772-8e79-3d69d8477de4", 0, AP_ROOT_PARTUUID, 0,
		   "disk/by-partuuid/0fc63daf-8483-4772-8e79-3d69d8477de4");
	check_root("PARTUUID=../../x", -EINVAL, 0, 0, NULL);
	check_root("PARTUUID=5e2ab0c3-01/PARTNROFF=1", -EOPNOTSUPP, 0, 0, NULL);
	check_root("PARTLABEL=EFI System Partition", 0, AP_ROOT_PARTLABEL, 0,
		   "disk/by-partlabel/EFI\\x20System\\x20Partition");
	check_root("PARTLABEL=rootfs", 0, AP_ROOT_PARTLABEL, 0, "disk/by-partlabel/rootfs");
}

static void test_root_long_label_real(void **state)
{
	char spec[1100] = "LABEL=", expect[300] = "disk/by-label/";
	struct ap_root_spec r = { 0 };
	char *p = NULL;

	/* 255 bytes is the longest file name */
	memset(spec + 6, 'a', 255);
	spec[6 + 255] = '\0';
	memset(expect + 14, 'a', 255);
	expect[14 + 255] = '\0';
	assert_int_equal(ap_root_spec_parse(spec, &r, NULL), 0);
	assert_int_equal(ap_root_spec_devpath(&r, &p), 0);
	assert_string_equal(p, expect);
	free(p);
	ap_root_spec_clear(&r);

	/* one more is not a name */
	memset(spec + 6, 'a', 256);
	spec[6 + 256] = '\0';
	assert_int_equal(ap_root_spec_parse(spec, &r, NULL), 0);
	assert_int_equal(ap_root_spec_devpath(&r, &p), -EINVAL);
	ap_root_spec_clear(&r);

	/* 100 spaces encode to 400 bytes: too long as well */
	memset(spec + 6, ' ', 100);
	spec[6 + 100] = '\0';
	assert_int_equal(ap_root_spec_parse(spec, &r, NULL), 0);
	assert_int_equal(ap_root_spec_devpath(&r, &p), -EINVAL);
	ap_root_spec_clear(&r);
}

static void test_root_paths(void **state)
{
	check_root("/dev/sda1", 0, AP_ROOT_PATH, 0, "sda1");
	check_root("/dev/nvme0n1p2", 0, AP_ROOT_PATH, 0, "nvme0n1p2");
	check_root("/dev/disk/by-uuid/1234", 0, AP_ROOT_PATH, 0, "disk/by-uuid/1234");
	check_root("/dev//disk/./by-label/x/", 0, AP_ROOT_PATH, 0, "disk/by-label/x");
	check_root("/dev/../etc/passwd", -EINVAL, 0, 0, NULL);
	check_root("/dev/disk/../../x", -EINVAL, 0, 0, NULL);
	check_root("/dev/", -EINVAL, 0, 0, NULL);
	check_root("/dev//", -EINVAL, 0, 0, NULL);
	check_root("/dev/nfs", -EOPNOTSUPP, 0, 0, NULL);
	check_root("/dev", -EINVAL, 0, 0, NULL);
	check_root("/sda1", -EINVAL, 0, 0, NULL);
	check_root("sda1", -EINVAL, 0, 0, NULL);
}

/*
 * Devices userspace assembles (device-mapper, md) are refused with a
 * message that says what to use instead; names that only look alike are
 * ordinary paths.
 */
static void check_stacked(const char *spec, const char *what)
{
	struct ap_root_spec r = { 0 };
	char *err = NULL;

	assert_int_equal(ap_root_spec_parse(spec, &r, &err), -EOPNOTSUPP);
	assert_true(ap_root_is_stacked(spec));
	assert_non_null(err);
	if (!strstr(err, spec) || !strstr(err, what) || !strstr(err, "initramfs-tools") ||
	    !strstr(err, "dracut"))
		fail_msg("root=%s: the message does not name it, %s and what to use: %s", spec,
			 what, err);
	free(err);
}

static void test_root_stacked(void **state)
{
	check_stacked("/dev/mapper/vg-root", "device-mapper");
	check_stacked("/dev//mapper/./debian--vg-root", "device-mapper");
	check_stacked("/dev/mapper/luks-0d6b1f0e", "device-mapper");
	check_stacked("/dev/dm-0", "device-mapper");
	check_stacked("/dev/dm-12", "device-mapper");
	check_stacked("/dev/md0", "md RAID");
	check_stacked("/dev/md127", "md RAID");
	check_stacked("/dev/md/root", "md RAID");
	/* not stacked */
	check_root("/dev/mapper", 0, AP_ROOT_PATH, 0, "mapper");
	check_root("/dev/dm-", 0, AP_ROOT_PATH, 0, "dm-");
	check_root("/dev/dm-0x", 0, AP_ROOT_PATH, 0, "dm-0x");
	check_root("/dev/mdx", 0, AP_ROOT_PATH, 0, "mdx");
	check_root("/dev/disk/by-id/dm-name-vg-root", 0, AP_ROOT_PATH, 0,
		   "disk/by-id/dm-name-vg-root");
	assert_false(ap_root_is_stacked("/dev/sda1"));
	assert_false(ap_root_is_stacked("UUID=1234"));
	assert_false(ap_root_is_stacked("mapper/vg-root"));
	assert_false(ap_root_is_stacked(NULL));
	(void)state;
}

static void test_root_devnum(void **state)
{
	check_root("8:1", 0, AP_ROOT_DEVNUM, 0, "block/8:1");
	check_root("259:12", 0, AP_ROOT_DEVNUM, 0, "block/259:12");
	/* the old hexadecimal form: 0x801 is 8:1, 0xfe01 is 254:1 */
	check_root("801", 0, AP_ROOT_DEVNUM, 0, "block/8:1");
	check_root("fe01", 0, AP_ROOT_DEVNUM, 0, "block/254:1");
	check_root("8:", -EINVAL, 0, 0, NULL);
	check_root(":1", -EINVAL, 0, 0, NULL);
	check_root("8:1x", -EINVAL, 0, 0, NULL);
	check_root("-8:1", -EINVAL, 0, 0, NULL);
	check_root("8:-1", -EINVAL, 0, 0, NULL);
	check_root("99999:1", -EINVAL, 0, 0, NULL);
	check_root("xyz", -EINVAL, 0, 0, NULL);
	check_root("", -EINVAL, 0, 0, NULL);
	check_root("  ", -EINVAL, 0, 0, NULL);
}

static void test_seconds(void **state)
{
	unsigned int ms = 7;

	assert_int_equal(ap_parse_seconds_ms("0", &ms), 0);
	assert_int_equal(ms, 0);
	assert_int_equal(ap_parse_seconds_ms("30", &ms), 0);
	assert_int_equal(ms, 30000);
	assert_int_equal(ap_parse_seconds_ms("1.5", &ms), 0);
	assert_int_equal(ms, 1500);
	assert_int_equal(ap_parse_seconds_ms("0.25", &ms), 0);
	assert_int_equal(ms, 250);
	assert_int_equal(ap_parse_seconds_ms("2.0001", &ms), 0);
	assert_int_equal(ms, 2000);
	assert_int_equal(ap_parse_seconds_ms("1.", &ms), -EINVAL);
	assert_int_equal(ap_parse_seconds_ms(".5", &ms), -EINVAL);
	assert_int_equal(ap_parse_seconds_ms("-1", &ms), -EINVAL);
	assert_int_equal(ap_parse_seconds_ms("1e3", &ms), -EINVAL);
	assert_int_equal(ap_parse_seconds_ms("", &ms), -EINVAL);
	assert_int_equal(ap_parse_seconds_ms(NULL, &ms), -EINVAL);
	assert_int_equal(ap_parse_seconds_ms("99999999999", &ms), -ERANGE);
	assert_int_equal(ap_parse_seconds_ms("4294967", &ms), 0);
	assert_int_equal(ms, 4294967000u);
}

static void test_bootparams_defaults(void **state)
{
	struct ap_bootparams p;

	assert_int_equal(ap_bootparams_parse("", &p), 0);
	assert_null(p.root);
	assert_int_equal(p.root_spec.kind, AP_ROOT_NONE);
	assert_false(p.read_write);
	assert_false(p.rootwait);
	assert_false(p.panic_set);
	assert_int_equal(p.fastboot, -1);
	assert_int_equal(p.timeout_ms, -1);
	assert_int_equal(p.root_timeout_ms, AP_BOOT_ROOT_TIMEOUT_MS_DEFAULT);
	assert_int_equal(p.trace, -1);
	assert_int_equal(p.threads, -1);
	assert_int_equal(p.verbose, -1);
	assert_int_equal(p.shell, -1);
	assert_int_equal(p.n_blacklist, 0);
	assert_int_equal(p.n_modules, 0);
	assert_int_equal(p.n_invalid, 0);
	ap_bootparams_clear(&p);
}

static void test_bootparams_full(void **state)
{
	struct ap_bootparams p;

	assert_int_equal(ap_bootparams_parse(
		"BOOT_IMAGE=/vmlinuz root=/dev/sda9 console=ttyS0 root=UUID=abcd-ef rootfstype=ext4,xfs "
		"rootflags=noatime,data=ordered rw init=/lib/systemd/systemd rootwait rootdelay=3 "
		"panic=10 modprobe.blacklist=ahci,nvme modprobe.blacklist=uas quiet fastboot "
		"asyncprobe.timeout=2.5 asyncprobe.root-timeout=60 asyncprobe.trace=0 "
		"asyncprobe.threads=4 asyncprobe.debug asyncprobe.shell=no "
		"asyncprobe.modules=scsi_debug,,loop rd.driver.pre=dm_mod scsi_debug.num_tgts=4 "
		"-- ro single asyncprobe.modules=nope", &p), 0);
	assert_string_equal(p.root, "UUID=abcd-ef");
	assert_int_equal(p.root_spec.kind, AP_ROOT_UUID);
	assert_string_equal(p.root_spec.value, "abcd-ef");
	assert_int_equal(p.root_error, 0);
	assert_string_equal(p.rootfstype, "ext4,xfs");
	assert_string_equal(p.rootflags, "noatime,data=ordered");
	assert_true(p.read_write);      /* the "ro" after "--" is init's */
	assert_string_equal(p.init, "/lib/systemd/systemd");
	assert_true(p.rootwait);
	assert_int_equal(p.rootwait_ms, 0);
	assert_int_equal(p.rootdelay_s, 3);
	assert_true(p.panic_set);
	assert_int_equal(p.panic_s, 10);
	assert_int_equal(p.n_blacklist, 3);
	assert_string_equal(p.blacklist[0], "ahci");
	assert_string_equal(p.blacklist[1], "nvme");
	assert_string_equal(p.blacklist[2], "uas");
	assert_int_equal(p.n_modules, 3);       /* in order, empty names dropped */
	assert_string_equal(p.modules[0], "scsi_debug");
	assert_string_equal(p.modules[1], "loop");
	assert_string_equal(p.modules[2], "dm_mod");
	assert_true(p.quiet);
	assert_int_equal(p.fastboot, 1);
	assert_int_equal(p.timeout_ms, 2500);
	assert_int_equal(p.root_timeout_ms, 60000);
	assert_int_equal(p.trace, 0);
	assert_int_equal(p.threads, 4);
	assert_int_equal(p.verbose, 2);
	assert_int_equal(p.shell, 0);
	assert_int_equal(p.n_invalid, 0);
	ap_bootparams_clear(&p);
}

static void test_bootparams_udev_rules(void **state)
{
	struct ap_bootparams p;

	assert_int_equal(ap_bootparams_parse("root=/dev/vda1", &p), 0);
	assert_int_equal(p.udev_rules, -1);
	ap_bootparams_clear(&p);
	assert_int_equal(ap_bootparams_parse("asyncprobe.udev_rules=0", &p), 0);
	assert_int_equal(p.udev_rules, 0);
	assert_int_equal(p.n_invalid, 0);
	ap_bootparams_clear(&p);
	assert_int_equal(ap_bootparams_parse("asyncprobe.udev-rules=0 asyncprobe.udev_rules=1", &p), 0);
	assert_int_equal(p.udev_rules, 1);
	ap_bootparams_clear(&p);
	assert_int_equal(ap_bootparams_parse("asyncprobe.udev_rules=/run/x", &p), 0);
	assert_int_equal(p.udev_rules, -1);
	assert_int_equal(p.n_invalid, 1);
	ap_bootparams_clear(&p);
}

static void test_bootparams_wait_all(void **state)
{
	struct ap_bootparams p;

	assert_int_equal(ap_bootparams_parse("root=/dev/vda1", &p), 0);
	assert_int_equal(p.wait_all, -1);
	ap_bootparams_clear(&p);
	assert_int_equal(ap_bootparams_parse("asyncprobe.wait_all=1", &p), 0);
	assert_int_equal(p.wait_all, 1);
	assert_int_equal(p.n_invalid, 0);
	ap_bootparams_clear(&p);
	assert_int_equal(ap_bootparams_parse("asyncprobe.wait_all=1 asyncprobe.wait-all=0", &p), 0);
	assert_int_equal(p.wait_all, 0);
	ap_bootparams_clear(&p);
	assert_int_equal(ap_bootparams_parse("asyncprobe.wait_all=root", &p), 0);
	assert_int_equal(p.wait_all, -1);
	assert_int_equal(p.n_invalid, 1);
	ap_bootparams_clear(&p);
}

/* asyncprobe.enable=0 turns --init outside PID 1 off, in every false spelling */
static void test_bootparams_enable(void **state)
{
	static const char *const off[] = {
		"asyncprobe.enable=0", "asyncprobe.enable=no", "asyncprobe.enable=off",
		"asyncprobe.enable=false", "asyncprobe.enable=n", "asyncprobe.enable=OFF",
		"asyncprobe.enable=False", "root=/dev/vda1 \"asyncprobe.enable=0\" quiet",
		"asyncprobe.enable=1 asyncprobe.enable=0",
	};
	static const char *const on[] = {
		"", "root=/dev/vda1", "asyncprobe.enable", "asyncprobe.enable=1",
		"asyncprobe.enable=yes", "asyncprobe.enable=0 asyncprobe.enable=on",
		"asyncprobe.enable=maybe", "asyncprobe.enable_x=0", "enable=0",
		"-- asyncprobe.enable=0",
	};
	struct ap_bootparams p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
		if (!ap_cmdline_disabled(off[i]))
			fail_msg("\"%s\" should turn asyncprobe off", off[i]);
		assert_int_equal(ap_bootparams_parse(off[i], &p), 0);
		assert_int_equal(p.enable, 0);
		assert_int_equal(p.n_invalid, 0);
		ap_bootparams_clear(&p);
	}
	for (i = 0; i < sizeof(on) / sizeof(on[0]); i++)
		if (ap_cmdline_disabled(on[i]))
			fail_msg("\"%s\" should leave asyncprobe on", on[i]);
	assert_false(ap_cmdline_disabled(NULL));

	assert_int_equal(ap_bootparams_parse("root=/dev/vda1", &p), 0);
	assert_int_equal(p.enable, -1);
	ap_bootparams_clear(&p);
	assert_int_equal(ap_bootparams_parse("asyncprobe.enable", &p), 0);
	assert_int_equal(p.enable, 1);
	assert_int_equal(p.n_invalid, 0);
	ap_bootparams_clear(&p);
	/* a known option, not "unknown option asyncprobe.enable"; a bad value is one */
	assert_int_equal(ap_bootparams_parse("asyncprobe.enable=maybe", &p), 0);
	assert_int_equal(p.enable, -1);
	assert_int_equal(p.n_invalid, 1);
	ap_bootparams_clear(&p);
}

static void test_bootparams_order(void **state)
{
	struct ap_bootparams p;

	assert_int_equal(ap_bootparams_parse("rw ro fastboot asyncprobe.fastboot=0 rootwait=5 "
					     "asyncprobe.verbose=1 panic=-1", &p), 0);
	assert_false(p.read_write);
	assert_int_equal(p.fastboot, 0);
	assert_true(p.rootwait);
	assert_int_equal(p.rootwait_ms, 5000);
	assert_int_equal(p.verbose, 1);
	assert_int_equal(p.panic_s, -1);
	ap_bootparams_clear(&p);

	assert_int_equal(ap_bootparams_parse("asyncprobe.fastboot=0 fastboot", &p), 0);
	assert_int_equal(p.fastboot, 1);
	ap_bootparams_clear(&p);
}

static void test_bootparams_invalid(void **state)
{
	struct ap_bootparams p;

	/* bad values are counted and ignored, the rest still counts */
	assert_int_equal(ap_bootparams_parse("panic=soon rootdelay=-3 asyncprobe.timeout=x "
					     "asyncprobe.threads=99999 asyncprobe.verbose=7 "
					     "asyncprobe.trace=maybe asyncprobe.bogus=1 "
					     "asyncprobe.root_timeout=1h rootwait=never "
					     "root=PARTUUID=1234abcd-01/PARTNROFF=2 rootdelay=2", &p), 0);
	assert_false(p.panic_set);
	assert_int_equal(p.rootdelay_s, 2);
	assert_int_equal(p.timeout_ms, -1);
	assert_int_equal(p.threads, -1);
	assert_int_equal(p.verbose, -1);
	assert_int_equal(p.trace, -1);
	assert_int_equal(p.root_timeout_ms, AP_BOOT_ROOT_TIMEOUT_MS_DEFAULT);
	assert_true(p.rootwait);
	assert_int_equal(p.rootwait_ms, 0);
	assert_int_equal(p.n_invalid, 9);
	assert_string_equal(p.root, "PARTUUID=1234abcd-01/PARTNROFF=2");
	assert_int_equal(p.root_error, -EOPNOTSUPP);
	assert_non_null(strstr(p.root_error_msg, "PARTNROFF"));
	ap_bootparams_clear(&p);

	/* a later good root= clears the error of an earlier one */
	assert_int_equal(ap_bootparams_parse("root=garbage root=LABEL=ok", &p), 0);
	assert_int_equal(p.root_error, 0);
	assert_null(p.root_error_msg);
	assert_int_equal(p.root_spec.kind, AP_ROOT_LABEL);
	ap_bootparams_clear(&p);

	/* and the other way round */
	assert_int_equal(ap_bootparams_parse("root=LABEL=ok root=garbage", &p), 0);
	assert_int_equal(p.root_error, -EINVAL);
	assert_int_equal(p.root_spec.kind, AP_ROOT_NONE);
	ap_bootparams_clear(&p);

	/* bare root, bare rootfstype: nothing */
	assert_int_equal(ap_bootparams_parse("root rootfstype init ro=1", &p), 0);
	assert_null(p.root);
	assert_null(p.rootfstype);
	assert_null(p.init);
	ap_bootparams_clear(&p);
}

static void test_bootparams_quoted_root(void **state)
{
	struct ap_bootparams p;
	char *path = NULL;

	assert_int_equal(ap_bootparams_parse("root=\"LABEL=Debian Root\" ro", &p), 0);
	assert_int_equal(p.root_spec.kind, AP_ROOT_LABEL);
	assert_int_equal(ap_root_spec_devpath(&p.root_spec, &path), 0);
	assert_string_equal(path, "disk/by-label/Debian\\x20Root");
	free(path);
	ap_bootparams_clear(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_basic),
		cmocka_unit_test(test_get_whitespace),
		cmocka_unit_test(test_get_last_wins),
		cmocka_unit_test(test_get_dash_underscore),
		cmocka_unit_test(test_get_quotes),
		cmocka_unit_test(test_get_double_dash),
		cmocka_unit_test(test_get_long),
		cmocka_unit_test(test_get_garbage),
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_root_tags),
		cmocka_unit_test(test_root_long_label_real),
		cmocka_unit_test(test_root_paths),
		cmocka_unit_test(test_root_stacked),
		cmocka_unit_test(test_root_devnum),
		cmocka_unit_test(test_seconds),
		cmocka_unit_test(test_bootparams_defaults),
		cmocka_unit_test(test_bootparams_full),
		cmocka_unit_test(test_bootparams_udev_rules),
		cmocka_unit_test(test_bootparams_wait_all),
		cmocka_unit_test(test_bootparams_enable),
		cmocka_unit_test(test_bootparams_order),
		cmocka_unit_test(test_bootparams_invalid),
		cmocka_unit_test(test_bootparams_quoted_root),
	};

	/* the parser's warnings are expected here */
	ap_log_open(AP_LOG_STDERR, -1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
