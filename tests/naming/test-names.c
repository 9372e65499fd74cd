/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Link names from scripted sysfs trees (umockdev).  Each tree is a
 * device as the kernel shows it; the expected names are written from
 * shared/docs/udev-naming.md and Debian 12's 60-persistent-storage.rules,
 * not from the code.  Re-executes itself under libumockdev-preload.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <libudev.h>
#include <umockdev.h>

#include "base/base.h"
#include "probe/probe.h"
#include "links/links.h"

static UMockdevTestbed *tb;
static struct udev *udev;
static unsigned oracle_checks, rules_checks;

/* strings the trees are built from live until the test's teardown */
static GPtrArray *garbage;

static char *keep(char *s)
{
	g_ptr_array_add(garbage, s);
	return s;
}
#define F(...) keep(g_strdup_printf(__VA_ARGS__))

#define L(...) ((const char *[]){ __VA_ARGS__, NULL })
#define NONE ((const char *[]){ NULL })

/* A device at /sys/devices/@path; @subsystem NULL: a plain device (uevent only). */
static char *dev_add(const char *subsystem, const char *path, const char **attrs, const char **props)
{
	char *syspath;

	if (!subsystem) {
		char *sys = umockdev_testbed_get_sys_dir(tb);
		char *dir = g_strdup_printf("%s/devices/%s", sys, path);
		char *ue = g_strdup_printf("%s/uevent", dir);

		g_free(sys);

		assert_int_equal(g_mkdir_with_parents(dir, 0755), 0);
		assert_true(g_file_set_contents(ue, "", 0, NULL));
		g_free(dir);
		g_free(ue);
		return keep(g_strdup_printf("/sys/devices/%s", path));
	}
	syspath = umockdev_testbed_add_devicev(tb, subsystem, path, NULL, (gchar **)attrs, (gchar **)props);
	assert_non_null(syspath);
	return keep(syspath);
}

static void bin_attr(const char *syspath, const char *name, const uint8_t *data, size_t len)
{
	umockdev_testbed_set_attribute_binary(tb, syspath, name, (guint8 *)(uintptr_t)data, (gssize)len);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Real udev as a second opinion: `udevadm test-builtin path_id|usb_id`
 * run under the same umockdev preload sees the same sysfs tree, and
 * writes nothing.  Returns the value of @key, or NULL.
 */
static char *udev_builtin(const char *builtin, const char *syspath, const char *key)
{
	char cmd[4096], line[4096];
	char *val = NULL;
	FILE *f;

	if (access("/usr/bin/udevadm", X_OK) != 0 && access("/bin/udevadm", X_OK) != 0)
		return NULL;
	snprintf(cmd, sizeof(cmd), "udevadm test-builtin %s '%s' 2>/dev/null", builtin, syspath);
	f = popen(cmd, "r");
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		size_t kl = strlen(key);

		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, key, kl) == 0 && line[kl] == '=') {
			free(val);
			val = strdup(line + kl + 1);
		}
	}
	pclose(f);
	return val;
}

static bool list_has(const struct ap_namelist *l, const char *prefix, const char *value)
{
	char want[4096];

	snprintf(want, sizeof(want), "%s%s", prefix, value);
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->names[i], want) == 0)
			return true;
	return false;
}

static size_t count_prefix(const struct ap_namelist *l, const char *prefix)
{
	size_t n = 0;

	for (size_t i = 0; i < l->n; i++)
		if (strncmp(l->names[i], prefix, strlen(prefix)) == 0)
			n++;
	return n;
}

/* our by-path and usb- names of a whole disk against udev's path_id and usb_id */
static void check_oracle(const char *syspath, const struct ap_namelist *l)
{
	char *path, *compat, *usb;
	size_t want = 0;

	if (access("/usr/bin/udevadm", X_OK) != 0 && access("/bin/udevadm", X_OK) != 0)
		return;
	path = udev_builtin("path_id", syspath, "ID_PATH");
	compat = udev_builtin("path_id", syspath, "ID_PATH_ATA_COMPAT");
	usb = udev_builtin("usb_id", syspath, "ID_USB_SERIAL");
	if (path) {
		want++;
		if (!list_has(l, "disk/by-path/", path))
			fail_msg("%s: udev's path_id says ID_PATH=%s", syspath, path);
		if (strncmp(path, "pci-", 4) == 0 && strstr(syspath, "/vd"))
			want++;
	}
	if (compat) {
		want++;
		if (!list_has(l, "disk/by-path/", compat))
			fail_msg("%s: udev's path_id says ID_PATH_ATA_COMPAT=%s", syspath, compat);
	}
	if (count_prefix(l, "disk/by-path/") != want)
		fail_msg("%s: %zu by-path names, udev's path_id implies %zu", syspath,
			 count_prefix(l, "disk/by-path/"), want);
	if (usb && !list_has(l, "disk/by-id/usb-", usb))
		fail_msg("%s: udev's usb_id says ID_USB_SERIAL=%s", syspath, usb);
	if (!usb && count_prefix(l, "disk/by-id/usb-"))
		fail_msg("%s: a usb- name, but udev's usb_id has none", syspath);
	oracle_checks++;
	free(path);
	free(compat);
	free(usb);
}

/* names udev can compute from sysfs alone, without opening a device node */
static bool sysfs_only_name(const char *n)
{
	static const char *const p[] = { "disk/by-path/", "disk/by-id/nvme-", "disk/by-id/virtio-",
					 "disk/by-id/usb-", "disk/by-id/mmc-", "disk/by-diskseq/" };

	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
		if (strncmp(n, p[i], strlen(p[i])) == 0)
			return true;
	return false;
}

