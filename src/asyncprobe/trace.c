/* SPDX-License-Identifier: GPL-2.0-or-later */
/* STUB: to be replaced by the trace work (issue 3). */
#include <errno.h>

#include "asyncprobe.h"
#include "trace.h"

void ap_trace_enable(void) {}
bool ap_trace_enabled(void) { return false; }
void ap_trace_label(async_cookie_t cookie, const char *kind, const char *label) {}
void ap_trace_phase(async_cookie_t cookie, const char *phase, uint64_t t0_ns, uint64_t t1_ns) {}
void ap_trace_mark(async_cookie_t cookie, const char *what, uint64_t t_ns) {}
int ap_trace_write_chrome(const char *path) { return -ENOSYS; }
int ap_trace_write_svg(const char *path, const char *title) { return -ENOSYS; }
void ap_trace_reset(void) {}
