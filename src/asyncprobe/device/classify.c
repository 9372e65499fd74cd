/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Classification: what a device is to the engine (ap_classify()), the
 * block device names udev links, modaliases of storage controllers.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <string.h>
#include <unistd.h>

#include <libudev.h>

#include "base/base.h"
#include "device/device.h"

#include "internal.h"

const char *ap_kind_to_string(enum ap_kind k)
{
	static const char *const names[_AP_KIND_MAX] = {
		[AP_KIND_NONE] = "none",
		[AP_KIND_CONTROLLER] = "controller",
		[AP_KIND_SCSI] = "scsi",
		[AP_KIND_DISK] = "disk",
		[AP_KIND_PARTITION] = "partition",
	};

	return k >= 0 && k < _AP_KIND_MAX ? names[k] : "?";
}

struct udev_device *ap_udev_device_new(struct udev *udev, const char *syspath)
{
	char uevent[PATH_MAX];
	struct udev_device *d;
	int i;

	for (i = 0;; i++) {
		d = udev_device_new_from_syspath(udev, syspath);
		if (d || i == 2 || errno != ENODEV ||
		    snprintf(uevent, sizeof(uevent), "%s/uevent", syspath) >= (int)sizeof(uevent) ||
		    access(uevent, F_OK) < 0)
			return d;
		log_dev_debug(syspath,
			      "libudev could not make a device of it (%m) although its uevent file "
			      "is there; again");
	}
}

unsigned long dev_sysattr_ulong(struct udev_device *dev, const char *attr, int base,
				   unsigned long dflt)
{
	const char *v = udev_device_get_sysattr_value(dev, attr);
	char *end;
	unsigned long r;

	if (!v)
		return dflt;
	errno = 0;
	r = strtoul(v, &end, base);
	if (errno || end == v)
		return dflt;
	return r;
}

/* udev 252's list, in its order ("loop*" as well: --include-loop decides) */
const char *const ap_storage_names[] = {
	"loop*", "mmcblk*[0-9]", "msblk*[0-9]", "mspblk*[0-9]", "nvme*", "sd*", "sr*",
	"vd*", "xvd*", "bcache*", "cciss*", "dasd*", "ubd*", "ubi*", "scm*", "pmem*",
	"nbd*", "zd*", NULL
};

bool ap_storage_name(const char *sysname)
{
	size_t i;

	for (i = 0; ap_storage_names[i]; i++)
		if (fnmatch(ap_storage_names[i], sysname, 0) == 0)
			return true;
	return false;
}

/* "loop" and a number, the @n bytes at @s */
static bool is_loop_name(const char *s, size_t n)
{
	size_t i;

	if (n <= 4 || strncmp(s, "loop", 4) != 0)
		return false;
	for (i = 4; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

bool ap_loop_list_valid(const char *list)
{
	const char *p = list, *comma;

	if (!list || !*list)
		return false;
	for (;;) {
		comma = strchrnul(p, ',');
		if (!is_loop_name(p, (size_t)(comma - p)))
			return false;
		if (!*comma)
			return true;
		p = comma + 1;
	}
}

bool ap_loop_included(const char *include_loop, const char *sysname)
{
	const char *p, *comma;
	size_t len;

	if (!include_loop || !sysname)
		return false;
	if (!*include_loop)
		return true;            /* bare --include-loop: every loop device */
	len = strlen(sysname);
	for (p = include_loop;; p = comma + 1) {
		comma = strchrnul(p, ',');
		if ((size_t)(comma - p) == len && strncmp(p, sysname, len) == 0)
			return true;
		if (!*comma)
			return false;
	}
}

static enum ap_kind classify_block(struct udev_device *dev, const char *include_loop)
{
	const char *devtype = udev_device_get_devtype(dev);
	const char *name = udev_device_get_sysname(dev);

	/*
	 * What udev's persistent-storage rules leave alone gets no link from
	 * asyncprobe either: floppies (an I/O error on an empty drive), RAM
	 * disks, device-mapper and md devices (their own rules name them),
	 * eMMC RPMB partitions, ...
	 */
	if (!name || !ap_storage_name(name))
		return AP_KIND_NONE;
	if (ap_streq_ptr(devtype, "partition"))
		return AP_KIND_PARTITION;
	if (!ap_streq_ptr(devtype, "disk"))
		return AP_KIND_NONE;
	/* only the loop devices --include-loop names (all with no list) */
	if (ap_startswith(name, "loop") && !ap_loop_included(include_loop, name))
		return AP_KIND_NONE;
	/* NVMe multipath path devices: hidden, no node; the head is the disk. */
	if (dev_sysattr_ulong(dev, "hidden", 10, 0) == 1)
		return AP_KIND_NONE;
	/*
	 * Empty drives (card readers, CD drives without a medium, unbound
	 * loop devices) report size 0: nothing to probe.
	 */
	if (dev_sysattr_ulong(dev, "size", 10, 0) == 0)
		return AP_KIND_NONE;
	return AP_KIND_DISK;
}

/*
 * "H:C:T:L", the name the SCSI midlayer gives every SCSI device (its hosts
 * are "hostN", its targets "targetH:C:T"), @n bytes at @s.
 */
bool ap_is_hctl(const char *s, size_t n)
{
	unsigned int colons = 0;
	bool digit = false;
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] >= '0' && s[i] <= '9') {
			digit = true;
		} else if (s[i] == ':' && digit) {
			colons++;
			digit = false;
		} else {
			return false;
		}
	}
	return colons == 3 && digit;
}

