/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * asyncprobe as the initramfs's /init (PID 1), and as a unit of a systemd
 * initrd (--init outside PID 1): the boot itself, one attempt after
 * another, and the unit's wait for the root device.  The steps live in
 * leaf files (internal.h has the map): init-bootparams.c,
 * init-mounts.c, init-root.c, init-switch.c, init-rescue.c.
 *
 * Theory of operation
 *
 * The point of running the probe in parallel is lost if PID 1 then waits
 * for all of it.  So /init waits for one thing only, the root device named
 * by root=: the engine runs, PID 1 waits for the root's path below /dev,
 * mounts the root file system at /newroot as soon as the path exists, and
 * starts the root's init.  The root's link exists only once every device
 * before it in the publication order has published or been abandoned, so
 * what the real system finds at that moment is what a sequential run
 * would have made by then.  The rest of the run goes on in the probe
 * process (below), which makes the remaining links in the real /dev and
 * ends the boot's run: see init-engine.c.  asyncprobe.wait_all=1, and
 * every failure that ends in the rescue shell, wait for the whole run
 * instead.  The run's manifest, trace and plot go to /run/asyncprobe/, and
 * /run travels into the new root with /dev, /proc and /sys.
 *
 * PID 1 never blocks on device I/O.  A thread that reads a disk which
 * stops answering (blkid, opening it, some sysfs files) sleeps in the
 * kernel and cannot be killed, and a process cannot exec while one of its
 * threads sleeps there.  So the engine runs in a child process
 * (init-engine.c), in a mount namespace of its own: a copy of PID 1's
 * mounts, whose /dev and /run are the same devtmpfs and tmpfs, so what it
 * writes there after PID 1 moved them into the new root (links, manifest,
 * udev claims rules) is in the real system.  PID 1 hears from it over a
 * socket pair (started, finished with the exit status, a state dump for
 * the diagnosis), looks for the root's link itself with stat(), which
 * reads no disk.  It never waits for the child to exit; one with a thread
 * stuck in the kernel stays behind, and the real init reaps it.  Waiting
 * for the whole run (asyncprobe.wait_all=1), a run that neither finishes
 * nor makes a link for 30 s plus three device timeouts is left behind too
 * (logged).  The root's own file system probe and mount() are PID 1's:
 * without its root there is nothing to start anyway.
 *
 * Switching root is what switch_root(8) does, in this order: move the API
 * mounts below /newroot; chdir there; keep a descriptor on the old root;
 * move /newroot onto /; chroot("."); then, when the old root is a ramfs or
 * tmpfs (an initramfs, which nobody can unmount), delete its contents in a
 * child process, never crossing into another mount.  The init to exec is
 * looked up inside the new root before anything is moved, so a root
 * without an init leaves the initramfs intact for the rescue shell.  When
 * the probe process still runs, PID 1 leaves the initramfs to it: the
 * child still loads modules from there, and deletes it when it is done.
 *
 * PID 1 must never exit: the kernel panics when it does.  Every failure
 * ends in ap_init_rescue() (init-rescue.c): a diagnosis on the console
 * and in the kernel log, then (a) a reboot after panic=N seconds when panic= asks for one, or (b) a
 * rescue shell (/bin/sh, if the image has one) run as a child; when it
 * exits the boot is tried again; or (c) waiting forever, reaping children.
 * A crash (SIGSEGV, SIGABRT, ...) as PID 1 ends in the same place through
 * a signal handler that only makes async-signal-safe calls.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "boot/boot.h"
#include "engine/engine.h"
#include "links/links.h"
#include "internal.h"

extern char **environ;

