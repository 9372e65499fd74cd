/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The options asyncprobe inserts a module with (ap_modules_insert_options()):
 * async_probe added after the module's own options unless they name it,
 * with or without a value (the user's async_probe=0 wins); scsi_mod also
 * gets scan=sync unless its options name scan; nothing added without
 * @async but scsi_mod's scan.  Prints TAP.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "device/device.h"
#include "modules/modules.h"
#include "probe/probe.h"

static int test_no, failures;

static void check(const char *name, const char *own, bool async, const char *want)
{
	char *got = ap_modules_insert_options(name, own, async);
	bool good = got && strcmp(got, want) == 0;

	printf("%s %d - %s '%s'%s -> '%s'\n", good ? "ok" : "not ok", ++test_no, name, own,
	       async ? " async" : "", want);
	if (!good) {
		printf("# got '%s'\n", got ? got : "(null)");
		failures++;
	}
	free(got);
}

int main(void)
{
	printf("1..12\n");
	check("ext4", "", true, "async_probe");
	check("ext4", "", false, "");
	check("sym53c8xx", "cmd_per_lun=4", true, "cmd_per_lun=4 async_probe");
	check("sd_mod", "async_probe=0", true, "async_probe=0");
	check("sd_mod", "async_probe", true, "async_probe");
	check("sd_mod", "async_probe_x=1", true, "async_probe_x=1 async_probe");
	check("scsi_mod", "", true, "async_probe scan=sync");
	check("scsi-mod", "", false, "scan=sync");
	check("scsi_mod", "scan=async", true, "scan=async async_probe");
	check("scsi_mod", "dev_flags=\"a b scan=x\" max_luns=2", true,
	      "dev_flags=\"a b scan=x\" max_luns=2 async_probe scan=sync");
	check("scsi_mod", "async_probe=1 scan=none", true, "async_probe=1 scan=none");
	check("scsi_modx", "", true, "async_probe");
	return failures ? 1 : 0;
}