/*
 * The full rules: `udevadm test` in a private mount namespace (it creates
 * the links it computes; tmpfs /dev and /run keep the host's untouched).
 * Root only.  Compares the names udev can make from sysfs alone.
 */
static void check_udev_rules(const char *syspath, const struct ap_namelist *l)
{
	char cmd[4096], line[65536];
	GPtrArray *want = g_ptr_array_new_with_free_func(g_free);
	GPtrArray *got = g_ptr_array_new();
	bool seen = false, ok = true;
	FILE *f;

	if (geteuid() != 0 || access("/usr/bin/unshare", X_OK) != 0)
		return;
	snprintf(cmd, sizeof(cmd),
		 "unshare -m --propagation private sh -c 'mount -t tmpfs tmpfs /run && "
		 "mount -t tmpfs tmpfs /dev && udevadm test %s' 2>/dev/null", syspath);
	f = popen(cmd, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *save = NULL, *tok;

		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "DEVLINKS=", 9) != 0)
			continue;
		seen = true;
		for (tok = strtok_r(line + 9, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
			if (strncmp(tok, "/dev/", 5) == 0 && sysfs_only_name(tok + 5))
				g_ptr_array_add(want, g_strdup(tok + 5));
	}
	if (pclose(f) != 0 && !seen) {
		g_ptr_array_free(want, TRUE);
		g_ptr_array_free(got, TRUE);
		return; /* no namespace here: nothing to compare */
	}
	for (size_t i = 0; i < l->n; i++)
		if (sysfs_only_name(l->names[i]))
			g_ptr_array_add(got, l->names[i]);
	g_ptr_array_sort(want, (GCompareFunc)cmp_str);
	g_ptr_array_sort(got, (GCompareFunc)cmp_str);
	if (want->len != got->len)
		ok = false;
	for (unsigned i = 0; ok && i < want->len; i++)
		if (strcmp(g_ptr_array_index(want, i), g_ptr_array_index(got, i)) != 0)
			ok = false;
	if (!ok) {
		fprintf(stderr, "# %s: udevadm test says\n", syspath);
		for (unsigned i = 0; i < want->len; i++)
			fprintf(stderr, "#   %s\n", (char *)g_ptr_array_index(want, i));
		fprintf(stderr, "# we say\n");
		for (unsigned i = 0; i < got->len; i++)
			fprintf(stderr, "#   %s\n", (char *)g_ptr_array_index(got, i));
	}
	g_ptr_array_free(want, TRUE);
	g_ptr_array_free(got, TRUE);
	if (!ok)
		fail_msg("%s: names differ from udevadm test", syspath);
	rules_checks++;
}

/* The names of @syspath must be exactly @expected (any order). */
static void check_names(const char *syspath, const struct ap_fsinfo *fs, const char **expected)
{
	struct udev_device *d = udev_device_new_from_syspath(udev, syspath);
	struct ap_namelist l;
	size_t ne = 0;
	char **exp;
	bool ok = true;

	assert_non_null(d);
	assert_int_equal(ap_names_for_device(d, fs, &l), 0);
	if (strcmp(udev_device_get_devtype(d), "disk") == 0) {
		check_oracle(syspath, &l);
		check_udev_rules(syspath, &l);
	}
	while (expected[ne])
		ne++;
	exp = calloc(ne + 1, sizeof(*exp));
	if (ne)
		memcpy(exp, expected, ne * sizeof(*exp));
	qsort(exp, ne, sizeof(*exp), cmp_str);
	if (l.n)
		qsort(l.names, l.n, sizeof(*l.names), cmp_str);
	if (l.n != ne)
		ok = false;
	for (size_t i = 0; ok && i < ne; i++)
		if (strcmp(exp[i], l.names[i]) != 0)
			ok = false;
	if (!ok) {
		fprintf(stderr, "# %s: expected\n", syspath);
		for (size_t i = 0; i < ne; i++)
			fprintf(stderr, "#   %s\n", exp[i]);
		fprintf(stderr, "# got\n");
		for (size_t i = 0; i < l.n; i++)
			fprintf(stderr, "#   %s\n", l.names[i]);
	}
	free(exp);
	ap_namelist_free(&l);
	udev_device_unref(d);
	assert_true(ok);
}

static int setup(void **state)
{
	tb = umockdev_testbed_new();
	udev = udev_new();
	garbage = g_ptr_array_new_with_free_func(g_free);
	ap_identity_cache_flush();
	return 0;
}

static int teardown(void **state)
{
	udev_unref(udev);
	g_object_unref(tb);
	g_ptr_array_free(garbage, TRUE);
	ap_identity_cache_flush();
	return 0;
}

/* "%04x" words, eight a line, as libata's ata_device "id" attribute */
static char *identify_text(const char *model, const char *serial, uint64_t wwn)
{
	uint16_t w[256] = { 0 };
	char m[41], s[21];
	GString *t = g_string_new(NULL);

	snprintf(m, sizeof(m), "%-40s", model);
	snprintf(s, sizeof(s), "%-20s", serial);
	for (int i = 0; i < 20; i++)
		w[27 + i] = (uint16_t)((unsigned char)m[2 * i] << 8 | (unsigned char)m[2 * i + 1]);
	for (int i = 0; i < 10; i++)
		w[10 + i] = (uint16_t)((unsigned char)s[2 * i] << 8 | (unsigned char)s[2 * i + 1]);
	w[108] = (uint16_t)(wwn >> 48);
	w[109] = (uint16_t)(wwn >> 32);
	w[110] = (uint16_t)(wwn >> 16);
	w[111] = (uint16_t)wwn;
	for (int i = 0; i < 256; i++)
		g_string_append_printf(t, "%04x%c", w[i], (i + 1) % 8 ? ' ' : '\n');
	return g_string_free(t, FALSE);
}

