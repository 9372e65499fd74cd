/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * asyncprobe probes the block devices udev's persistent-storage rules give
 * /dev/disk links to, and no others.  The rules file of this machine is
 * read at test time (AP_UDEV_RULES names another one): its KERNEL!= list,
 * the one that jumps to the end of the file, must be asyncprobe's list,
 * and every name below must be accepted by both or by neither.  A udev
 * update that changes the list makes this test fail.
 */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <libudev.h>

#include "base/base.h"
#include "device/device.h"
#include "modules/modules.h"
#include "probe/probe.h"

#define MAX_PATTERNS 64

static const char *rules_path;
static char rules_line[4096];
static char *patterns[MAX_PATTERNS];
static size_t n_patterns;

static const char *find_rules(void)
{
	static const char *const paths[] = {
		"/usr/lib/udev/rules.d/60-persistent-storage.rules",
		"/lib/udev/rules.d/60-persistent-storage.rules",
	};
	const char *env = getenv("AP_UDEV_RULES");
	size_t i;

	if (env && *env)
		return env;
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (access(paths[i], R_OK) == 0)
			return paths[i];
	return NULL;
}

/* The first line with KERNEL!="..." and GOTO="persistent_storage_end". */
static int read_patterns(const char *path)
{
	FILE *f = fopen(path, "re");
	char line[sizeof(rules_line)], *v, *end, *tok, *save;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		v = strstr(line, "KERNEL!=\"");
		if (!v || !strstr(line, "GOTO=\"persistent_storage_end\""))
			continue;
		v += strlen("KERNEL!=\"");
		end = strchr(v, '"');
		if (!end)
			break;
		*end = '\0';
		snprintf(rules_line, sizeof(rules_line), "%s", v);
		for (tok = strtok_r(v, "|", &save); tok && n_patterns < MAX_PATTERNS;
		     tok = strtok_r(NULL, "|", &save))
			patterns[n_patterns++] = strdup(tok);
		break;
	}
	fclose(f);
	return n_patterns ? 0 : -1;
}

/* udev's KERNEL== match: any alternative, shell glob. */
static bool udev_matches(const char *name)
{
	size_t i;

	for (i = 0; i < n_patterns; i++)
		if (fnmatch(patterns[i], name, 0) == 0)
			return true;
	return false;
}

static int setup(void **state)
{
	rules_path = find_rules();
	if (rules_path)
		(void)read_patterns(rules_path);
	return 0;
}

static void need_rules(void)
{
	if (!rules_path || !n_patterns) {
		print_message("# no 60-persistent-storage.rules with a KERNEL!= list "
			      "(Debian: udev; or set AP_UDEV_RULES)\n");
		skip();
	}
}

static void test_same_list(void **state)
{
	size_t i, n = 0;
	bool ok = true;

	need_rules();
	print_message("# %s: KERNEL!=\"%s\"\n", rules_path, rules_line);
	for (i = 0; i < n_patterns; i++) {
		size_t j;
		bool found = false;

		for (j = 0; ap_storage_names[j]; j++)
			found |= strcmp(patterns[i], ap_storage_names[j]) == 0;
		if (!found) {
			print_message("# udev has %s, asyncprobe does not\n", patterns[i]);
			ok = false;
		}
	}
	for (n = 0; ap_storage_names[n]; n++) {
		bool found = false;

		for (i = 0; i < n_patterns; i++)
			found |= strcmp(patterns[i], ap_storage_names[n]) == 0;
		if (!found) {
			print_message("# asyncprobe has %s, udev does not\n", ap_storage_names[n]);
			ok = false;
		}
	}
	assert_true(ok);
	assert_int_equal(n, n_patterns);
}

/* Names seen on real machines, kept and skipped alike. */
static void test_same_decisions(void **state)
{
	static const char *const names[] = {
		"sda", "sda1", "sdz", "sdaa12", "sr0", "vda", "vdb3", "xvda", "xvda1",
		"nvme0n1", "nvme0n1p2", "nvme1c1n1", "mmcblk0", "mmcblk0p1", "mmcblk0boot0",
		"mmcblk0boot1", "mmcblk0rpmb", "msblk0", "mspblk1", "loop0", "loop7p1",
		"nbd0", "nbd0p1", "pmem0", "pmem0s", "bcache0", "cciss!c0d0", "dasda",
		"ubda", "ubi0_0", "scma", "zd0", "zd16",
		"fd0", "fd1", "ram0", "ram15", "zram0", "md0", "md127", "md0p1", "dm-0",
		"dm-12", "mtdblock0", "hda", "hdb1", "sgx", "rbd0", "drbd0", "nullb0", "sg0",
		"btibm0", "gnbd0",
	};
	size_t i;
	bool ok = true;

	need_rules();
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		bool udev = udev_matches(names[i]), ours = ap_storage_name(names[i]);

		if (udev != ours) {
			print_message("# %s: udev %s, asyncprobe %s\n", names[i],
				      udev ? "links it" : "skips it", ours ? "probes it" : "skips it");
			ok = false;
		}
	}
	assert_true(ok);
	/* the floppy that started it, and the RAM disks the old check knew */
	assert_false(ap_storage_name("fd0"));
	assert_false(ap_storage_name("zram0"));
	assert_false(ap_storage_name("ram0"));
	assert_true(ap_storage_name("sda"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_list),
		cmocka_unit_test(test_same_decisions),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
