/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * asyncprobe internal interfaces.  One .c per concern, a header where
 * others need it:
 *
 *   cli.c          main(), options, exit status
 *   log.c          logging to stderr or /dev/kmsg, progress line
 *   util.c         util.h: time, prefixes, string copies and arrays,
 *                  writing a whole buffer, directories, peak RSS, output files
 *   utf8.c         utf8.h: the one UTF-8 decoder
 *   json.c         json.h: the JSON string writer (manifest, Chrome trace)
 *   discovery.c    coldplug.h: libudev enumeration, counting children,
 *                  NVMe heads, kernel uevent monitor, topology order
 *   modules.c      coldplug.h: driver loading through libkmod: the
 *                  context and entry points; step 1, the load plan, in
 *                  modules-plan.c, step 2, the insertion, in
 *                  modules-insert.c (modules-internal.h, private)
 *   engine.c       engine.h: the run's API and theory of operation,
 *                  summary, the snapshot manifest.c writes; its parts
 *                  (engine-internal.h, private, has the map):
 *     engine-node.c     nodes: registration, syspath index, description
 *     engine-order.c    the publication order, publishing, the queue
 *     engine-root.c     root first
 *     engine-wait.c     waiting for a driver
 *     engine-call.c     a device's call and its step 2
 *     engine-hotplug.c  uevents, devices that appear later
 *     engine-settle.c   the top level's loop, the hang rule, stop requests
 *   manifest.c     manifest.h: the --json manifest from that snapshot
 *   probe.c        coldplug.h: libblkid probing of disks and partitions
 *   identity.c     identity.h: by-id identity data (sysfs VPD pages, ATA
 *                  IDENTIFY via SG_IO) and its per-disk cache
 *   udev-string.c  udev-string.h: udev's string cleaning, blkid encoding
 *   naming.c       names.h: udev-compatible link names
 *   links.c        names.h: the link registry: claims in cookie order,
 *                  conflicts, safe creation
 *   udev-rules.c   names.h: rules that make udev keep asyncprobe's choice
 *                  of contested links
 *   trace-record.c trace.h: recording trace events
 *   trace-model.c  trace-model.h (private): the analysis model
 *   trace-chrome.c trace.h: Chrome trace JSON
 *   trace-svg.c    trace.h: SVG plot
 *   cmdline.c      cmdline.h: kernel command line parsing
 *   init.c         init.h: PID 1 and the initrd unit: the boot; its steps in
 *                  init-engine.c, init-bootparams.c, init-mounts.c, init-root.c,
 *                  init-switch.c, init-rescue.c (init-internal.h, private)
 *   stop.c         stop.h: SIGINT/SIGTERM as a stop request to the one
 *                  registered engine (cli, unit)
 *   notify.c       notify.h: sd_notify
 */
#ifndef ASYNCPROBE_H
#define ASYNCPROBE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "async.h"
#include "util.h"

struct udev;
struct udev_device;

/* Exit status, documented in asyncprobe(8). */
enum {
	AP_EXIT_OK = 0,          /* everything found was probed and linked */
	AP_EXIT_DEGRADED = 1,    /* ran to the end, but a module, device or link failed */
	AP_EXIT_CONFIG = 2,      /* bad configuration (module tree, command line) */
	AP_EXIT_USAGE = 100,     /* bad option */
	AP_EXIT_SYSTEM = 111,    /* a system call failed before work could start */
};

/* ---------------------------------------------------------------- config */

/*
 * Worker threads unless --max-threads or asyncprobe.threads= say otherwise.
 * Peak memory grows with the calls in flight (each holds a struct udev,
 * libudev devices and a libblkid probe with its read buffers, on a thread
 * stack of its own): with libasync's default of 256, 256 scsi_debug disks
 * peaked at 19.7 MiB, with 16 at 8.9 MiB.  udevd itself runs 8 + 2 x CPUs
 * workers.  The price: at most 16 probes wait on slow disks at once.
 */
#define AP_DEFAULT_MAX_THREADS 16u
/* One malloc arena: glibc makes one per thread (up to 8 x CPUs). */
#define AP_MALLOC_ARENA_MAX 1

