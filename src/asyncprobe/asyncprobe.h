/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * asyncprobe internal interfaces.  One .c per concern:
 *
 *   cli.c        main(), options, exit status
 *   log.c        logging to stderr or /dev/kmsg, progress line
 *   discovery.c  libudev enumeration, kernel uevent monitor, topology order
 *   modules.c    driver loading through libkmod
 *   engine.c     the run: nodes, ordered spawning of async calls, summary
 *   probe.c      libblkid probing of disks and partitions
 *   identity.c   by-id identity data (sysfs VPD pages, ATA IDENTIFY via SG_IO)
 *   naming.c     udev-compatible link names and character encoding
 *   links.c      the link registry: claims in cookie order, conflicts, safe creation
 *   trace.c      trace events, Chrome trace JSON, SVG plot, JSON manifest
 *   cmdline.c    kernel command line parsing
 *   init.c       PID 1: mounts, root wait, switch_root, rescue
 *   notify.c     sd_notify
 */
#ifndef ASYNCPROBE_H
#define ASYNCPROBE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "async.h"

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
	int verbose;                    /* 0 warnings, 1 info (-v), 2 debug (-vv) */
	bool quiet;
	int log_target;                 /* enum ap_log_target */
	bool progress;                  /* one-line progress display on a tty */
	bool init_mode;                 /* --init or PID 1 */
};

extern struct ap_config ap_cfg;

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

/* Monotonic time in nanoseconds. */
uint64_t ap_now_ns(void);

/* --------------------------------------------------------------- cleanup */

static inline void ap_freep(void *p) { free(*(void **)p); }
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(ap_freep)
#define TAKE_PTR(p) ({ __typeof__(p) _tp = (p); (p) = NULL; _tp; })

#endif /* ASYNCPROBE_H */
