/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The modules layer: driver loading through libkmod (modules.c; the
 * load plan in modules-plan.c, the insertion in modules-insert.c,
 * their private interface in internal.h).
 */
#ifndef ASYNCPROBE_MODULES_H
#define ASYNCPROBE_MODULES_H

#include "base/base.h"
#include "device/device.h"

/* ------------------------------------------------------------- modules.c */

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

#endif /* ASYNCPROBE_MODULES_H */
