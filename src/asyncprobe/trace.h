/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tracing (trace.c): records libasync's schedule/start/end/sync events and
 * the program's own phases per call, then writes a Chrome trace-event JSON
 * file (Perfetto, chrome://tracing) and an SVG boot timeline in the manner
 * of systemd-analyze plot.  Thread-safe; cheap when not enabled.
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
 * "probe", "sync", "links", ...
 */
void ap_trace_phase(async_cookie_t cookie, const char *phase, uint64_t t0_ns, uint64_t t1_ns);

/* An instant event, e.g. "root device found", not tied to a call (cookie 0). */
void ap_trace_mark(async_cookie_t cookie, const char *what, uint64_t t_ns);

int ap_trace_write_chrome(const char *path);
int ap_trace_write_svg(const char *path, const char *title);

void ap_trace_reset(void);

#endif
