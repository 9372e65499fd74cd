/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The output layer: the --json manifest (manifest.c) and tracing
 * (trace-*.c; their private model is internal.h).
 */
#ifndef ASYNCPROBE_OUTPUT_H
#define ASYNCPROBE_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/base.h"
#include "device/device.h"
#include "modules/modules.h"
#include "probe/probe.h"
#include "links/links.h"

/* ------------------------------------------------------------ manifest.c */

/*
 * The run's manifest (manifest.c): --json's file, written from a
 * read-only snapshot the engine hands over once every call has finished
 * (ap_engine_finish()).  The snapshot points into the engine's nodes; it
 * is valid until the engine is freed, and nothing here changes it.
 */

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

/* --------------------------- trace-record.c, trace-chrome.c, trace-svg.c */

/*
 * Tracing (trace-record.c, trace-model.c, trace-chrome.c, trace-svg.c;
 * their private interface is internal.h): records libasync's
 * schedule/start/end/sync events and the program's own phases per call,
 * then writes a Chrome trace-event JSON
 * file (Perfetto, chrome://tracing) and an SVG boot timeline in the manner
 * of systemd-analyze plot.  Thread-safe; cheap when not enabled.
 *
 * The Chrome file (JSON object format) has one track per thread: tid 0 is
 * the thread that enabled tracing, tid N is libasync worker N, other
 * threads are 100000 and up.  Calls are complete events ("X", category
 * "call", named "c<cookie> <kind> <label>", args cookie, kind, label,
 * domain, inline, worker, queued_us), with their phases (category "phase")
 * and sync waits (category "sync", "sync-wait c<target>" or "sync-wait
 * full", args target and released_by) nested inside; schedules are
 * instants plus flow events to the start; marks are instants (category
 * "mark"); a counter "calls" gives queued and running over time.  Its
 * "otherData" sums the run up for benchmarks: mode, base_monotonic_ns
 * (time 0; marks plus this are uptimes when CLOCK_MONOTONIC is), span_ms,
 * calls, started, finished, inline_calls, workers, peak_running,
 * peak_queued, events, waits, wait_ms, queued_ms, dropped, peak_rss_kib
 * (VmHWM at writing, as in the manifest; left out without /proc), phases{name: count, total_ms, max_ms} (sync waits inside
 * calls as "sync-wait"), kinds{kind: count, total_ms, max_ms},
 * critical_path_ms, critical_path_calls, program_ms, critical_path[] (the
 * calls longest on it: cookie, kind, label, ms, queued_ms), marks{what:
 * ms} (first of each) and meta{}.
 *
 * Every function may be called from any thread at any time, except that
 * ap_trace_reset() must not race with the writers (call it when no other
 * thread uses the trace).  Times are CLOCK_MONOTONIC nanoseconds
 * (ap_now_ns()); the outputs count from the earliest time recorded, which is
 * at most the time of ap_trace_enable(), and state that base.
 */

/* Start recording (installs the libasync trace hook). */
void ap_trace_enable(void);
bool ap_trace_enabled(void);

/* Name a call: @kind is "discover", "controller", "disk", "partition", ... */
void ap_trace_label(async_cookie_t cookie, const char *kind, const char *label);

/*
 * A phase of a call, between two ap_now_ns() times: "modprobe", "wait",
 * "probe", "names", "enumerate", "children", "sync", "links", ...  Cookie 0 is a phase of the program itself
 * (drawn on its own row).
 */
void ap_trace_phase(async_cookie_t cookie, const char *phase, uint64_t t0_ns, uint64_t t1_ns);

/* An instant event, e.g. "root device found", not tied to a call (cookie 0). */
void ap_trace_mark(async_cookie_t cookie, const char *what, uint64_t t_ns);

/*
 * A key/value fact about the run ("mode", "kernel", "disks"), shown in the
 * SVG header and in the JSON's otherData; the last value of a key wins.
 * "mode" overrides the mode otherwise taken from async_get_enabled().
 */
void ap_trace_meta(const char *key, const char *value);

/*
 * The libasync trace hook itself, as installed by ap_trace_enable(); tests
 * and the demo feed synthetic events through it.  Ignored when not enabled.
 */
void ap_trace_record_event(const struct async_trace_event *ev);

/* Write the outputs; "-" is stdout.  0 or -errno. */
int ap_trace_write_chrome(const char *path);
int ap_trace_write_svg(const char *path, const char *title);

/* Figures over what was recorded, for summaries and benchmarks. */
struct ap_trace_summary {
	uint64_t base_ns;           /* CLOCK_MONOTONIC of time 0 in the outputs */
	uint64_t span_ns;           /* from time 0 to the last time recorded */
	unsigned int calls;         /* distinct cookies seen (events, labels or phases) */
	unsigned int started;       /* ... with a start event */
	unsigned int finished;      /* ... with an end event */
	unsigned int inline_calls;  /* ... that ran synchronously in the caller */
	unsigned int workers;       /* distinct worker indices that ran calls */
	unsigned int peak_running;  /* most threads running a call at once */
	unsigned int peak_queued;   /* most calls scheduled but not yet started */
	uint64_t events;            /* libasync events recorded */
	uint64_t phases;            /* phases recorded */
	uint64_t waits;             /* synchronize waits (begin/end pairs) */
	uint64_t wait_ns;           /* their total duration */
	uint64_t queued_ns;         /* total time calls spent queued */
	uint64_t critical_ns;       /* length of the critical path (to the last end) */
	unsigned int critical_calls;        /* calls on it */
	uint64_t dropped;           /* records lost to allocation failure */
};
int ap_trace_get_summary(struct ap_trace_summary *ret);

/* Forget everything and uninstall the hook (as before ap_trace_enable()). */
void ap_trace_reset(void);

#endif /* ASYNCPROBE_OUTPUT_H */
