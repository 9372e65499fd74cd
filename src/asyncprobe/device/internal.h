/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Between the files of device/ (not for other folders: device.h is their
 * interface): the sysfs walker enumerate.c shares with the waits.
 */
#ifndef ASYNCPROBE_DEVICE_INTERNAL_H
#define ASYNCPROBE_DEVICE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

struct udev_device;

/* classify.c: the sysfs attribute @attr of @dev as a number in @base, @dflt when absent or not a number. */
unsigned long dev_sysattr_ulong(struct udev_device *dev, const char *attr, int base,
				unsigned long dflt);

/* enumerate.c: how far the sysfs walk descends (see subtree_walk() there). */
enum {
	SUBTREE_STOP_SCSI = 1 << 0,   /* report a SCSI device, look at nothing below it */
	SUBTREE_STOP_BLOCK = 1 << 1,  /* report a block device, not its partitions */
};

typedef int (*dev_subtree_fn)(const char *syspath, void *arg);

/*
 * enumerate.c: call @fn for every device below @syspath (not @syspath
 * itself) whose subsystem is in @subsystems (any device when NULL),
 * stopping as @flags says; a negative return of @fn ends the walk and is
 * returned.
 */
int dev_subtree_foreach(const char *syspath, const char *const *subsystems,
			unsigned int flags, dev_subtree_fn fn, void *arg);

#endif /* ASYNCPROBE_DEVICE_INTERNAL_H */
