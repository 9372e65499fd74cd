/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Coldplug internals shared by engine*.c, discovery.c, modules*.c and probe.c
 * (and the unit tests, which link libasyncprobe.la).  Not a contract with
 * the other areas: engine.h is.
 */
#ifndef ASYNCPROBE_COLDPLUG_H
#define ASYNCPROBE_COLDPLUG_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "asyncprobe.h"
#include "names.h"

struct udev;
struct udev_device;

/* ------------------------------------------------------------ discovery */

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
 * Classify @dev.  @all_modules makes every device with a MODALIAS a
 * controller (udev coldplug's behaviour); @include_loop lets loop disks
 * through.  Disks that must never be probed (names outside
 * ap_storage_names, empty removable drives) are AP_KIND_NONE.
 */
enum ap_kind ap_classify(struct udev_device *dev, bool all_modules, bool include_loop);

/*
 * The syspath of @syspath's owner: its nearest proper ancestor whose kind
 * is not AP_KIND_NONE; NULL when it has none (or on no memory).  Free it.
 */
char *ap_owner_path(struct udev *udev, const char *syspath, bool all_modules, bool include_loop);

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
		 bool include_loop, struct ap_found_list *ret);

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
 * /sys/devices/virtual/nvme-subsystem) that have a path through the
 * controller at @ctrl_syspath.  The caller sorts @out.
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

/* -------------------------------------------------------------- modules */

enum ap_modresult {
	AP_MOD_OK = 0,          /* loaded now, or already loaded */
	AP_MOD_BUILTIN,         /* built into the kernel */
	AP_MOD_DRY_RUN,         /* would be loaded */
	AP_MOD_BLACKLISTED,
	AP_MOD_FAILED,
	AP_MOD_NONE,            /* no module for this alias */
	_AP_MOD_MAX,
};
const char *ap_modresult_to_string(enum ap_modresult r);

/* One module a device asked for. */
struct ap_modload {
	char *module;
	enum ap_modresult result;
	int error;              /* -errno for AP_MOD_FAILED */
	char **chain;           /* load order, module names (deps, softdeps, itself) */
	size_t n_chain;
	bool inserted;          /* this call inserted it (timing dependent) */
	uint64_t t0_ns, t1_ns;
};

struct ap_modules;

/*
 * Open the module tree: @modules_dir, or @basedir/lib/modules/@kver
 * (@kver NULL: the running kernel; if that is missing under @basedir and
 * exactly one version is there, that one).  @config: a modprobe.d file or
 * directory instead of the system's (NULL: /etc/modprobe.d and friends).
 * Returns 0, -ENOENT when there
 * is no tree or index (a message says which), or another -errno.
 */
int ap_modules_new(struct ap_modules **ret, const char *basedir, const char *modules_dir,
		   const char *kver, const char *config, bool dry_run);
struct ap_modules *ap_modules_free(struct ap_modules *m);
const char *ap_modules_dir(struct ap_modules *m);
/* True when the tree is not the running kernel's: loaded-state is ignored. */
bool ap_modules_foreign(struct ap_modules *m);

/* Add module names that must not be loaded (modprobe.blacklist=a,b). */
void ap_modules_blacklist(struct ap_modules *m, const char *comma_list);

/*
 * Load what @modalias resolves to.  Results are appended to *loads
 * (*n_loads entries); every module of the alias is tried, a failure never
 * stops the others.  @who names the device in messages.  Thread-safe: the
 * libkmod context is used under a mutex, insertion runs outside it.
 * Returns the number of failed modules.
 */
int ap_modules_load_alias(struct ap_modules *m, const char *modalias, const char *who,
			  struct ap_modload **loads, size_t *n_loads);

/*
 * Load @name, a module name or an alias (fs-ext4), as
 * ap_modules_load_alias() does, for a caller that keeps no results (PID 1:
 * the modules of the kernel command line, file system drivers).  @who
 * says what it is for in messages.  When nothing provides @name it warns,
 * unless @quiet_missing.  Returns 0, -ENOENT when nothing provides it, or
 * -EIO when a module failed (a message said which).  @device: @name is
 * a device driver (the kernel command line's modules), inserted like a
 * controller's own driver, without async_probe; else (file systems,
 * character sets) every module is inserted with async_probe, so a hung
 * disk's asynchronous probe cannot hold PID 1 in the insertion.
 */
int ap_modules_load_name(struct ap_modules *m, const char *name, const char *who,
			 bool quiet_missing, bool device);

/*
 * After a controller's modules were loaded: when it has no driver
 * (@driver NULL), is a storage device (ap_modalias_is_storage()) and its
 * modalias resolved to no module at all (no entry in *loads), say so
 * with the device's name, sysfs path and modalias, and append an
 * AP_MOD_NONE entry (module "") so the summary and the manifest count it.
 * Returns 1 when it reported the device, else 0.
 */
int ap_modules_note_unbound(struct ap_modules *m, const char *modalias, const char *who,
			    const char *syspath, const char *driver,
			    struct ap_modload **loads, size_t *n_loads);

void ap_modload_clear(struct ap_modload *l);

/*
 * Did this run begin to insert module @name ('-' and '_' alike)?  A
 * device bound to such a module's driver was probed after the run began,
 * so the engine saw (or will see) the "bind" uevent that ends its probe.
 */
bool ap_modules_touched(struct ap_modules *m, const char *name);

/*
 * Does the SCSI midlayer scan hosts synchronously, inside their driver's
 * probe (scsi_mod's parameter scan is "sync")?  asyncprobe inserts
 * scsi_mod with scan=sync unless told otherwise (modules.c).
 */
bool ap_modules_scsi_scan_sync(void);

/*
 * The options to insert module @name with, given its own (@options, from
 * modprobe.d and the kernel command line): with async_probe added when
 * @async unless @options name it (with any value), and for scsi_mod
 * scan=sync unless they name scan (modules.c explains both).  @async is
 * for modules that probe no device of their own or probe asynchronously
 * anyway (file systems, libraries), on kernels that know the parameter
 * (ap_kernel_has_async_probe()).  Returns a malloc'ed string, NULL on
 * ENOMEM.
 */
char *ap_modules_insert_options(const char *name, const char *options, bool async);

/*
 * While on, a device's own driver inserted by the calling thread gets
 * async_probe too (the root's controller in a fastboot run, modules.c):
 * the caller then waits for the driver's probe and what it enumerates
 * itself.  Per thread; off by default.
 */
void ap_modules_set_async_own(bool on);

/* Does the running kernel take async_probe for every module (Linux 4.2 and later)? */
bool ap_kernel_has_async_probe(void);

/*
 * For --resolve-modalias: print the load plan of @modalias (what
 * `modprobe --show-depends` prints: insmod PATH [OPTIONS], builtin NAME,
 * install COMMAND), loaded state ignored.  Returns the number of modules.
 */
int ap_modules_show(struct ap_modules *m, const char *modalias, FILE *out);

/* ---------------------------------------------------------------- probe */

/*
 * Probe @devnode with libblkid (superblocks with LABEL, UUID, TYPE, USAGE,
 * VERSION; partition table and PART_ENTRY_* details) using safeprobe
 * semantics.  Fills @fs (raw values).  Returns 0 when something was found,
 * 1 when nothing, negative errno on failure (also stored in fs->error).
 */
int ap_probe_device(const char *devnode, struct ap_fsinfo *fs);

/* The file system type ap_probe_device() finds on @devnode (malloc'ed), or NULL. */
char *ap_probe_fstype(const char *devnode);

#endif
