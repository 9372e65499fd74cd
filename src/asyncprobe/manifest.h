/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The run's manifest (manifest.c): --json's file, written from a
 * read-only snapshot the engine hands over once every call has finished
 * (ap_engine_finish()).  The snapshot points into the engine's nodes; it
 * is valid until the engine is freed, and nothing here changes it.
 */
#ifndef ASYNCPROBE_MANIFEST_H
#define ASYNCPROBE_MANIFEST_H

#include <stdbool.h>
#include <stdint.h>

#include "asyncprobe.h"
#include "coldplug.h"
#include "names.h"

/* One call of the run (a controller, SCSI device, disk or partition). */
struct ap_manifest_node {
	async_cookie_t cookie;
	async_cookie_t parent;          /* its parent's cookie, 0 for none */
	enum ap_kind kind;
	bool discovery;                 /* the enumeration call */
	bool hotplug;                   /* appeared after coldplug */
	bool abandoned;                 /* given up on (hung, or a stop request) */
	bool stopped;                   /* not run to the end because of a stop request */
	bool dropped_at_sync;           /* stopped at its sync: before publishing, not before probing */
	const char *phase;              /* abandoned: the step it was in, or NULL */
	const char *sysname, *subsystem, *syspath, *modalias, *driver;
	const char *devname;            /* block devices: "sda1" */
	unsigned int partnum;
	const struct ap_fsinfo *fs;
	const struct ap_modload *loads;
	size_t n_loads;
	int error;                      /* -errno, with error_what saying what failed */
	const char *error_what;
	int links_failed;
	uint64_t t_spawn, t_start, t_sync0, t_sync1, t_end, t_abandoned;     /* ap_now_ns() */
	unsigned long long call;        /* libasync's cookie of its call (names it in the trace) */
};

/* The figures of the summary and of the exit status. */
struct ap_counts {
	unsigned int controllers, devices, links, links_failed, mod_ok, mod_failed, errors, mod_none;
	unsigned int abandoned;
	unsigned int stopped;           /* not run to the end because of a stop request */
	int stop_signal;                /* that request's signal, or 0 */
};

struct ap_manifest {
	bool fastboot;
	bool dry_run;
	const char *modules_dir;        /* NULL when no modules were loaded */
	const char *dev_dir;
	const char *chaos;              /* $ASYNC_CHAOS */
	const struct ap_manifest_node *nodes;   /* in cookie order */
	size_t n_nodes;
	const struct ap_link_event *const *links;       /* the creation log, in order */
	size_t n_links;
	uint64_t t0, t1;                /* the run's start and end (ap_now_ns()) */
	struct ap_counts counts;        /* ap_manifest_count(), plus the stop signal */
};

/* Count controllers, devices, links, modules (each name once), errors. */
void ap_manifest_count(const struct ap_manifest *m, struct ap_counts *ret);

/* The exit status (AP_EXIT_*, or 128 + signal) the counts call for. */
int ap_counts_exit_status(const struct ap_counts *c);

/* Write the manifest to @path ("-" is stdout).  0, or -errno (logged). */
int ap_manifest_write(const struct ap_manifest *m, const char *path);

#endif