/* an AHCI controller with port ata<n> (port_no @port_no), host<h>, disk <name> */
static char *ahci_disk(const char *pci, unsigned n, unsigned port_no, unsigned h, const char *name,
		       unsigned minor, char **ret_scsidev)
{
	char *p, *sd, *port_no_s = g_strdup_printf("%u", port_no);

	dev_add("pci", F("pci0000:00/%s", pci), NONE, NONE);
	dev_add(NULL, F("pci0000:00/%s/ata%u", pci, n), NONE, NONE);
	dev_add("ata_port", F("pci0000:00/%s/ata%u/ata_port/ata%u", pci, n, n),
		L("port_no", port_no_s), NONE);
	dev_add("scsi", F("pci0000:00/%s/ata%u/host%u", pci, n, h), NONE,
		L("DEVTYPE", "scsi_host"));
	dev_add("scsi", F("pci0000:00/%s/ata%u/host%u/target%u:0:0", pci, n, h, h), NONE,
		L("DEVTYPE", "scsi_target"));
	sd = dev_add("scsi", F("pci0000:00/%s/ata%u/host%u/target%u:0:0/%u:0:0:0", pci, n, h, h, h),
		     L("vendor", "ATA     ", "model", "QEMU HARDDISK   ", "type", "0"),
		     L("DEVTYPE", "scsi_device"));
	p = dev_add("block", F("pci0000:00/%s/ata%u/host%u/target%u:0:0/%u:0:0:0/block/%s",
					     pci, n, h, h, h, name),
		    L("removable", "0", "diskseq", "10"),
		    L("DEVTYPE", "disk", "MAJOR", "8", "MINOR", F("%u", minor), "DISKSEQ", "10"));
	if (ret_scsidev)
		*ret_scsidev = sd;
	g_free(port_no_s);
	return p;
}

static char *partition(const char *disk_syspath, const char *name, const char *num, unsigned minor)
{
	const char *base = disk_syspath + strlen("/sys/devices/");

	return dev_add("block", F("%s/%s", base, name), L("partition", num),
		       L("DEVTYPE", "partition", "MAJOR", "8", "MINOR", F("%u", minor)));
}

/* AHCI SATA: IDENTIFY words from /sys/class/ata_device/.../id */
static void test_ahci_identify_sysfs(void **state)
{
	char *scsi, *disk, *part, *id;
	struct ap_fsinfo fs = { 0 };

	disk = ahci_disk("0000:00:1f.2", 1, 1, 0, "sda", 0, &scsi);
	/* the ata_device of ata1, link 1, device 0 */
	dev_add(NULL, "pci0000:00/0000:00:1f.2/ata1/link1", NONE, NONE);
	dev_add(NULL, "pci0000:00/0000:00:1f.2/ata1/link1/dev1.0", NONE, NONE);
	id = identify_text("QEMU HARDDISK", "QM00005", 0x5000c500a1b2c3d4ULL);
	dev_add("ata_device", "pci0000:00/0000:00:1f.2/ata1/link1/dev1.0/ata_device/dev1.0",
		L("id", id), NONE);

	check_names(disk, NULL, L("disk/by-id/ata-QEMU_HARDDISK_QM00005",
				  "disk/by-id/wwn-0x5000c500a1b2c3d4",
				  "disk/by-path/pci-0000:00:1f.2-ata-1.0",
				  "disk/by-path/pci-0000:00:1f.2-ata-1",
				  "disk/by-diskseq/10"));

	part = partition(disk, "sda3", "3", 3);
	fs.usage = "filesystem";
	fs.type = "ext4";
	fs.uuid = "11111111-2222-3333-4444-555555555555";
	fs.label = "myroot";
	fs.part_entry_scheme = "gpt";
	fs.part_entry_uuid = "0fc63daf-8483-4772-8e79-3d69d8477de4";
	fs.part_entry_name = "EFI System Partition";
	check_names(part, &fs, L("disk/by-id/ata-QEMU_HARDDISK_QM00005-part3",
				 "disk/by-id/wwn-0x5000c500a1b2c3d4-part3",
				 "disk/by-path/pci-0000:00:1f.2-ata-1.0-part3",
				 "disk/by-path/pci-0000:00:1f.2-ata-1-part3",
				 "disk/by-uuid/11111111-2222-3333-4444-555555555555",
				 "disk/by-label/myroot",
				 "disk/by-partuuid/0fc63daf-8483-4772-8e79-3d69d8477de4",
				 "disk/by-partlabel/EFI\\x20System\\x20Partition"));
	g_free(id);
	(void)scsi;
}

