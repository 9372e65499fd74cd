/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Between the files of probe/ (not for other folders: probe.h is their
 * interface): the sysfs readers and cleanup helpers identity.c shares with
 * identity-data.c and path-id.c.
 */
#ifndef ASYNCPROBE_PROBE_INTERNAL_H
#define ASYNCPROBE_PROBE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <libudev.h>

#include "base/base.h"

static inline void probe_closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}
#define _cleanup_close_ _cleanup_(probe_closep)

static inline void probe_udev_device_unrefp(struct udev_device **d)
{
	if (*d)
		udev_device_unref(*d);
}
#define _cleanup_udev_device_ _cleanup_(probe_udev_device_unrefp)

/* identity.c: the whitespace step, then the replace step, as udev's id helpers clean a string (malloc'ed). */
char *probe_clean_id_string(const char *s, size_t len);

/* identity.c: read a binary sysfs attribute of @dev into a malloc()ed buffer. */
int probe_read_binary_attr(struct udev_device *dev, const char *attr, uint8_t **ret, size_t *ret_len);

/* identity.c: an attribute with trailing whitespace removed, NULL if absent or empty. */
const char *probe_attr_nonempty(struct udev_device *dev, const char *attr, char *buf, size_t size);

/*
 * identity.c: ATTRS{attr}=="?*" then $attr{attr}: the raw value of the first
 * of @dev and its parents whose attribute is non-empty after trailing whitespace.
 */
const char *probe_attrs_lookup(struct udev_device *dev, const char *attr);

#endif /* ASYNCPROBE_PROBE_INTERNAL_H */
