/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of PID 1 and the initrd unit share (private to init*.c).
 * init.c has the theory of operation and drives the boot; the others are
 * leaves it calls, and call no function of init.c:
 *
' *   init-engine.c      the probe run: in a child process as PID 1, which
 *                      only waits for it (never blocks on device I/O)
 *   init-bootparams.c  the kernel command line applied to the config, the run
 *                      directory, the module tree init loads from
 *   init-mounts.c      the API file systems, the console, mount options,
 *                      the kernel's file system types
 *   init-root.c        waiting for the root device, mounting it
 *   init-switch.c      switch_root: moving mounts, deleting the initramfs,
 *                      finding the init to exec
 *   init-rescue.c      the diagnosis, the rescue shell, the crash handler
 */
#ifndef ASYNCPROBE_INIT_INTERNAL_H
#define ASYNCPROBE_INIT_INTERNAL_H

#include <stdbool.h>
#include <stdio.h>

#include "boot/boot.h"
#include "engine/engine.h"

#define NEWROOT "/newroot"

/* ----------------------------------------------------- init-engine.c */

struct ap_init_engine;

/*
 * Start a probe run.  With @child (PID 1) the engine runs in a child
 * process with a mount namespace of its own and this process only waits
 * for it; without, or where the child cannot have its namespace, in this
 * process (ap_stop_engine_start(): a stop signal reaches it).  @cfg must
 * outlive the run.  0 or -errno.
 */
int ap_init_engine_start(const struct ap_config *cfg, bool child, struct ap_init_engine **ret);

/*
 * As ap_engine_wait_path(); in a child's run, checked with stat() every
 * few milliseconds.  -ECHILD: the engine did not start
 * (ap_init_engine_start_error() says why).
 */
int ap_init_engine_wait_path(struct ap_init_engine *ie, const char *relpath,
			     unsigned int timeout_ms);

/*
 * Until every call is published or abandoned: the exit status (AP_EXIT_*).
 * A child's run that neither finishes nor makes a link for 30 s plus 3
 * device timeouts is left running (logged; AP_EXIT_DEGRADED).
 */
int ap_init_engine_finish(struct ap_init_engine *ie);

/* Why the engine did not start (-errno), or 0. */
int ap_init_engine_start_error(const struct ap_init_engine *ie);

/* ap_engine_dump_state(), from the child when it runs there. */
void ap_init_engine_dump_state(struct ap_init_engine *ie, FILE *f);

/*
 * When the run finished, in ms since boot (after ap_init_engine_finish(),
 * or once ap_init_engine_finished() said so): the child's own time, or now.
 */
uint64_t ap_init_engine_finished_ms(const struct ap_init_engine *ie);

/* Does the run go on in a child process (not in this one)? */
bool ap_init_engine_in_child(const struct ap_init_engine *ie);

/* Is the run over: every call published or abandoned (or no run)? */
bool ap_init_engine_finished(struct ap_init_engine *ie);

/*
 * PID 1 switched root while the child's run goes on: tell the child that
 * it now owns the end of the boot's run (see init-engine.c), deleting the
 * initramfs included, which PID 1 left alone.  False when the child cannot
 * be told (gone): then nobody deletes the initramfs.
 */
bool ap_init_engine_handover(struct ap_init_engine *ie);

/* Free; a child is told to exit (when done) and never waited for. */
struct ap_init_engine *ap_init_engine_free(struct ap_init_engine *ie);

/* ------------------------------------------------- init-bootparams.c */

/* Where init writes its outputs: $ASYNCPROBE_RUNDIR, else /run/asyncprobe. */
const char *ap_init_run_dir(void);

/*
 * Append a line of key=value timing to init.log in the run directory
 * (milliseconds since boot; see asyncprobe-cmdline(7)).  Errors are
 * ignored: the boot goes on without its timing.
 */