/* AHCI SATA, port 3 of the controller: only the SAT T10 designator in vpd_pg83 */
static void test_ahci_vpd_t10(void **state)
{
	char *scsi, *disk;
	uint8_t pg[4 + 4 + 68 + 4 + 8 + 1];
	size_t n = 0;

	disk = ahci_disk("0000:00:17.0", 4, 3, 3, "sdb", 16, &scsi);
	pg[n++] = 0;
	pg[n++] = 0x83;
	pg[n++] = 0;
	pg[n++] = sizeof(pg) - 5;
	/* T10 vendor id, ASCII, LU: "ATA     " + model(40) + serial(20) */
	pg[n++] = 0x02;
	pg[n++] = 0x01;
	pg[n++] = 0;
	pg[n++] = 68;
	snprintf((char *)pg + n, 69, "%-8s%-40s%-20s", "ATA", "Samsung SSD 860 EVO 500GB", "S3Z1NB0K123456X");
	n += 68;
	/* NAA 5 binary: libata's copy of the WWN */
	pg[n++] = 0x01;
	pg[n++] = 0x03;
	pg[n++] = 0;
	pg[n++] = 8;
	memcpy(pg + n, "\x50\x02\x53\x8d\x40\x12\x34\x56", 8);
	n += 8;
	assert_int_equal(n, sizeof(pg) - 1);
	bin_attr(scsi, "vpd_pg83", pg, n);

	check_names(disk, NULL, L("disk/by-id/ata-Samsung_SSD_860_EVO_500GB_S3Z1NB0K123456X",
				  "disk/by-id/wwn-0x5002538d40123456",
				  "disk/by-path/pci-0000:00:17.0-ata-3.0",
				  "disk/by-path/pci-0000:00:17.0-ata-3",
				  "disk/by-diskseq/10"));
}

/* an ATAPI DVD drive on AHCI: IDENTIFY PACKET words from libata's sysfs copy */
static void test_atapi(void **state)
{
	char *sr, *id;

	dev_add("pci", "pci0000:00/0000:00:1f.2", NONE, NONE);
	dev_add(NULL, "pci0000:00/0000:00:1f.2/ata2", NONE, NONE);
	dev_add("ata_port", "pci0000:00/0000:00:1f.2/ata2/ata_port/ata2", L("port_no", "2"), NONE);
	dev_add("scsi", "pci0000:00/0000:00:1f.2/ata2/host1", NONE, L("DEVTYPE", "scsi_host"));
	dev_add("scsi", "pci0000:00/0000:00:1f.2/ata2/host1/target1:0:0", NONE, L("DEVTYPE", "scsi_target"));
	dev_add("scsi", "pci0000:00/0000:00:1f.2/ata2/host1/target1:0:0/1:0:0:0",
		L("vendor", "HL-DT-ST", "model", "DVDRAM GH24NSD1 ", "type", "5", "scsi_level", "6"),
		L("DEVTYPE", "scsi_device"));
	dev_add(NULL, "pci0000:00/0000:00:1f.2/ata2/link2", NONE, NONE);
	dev_add(NULL, "pci0000:00/0000:00:1f.2/ata2/link2/dev2.0", NONE, NONE);
	id = identify_text("HL-DT-ST DVDRAM GH24NSD1", "K1234567890", 0);
	dev_add("ata_device", "pci0000:00/0000:00:1f.2/ata2/link2/dev2.0/ata_device/dev2.0", L("id", id), NONE);
	g_free(id);
	sr = dev_add("block", "pci0000:00/0000:00:1f.2/ata2/host1/target1:0:0/1:0:0:0/block/sr0", NONE,
		     L("DEVTYPE", "disk", "MAJOR", "11", "MINOR", "0"));
	check_names(sr, NULL, L("disk/by-id/ata-HL-DT-ST_DVDRAM_GH24NSD1_K1234567890",
				"disk/by-path/pci-0000:00:1f.2-ata-2.0",
				"disk/by-path/pci-0000:00:1f.2-ata-2"));
}

/* a SCSI disk under @hostdir (relative to /sys/devices) */
static char *scsi_disk(const char *hostdir, unsigned h, unsigned c, unsigned t, unsigned lun,
		       const char *vendor, const char *model, const char *name, char **ret_scsidev)
{
	char *sd;

	sd = dev_add("scsi", F("%s/target%u:%u:%u/%u:%u:%u:%u", hostdir, h, c, t, h, c, t, lun),
		     L("vendor", vendor, "model", model, "type", "0"), L("DEVTYPE", "scsi_device"));
	*ret_scsidev = sd;
	return dev_add("block", F("%s/target%u:%u:%u/%u:%u:%u:%u/block/%s", hostdir, h, c, t, h, c, t,
						lun, name),
		       NONE, L("DEVTYPE", "disk", "MAJOR", "8", "MINOR", "32"));
}

/* virtio-scsi: QEMU's vendor-specific designator, host number rebased */
static void test_virtio_scsi(void **state)
{
	char *scsi, *disk, *part;
	static const char id[] = "drive-scsi0-0-0-0";
	uint8_t pg[4 + 4 + sizeof(id) - 1];

	dev_add("pci", "pci0000:00/0000:00:04.0", NONE, NONE);
	dev_add("virtio", "pci0000:00/0000:00:04.0/virtio1", NONE, NONE);
	dev_add("scsi", "pci0000:00/0000:00:04.0/virtio1/host2", NONE, L("DEVTYPE", "scsi_host"));
	dev_add("scsi", "pci0000:00/0000:00:04.0/virtio1/host2/target2:0:0", NONE, L("DEVTYPE", "scsi_target"));
	disk = scsi_disk("pci0000:00/0000:00:04.0/virtio1/host2", 2, 0, 0, 0, "QEMU    ", "QEMU HARDDISK   ",
			 "sdc", &scsi);
	pg[0] = 0;
	pg[1] = 0x83;
	pg[2] = 0;
	pg[3] = sizeof(pg) - 4;
	pg[4] = 0x02; /* ASCII */
	pg[5] = 0x00; /* LU, vendor specific */
	pg[6] = 0;
	pg[7] = sizeof(id) - 1;
	memcpy(pg + 8, id, sizeof(id) - 1);
	bin_attr(scsi, "vpd_pg83", pg, sizeof(pg));

	check_names(disk, NULL, L("disk/by-id/scsi-0QEMU_QEMU_HARDDISK_drive-scsi0-0-0-0",
				  "disk/by-path/pci-0000:00:04.0-scsi-0:0:0:0"));
	part = partition(disk, "sdc1", "1", 33);
	check_names(part, NULL, L("disk/by-id/scsi-0QEMU_QEMU_HARDDISK_drive-scsi0-0-0-0-part1",
				  "disk/by-path/pci-0000:00:04.0-scsi-0:0:0:0-part1"));
}