/* One try at booting; returns (with the reason in *why) only when it failed. */
static void boot_attempt(struct ap_config *cfg, struct ap_bootparams *bp, int argc, char **argv,
			 char **why)
{
	_cleanup_free_ char *relpath = NULL, *node = NULL, *fstype = NULL, *init = NULL;
	struct ap_init_engine *e = NULL;
	uint64_t t0 = ap_now_ns();
	unsigned int root_ms;
	bool going_on, handed_over;
	char **iv;
	int r, status;

	*why = NULL;
	if (!bp->root || bp->root_error) {
		if (asprintf(why, "%s", !bp->root ? "no root= on the kernel command line" :
			     bp->root_error_msg ? bp->root_error_msg : "root= is not understood") < 0)
			*why = NULL;
		/* still probe, so the shell has the links */
		if (ap_init_engine_start(cfg, true, &e) == 0) {
			ap_init_engine_finish(e);
			ap_init_diagnose(cfg, bp, e, NULL, *why);
			ap_init_engine_free(e);
		} else {
			ap_init_diagnose(cfg, bp, NULL, NULL, *why);
		}
		return;
	}
	r = ap_root_spec_devpath(&bp->root_spec, &relpath);
	if (r < 0) {
		if (asprintf(why, "root=%s names no usable link (%s)", bp->root, strerror(-r)) < 0)
			*why = NULL;
		ap_init_diagnose(cfg, bp, NULL, NULL, *why ? *why : "bad root=");
		return;
	}

	log_notice("waiting for root=%s (%s/%s)", bp->root, cfg->dev_dir, relpath);
	r = ap_init_engine_start(cfg, true, &e);
	if (r < 0) {
		if (asprintf(why, "the probe engine did not start: %s", strerror(-r)) < 0)
			*why = NULL;
		ap_init_diagnose(cfg, bp, NULL, relpath, *why ? *why : "engine");
		return;
	}
	ap_init_preload_root_fs(cfg, bp);
	if (bp->rootdelay_s) {
		log_notice("rootdelay=%u: waiting %u s before looking for the root", bp->rootdelay_s,
			   bp->rootdelay_s);
		ap_stop_sleep_ms(bp->rootdelay_s * 1000U);
	}
	r = ap_init_wait_root(cfg, &e, bp, relpath, ap_init_root_timeout(bp), bp->rootwait, &node);
	root_ms = ap_ms_since(t0);
	if (r == -ECHILD && ap_init_engine_start_error(e)) {
		if (asprintf(why, "the probe engine did not start: %s",
			     strerror(-ap_init_engine_start_error(e))) < 0)
			*why = NULL;
	} else if (r < 0) {
		*why = ap_init_wait_failure(cfg, r, bp, relpath, root_ms);
	}
	if (r < 0) {
		if (e)
			ap_init_engine_finish(e);
		ap_init_diagnose(cfg, bp, e, relpath, *why ? *why : "no root device");
		ap_init_engine_free(e);
		return;
	}
	log_notice("root device %s appeared after %u ms; mounting it while probing goes on",
		   node, root_ms);
	ap_init_timing("root_device=%s\nroot_found_ms=%llu", node,
		       (unsigned long long)(ap_now_ns() / 1000000ULL));

	r = ap_init_mount_root(cfg, bp, node, NEWROOT, &fstype, why);
	if (r == 0)
		ap_init_timing("root_mounted_ms=%llu\nroot_fstype=%s",
			       (unsigned long long)(ap_now_ns() / 1000000ULL), fstype ? fstype : "?");

	if (r == 0) {
		r = ap_init_find_init(NEWROOT, bp->init, &init);
		if (r < 0) {
			if (asprintf(why, "no init in the root file system on %s: %s%s%s/sbin/init, "
				     "/etc/init, /bin/init and /bin/sh are missing or not executable",
				     node, bp->init ? "init=" : "", bp->init ? bp->init : "",
				     bp->init ? ", " : "") < 0)
				*why = NULL;
			umount2(NEWROOT, MNT_DETACH);
		}
	}
	/*
	 * The rescue shell wants the whole run; so does asyncprobe.wait_all=1.
	 * Else a run still going on finishes after the switch, and the probe
	 * process writes its probe_finished_ms.
	 */
	if (r < 0 || bp->wait_all == 1 || !ap_init_engine_in_child(e))
		ap_init_engine_finish(e);
	going_on = !ap_init_engine_finished(e);
	if (!going_on) {
		status = ap_init_engine_finish(e);
		ap_init_timing("probe_finished_ms=%llu\nprobe_status=%d",
			       (unsigned long long)ap_init_engine_finished_ms(e), status);
	}
	if (r < 0) {
		ap_init_diagnose(cfg, bp, e, relpath, *why ? *why : "cannot mount the root");
		ap_init_engine_free(e);
		return;
	}
	ap_init_modules_close();

	ap_init_timing("switch_root_ms=%llu\ninit=%s", (unsigned long long)(ap_now_ns() / 1000000ULL),
		       init);
	/* a probe process still running loads modules from the initramfs */
	r = ap_init_switch_root(NEWROOT, !going_on);
	if (r < 0) {
		if (asprintf(why, "switching to the root file system: %s", strerror(-r)) < 0)
			*why = NULL;
		ap_init_diagnose(cfg, bp, e, relpath, *why ? *why : "switch root");
		ap_init_engine_free(e);
		return;
	}
	handed_over = going_on && ap_init_engine_handover(e);
	if (going_on && !handed_over)
		log_warning("the probe process did not take over the end of the run: the initramfs "
			    "stays in memory");
	ap_init_engine_free(e);
	e = NULL;
	log_notice("starting %s", init);
	ap_log_close();
	if (!handed_over)
		ap_init_kmsg_limit_again();     /* else the probe process does */
	iv = ap_init_argv(init, argc, argv);
	if (iv)
		execve(init, iv, environ);
	r = -errno;
	ap_init_kmsg_unlimit();
	ap_log_open(AP_LOG_KMSG, cfg->verbose);
	if (asprintf(why, "exec %s: %s", init, strerror(-r)) < 0)
		*why = NULL;
	free(iv);
	ap_init_diagnose(cfg, bp, NULL, relpath, *why ? *why : "exec init");
}