void ap_init_timing(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Read and parse the kernel command line into @bp (logged).  0 or -errno. */
int ap_init_load_bootparams(struct ap_bootparams *bp);

/*
 * Apply @bp to @cfg (options given to asyncprobe win); with @outputs,
 * the manifest (and with asyncprobe.trace the trace and plot) go to the
 * run directory.
 */
void ap_init_apply_bootparams(struct ap_config *cfg, const struct ap_bootparams *bp,
			      bool outputs);

/* asyncprobe.modules= and rd.driver.pre=: load them before the run. */
void ap_init_load_cmdline_modules(const struct ap_config *cfg, const struct ap_bootparams *bp);

/*
 * Load module or alias @name (ap_modules_load_name()) from the module tree
 * @cfg names (-b, -S, --modules-dir, -C), opened on first use.  @who
 * says what for; @quiet_missing: no warning when nothing provides it.
 */
void ap_init_load_module(const struct ap_config *cfg, const char *name, const char *who, bool quiet_missing, bool device);

/* Close that module tree (before exec, at the end of the unit). */
void ap_init_modules_close(void);

/* ------------------------------------------------------ init-mounts.c */

/*
 * Whether statx() says @name (relative to @dirfd, not followed) is the
 * root of a mount: 1 or 0, or -1 when it cannot tell (an old kernel, or
 * no such file).
 */
int ap_init_statx_mount_root(int dirfd, const char *name);

/* Mount /proc, /sys, /dev and /run where they are not mounted yet. */
int ap_init_mount_api(void);

/*
 * Lift the kernel log's rate limit for /dev/kmsg writers (printk_devkmsg
 * "ratelimit" -> "on") for the run; ap_init_kmsg_limit_again() puts it
 * back.  A value the kernel command line set is left as it is.
 */
void ap_init_kmsg_unlimit(void);
void ap_init_kmsg_limit_again(void);

/* The kernel gives /init no stdio when the image lacks /dev/console. */
void ap_init_ensure_console(void);

/*
 * Pass each file system type the kernel has now (/proc/filesystems) to
 * @fn; with @block_only, only those that mount a device (not "nodev").
 * Returns how many, or -errno when the list cannot be read.
 */
int ap_init_filesystems(bool block_only, void (*fn)(const char *type, void *userdata),
			void *userdata);

/* -------------------------------------------------------- init-root.c */

/*
 * Wait until the root device exists.  @timeout_ms UINT32_MAX = forever.
 * With @rescan (PID 1 with rootwait), a run that ended without the root is
 * followed by another one now and then, for disks that come late.
 * Returns 0 and the device node, -ETIMEDOUT, -ENOENT or -EINTR.
 */
int ap_init_wait_root(const struct ap_config *cfg, struct ap_init_engine **e,
		      const struct ap_bootparams *bp, const char *relpath, unsigned int timeout_ms,
		      bool rescan, char **ret_node);

/* How long to wait for the root device (rootwait=, asyncprobe.root_timeout=). */
unsigned int ap_init_root_timeout(const struct ap_bootparams *bp);

/* Why ap_init_wait_root() failed with @r, as a sentence (malloc'ed) or NULL. */
char *ap_init_wait_failure(const struct ap_config *cfg, int r, const struct ap_bootparams *bp,
			   const char *relpath, unsigned int waited_ms);

/*
 * Mount @devnode on @target as root=, rootfstype=, rootflags= and ro/rw
 * say.  0 and the type in *ret_fstype, or -errno and what was tried in
 * *why (malloc'ed).
 */
int ap_init_mount_root(const struct ap_config *cfg, const struct ap_bootparams *bp,
		       const char *devnode, const char *target, char **ret_fstype, char **why);

/*
 * Insert the root's file system driver before the root appears, when
 * rootfstype= or the image (/etc/asyncprobe/root-fstype) names its type.
 */
void ap_init_preload_root_fs(const struct ap_config *cfg, const struct ap_bootparams *bp);

/* ------------------------------------------------------ init-switch.c */

/*
 * Move the API mounts into @newroot, make it / and, with @remove_old,
 * delete the initramfs.  On failure before the root moved, nothing is
 * lost: the caller can still use the initramfs.
 */
int ap_init_switch_root(const char *newroot, bool remove_old);

/* Delete the initramfs below @dirfd (ap_init_remove_tree()), logging failures. */
void ap_init_remove_initramfs(int dirfd);

/* argv for @init: the words the kernel passed to /init that are not options. */
char **ap_init_argv(const char *init, int argc, char **argv);

/* ------------------------------------------------------ init-rescue.c */

/*
 * Tell why the boot failed (@why), what the command line asked for and
 * what the kernel and the run @e (may be NULL) found: on the console, in
 * the kernel log and in diagnosis.txt of the run directory.
 */
void ap_init_diagnose(const struct ap_config *cfg, const struct ap_bootparams *bp,
		      struct ap_init_engine *e, const char *root_path, const char *why);

/* As PID 1: a crash ends in the rescue path, not a kernel panic.  @bp may be NULL. */
void ap_init_crash_handlers(const struct ap_bootparams *bp);

/*
 * After a failed boot attempt: reboot (panic=), a rescue shell, or wait.
 * Returns only to let the caller try again (after the shell exited).
 */
void ap_init_rescue(const struct ap_bootparams *bp);

#endif
