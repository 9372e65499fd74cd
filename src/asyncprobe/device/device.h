/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The device layer: what a device is to asyncprobe, the order of
 * devices, the system's devices and a device's children read from sysfs,
 * waits for devices, NVMe heads and the kernel uevent monitor.
 */
#ifndef ASYNCPROBE_DEVICE_H
#define ASYNCPROBE_DEVICE_H

#include "base/base.h"

struct udev;
struct udev_device;

/* ---------------------------- classify.c, order.c, enumerate.c, wait.c, monitor.c */

/* What a device is to the engine. */
enum ap_kind {
	AP_KIND_NONE = 0,
	AP_KIND_CONTROLLER,  /* needs a driver, has children: PCI storage, virtio, USB storage, ... */
	AP_KIND_SCSI,        /* a SCSI device (H:C:T:L): brings sd_mod / sr_mod, has a disk */
	AP_KIND_DISK,        /* a whole block device */
	AP_KIND_PARTITION,
	_AP_KIND_MAX,
};

const char *ap_kind_to_string(enum ap_kind k);

/*
 * The block device names udev's 60-persistent-storage.rules makes
 * /dev/disk links for (its KERNEL!= list), as fnmatch(3) patterns, NULL
 * at the end.  Other block devices (fd*, ram*, zram*, md*, dm-*, mtdblock*,
 * mmcblk*rpmb, ...) get no by-* link from udev and are never probed.
 * tests/asyncprobe/test-udev-rules checks the list against the rules file.
 */
extern const char *const ap_storage_names[];

/* True when the block device @sysname matches ap_storage_names. */
bool ap_storage_name(const char *sysname);

/*
 * Whether the loop device @sysname ("loop3") is one @include_loop (struct
 * ap_config's, from --include-loop[=NAMES]) lets through: NULL none, ""
 * every one, else only the names in that comma-separated list.
 */
bool ap_loop_included(const char *include_loop, const char *sysname);

/*
 * True when @list is a valid --include-loop= value: one or more loop
 * device names ("loop" and a number), separated by single commas.
 */
bool ap_loop_list_valid(const char *list);

/*
 * Classify @dev.  @all_modules makes every device with a MODALIAS a
 * controller (udev coldplug's behaviour); @include_loop (as for
 * ap_loop_included()) lets loop disks through.  Disks that must never be
 * probed (names outside ap_storage_names, empty removable drives) are
 * AP_KIND_NONE.
 */
enum ap_kind ap_classify(struct udev_device *dev, bool all_modules, const char *include_loop);

/*
 * The syspath of @syspath's owner: its nearest proper ancestor whose kind
 * is not AP_KIND_NONE; NULL when it has none (or on no memory).  Free it.
 * An NVMe multipath head (below /sys/devices/virtual/nvme-subsystem) has
 * no such ancestor: its owner is the first controller, in devpath order
 * (ap_devpath_compare()), that has a path to it, read from the head's
 * "multipath" directory; NULL when no controller has one.
 */
char *ap_owner_path(struct udev *udev, const char *syspath, bool all_modules,
		    const char *include_loop);

/*
 * False when the device at @syspath is AP_KIND_NONE for sure, by its
 * subsystem link and name alone (a SCSI host or target, a class device
 * of no interest): then no libudev device need be made of it.
 */
bool ap_path_may_matter(const char *syspath, bool all_modules);

/* True when the @n bytes at @s are a SCSI device's name, "H:C:T:L". */
bool ap_is_hctl(const char *s, size_t n);

/*
 * @dev's modalias: its "modalias" attribute, else its uevent MODALIAS.
 * Owned by @dev.
 */
const char *ap_device_modalias(struct udev_device *dev);

/* True for the modalias of a storage controller or disk device (PCI class 01xx or 0805, virtio block/SCSI, USB class 08, mmc:block). */
bool ap_modalias_is_storage(const char *modalias);

/*
 * Topological order of sysfs device paths: component by component; PCI
 * addresses (fixed-width hex) compare as strings, anything else with digit
 * runs compared as numbers, so host2 < host10 and 0:0:2:0 < 0:0:10:0.
 * A parent sorts before its children.
 */
int ap_devpath_compare(const char *a, const char *b);