static void __attribute__((noreturn)) init_pid1(struct ap_config *cfg, int argc, char **argv)
{
	struct ap_bootparams bp = { .shell = -1 };
	char dir[PATH_MAX];
	int r;

	ap_init_crash_handlers(NULL);
	umask(022);
	if (chdir("/") < 0) {
		/* nothing to do about it */
	}
	ap_init_mount_api();
	ap_init_ensure_console();
	ap_init_kmsg_unlimit();
	ap_log_open(AP_LOG_KMSG, cfg->verbose);
	log_notice("asyncprobe as PID 1, %llu ms after boot",
		   (unsigned long long)(ap_now_ns() / 1000000ULL));

	r = ap_init_load_bootparams(&bp);
	if (r < 0) {
		log_error("parsing the kernel command line: %s", strerror(-r));
		bp.shell = -1;
	}
	ap_init_crash_handlers(&bp);
	ap_log_open(AP_LOG_KMSG, cfg->verbose > bp.verbose ? cfg->verbose : bp.verbose);
	if (bp.enable == 0)
		log_notice("asyncprobe.enable=0 ignored: asyncprobe is this image's init");
	snprintf(dir, sizeof(dir), "%s", ap_init_run_dir());
	r = ap_mkdir_mode(dir, 0755);
	if (r < 0 && r != -EEXIST)
		log_warning("mkdir %s: %s", dir, strerror(-r));
	/*
	 * What the options name is checked here, with /dev, /run and the run
	 * directory in place, not before: a bad one is logged and the default
	 * used instead, since PID 1 must not exit.
	 */
	ap_config_check(cfg, true);
	if (!cfg->dry_run && !cfg->no_links && (r = ap_udev_rules_check(cfg->udev_rules)) < 0) {
		log_error("--udev-rules=%s: %s; ignoring it: the default is used", cfg->udev_rules,
			  r == -EINVAL ? "not a directory, and not a file name ending in .rules" :
			  strerror(-r));
		cfg->udev_rules = NULL;
	}
	ap_init_apply_bootparams(cfg, &bp, true);
	ap_init_timing("init_start_ms=%llu", (unsigned long long)(ap_now_ns() / 1000000ULL));
	ap_init_load_cmdline_modules(cfg, &bp);

	for (;;) {
		char *why = NULL;

		boot_attempt(cfg, &bp, argc, argv, &why);
		free(why);
		ap_init_rescue(&bp);
		log_notice("trying to boot again");
	}
}


/* -------------------------------------------------- unit mode (not PID 1) */

