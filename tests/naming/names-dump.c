/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * names-dump SYSPATH...: print the link names asyncprobe gives each block
 * device, one "name" per line, probing it with libblkid the way udev's
 * blkid builtin does (superblocks with label, UUID, type, usage; partition
 * entry values).  Used by udev-compare.sh against `udevadm test`.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <blkid.h>
#include <libudev.h>

#include "base/base.h"
#include "probe/probe.h"
#include "links/links.h"

static char *dupval(blkid_probe pr, const char *name)
{
	const char *v;

	if (blkid_probe_lookup_value(pr, name, &v, NULL) < 0)
		return NULL;
	return strdup(v);
}

static void probe(const char *node, struct ap_fsinfo *fs)
{
	blkid_probe pr;
	int fd, r;

	memset(fs, 0, sizeof(*fs));
	fd = open(node, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	pr = blkid_new_probe();
	if (!pr || blkid_probe_set_device(pr, fd, 0, 0) < 0) {
		close(fd);
		return;
	}
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_LABEL | BLKID_SUBLKS_UUID | BLKID_SUBLKS_TYPE |
					      BLKID_SUBLKS_SECTYPE | BLKID_SUBLKS_USAGE | BLKID_SUBLKS_VERSION);
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, BLKID_PARTS_ENTRY_DETAILS);
	r = blkid_do_safeprobe(pr);
	if (r == -2)
		fs->ambivalent = true;
	if (r == 0) {
		fs->type = dupval(pr, "TYPE");
		fs->usage = dupval(pr, "USAGE");
		fs->uuid = dupval(pr, "UUID");
		fs->label = dupval(pr, "LABEL");
		fs->pttype = dupval(pr, "PTTYPE");
		fs->part_entry_scheme = dupval(pr, "PART_ENTRY_SCHEME");
		fs->part_entry_uuid = dupval(pr, "PART_ENTRY_UUID");
		fs->part_entry_name = dupval(pr, "PART_ENTRY_NAME");
	}
	blkid_free_probe(pr);
	close(fd);
}

int main(int argc, char **argv)
{
	struct udev *udev = udev_new();
	const char *devdir = getenv("NAMES_DUMP_DEV");

	for (int i = 1; i < argc; i++) {
		struct udev_device *d = udev_device_new_from_syspath(udev, argv[i]);
		struct ap_fsinfo fs;
		struct ap_namelist l;
		char node[4096];

		if (!d) {
			fprintf(stderr, "names-dump: %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		snprintf(node, sizeof(node), "%s/%s", devdir ? devdir : "/dev", udev_device_get_sysname(d));
		probe(node, &fs);
		if (ap_names_for_device(d, &fs, &l) < 0)
			return 1;
		for (size_t k = 0; k < l.n; k++)
			printf("%s %s\n", udev_device_get_sysname(d), l.names[k]);
		ap_namelist_free(&l);
		ap_fsinfo_clear(&fs);
		udev_device_unref(d);
	}
	udev_unref(udev);
	return 0;
}