/*
 * The settings of one run: main() (cli.c) parses the command line into
 * its own value and adds the kernel command line's (ap_config_apply_kernel()
 * in cmdline.c; init through init-bootparams.c, which also reads the root
 * path the image was made for), and the engine keeps a copy
 * (ap_engine_new()).  No global holds it, and the engine reads no command
 * line itself.
 */
struct ap_config {
	const char *dev_dir;            /* "/dev" */
	const char *basedir;            /* -b: root holding lib/modules/KVER, NULL = / */
	const char *modules_dir;        /* --modules-dir: explicit lib/modules/KVER */
	const char *kernel_version;     /* -S: KVER below BASEDIR, NULL = running kernel */
	const char *modprobe_config;    /* -C: modprobe.d file or directory, NULL = system's */
	int fastboot;                   /* -1 unset (kernel command line decides), 0, 1 */
	bool dry_run;
	bool all_modules;
	bool include_loop;              /* probe loop devices too (tests) */
	bool no_modules;                /* skip driver loading */
	bool no_links;                  /* probe, do not create links */
	unsigned int device_timeout_ms; /* per controller or device wait */
	unsigned int max_threads;       /* 0 = AP_DEFAULT_MAX_THREADS */
	const char *json_file;          /* --json[=FILE], "-" = stdout */
	const char *trace_file;
	const char *plot_file;
	const char *udev_rules;         /* --udev-rules: file or dir, "none"; NULL = default */
	int verbose;                    /* 0 warnings, 1 info (-v), 2 debug (-vv) */
	bool quiet;
	int log_target;                 /* enum ap_log_target */
	bool progress;                  /* one-line progress display on a tty */
	bool init_mode;                 /* --init or PID 1 */
	const char *root_path;          /* --root-path: the root's by-path name, "none", NULL */
	const char *root_path_source;   /* where root_path came from (the log), NULL: --root-path */
	char *const *blacklist;         /* the kernel command line's modprobe.blacklist= names */
	size_t n_blacklist;
};

void ap_config_defaults(struct ap_config *cfg);

/* ------------------------------------------------------------------- log */

enum ap_log_target {
	AP_LOG_AUTO = 0,    /* kmsg as PID 1 or in an initramfs, else stderr */
	AP_LOG_STDERR = 1,
	AP_LOG_KMSG = 2,
};

/* syslog priorities */
#define AP_LOG_ERR 3
#define AP_LOG_WARNING 4
#define AP_LOG_NOTICE 5
#define AP_LOG_INFO 6
#define AP_LOG_DEBUG 7

void ap_log_open(int target, int verbose);
/* AP_LOG_AUTO made definite: AP_LOG_KMSG as PID 1 or in an initramfs, else AP_LOG_STDERR. */
int ap_log_resolve_target(int target);
void ap_log_close(void);
void ap_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ap_logv(int prio, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Prefixes the message with the device's sysname. */
void ap_log_dev(int prio, struct udev_device *dev, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool ap_log_enabled(int prio);
/*
 * The one-line progress display on stderr (a terminal): @line replaces it,
 * NULL or "" removes it.  Messages logged meanwhile appear above it.
 */
void ap_log_progress(const char *line);
/*
 * True when @fd is a terminal someone watches: not /dev/console, not a
 * serial line (ttyS*) and not a terminal the kernel has as its console
 * (@console_active: the /sys/class/tty/console/active file to read).
 */
bool ap_log_is_user_terminal(int fd, const char *console_active);

#define log_error(...)   ap_log(AP_LOG_ERR, __VA_ARGS__)
#define log_warning(...) ap_log(AP_LOG_WARNING, __VA_ARGS__)
#define log_notice(...)  ap_log(AP_LOG_NOTICE, __VA_ARGS__)
#define log_info(...)    ap_log(AP_LOG_INFO, __VA_ARGS__)
#define log_debug(...)   ap_log(AP_LOG_DEBUG, __VA_ARGS__)

/* --------------------------------------------------------------- cleanup */

static inline void ap_freep(void *p) { free(*(void **)p); }
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(ap_freep)
#define TAKE_PTR(p) ({ __typeof__(p) _tp = (p); (p) = NULL; _tp; })

#endif /* ASYNCPROBE_H */
