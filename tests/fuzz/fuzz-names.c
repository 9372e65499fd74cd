/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * From libblkid results to link names: an ap_fsinfo built from the input
 * goes through ap_names_for_device() for a real block device of this
 * machine (FUZZ_NAMES_SYSPATH, else loop0, vda, sda, nvme0n1 or the first
 * entry of /sys/class/block; the device's own by-id/by-path names come
 * from sysfs), then through a dry-run link registry.  Without any block
 * device nothing can be tested: the program says so and exits 77, which
 * fuzz-corpus.sh reports as a skip and run-fuzz.sh as a failure; a
 * FUZZ_NAMES_SYSPATH that cannot be opened exits 1.
 *
 * Input: byte 0 selects usage (bits 0-1: filesystem, other, crypto, raid),
 * ambivalent (bit 2) and the partition table (bit 3: gpt, else dos); the
 * rest is label, UUID, partition name and partition UUID, separated by NUL.
 *
 * Invariants: every name starts with "disk/by-"; ap_link_name_valid()
 * holds exactly for the names the registry did not reject; a valid name
 * never climbs out of its directory; by-label and by-uuid appear only for
 * filesystem, other and crypto, never for an ambivalent result.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libudev.h>

#include "base/base.h"
#include "probe/probe.h"
#include "links/links.h"
#include "fuzz.h"

static struct udev *udev;
static struct udev_device *dev;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *p = getenv("FUZZ_NAMES_SYSPATH");
	static const char *const tries[] = { "/sys/class/block/loop0", "/sys/class/block/vda",
					     "/sys/class/block/sda", "/sys/class/block/nvme0n1" };

	(void)argc;
	(void)argv;
	udev = udev_new();
	if (!udev) {
		fprintf(stderr, "fuzz-names: udev_new() failed\n");
		exit(1);
	}
	if (p) {
		dev = udev_device_new_from_syspath(udev, p);
		if (!dev) {
			fprintf(stderr, "fuzz-names: FUZZ_NAMES_SYSPATH=%s: no such device\n", p);
			exit(1);
		}
		return 0;
	}
	for (size_t i = 0; !dev && i < sizeof(tries) / sizeof(tries[0]); i++)
		dev = udev_device_new_from_syspath(udev, tries[i]);
	if (!dev) {
		DIR *d = opendir("/sys/class/block");
		struct dirent *de;
		char path[512];

		while (d && !dev && (de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/sys/class/block/%s", de->d_name);
			dev = udev_device_new_from_syspath(udev, path);
		}
		if (d)
			closedir(d);
	}
	if (!dev) {
		fprintf(stderr, "fuzz-names: no block device in /sys/class/block: nothing to name\n");
		exit(77);
	}
	fprintf(stderr, "fuzz-names: naming %s\n", udev_device_get_syspath(dev));
	return 0;
}

static char *field(const uint8_t **p, const uint8_t *end)
{
	const uint8_t *s = *p, *z;
	char *r;

	if (s >= end)
		return NULL;
	z = memchr(s, 0, (size_t)(end - s));
	if (!z)
		z = end;
	r = strndup((const char *)s, (size_t)(z - s));
	*p = z < end ? z + 1 : end;
	return r;
}

/* lexically: no ".." component, and at least disk/by-x/<leaf> */
static bool stays_inside(const char *name)
{
	int depth = 0;
	const char *p = name;

	for (;;) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return false;
		if (n > 0 && !(n == 1 && p[0] == '.'))
			depth++;
		if (!e)
			break;
		p = e + 1;
	}
	return depth >= 3;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const usages[] = { "filesystem", "other", "crypto", "raid" };
	struct ap_fsinfo fs = { 0 };
	struct ap_namelist l = { 0 };
	struct ap_links *links;
	const uint8_t *p = data + 1, *end = data + size;
	bool fs_links;

	if (size < 1 || size > 8192)
		return 0;
	fs.usage = strdup(usages[data[0] & 3]);
	fs.ambivalent = data[0] & 4;
	fs.part_entry_scheme = strdup(data[0] & 8 ? "gpt" : "dos");
	fs.label = field(&p, end);
	fs.uuid = field(&p, end);
	fs.part_entry_name = field(&p, end);
	fs.part_entry_uuid = field(&p, end);
	fs_links = (data[0] & 3) != 3 && !fs.ambivalent;

	fuzz_assert(ap_names_for_device(dev, &fs, &l) == 0);
	links = ap_links_new("/nonexistent/asyncprobe-fuzz", true);
	fuzz_assert(links);
	ap_links_publish(links, 1, udev_device_get_sysname(dev), NULL, &l);
	for (size_t i = 0; i < l.n; i++) {
		const char *n = l.names[i];

		fuzz_assert(strncmp(n, "disk/by-", 8) == 0);
		if (ap_link_name_valid(n))
			fuzz_assert(stays_inside(n));
		if (!fs_links)
			fuzz_assert(strncmp(n, "disk/by-label/", 14) != 0 && strncmp(n, "disk/by-uuid/", 13) != 0);
	}
	for (size_t i = 0; i < ap_links_log_size(links); i++) {
		const struct ap_link_event *e = ap_links_log_get(links, i);

		fuzz_assert(e->action == AP_LINK_REJECTED || e->action == AP_LINK_CREATED);
		fuzz_assert((e->action == AP_LINK_REJECTED) == !ap_link_name_valid(e->name));
	}
	ap_links_free(links);
	ap_namelist_free(&l);
	ap_fsinfo_clear(&fs);
	return 0;
}