/* MegaRAID: NAA 6 wins over T10 and vendor-specific; host 5 of hosts 4 and 5 */
static void test_megaraid_naa(void **state)
{
	char *scsi, *disk;
	uint8_t pg[256];
	size_t n = 4;

	dev_add("pci", "pci0000:00/0000:00:1c.0", NONE, NONE);
	dev_add("pci", "pci0000:00/0000:00:1c.0/0000:01:00.0", NONE, NONE);
	dev_add("scsi", "pci0000:00/0000:00:1c.0/0000:01:00.0/host4", NONE, L("DEVTYPE", "scsi_host"));
	dev_add("scsi", "pci0000:00/0000:00:1c.0/0000:01:00.0/host5", NONE, L("DEVTYPE", "scsi_host"));
	dev_add("scsi", "pci0000:00/0000:00:1c.0/0000:01:00.0/host5/target5:2:0", NONE,
		L("DEVTYPE", "scsi_target"));
	disk = scsi_disk("pci0000:00/0000:00:1c.0/0000:01:00.0/host5", 5, 2, 0, 0, "AVAGO", "MR9361-8i",
			 "sdd", &scsi);
	/* vendor specific, ASCII */
	memcpy(pg + n, "\x02\x00\x00\x04" "abcd", 8);
	n += 8;
	/* T10, ASCII */
	memcpy(pg + n, "\x02\x01\x00\x08" "AVAGO   ", 12);
	n += 12;
	/* NAA 5 associated with the target port: ignored */
	memcpy(pg + n, "\x01\x13\x00\x08\x50\x00\x00\x00\x00\x00\x00\x01", 12);
	n += 12;
	/* NAA 6, binary, 16 bytes */
	memcpy(pg + n, "\x01\x03\x00\x10\x60\x01\x40\x5d\x27\xe0\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa", 20);
	n += 20;
	pg[0] = 0;
	pg[1] = 0x83;
	pg[2] = 0;
	pg[3] = (uint8_t)(n - 4);
	bin_attr(scsi, "vpd_pg83", pg, n);

	check_names(disk, NULL, L("disk/by-id/scsi-36001405d27e0112233445566778899aa",
				  "disk/by-id/wwn-0x6001405d27e0112233445566778899aa",
				  "disk/by-path/pci-0000:01:00.0-scsi-1:2:0:0"));
}

/* An LSI HBA disk with NAA 5 and only page 0x80 on a second disk */
static void test_lsi_naa5_and_pg80(void **state)
{
	char *scsi, *disk, *scsi2, *disk2;
	static const uint8_t pg83[] = { 0, 0x83, 0, 12, 0x01, 0x03, 0, 8, 0x50, 0x00, 0xc5, 0x00, 0xa1, 0xb2, 0xc3, 0xd4 };
	static const uint8_t pg80[] = { 0, 0x80, 0, 10, 'Z', '1', 'X', '2', ' ', ' ', 'A', 'B', ' ', ' ' };

	dev_add("pci", "pci0000:00/0000:00:03.0", NONE, NONE);
	dev_add("pci", "pci0000:00/0000:00:03.0/0000:02:00.0", NONE, NONE);
	dev_add("scsi", "pci0000:00/0000:00:03.0/0000:02:00.0/host7", NONE, L("DEVTYPE", "scsi_host"));
	dev_add("scsi", "pci0000:00/0000:00:03.0/0000:02:00.0/host7/target7:0:1", NONE,
		L("DEVTYPE", "scsi_target"));
	dev_add("scsi", "pci0000:00/0000:00:03.0/0000:02:00.0/host7/target7:0:2", NONE,
		L("DEVTYPE", "scsi_target"));
	disk = scsi_disk("pci0000:00/0000:00:03.0/0000:02:00.0/host7", 7, 0, 1, 0, "SEAGATE ",
			 "ST4000NM0023    ", "sde", &scsi);
	bin_attr(scsi, "vpd_pg83", pg83, sizeof(pg83));
	disk2 = scsi_disk("pci0000:00/0000:00:03.0/0000:02:00.0/host7", 7, 0, 2, 0, "HP      ",
			  "LOGICAL VOLUME  ", "sdf", &scsi2);
	bin_attr(scsi2, "vpd_pg80", pg80, sizeof(pg80));

	check_names(disk, NULL, L("disk/by-id/scsi-35000c500a1b2c3d4", "disk/by-id/wwn-0x5000c500a1b2c3d4",
				  "disk/by-path/pci-0000:02:00.0-scsi-0:0:1:0"));
	/* "S" + vendor(8) + model(16) + serial, whitespace runs to one "_" */
	check_names(disk2, NULL, L("disk/by-id/scsi-SHP_LOGICAL_VOLUME_Z1X2_AB",
				   "disk/by-path/pci-0000:02:00.0-scsi-0:0:2:0"));
}