/* A found device, as plain data: libudev objects never cross threads. */
struct ap_found {
	char *syspath;
	char *devpath;
	enum ap_kind kind;
	unsigned int partnum;   /* partitions: the kernel's partition number */
};

struct ap_found_list {
	struct ap_found *v;
	size_t n, allocated;
};

void ap_found_list_free(struct ap_found_list *l);
/* Sort by topology (partitions of one disk: by partition number). */
void ap_found_list_sort(struct ap_found_list *l);

/*
 * Enumerate the devices of interest.  With @parent_syspath NULL: every
 * controller, plus disks and SCSI devices that have no owner (loop disks,
 * scsi_debug, ...) - what the discovery call schedules.  With a parent: the
 * devices whose owner (ap_owner_path()) is that parent.  Result sorted.
 * Returns 0 or -errno.
 */
int ap_enumerate(struct udev *udev, const char *parent_syspath, bool all_modules,
		 const char *include_loop, struct ap_found_list *ret);

/*
 * How many descendants @syspath has in @subsystem, of @devtype (NULL: any)
 * and for which @match (NULL: every one) returns true.
 */
int ap_count_children(struct udev *udev, const char *syspath, const char *subsystem,
		      const char *devtype, bool (*match)(struct udev_device *d, void *arg),
		      void *arg);

/* Does @syspath have a descendant in @subsystem (and of @devtype, if not NULL)? */
bool ap_has_child(struct udev *udev, const char *syspath, const char *subsystem,
		  const char *devtype);

/* An NVMe controller's class device is live and has a namespace disk. */
bool ap_nvme_ctrl_ready(struct udev *udev, const char *syspath);

/*
 * NVMe native multipath: append to @out the namespace heads (nvme0n1, below
 * /sys/devices/virtual/nvme-subsystem) whose owner (ap_owner_path()) is the
 * controller at @ctrl_syspath: the first controller in devpath order with a
 * path to the head, so that only one controller ever lists a head, however
 * the controllers' calls are timed.  The caller sorts @out.
 */
void ap_enumerate_nvme_heads(struct udev *udev, const char *ctrl_syspath, struct ap_found_list *out);

/*
 * The kernel uevent monitor: a thread that owns a
 * udev_monitor_new_from_netlink(udev, "kernel") and, on every event, wakes
 * the waiters it concerns.  Started before enumeration, so no event
 * between enumeration and waiting is lost.
 */
struct ap_monitor;

typedef void ap_monitor_func_t(const char *action, const char *syspath, void *userdata);

int ap_monitor_start(struct ap_monitor **ret, ap_monitor_func_t *fn, void *userdata);
/* Stop the thread: no callback runs afterwards; waits keep working. */
void ap_monitor_stop(struct ap_monitor *m);
void ap_monitor_free(struct ap_monitor *m);

/*
 * Wait until @pred(@data) is true, re-evaluated on every uevent (and once
 * more at the deadline).  @m may be NULL (no monitor: the predicate is
 * checked once).  Returns 0, or -ETIMEDOUT.
 */
int ap_monitor_wait(struct ap_monitor *m, bool (*pred)(void *data), void *data,
		    unsigned int timeout_ms);
/*
 * The same, re-evaluated only on the uevents of @syspath and the devices
 * below it (and on kicks): for a predicate about that subtree alone.
 */
int ap_monitor_wait_below(struct ap_monitor *m, const char *syspath,
			  bool (*pred)(void *data), void *data, unsigned int timeout_ms);

/* Wake all waiters (the engine's state changed: a call published, probed...). */
void ap_monitor_kick(struct ap_monitor *m);

/*
 * udev_device_new_from_syspath(), tried up to three times while it fails
 * with ENODEV although @syspath's uevent file is there.  libudev says
 * ENODEV when it finds no uevent file; under umockdev that happened now
 * and then with several threads making devices at once (test-topology:
 * a SCSI device or a namespace missing from its controller's list, or
 * without a name, in about one run in 20 once the sysfs walk made the
 * enumerations fast; a second try always worked).  On a real system a
 * device that is there gets made at the first try, one that went away
 * fails at once.
 */
struct udev_device *ap_udev_device_new(struct udev *udev, const char *syspath);

#endif /* ASYNCPROBE_DEVICE_H */