static int init_unit(struct ap_config *cfg)
{
	_cleanup_free_ char *relpath = NULL, *node = NULL;
	struct ap_bootparams bp;
	struct ap_init_engine *e = NULL;
	uint64_t t0 = ap_now_ns();
	int r, status, root_status = AP_EXIT_OK;
	char dir[PATH_MAX];
	struct stat st;

	/* the first SIGINT or SIGTERM stops the run early, a second one at once */
	ap_stop_catch();

	r = ap_init_load_bootparams(&bp);
	if (r < 0) {
		log_error("parsing the kernel command line: %s", strerror(-r));
		return AP_EXIT_SYSTEM;
	}
	/* outputs go to the run dir only where it can be made (an initrd's /run) */
	snprintf(dir, sizeof(dir), "%s", ap_init_run_dir());
	r = ap_mkdir_mode(dir, 0755);
	if (r < 0 && r != -EEXIST)
		log_debug("mkdir %s: %s; no manifest, trace or plot there", dir, strerror(-r));
	ap_init_apply_bootparams(cfg, &bp, stat(dir, &st) == 0 && S_ISDIR(st.st_mode) &&
					  access(dir, W_OK) == 0);
	ap_log_open(cfg->log_target, cfg->verbose);
	ap_init_load_cmdline_modules(cfg, &bp);
	ap_init_modules_close();

	if (bp.root && !bp.root_error) {
		r = ap_root_spec_devpath(&bp.root_spec, &relpath);
		if (r < 0) {
			log_error("root=%s names no usable link (%s)", bp.root, strerror(-r));
			root_status = AP_EXIT_CONFIG;
		}
	} else if (bp.root && ap_root_is_stacked(bp.root)) {
		/* the generator's lvm2, cryptsetup or mdadm make it from the disks */
		log_notice("root=%s is not a device asyncprobe makes; probing every disk without "
			   "waiting for it", bp.root);
	} else if (bp.root) {
		root_status = AP_EXIT_CONFIG;
	}

	ap_notify("STATUS=Loading storage drivers and probing disks");
	r = ap_init_engine_start(cfg, false, &e);
	if (r < 0) {
		ap_notifyf("STATUS=Probe engine failed to start: %s", strerror(-r));
		ap_bootparams_clear(&bp);
		return AP_EXIT_SYSTEM;
	}
	if (relpath) {
		ap_notifyf("STATUS=Waiting for the root device %s/%s", cfg->dev_dir, relpath);
		r = ap_init_wait_root(cfg, &e, &bp, relpath, ap_init_root_timeout(&bp), false, &node);
		if (r == 0) {
			log_notice("root device %s appeared after %u ms", node, ap_ms_since(t0));
			ap_notifyf("READY=1\nSTATUS=Root device %s found; probing the other disks", node);
		} else if (r != -EINTR) {
			_cleanup_free_ char *why = ap_init_wait_failure(cfg, r, &bp, relpath, ap_ms_since(t0));

			log_error("%s", why ? why : "root device not found");
			ap_notifyf("READY=1\nSTATUS=Root device %s/%s not found", cfg->dev_dir, relpath);
			root_status = AP_EXIT_DEGRADED;
		}
	} else if (bp.root && ap_root_is_stacked(bp.root)) {
		ap_notifyf("READY=1\nSTATUS=root=%s is left to this initramfs's own tools; probing",
			   bp.root);
	} else if (bp.root) {
		ap_notifyf("READY=1\nSTATUS=root=%s is not usable; probing", bp.root);
	} else {
		ap_notify("READY=1\nSTATUS=No root= to wait for; probing");
	}
	if (ap_stop_signal()) {
		/* the engine has logged it and stops early: see ap_engine_request_stop() */
		ap_notify("STOPPING=1");
	}
	status = ap_init_engine_finish(e);
	if (root_status == AP_EXIT_DEGRADED && e)
		ap_init_engine_dump_state(e, stderr);
	ap_stop_set_target(NULL);
	ap_init_engine_free(e);
	ap_bootparams_clear(&bp);
	if (ap_stop_signal())
		return 128 + ap_stop_signal();
	if (root_status > status)
		status = root_status;
	ap_notifyf("STATUS=Done (exit status %d)", status);
	return status;
}

int ap_init_main(struct ap_config *cfg, int argc, char **argv)
{
	if (getpid() == 1)
		init_pid1(cfg, argc, argv);
	return init_unit(cfg);
}
