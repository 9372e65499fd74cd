/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libblkid probing of one disk or partition, with the settings udev's blkid
 * builtin uses: superblocks with label, UUID, type, usage and version;
 * partitions with entry details; blkid_do_safeprobe(), so conflicting
 * signatures yield nothing rather than a guess.
 */
#include <errno.h>
#include <string.h>

#include <blkid.h>

#include "base/base.h"
#include "device/device.h"
#include "modules/modules.h"
#include "probe/probe.h"

static char *value(blkid_probe pr, const char *name)
{
	const char *data;
	size_t len;

	if (blkid_probe_lookup_value(pr, name, &data, &len) < 0 || !data)
		return NULL;
	/* len counts the terminating NUL; values may hold anything else */
	return strndup(data, len > 0 && data[len - 1] == '\0' ? len - 1 : len);
}

int ap_probe_device(const char *devnode, struct ap_fsinfo *fs)
{
	blkid_probe pr;
	char *num;
	int r;

	errno = 0;
	pr = blkid_new_probe_from_filename(devnode);
	if (!pr) {
		fs->error = errno ? -errno : -EIO;
		return fs->error;
	}
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_LABEL | BLKID_SUBLKS_UUID |
					  BLKID_SUBLKS_TYPE | BLKID_SUBLKS_SECTYPE |
					  BLKID_SUBLKS_USAGE | BLKID_SUBLKS_VERSION);
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, BLKID_PARTS_ENTRY_DETAILS);

	errno = 0;
	r = blkid_do_safeprobe(pr);
	if (r == -2) {
		/* several signatures claim the device: report none */
		fs->ambivalent = true;
		r = 1;
		goto out;
	}
	if (r < 0) {
		fs->error = errno ? -errno : -EIO;
		r = fs->error;
		goto out;
	}
	if (r == 1)
		goto out;

	fs->type = value(pr, "TYPE");
	fs->usage = value(pr, "USAGE");
	fs->uuid = value(pr, "UUID");
	fs->uuid_sub = value(pr, "UUID_SUB");
	fs->label = value(pr, "LABEL");
	fs->version = value(pr, "VERSION");
	fs->pttype = value(pr, "PTTYPE");
	fs->ptuuid = value(pr, "PTUUID");
	fs->part_entry_scheme = value(pr, "PART_ENTRY_SCHEME");
	fs->part_entry_uuid = value(pr, "PART_ENTRY_UUID");
	fs->part_entry_name = value(pr, "PART_ENTRY_NAME");
	fs->part_entry_type = value(pr, "PART_ENTRY_TYPE");
	num = value(pr, "PART_ENTRY_NUMBER");
	if (num)
		fs->part_entry_number = (unsigned int)strtoul(num, NULL, 10);
	free(num);
	r = 0;
out:
	blkid_free_probe(pr);
	return r;
}

char *ap_probe_fstype(const char *devnode)
{
	struct ap_fsinfo fs = { .type = NULL };
	char *type;

	ap_probe_device(devnode, &fs);
	type = fs.type;
	fs.type = NULL;
	ap_fsinfo_clear(&fs);
	return type;
}
