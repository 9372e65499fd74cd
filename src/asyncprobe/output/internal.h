/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tracing, private to trace-*.c (see output.h for the interface):
 *
 *   trace-record.c  recording: the libasync hook, labels, phases, marks, meta
 *   trace-model.c   the analysis model built from a copy of the records
 *                   (calls, waits, blame, critical path, figures)
 *   trace-chrome.c  the Chrome trace-event JSON writer
 *   trace-svg.c     the SVG timeline writer
 *
 * The records are what recording appends under its lock; the model is
 * what both writers read, built without the lock from a copy.
 */
#ifndef ASYNCPROBE_TRACE_MODEL_H
#define ASYNCPROBE_TRACE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "async.h"
#include "output/output.h"

/* ------------------------------------------------------------ records */

struct ev_rec {
	uint64_t t;
	async_cookie_t cookie;
	async_cookie_t target;
	uint32_t thread;        /* serial of the recording thread */
	uint32_t worker;
	uint16_t domain;        /* index into domains, 0 = none */
	uint8_t type;
	uint8_t inline_call;
};

struct label_rec {
	async_cookie_t cookie;
	char *kind;
	char *label;
};

struct phase_rec {
	async_cookie_t cookie;
	uint64_t t0, t1;
	uint32_t thread;
	uint32_t seq;           /* recording order, for a stable sort */
	uint16_t name;          /* index into names */
};

struct mark_rec {
	async_cookie_t cookie;
	uint64_t t;
	uint32_t thread;
	char *what;
};

struct meta_rec {
	char *key;
	char *value;
};

/* ------------------------------------------------------------ model */

#define TID_OTHER_BASE 100000u

struct mphase {
	async_cookie_t cookie;
	uint64_t t0, t1;        /* relative to the base */
	uint32_t tid;
	uint32_t seq;
	uint16_t name;
};

struct mwait {
	async_cookie_t cookie;  /* the waiting call, 0 outside a call */
	async_cookie_t target;
	uint64_t t0, t1;
	uint32_t thread;
	uint32_t tid;
	uint16_t domain;
	bool unfinished;
	async_cookie_t released_by;     /* the call whose end let it return, 0 unknown */
};

struct mmark {
	async_cookie_t cookie;
	uint64_t t;
	uint32_t tid;
	const char *what;
};

struct mcall {
	async_cookie_t cookie;
	const char *kind;
	const char *label;
	uint64_t sched, start, end;     /* relative to the base */
	uint64_t first, last;           /* extent of everything known about it */
	uint32_t sched_tid, tid;
	unsigned int worker;
	uint16_t domain;
	bool has_sched, has_start, has_end, inline_call;
	size_t phase_first, phase_count;
	size_t wait_first, wait_count;
	uint64_t crit_ns;               /* time on the critical path */
	uint64_t crit_queued_ns;        /* ... of which queued */
};

struct trace_model {
	uint64_t base;                  /* CLOCK_MONOTONIC of time 0 */
	uint64_t end;                   /* last time, relative */
	uint32_t main_thread;
	struct ev_rec *ev;
	size_t n_ev;
	struct label_rec *labels;
	size_t n_labels;
	struct mphase *phases;
	size_t n_phases;
	struct mwait *waits;
	size_t n_waits;
	struct mmark *marks;
	size_t n_marks;
	struct meta_rec *metas;
	size_t n_metas;
	const char **names;
	size_t n_names;
	const char **domains;
	size_t n_domains;
	struct mcall *calls;
	size_t n_calls;
	size_t program_phases;          /* phases with cookie 0: phases[0..n) */
	size_t program_waits;           /* waits with cookie 0: waits[0..n) */
	uint64_t crit_program_ns;       /* critical path before the first call */
	uint64_t dropped;
	struct ap_trace_summary sum;
};

/*
 * Copy the records under the recording lock into @m (events, labels,
 * metas, names, domains; the strings stay the recorder's, valid until
 * ap_trace_reset()), phases and marks into *ret_phases and *ret_marks
 * (absolute times; free them).  0 or -ENOMEM.  trace-record.c.
 */
int trace_records_copy(struct trace_model *m, struct phase_rec **ret_phases,
		       struct mark_rec **ret_marks);

/* Build the model from what was recorded.  0 or -ENOMEM (@m is then empty). */
int trace_model_build(struct trace_model *m);
void trace_model_free(struct trace_model *m);

/*
 * Build the model and have @writer write it to @path ("-" is stdout,
 * util.c's ap_out_open()).  0, or -errno from building, writing or
 * closing.  Both ap_trace_write_*() are this.
 */
int trace_model_write(const char *path,
		      int (*writer)(FILE *f, const struct trace_model *m, const void *arg),
		      const void *arg);

/* The call of @cookie, or NULL. */
struct mcall *trace_find_call(struct trace_model *m, async_cookie_t cookie);

/*
 * The sweep behind the concurrency figures and the Chrome counter track:
 * @emit (if not NULL) is called once per time at which the counts of
 * queued and running calls change.  0 or -ENOMEM.
 */
int trace_model_sweep(struct trace_model *m,
		      void (*emit)(void *ud, uint64_t t, unsigned int q, unsigned int r),
		      void *ud, unsigned int *ret_peak_q, unsigned int *ret_peak_r);

/*
 * The calls longest on the critical path, longest first (the earlier call
 * of equals first): up to @max indices into m->calls in @ret.  Returns how
 * many (0 also when out of memory).
 */
size_t trace_critical_top(const struct trace_model *m, size_t *ret, size_t max);

/* A meta value ap_trace_meta() set, or NULL. */
const char *trace_model_meta(const struct trace_model *m, const char *key);
/* "mode" from the meta data, else from async_get_enabled(). */
const char *trace_model_mode(const struct trace_model *m);
/* The name of interned phase name @i. */
const char *trace_phase_name(const struct trace_model *m, uint16_t i);

/* qsort() that accepts an empty (NULL) array. */
void trace_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
int trace_cmp_u32(const void *a, const void *b);

#endif