/* virtio-blk with a serial; a "/" in a serial makes a subdirectory */
static void test_virtio_blk(void **state)
{
	char *disk, *part, *disk2;

	dev_add("pci", "pci0000:00/0000:00:05.0", NONE, NONE);
	dev_add("virtio", "pci0000:00/0000:00:05.0/virtio2", NONE, NONE);
	disk = dev_add("block", "pci0000:00/0000:00:05.0/virtio2/block/vda", L("serial", "my serial$1", "diskseq", "3"),
		       L("DEVTYPE", "disk", "MAJOR", "254", "MINOR", "0", "DISKSEQ", "3"));
	check_names(disk, NULL, L("disk/by-id/virtio-my_serial_1",
				  "disk/by-path/pci-0000:00:05.0",
				  "disk/by-path/virtio-pci-0000:00:05.0",
				  "disk/by-diskseq/3"));
	part = dev_add("block", "pci0000:00/0000:00:05.0/virtio2/block/vda/vda2", L("partition", "2"),
		       L("DEVTYPE", "partition", "MAJOR", "254", "MINOR", "2"));
	check_names(part, NULL, L("disk/by-id/virtio-my_serial_1-part2",
				  "disk/by-path/pci-0000:00:05.0-part2",
				  "disk/by-path/virtio-pci-0000:00:05.0-part2"));

	dev_add("pci", "pci0000:00/0000:00:06.0", NONE, NONE);
	dev_add("virtio", "pci0000:00/0000:00:06.0/virtio3", NONE, NONE);
	disk2 = dev_add("block", "pci0000:00/0000:00:06.0/virtio3/block/vdb", L("serial", "ab/cd"),
			L("DEVTYPE", "disk", "MAJOR", "254", "MINOR", "16"));
	check_names(disk2, NULL, L("disk/by-id/virtio-ab/cd",
				   "disk/by-path/pci-0000:00:06.0",
				   "disk/by-path/virtio-pci-0000:00:06.0"));
}

/* NVMe: wwid, model_serial (string_escape=replace), model_serial_nsid (v252.8+) */
static void test_nvme(void **state)
{
	char *disk, *part;
	struct ap_fsinfo fs = { 0 };

	dev_add("pci", "pci0000:00/0000:00:1d.0", NONE, NONE);
	dev_add("pci", "pci0000:00/0000:00:1d.0/0000:3c:00.0", NONE, NONE);
	dev_add("nvme", "pci0000:00/0000:00:1d.0/0000:3c:00.0/nvme/nvme0",
		L("serial", "S5GXNX0R123456      ", "model", "Samsung SSD 980 PRO 1TB                 ",
		  "firmware_rev", "5B2QGXA7"),
		NONE);
	disk = dev_add("block", "pci0000:00/0000:00:1d.0/0000:3c:00.0/nvme/nvme0/nvme0n1",
		       L("wwid", "eui.0025385b71b0a5c1", "nsid", "1", "diskseq", "7"),
		       L("DEVTYPE", "disk", "MAJOR", "259", "MINOR", "0", "DISKSEQ", "7"));
	check_names(disk, NULL, L("disk/by-id/nvme-eui.0025385b71b0a5c1",
				  "disk/by-id/nvme-Samsung_SSD_980_PRO_1TB_S5GXNX0R123456",
				  "disk/by-id/nvme-Samsung_SSD_980_PRO_1TB_S5GXNX0R123456_1",
				  "disk/by-path/pci-0000:3c:00.0-nvme-1",
				  "disk/by-diskseq/7"));
	part = dev_add("block", "pci0000:00/0000:00:1d.0/0000:3c:00.0/nvme/nvme0/nvme0n1/nvme0n1p2",
		       L("partition", "2"), L("DEVTYPE", "partition", "MAJOR", "259", "MINOR", "2"));
	fs.usage = "filesystem";
	fs.uuid = "ABCD-1234";
	fs.label = "EFI";
	fs.part_entry_scheme = "dos";
	fs.part_entry_uuid = "5e2ab0c3-02";
	fs.part_entry_name = "ignored on MBR";
	check_names(part, &fs, L("disk/by-id/nvme-eui.0025385b71b0a5c1-part2",
				 "disk/by-id/nvme-Samsung_SSD_980_PRO_1TB_S5GXNX0R123456-part2",
				 "disk/by-id/nvme-Samsung_SSD_980_PRO_1TB_S5GXNX0R123456_1-part2",
				 "disk/by-path/pci-0000:3c:00.0-nvme-1-part2",
				 "disk/by-uuid/ABCD-1234", "disk/by-label/EFI",
				 "disk/by-partuuid/5e2ab0c3-02"));
}