/*
 * A device's modalias: its "modalias" attribute, else the MODALIAS of its
 * uevent file (umockdev's recordings may hold only that).  The attribute
 * comes first because showing the uevent file takes the device's lock
 * (uevent_show(), drivers/base/core.c), which a driver's probe holds
 * for as long as it runs: sd's of a disk that never answers, forever.
 */
const char *ap_device_modalias(struct udev_device *dev)
{
	const char *m = udev_device_get_sysattr_value(dev, "modalias");

	return m && *m ? m : udev_device_get_property_value(dev, "MODALIAS");
}

/*
 * Classified by sysfs names, links and attributes wherever they tell, not
 * by the uevent file's DEVTYPE and MODALIAS (see ap_device_modalias()):
 * a SCSI device by its name, so that neither classifying a disk's SCSI
 * device nor climbing to it from below waits for its upper driver's probe.
 */
enum ap_kind ap_classify(struct udev_device *dev, bool all_modules, const char *include_loop)
{
	const char *subsystem = udev_device_get_subsystem(dev);
	const char *sysname, *devtype, *modalias = NULL;

	if (!subsystem)
		return AP_KIND_NONE;
	if (strcmp(subsystem, "block") == 0)
		return classify_block(dev, include_loop);

	if (strcmp(subsystem, "scsi") == 0) {
		sysname = udev_device_get_sysname(dev);
		return sysname && ap_is_hctl(sysname, strlen(sysname)) ? AP_KIND_SCSI : AP_KIND_NONE;
	}

	if (all_modules) {
		modalias = ap_device_modalias(dev);
		if (modalias && *modalias)
			return AP_KIND_CONTROLLER;
	}

	if (strcmp(subsystem, "pci") == 0) {
		unsigned long class = dev_sysattr_ulong(dev, "class", 16, 0);

		/* 01xxxx mass storage (IDE, SATA, SAS, RAID, NVMe, virtio-blk/scsi); 0805 SD host */
		if ((class >> 16) == 0x01 || (class >> 8) == 0x0805)
			return AP_KIND_CONTROLLER;
		return AP_KIND_NONE;
	}
	if (strcmp(subsystem, "virtio") == 0) {
		modalias = modalias ? modalias : ap_device_modalias(dev);
		/* device id 2 is block, 8 is SCSI host */
		if (ap_startswith(modalias, "virtio:d00000002v") || ap_startswith(modalias, "virtio:d00000008v"))
			return AP_KIND_CONTROLLER;
		return AP_KIND_NONE;
	}
	if (strcmp(subsystem, "usb") == 0) {
		devtype = udev_device_get_devtype(dev);
		if (ap_streq_ptr(devtype, "usb_interface") &&
		    dev_sysattr_ulong(dev, "bInterfaceClass", 16, 0) == 0x08)
			return AP_KIND_CONTROLLER;
		return AP_KIND_NONE;
	}
	if (strcmp(subsystem, "mmc") == 0) {
		modalias = modalias ? modalias : ap_device_modalias(dev);
		return ap_streq_ptr(modalias, "mmc:block") ? AP_KIND_CONTROLLER : AP_KIND_NONE;
	}
	return AP_KIND_NONE;
}

/*
 * Whether a modalias names a storage device: PCI class 01 (mass storage)
 * or 0805 (SD host), virtio block or SCSI, a USB interface of class 08,
 * an MMC card.  Used to tell "no driver for this disk controller" from the
 * many devices nobody needs a driver for.
 */
bool ap_modalias_is_storage(const char *modalias)
{
	const char *p;

	if (!modalias)
		return false;
	if (ap_startswith(modalias, "pci:")) {
		p = strstr(modalias, "bc");
		if (!p)
			return false;
		return strncasecmp(p, "bc01", 4) == 0 || strncasecmp(p, "bc08sc05", 8) == 0;
	}
	if (ap_startswith(modalias, "virtio:"))
		return ap_startswith(modalias, "virtio:d00000002v") ||
		       ap_startswith(modalias, "virtio:d00000008v");
	if (ap_startswith(modalias, "usb:")) {
		p = strstr(modalias, "ic");
		return p && strncasecmp(p, "ic08", 4) == 0;
	}
	return strcmp(modalias, "mmc:block") == 0;
}
