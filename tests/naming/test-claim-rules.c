/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The udev rules file that keeps asyncprobe's choice of contested links
 * (udev-rules.c): contests from the real link registry, ranks across
 * several contests, cycles refused, hostile link and kernel names, atomic
 * writing and removal of a stale file.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "probe/probe.h"
#include "links/links.h"

static char tmpdir[1024];
static char devdir[1100];
static char rulesdir[1100];
static char rulesfile[1200];

static int setup(void **state)
{
	const char *t = getenv("TMPDIR");

	snprintf(tmpdir, sizeof(tmpdir), "%s/test-claim-rules.XXXXXX", t ? t : "/tmp");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(devdir, sizeof(devdir), "%s/dev", tmpdir);
	snprintf(rulesdir, sizeof(rulesdir), "%s/rules.d", tmpdir);
	snprintf(rulesfile, sizeof(rulesfile), "%s/%s", rulesdir, AP_UDEV_RULES_NAME);
	if (mkdir(devdir, 0755) < 0 || mkdir(rulesdir, 0755) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 32];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void publish(struct ap_links *l, async_cookie_t cookie, const char *dev,
		    const char *parent, const char **names)
{
	struct ap_namelist nl = {};

	for (; *names; names++)
		assert_int_equal(ap_namelist_add(&nl, *names), 0);
	ap_links_publish(l, cookie, dev, parent, &nl);
	ap_namelist_free(&nl);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;

	if (!f)
		return NULL;
	buf = calloc(1, 65536);
	assert_non_null(buf);
	n = fread(buf, 1, 65535, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/*
 * Every line is a comment, empty, or exactly one rule of the one form the
 * writer makes; returns the rule lines, joined by '\n', for comparison.
 */
static char *rule_lines(const char *text)
{
	regex_t re;
	char *out = calloc(1, strlen(text) + 1), *copy = strdup(text), *save = NULL;

	assert_non_null(out);
	assert_non_null(copy);
	assert_int_equal(regcomp(&re, "^SUBSYSTEM==\"block\", KERNEL==\"[A-Za-z0-9._:+!-]+\", "
				 "(ATTRS\\{diskseq\\}==\"[0-9]+\", )?OPTIONS\\+=\"link_priority=-?[0-9]+\"$", REG_EXTENDED | REG_NOSUB), 0);
	assert_true(text[strlen(text) - 1] == '\n');
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#')
			continue;
		if (regexec(&re, line, 0, NULL, 0) != 0)
			fail_msg("not a rule the writer makes: \"%s\"", line);
		strcat(out, line);
		strcat(out, "\n");
	}
	regfree(&re);
	free(copy);
	return out;
}

static void test_two_claimants(void **state)
{
	const char *a[] = { "disk/by-label/DATA", "disk/by-uuid/1111", NULL };
	const char *b[] = { "disk/by-label/DATA", "disk/by-uuid/2222", NULL };
	struct ap_links *l = ap_links_new(devdir, false);
	struct ap_contest *v;
	struct stat st;
	size_t n;
	char *text, *rules;
	DIR *d;
	struct dirent *de;
	int files = 0;

	assert_non_null(l);
	publish(l, 1, "sdb", NULL, a);
	publish(l, 2, "sda", NULL, b);
	assert_int_equal(ap_links_contested(l, &v, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].name, "disk/by-label/DATA");
	assert_string_equal(v[0].winner, "sdb");
	assert_int_equal(v[0].nlosers, 1);
	assert_string_equal(v[0].losers[0], "sda");

	/* a directory: the file gets its default name there */
	assert_int_equal(ap_udev_rules_write(rulesdir, v, n, NULL), 1);
	assert_int_equal(stat(rulesfile, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	text = slurp(rulesfile);
	assert_non_null(text);
	assert_non_null(strstr(text, "# disk/by-label/DATA: sdb keeps it; also claimed by sda\n"));
	rules = rule_lines(text);
	assert_string_equal(rules,
			    "SUBSYSTEM==\"block\", KERNEL==\"sdb\", OPTIONS+=\"link_priority=0\"\n"
			    "SUBSYSTEM==\"block\", KERNEL==\"sda\", OPTIONS+=\"link_priority=-1\"\n");
	free(rules);
	free(text);

	/* no temporary file left beside it */
	d = opendir(rulesdir);
	assert_non_null(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			files++;
	closedir(d);
	assert_int_equal(files, 1);

	ap_contests_free(v, n);
	ap_links_free(l);
}

static void test_partition_takes_from_disk(void **state)
{
	const char *name[] = { "disk/by-label/ISO", NULL };
	struct ap_links *l = ap_links_new(devdir, false);
	struct ap_contest *v;
	size_t n;
	char *text = NULL, *rules;

	assert_non_null(l);
	publish(l, 1, "sda", NULL, name);
	publish(l, 2, "sdb", NULL, name);
	publish(l, 3, "sda1", "sda", name);
	assert_int_equal(ap_links_contested(l, &v, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].winner, "sda1");
	assert_int_equal(v[0].nlosers, 2);
	assert_int_equal(ap_udev_rules_render(v, n, NULL, &text), 1);
	rules = rule_lines(text);
	assert_string_equal(rules,
			    "SUBSYSTEM==\"block\", KERNEL==\"sda1\", OPTIONS+=\"link_priority=0\"\n"
			    "SUBSYSTEM==\"block\", KERNEL==\"sda\", OPTIONS+=\"link_priority=-1\"\n"
			    "SUBSYSTEM==\"block\", KERNEL==\"sdb\", OPTIONS+=\"link_priority=-1\"\n");
	free(rules);
	free(text);
	ap_contests_free(v, n);
	ap_links_free(l);
}

/* sda beats sdb for one link, sdb beats sdc for another: sdc ranks below both */
static void test_chain_ranks(void **state)
{
	char *la[] = { "sdb" }, *lb[] = { "sdc" };
	struct ap_contest v[] = {
		{ "disk/by-label/B", "sdb", lb, 1 },
		{ "disk/by-label/A", "sda", la, 1 },
	};
	char *text = NULL, *rules;

	assert_int_equal(ap_udev_rules_render(v, 2, NULL, &text), 2);
	rules = rule_lines(text);
	assert_string_equal(rules,
			    "SUBSYSTEM==\"block\", KERNEL==\"sdb\", OPTIONS+=\"link_priority=-1\"\n"
			    "SUBSYSTEM==\"block\", KERNEL==\"sdc\", OPTIONS+=\"link_priority=-2\"\n"
			    "SUBSYSTEM==\"block\", KERNEL==\"sda\", OPTIONS+=\"link_priority=0\"\n");
	free(rules);
	free(text);
}

/* sda beats sdb for A and sdb beats sda for B: only A can be kept */
static void test_cycle_refused(void **state)
{
	char *la[] = { "sdb" }, *lb[] = { "sda" }, *lc[] = { "sdc" };
	struct ap_contest v[] = {
		{ "disk/by-label/A", "sda", la, 1 },
		{ "disk/by-label/B", "sdb", lb, 1 },
		{ "disk/by-label/C", "sdb", lc, 1 },
	};
	char *text = NULL, *rules;

	assert_int_equal(ap_udev_rules_render(v, 3, NULL, &text), 2);
	assert_null(strstr(text, "disk/by-label/B"));
	assert_non_null(strstr(text, "# disk/by-label/C: sdb keeps it"));
	rules = rule_lines(text);
	assert_string_equal(rules,
			    "SUBSYSTEM==\"block\", KERNEL==\"sda\", OPTIONS+=\"link_priority=0\"\n"
			    "SUBSYSTEM==\"block\", KERNEL==\"sdb\", OPTIONS+=\"link_priority=-1\"\n"
			    "SUBSYSTEM==\"block\", KERNEL==\"sdc\", OPTIONS+=\"link_priority=-2\"\n");
	free(rules);
	free(text);

	/* only the cycle: nothing to write */
	assert_int_equal(ap_udev_rules_render(v, 2, NULL, &text), 1);
	free(text);
	{
		struct ap_contest w[] = { v[1], v[0] };

		assert_int_equal(ap_udev_rules_render(w, 2, NULL, &text), 1);
		assert_non_null(strstr(text, "# disk/by-label/B: sdb keeps it"));
		free(text);
	}
}

/*
 * Link names come from media: whatever they hold stays inside a comment
 * line.  Kernel names become rule text: anything but a plain name is refused.
 */
static void test_hostile_names(void **state)
{
	static const char *const links[] = {
		"disk/by-label/a\nSUBSYSTEM==\"block\", RUN+=\"/bin/sh\"",
		"disk/by-label/quote\"end\\",
		"disk/by-label/$env{HOME}%k",
		"disk/by-label/sp ace\ttab\r",
		"disk/by-label/\xff\xfe\x01\x7f",
		"disk/by-label/caf\xc3\xa9\\x20",
	};
	char *losers[] = { "sdb" };
	char *text = NULL, *rules;

	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		struct ap_contest v[] = { { (char *)links[i], "sda", losers, 1 } };

		assert_int_equal(ap_udev_rules_render(v, 1, NULL, &text), 1);
		rules = rule_lines(text);   /* fails on any line a name broke out into */
		assert_string_equal(rules,
				    "SUBSYSTEM==\"block\", KERNEL==\"sda\", OPTIONS+=\"link_priority=0\"\n"
				    "SUBSYSTEM==\"block\", KERNEL==\"sdb\", OPTIONS+=\"link_priority=-1\"\n");
		for (const char *p = text; *p; p++)
			assert_true((*p >= 0x20 && *p < 0x7f) || *p == '\n');
		free(rules);
		free(text);
	}
	{
		struct ap_contest v[] = { { (char *)links[0], "sda", losers, 1 } };

		assert_int_equal(ap_udev_rules_render(v, 1, NULL, &text), 1);
		assert_non_null(strstr(text, "# disk/by-label/a\\x0aSUBSYSTEM==\"block\",\\x20RUN+="));
		free(text);
	}
	{
		struct ap_contest v[] = { { (char *)links[1], "sda", losers, 1 } };

		assert_int_equal(ap_udev_rules_render(v, 1, NULL, &text), 1);
		assert_non_null(strstr(text, "# disk/by-label/quote\"end\\x5c: sda keeps it"));
		free(text);
	}
	{
		struct ap_contest v[] = { { (char *)links[5], "sda", losers, 1 } };

		/* an encoded name reads as it does in /dev/disk */
		assert_int_equal(ap_udev_rules_render(v, 1, NULL, &text), 1);
		assert_non_null(strstr(text, "# disk/by-label/caf\\xc3\\xa9\\x20: sda keeps it"));
		free(text);
	}

	static const char *const kernels[] = {
		"sd*", "sd?", "sd[ab]", "sda|sdb", "sd\"a", "sda\n", "sd a", "sd\\a", "", ".",
		"../sda", "/sda", "sd$a", "sd%k", "sd\xc3\xa9",
	};
	for (size_t i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++) {
		char *bad[] = { (char *)kernels[i] };
		struct ap_contest as_loser[] = { { "disk/by-label/X", "sda", bad, 1 } };
		struct ap_contest as_winner[] = { { "disk/by-label/X", (char *)kernels[i], losers, 1 } };

		assert_int_equal(ap_udev_rules_render(as_loser, 1, NULL, &text), 0);
		assert_null(text);
		assert_int_equal(ap_udev_rules_render(as_winner, 1, NULL, &text), 0);
		assert_null(text);
	}

	/* a cciss disk: its node is cciss/c0d0, its kernel name cciss!c0d0 */
	{
		char *l[] = { "cciss/c0d1" };
		struct ap_contest v[] = { { "disk/by-label/X", "cciss/c0d0", l, 1 } };

		assert_int_equal(ap_udev_rules_render(v, 1, NULL, &text), 1);
		rules = rule_lines(text);
		assert_string_equal(rules,
				    "SUBSYSTEM==\"block\", KERNEL==\"cciss!c0d0\", OPTIONS+=\"link_priority=0\"\n"
				    "SUBSYSTEM==\"block\", KERNEL==\"cciss!c0d1\", OPTIONS+=\"link_priority=-1\"\n");
		free(rules);
		free(text);
	}
}

static void test_stale_file_removed(void **state)
{
	const char *a[] = { "disk/by-label/ONLY", NULL };
	char *losers[] = { "sdb" };
	struct ap_contest v[] = { { "disk/by-label/X", "sda", losers, 1 } };
	struct ap_links *l = ap_links_new(devdir, false);
	struct ap_contest *none;
	size_t n;
	char file[1300];

	/* an explicit file name is used as is */
	snprintf(file, sizeof(file), "%s/other.rules", rulesdir);
	assert_int_equal(ap_udev_rules_write(file, v, 1, NULL), 1);
	assert_int_equal(access(file, F_OK), 0);

	/* a run with no contested link removes the file of an earlier one */
	assert_non_null(l);
	publish(l, 1, "sda", NULL, a);
	assert_int_equal(ap_links_contested(l, &none, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(ap_udev_rules_write(file, none, n, NULL), 0);
	assert_int_equal(access(file, F_OK), -1);
	assert_int_equal(errno, ENOENT);
	/* and nothing there is fine too */
	assert_int_equal(ap_udev_rules_write(file, none, n, NULL), 0);
	assert_int_equal(ap_udev_rules_write(rulesdir, none, n, NULL), 0);
	assert_int_equal(access(rulesfile, F_OK), -1);
	ap_contests_free(none, n);
	ap_links_free(l);

	/* a missing directory is an error, not a silent success */
	snprintf(file, sizeof(file), "%s/missing/x.rules", tmpdir);
	assert_int_equal(ap_udev_rules_write(file, v, 1, NULL), -ENOENT);
}

static void put(const char *rel, const char *text)
{
	char p[1400];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", tmpdir, rel);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void sh(const char *cmd)
{
	char c[2048];

	snprintf(c, sizeof(c), "cd '%s' && %s", tmpdir, cmd);
	assert_int_equal(system(c), 0);
}

/*
 * With a sysfs, the disk sequence number is matched too: a disk's own, a
 * partition's disk's; none, or one that is not a number, is left out.
 */
static void test_diskseq(void **state)
{
	char *losers[] = { "sdb", "sdc", "sdd" };
	struct ap_contest v[] = { { "disk/by-label/X", "sda1", losers, 3 } };
	char sysfs[1200], *text = NULL, *rules;

	sh("mkdir -p sys/class/block sys/devices/sda/sda1 sys/devices/sdb sys/devices/sdc && "
	   "ln -s ../../devices/sda sys/class/block/sda && "
	   "ln -s ../../devices/sda/sda1 sys/class/block/sda1 && "
	   "ln -s ../../devices/sdb sys/class/block/sdb && "
	   "ln -s ../../devices/sdc sys/class/block/sdc");
	put("sys/devices/sda/diskseq", "7\n");
	put("sys/devices/sda/sda1/partition", "1\n");
	put("sys/devices/sdb/diskseq", "12\n");
	put("sys/devices/sdc/diskseq", "3\", RUN+=\"x\n");
	snprintf(sysfs, sizeof(sysfs), "%s/sys", tmpdir);

	assert_int_equal(ap_udev_rules_render(v, 1, sysfs, &text), 1);
	rules = rule_lines(text);
	assert_string_equal(rules,
			    "SUBSYSTEM==\"block\", KERNEL==\"sda1\", ATTRS{diskseq}==\"7\", "
			    "OPTIONS+=\"link_priority=0\"\n"
			    "SUBSYSTEM==\"block\", KERNEL==\"sdb\", ATTRS{diskseq}==\"12\", "
			    "OPTIONS+=\"link_priority=-1\"\n"
			    "SUBSYSTEM==\"block\", KERNEL==\"sdc\", OPTIONS+=\"link_priority=-1\"\n"
			    "SUBSYSTEM==\"block\", KERNEL==\"sdd\", OPTIONS+=\"link_priority=-1\"\n");
	free(rules);
	free(text);
}

/*
 * After the hand-over: no udevd (no control socket), no events; with one,
 * a "change" to each device the file names (after udevd's 3 s look, here
 * already past), and nothing to a name that is not a kernel name.
 */
static void test_retrigger(void **state)
{
	char *losers[] = { "sdb", "cciss/c0d0" };
	struct ap_contest v[] = { { "disk/by-label/X", "sda1", losers, 2 } };
	char sysfs[1200], control[1300], ev0[1400], *text;
	struct timespec old[2] = { { .tv_sec = 1000000000 }, { .tv_sec = 1000000000 } };

	sh("mkdir -p sys/class/block/sda1 sys/class/block/sdb sys/class/block/cciss!c0d0 "
	   "sys/class/block/sdz");
	put("sys/class/block/sda1/uevent", "");
	put("sys/class/block/sdb/uevent", "");
	put("sys/class/block/cciss!c0d0/uevent", "");
	put("sys/class/block/sdz/uevent", "");
	snprintf(sysfs, sizeof(sysfs), "%s/sys", tmpdir);
	snprintf(control, sizeof(control), "%s/control", tmpdir);

	/* no file yet, and then no udevd */
	put("control", "");
	assert_int_equal(ap_udev_rules_retrigger(rulesdir, sysfs, control), 0);
	assert_int_equal(ap_udev_rules_write(rulesdir, v, 1, NULL), 1);
	assert_int_equal(utimensat(AT_FDCWD, rulesfile, old, 0), 0);
	assert_int_equal(unlink(control), 0);
	assert_int_equal(ap_udev_rules_retrigger(rulesdir, sysfs, control), 0);
	text = slurp(rulesfile);
	assert_non_null(text);
	free(text);
	snprintf(control, sizeof(control), "%s/class/block/sdb/uevent", sysfs);
	text = slurp(control);
	assert_string_equal(text, "");
	free(text);

	/* a udevd: all three claimants, the file given as a directory or a file */
	snprintf(control, sizeof(control), "%s/control", tmpdir);
	put("control", "");
	assert_int_equal(ap_udev_rules_retrigger(rulesdir, sysfs, control), 3);
	for (const char *const *d = (const char *const[]){ "sda1", "sdb", "cciss!c0d0", NULL }; *d; d++) {
		char ev[1400];

		snprintf(ev, sizeof(ev), "%s/class/block/%s/uevent", sysfs, *d);
		text = slurp(ev);
		assert_non_null(text);
		assert_string_equal(text, "change");
		free(text);
	}
	snprintf(ev0, sizeof(ev0), "%s/class/block/sdz/uevent", sysfs);
	text = slurp(ev0);
	assert_string_equal(text, "");
	free(text);
	assert_int_equal(ap_udev_rules_retrigger(rulesfile, sysfs, control), 3);
	assert_int_equal(ap_udev_rules_retrigger("none", sysfs, control), 0);
}

/* --udev-rules: a writable directory, or a *.rules file in one */
static void test_path_check(void **state)
{
	char p[1300], file[1300];
	char *losers[] = { "sdb" };
	struct ap_contest v[] = { { "disk/by-label/X", "sda", losers, 1 } };

	assert_int_equal(ap_udev_rules_check(NULL), 0);
	assert_int_equal(ap_udev_rules_check("none"), 0);
	assert_int_equal(ap_udev_rules_check(rulesdir), 0);
	snprintf(p, sizeof(p), "%s/x.rules", rulesdir);
	assert_int_equal(ap_udev_rules_check(p), 0);
	/* a missing rules.d must not become a file of that name */
	snprintf(p, sizeof(p), "%s/missing.d", rulesdir);
	assert_int_equal(ap_udev_rules_check(p), -EINVAL);
	assert_int_equal(ap_udev_rules_write(p, v, 1, NULL), -EINVAL);
	assert_int_equal(access(p, F_OK), -1);
	snprintf(p, sizeof(p), "%s/.rules", rulesdir);
	assert_int_equal(ap_udev_rules_check(p), -EINVAL);
	snprintf(p, sizeof(p), "%s/x.rules.bak", rulesdir);
	assert_int_equal(ap_udev_rules_check(p), -EINVAL);
	snprintf(p, sizeof(p), "%s/missing/x.rules", tmpdir);
	assert_int_equal(ap_udev_rules_check(p), -ENOENT);
	/* a file where the directory should be */
	snprintf(file, sizeof(file), "%s/x.rules", rulesdir);
	assert_int_equal(ap_udev_rules_write(file, v, 1, NULL), 1);
	snprintf(p, sizeof(p), "%s/y.rules", file);
	assert_int_equal(ap_udev_rules_check(p), -ENOTDIR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_two_claimants, setup, teardown),
		cmocka_unit_test_setup_teardown(test_partition_takes_from_disk, setup, teardown),
		cmocka_unit_test(test_chain_ranks),
		cmocka_unit_test(test_cycle_refused),
		cmocka_unit_test(test_hostile_names),
		cmocka_unit_test_setup_teardown(test_stale_file_removed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_path_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_diskseq, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retrigger, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