/* native NVMe multipath (Debian 12's default): the namespace is virtual, the path is the controller's */
static void test_nvme_multipath(void **state)
{
	char *disk, *part;

	dev_add("pci", "pci0000:00/0000:00:1d.0", NONE, NONE);
	dev_add("pci", "pci0000:00/0000:00:1d.0/0000:3d:00.0", NONE, NONE);
	dev_add("nvme", "pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0",
		L("serial", "S5GXNX0R123456      ", "model", "Samsung SSD 980 PRO 1TB                 "), NONE);
	dev_add("nvme-subsystem", "virtual/nvme-subsystem/nvme-subsys0",
		L("serial", "S5GXNX0R123456      ", "model", "Samsung SSD 980 PRO 1TB                 ",
		  "firmware_rev", "5B2QGXA7"),
		NONE);
	disk = dev_add("block", "virtual/nvme-subsystem/nvme-subsys0/nvme0n1",
		       L("wwid", "eui.0025385b71b0a5c1", "nsid", "1"),
		       L("DEVTYPE", "disk", "MAJOR", "259", "MINOR", "0"));
	check_names(disk, NULL, L("disk/by-id/nvme-eui.0025385b71b0a5c1",
				  "disk/by-id/nvme-Samsung_SSD_980_PRO_1TB_S5GXNX0R123456",
				  "disk/by-id/nvme-Samsung_SSD_980_PRO_1TB_S5GXNX0R123456_1",
				  "disk/by-path/pci-0000:3d:00.0-nvme-1"));
	part = dev_add("block", "virtual/nvme-subsystem/nvme-subsys0/nvme0n1/nvme0n1p1", L("partition", "1"),
		       L("DEVTYPE", "partition", "MAJOR", "259", "MINOR", "1"));
	check_names(part, NULL, L("disk/by-id/nvme-eui.0025385b71b0a5c1-part1",
				  "disk/by-id/nvme-Samsung_SSD_980_PRO_1TB_S5GXNX0R123456-part1",
				  "disk/by-id/nvme-Samsung_SSD_980_PRO_1TB_S5GXNX0R123456_1-part1",
				  "disk/by-path/pci-0000:3d:00.0-nvme-1-part1"));
}

/* NVMe with double spaces and a '/' in the model: each becomes its own '_' (#19309) */
static void test_nvme_replace(void **state)
{
	char *disk;

	dev_add("pci", "pci0000:00/0000:05:00.0", NONE, NONE);
	dev_add("nvme", "pci0000:00/0000:05:00.0/nvme/nvme1",
		L("serial", "  SER 1  ", "model", "ACME  Fast/Disk   "), NONE);
	disk = dev_add("block", "pci0000:00/0000:05:00.0/nvme/nvme1/nvme1n3", L("nsid", "3"),
		       L("DEVTYPE", "disk", "MAJOR", "259", "MINOR", "5"));
	check_names(disk, NULL, L("disk/by-id/nvme-ACME__Fast_Disk___SER_1",
				  "disk/by-id/nvme-ACME__Fast_Disk___SER_1_3",
				  "disk/by-path/pci-0000:05:00.0-nvme-3"));
}

/* loop devices: no by-id or by-path; RAID members and ambivalent results: no fs links */
static void test_loop_and_usage(void **state)
{
	char *disk, *disk2;
	struct ap_fsinfo fs = { 0 };

	disk = dev_add("block", "virtual/block/loop0", L("diskseq", "42"),
		       L("DEVTYPE", "disk", "MAJOR", "7", "MINOR", "0", "DISKSEQ", "42"));
	fs.usage = "filesystem";
	fs.label = "../../etc";
	fs.uuid = "1234";
	check_names(disk, &fs, L("disk/by-label/..\\x2f..\\x2fetc", "disk/by-uuid/1234", "disk/by-diskseq/42"));

	fs.usage = "raid";
	check_names(disk, &fs, L("disk/by-diskseq/42"));
	fs.usage = "crypto";
	check_names(disk, &fs, L("disk/by-label/..\\x2f..\\x2fetc", "disk/by-uuid/1234", "disk/by-diskseq/42"));
	fs.usage = "filesystem";
	fs.ambivalent = true;
	check_names(disk, &fs, L("disk/by-diskseq/42"));

	/* U+FFFE: libblkid keeps it, udev's SYMLINK+= replace step does not */
	fs.label = "a\xef\xbf\xbe b";
	fs.uuid = NULL;
	fs.ambivalent = false;
	check_names(disk, &fs, L("disk/by-label/a___\\x20b", "disk/by-diskseq/42"));
	fs.uuid = "1234";

	/* ram and zram get nothing */
	disk2 = dev_add("block", "virtual/block/ram0", NONE, L("DEVTYPE", "disk", "MAJOR", "1", "MINOR", "0"));
	fs.ambivalent = false;
	check_names(disk2, &fs, NONE);
}

/* a partition spanning its whole disk (TEST=="whole_disk") gets nothing */
static void test_whole_disk(void **state)
{
	char *disk, *part;

	dev_add("pci", "pci0000:00/0000:00:07.0", NONE, NONE);
	dev_add("virtio", "pci0000:00/0000:00:07.0/virtio4", NONE, NONE);
	disk = dev_add("block", "pci0000:00/0000:00:07.0/virtio4/block/vdc", L("serial", "x"),
		       L("DEVTYPE", "disk", "MAJOR", "254", "MINOR", "32"));
	part = dev_add("block", "pci0000:00/0000:00:07.0/virtio4/block/vdc/vdc1",
		       L("partition", "1", "whole_disk", "1"),
		       L("DEVTYPE", "partition", "MAJOR", "254", "MINOR", "33"));
	check_names(part, NULL, NONE);
	(void)disk;
}

