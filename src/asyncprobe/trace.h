/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tracing (trace-record.c, trace-model.c, trace-chrome.c, trace-svg.c;
 * their private interface is trace-model.h): records libasync's
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
#ifndef ASYNCPROBE_TRACE_H
#define ASYNCPROBE_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "async.h"

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

#endif