/* USB mass storage: usb-<vendor>_<model>_<serial>-<target>:<lun> and a USB by-path */
static void test_usb(void **state)
{
	char *scsi, *disk;

	dev_add("pci", "pci0000:00/0000:00:14.0", NONE, NONE);
	dev_add("usb", "pci0000:00/0000:00:14.0/usb2", NONE, L("DEVTYPE", "usb_device"));
	dev_add("usb", "pci0000:00/0000:00:14.0/usb2/2-2",
		L("serial", "4C530001231109115285", "manufacturer", "SanDisk", "product", "Cruzer Blade",
		  "idVendor", "0781", "idProduct", "5567", "bcdDevice", "0100"),
		L("DEVTYPE", "usb_device"));
	dev_add("usb", "pci0000:00/0000:00:14.0/usb2/2-2/2-2:1.0",
		L("bInterfaceClass", "08", "bInterfaceSubClass", "06"), L("DEVTYPE", "usb_interface"));
	dev_add("scsi", "pci0000:00/0000:00:14.0/usb2/2-2/2-2:1.0/host6", NONE, L("DEVTYPE", "scsi_host"));
	dev_add("scsi", "pci0000:00/0000:00:14.0/usb2/2-2/2-2:1.0/host6/target6:0:0", NONE,
		L("DEVTYPE", "scsi_target"));
	disk = scsi_disk("pci0000:00/0000:00:14.0/usb2/2-2/2-2:1.0/host6", 6, 0, 0, 0, "SanDisk ",
			 "Cruzer Blade    ", "sdg", &scsi);
	umockdev_testbed_set_attribute(tb, scsi, "rev", "1.00");
	check_names(disk, NULL, L("disk/by-id/usb-SanDisk_Cruzer_Blade_4C530001231109115285-0:0",
				  "disk/by-path/pci-0000:00:14.0-usb-0:2:1.0-scsi-0:0:0:0"));
}

/* eMMC: mmc-<name>_<serial>; boot areas are disks of their own */
static void test_mmc(void **state)
{
	char *disk, *boot, *part;

	dev_add("pci", "pci0000:00/0000:00:1a.0", NONE, NONE);
	dev_add("mmc_host", "pci0000:00/0000:00:1a.0/mmc_host/mmc0", NONE, NONE);
	dev_add("mmc", "pci0000:00/0000:00:1a.0/mmc_host/mmc0/mmc0:0001",
		L("name", "DG4016", "serial", "0x1a2b3c4d", "type", "MMC"), NONE);
	disk = dev_add("block", "pci0000:00/0000:00:1a.0/mmc_host/mmc0/mmc0:0001/block/mmcblk0", L("diskseq", "5"),
		       L("DEVTYPE", "disk", "MAJOR", "179", "MINOR", "0", "DISKSEQ", "5"));
	boot = dev_add("block", "pci0000:00/0000:00:1a.0/mmc_host/mmc0/mmc0:0001/block/mmcblk0boot1",
		       L("diskseq", "6"), L("DEVTYPE", "disk", "MAJOR", "179", "MINOR", "16", "DISKSEQ", "6"));
	part = dev_add("block", "pci0000:00/0000:00:1a.0/mmc_host/mmc0/mmc0:0001/block/mmcblk0/mmcblk0p1",
		       L("partition", "1"), L("DEVTYPE", "partition", "MAJOR", "179", "MINOR", "1"));
	check_names(disk, NULL, L("disk/by-id/mmc-DG4016_0x1a2b3c4d", "disk/by-diskseq/5"));
	check_names(part, NULL, L("disk/by-id/mmc-DG4016_0x1a2b3c4d-part1"));
	check_names(boot, NULL, L("disk/by-diskseq/6"));
}

int main(int argc, char **argv)
{
	int r;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ahci_identify_sysfs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ahci_vpd_t10, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_scsi, setup, teardown),
		cmocka_unit_test_setup_teardown(test_megaraid_naa, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lsi_naa5_and_pg80, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_blk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvme, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvme_replace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvme_multipath, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loop_and_usage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_whole_disk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_usb, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mmc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_atapi, setup, teardown),
	};

#if defined(__SANITIZE_THREAD__)
	/* umockdev's testbed thread runs in uninstrumented GLib: TSan reports its own races */
	printf("1..0 # SKIP umockdev is not usable under ThreadSanitizer\n");
	return 0;
#endif
	if (!umockdev_in_mock_environment() && !getenv("AP_TEST_UMOCKDEV_REEXEC")) {
		/* run again with the preload library that fakes /sys for libudev */
		const char *old = getenv("LD_PRELOAD");
		char *pre = g_strdup_printf("%s%slibumockdev-preload.so.0", old ? old : "", old ? ":" : "");

		const char *asan = getenv("ASAN_OPTIONS");
		char *asan_opts = g_strdup_printf("%s%sverify_asan_link_order=0", asan ? asan : "",
						  asan && *asan ? ":" : "");

		setenv("LD_PRELOAD", pre, 1);
		setenv("AP_TEST_UMOCKDEV_REEXEC", "1", 1);
		/* ASan wants to come first; umockdev's preload is harmless to it */
		setenv("ASAN_OPTIONS", asan_opts, 1);
		if (getenv("top_srcdir")) {
			const char *lsan = getenv("LSAN_OPTIONS");

			setenv("LSAN_OPTIONS",
			       g_strdup_printf("%s%ssuppressions=%s/tests/naming/lsan-umockdev.supp",
					       lsan ? lsan : "", lsan && *lsan ? ":" : "", getenv("top_srcdir")),
			       1);
		}
		execv("/proc/self/exe", argv);
		/*
		 * umockdev is installed (configure found it): not being able to
		 * use it is a failure, not a skip.  (Exit status 77 would be an
		 * ERROR without a reason under the TAP driver.)
		 */
		printf("Bail out! cannot re-execute %s under umockdev: %s\n", argv[0], strerror(errno));
		return 1;
	}
	(void)argc;
	r = cmocka_run_group_tests(tests, NULL, NULL);
	printf("# %u disks also checked against udevadm test-builtin path_id/usb_id\n", oracle_checks);
	printf("# %u disks also checked against the full rules (udevadm test)\n", rules_checks);
	return r;
}
