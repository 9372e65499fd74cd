/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tracing, the Chrome trace-event JSON writer (trace-chrome.c), for
 * Perfetto and chrome://tracing; the format is described in output.h.
 *
 * Object format: per track, complete events ("X") for calls, phases and
 * waits, sorted and clamped so they nest properly; flow events from
 * schedule to start; instants for schedules and marks; a counter of
 * queued and running calls; thread names; an otherData summary for
 * benchmarks.  Strings go through json.c: invalid UTF-8 bytes become the
 * text \xNN, control characters \u00XX.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "output/output.h"
#include "internal.h"

/* Microseconds with nanosecond digits, as Chrome's ts and dur want. */
static void put_us(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%03u", ns / 1000, (unsigned int)(ns % 1000));
}

enum slice_kind { SLICE_CALL, SLICE_PHASE, SLICE_WAIT };

struct slice {
	uint32_t tid;
	uint8_t kind;
	uint64_t t0, t1;
	size_t index;           /* into calls, phases or waits */
};

static int cmp_slice(const void *a, const void *b)
{
	const struct slice *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->t0 != y->t0)
		return x->t0 < y->t0 ? -1 : 1;
	if (x->t1 != y->t1)
		return x->t1 > y->t1 ? -1 : 1;  /* the longer one encloses */
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

struct json_ctx {
	FILE *f;
	const struct trace_model *m;
	int pid;
	bool first;
};

static void ev_begin(struct json_ctx *j, const char *ph, uint32_t tid, uint64_t ts)
{
	fputs(j->first ? "\n" : ",\n", j->f);
	j->first = false;
	fprintf(j->f, "{\"ph\":\"%s\",\"pid\":%d,\"tid\":%" PRIu32 ",\"ts\":", ph, j->pid, tid);
	put_us(j->f, ts);
}

static void put_cookie_target(FILE *f, async_cookie_t target)
{
	if (target == ASYNC_COOKIE_MAX)
		fputs("\"full\"", f);
	else
		fprintf(f, "%" PRIu64, target);
}

static void json_call(struct json_ctx *j, const struct mcall *c, const struct slice *s)
{
	FILE *f = j->f;
	char name[64];

	ev_begin(j, "X", s->tid, s->t0);
	fputs(",\"dur\":", f);
	put_us(f, s->t1 - s->t0);
	snprintf(name, sizeof(name), "c%" PRIu64 " ", c->cookie);
	/* "c12 disk sda" */
	fputs(",\"cat\":\"call\",\"name\":\"", f);
	fputs(name, f);
	if ((c->kind && *c->kind) || (c->label && *c->label)) {
		ap_json_chars(f, c->kind);
		if (c->kind && *c->kind && c->label && *c->label)
			fputc(' ', f);
		ap_json_chars(f, c->label);
	} else {
		fputs("call", f);
	}
	fputc('"', f);
	fprintf(f, ",\"args\":{\"cookie\":%" PRIu64 ",\"kind\":", c->cookie);
	ap_json_string(f, c->kind ? c->kind : "");
	fputs(",\"label\":", f);
	ap_json_string(f, c->label ? c->label : "");
	fputs(",\"domain\":", f);
	ap_json_string(f, c->domain < j->m->n_domains ? j->m->domains[c->domain] : "");
	fprintf(f, ",\"inline\":%s,\"worker\":%u", c->inline_call ? "true" : "false", c->worker);
	if (c->has_sched && c->has_start) {
		fputs(",\"queued_us\":", f);
		put_us(f, c->start >= c->sched ? c->start - c->sched : 0);
	}
	if (!c->has_start)
		fputs(",\"from_phases\":true", f);
	else if (!c->has_end)
		fputs(",\"unfinished\":true", f);
	fputs("}}", f);
}

static void json_phase(struct json_ctx *j, const struct mphase *p, const struct slice *s)
{
	FILE *f = j->f;

	ev_begin(j, "X", s->tid, s->t0);
	fputs(",\"dur\":", f);
	put_us(f, s->t1 - s->t0);
	fputs(",\"cat\":\"phase\",\"name\":", f);
	ap_json_string(f, trace_phase_name(j->m, p->name));
	fprintf(f, ",\"args\":{\"cookie\":%" PRIu64 "}}", p->cookie);
}

static void json_wait(struct json_ctx *j, const struct mwait *w, const struct slice *s)
{
	FILE *f = j->f;

	ev_begin(j, "X", s->tid, s->t0);
	fputs(",\"dur\":", f);
	put_us(f, s->t1 - s->t0);
	if (w->target == ASYNC_COOKIE_MAX)
		fputs(",\"cat\":\"sync\",\"name\":\"sync-wait full\"", f);
	else
		fprintf(f, ",\"cat\":\"sync\",\"name\":\"sync-wait c%" PRIu64 "\"", w->target);
	fprintf(f, ",\"args\":{\"cookie\":%" PRIu64 ",\"target\":", w->cookie);
	put_cookie_target(f, w->target);
	if (w->released_by)
		fprintf(f, ",\"released_by\":%" PRIu64, w->released_by);
	if (w->unfinished)
		fputs(",\"unfinished\":true", f);
	fputs("}}", f);
}

static void json_counter(void *ud, uint64_t t, unsigned int q, unsigned int r)
{
	struct json_ctx *j = ud;

	ev_begin(j, "C", 0, t);
	fprintf(j->f, ",\"name\":\"calls\",\"args\":{\"queued\":%u,\"running\":%u}}", q, r);
}

static int cmp_tid(const void *a, const void *b)
{
	return trace_cmp_u32(a, b);
}

/*
 * Where the time went: per phase name and per kind of call, the count, the
 * total and the longest, in milliseconds.  Waits count as "sync-wait".
 */
static void put_stat(FILE *f, const char *name, bool first, size_t n, uint64_t total, uint64_t max)
{
	fputs(first ? "" : ",", f);
	ap_json_string(f, name);
	fprintf(f, ":{\"count\":%zu,\"total_ms\":%.3f,\"max_ms\":%.3f}", n,
		(double)total / 1e6, (double)max / 1e6);
}

static void put_breakdown(FILE *f, const struct trace_model *m)
{
	const char *kinds[64];
	size_t n_kinds = 0, i, j, n;
	uint64_t total, max, d;

	fputs(",\"phases\":{", f);
	for (i = 0; i < m->n_names; i++) {
		n = 0;
		total = max = 0;
		for (j = 0; j < m->n_phases; j++) {
			if (m->phases[j].name != i)
				continue;
			d = m->phases[j].t1 - m->phases[j].t0;
			n++;
			total += d;
			if (d > max)
				max = d;
		}
		put_stat(f, m->names[i], i == 0, n, total, max);
	}
	n = 0;
	total = max = 0;
	for (j = m->program_waits; j < m->n_waits; j++) {
		d = m->waits[j].t1 - m->waits[j].t0;
		n++;
		total += d;
		if (d > max)
			max = d;
	}
	put_stat(f, "sync-wait", m->n_names == 0, n, total, max);
	fputs("},\"kinds\":{", f);
	for (i = 0; i < m->n_calls; i++) {
		const char *k = m->calls[i].kind ? m->calls[i].kind : "";

		for (j = 0; j < n_kinds; j++)
			if (strcmp(kinds[j], k) == 0)
				break;
		if (j == n_kinds && n_kinds < sizeof(kinds) / sizeof(kinds[0]))
			kinds[n_kinds++] = k;
	}
	for (i = 0; i < n_kinds; i++) {
		n = 0;
		total = max = 0;
		for (j = 0; j < m->n_calls; j++) {
			const struct mcall *c = &m->calls[j];

			if (strcmp(c->kind ? c->kind : "", kinds[i]) != 0)
				continue;
			d = c->has_start ? c->end - c->start : c->last - c->first;
			n++;
			total += d;
			if (d > max)
				max = d;
		}
		put_stat(f, kinds[i], i == 0, n, total, max);
	}
	fputc('}', f);
}

/* The calls on the critical path, longest first (at most 10). */
static void put_critical(FILE *f, const struct trace_model *m)
{
	size_t top[10], n, k;

	fprintf(f, ",\"critical_path_ms\":%.3f,\"critical_path_calls\":%u,\"program_ms\":%.3f"
		",\"critical_path\":[", (double)m->sum.critical_ns / 1e6, m->sum.critical_calls,
		(double)m->crit_program_ns / 1e6);
	n = trace_critical_top(m, top, sizeof(top) / sizeof(top[0]));
	for (k = 0; k < n; k++) {
		const struct mcall *c = &m->calls[top[k]];

		fprintf(f, "%s{\"cookie\":%" PRIu64 ",\"kind\":", k ? "," : "", c->cookie);
		ap_json_string(f, c->kind ? c->kind : "");
		fputs(",\"label\":", f);
		ap_json_string(f, c->label ? c->label : "");
		fprintf(f, ",\"ms\":%.3f,\"queued_ms\":%.3f}", (double)c->crit_ns / 1e6,
			(double)c->crit_queued_ns / 1e6);
	}
	fputc(']', f);
}

/*
 * The slices (calls, phases, waits) sorted by track and time, and the
 * tracks used, sorted and unique.  The arrays are sized by the caller.
 */
static void collect_slices(const struct trace_model *m, struct slice *sl, size_t *ret_n,
			   uint32_t *tids, size_t *ret_n_tids)
{
	size_t n = 0, n_tids = 0, i, k;

	for (i = 0; i < m->n_calls; i++) {
		const struct mcall *c = &m->calls[i];

		if (c->has_sched)
			tids[n_tids++] = c->sched_tid;
		if (!c->has_start && !c->phase_count)
			continue;
		sl[n++] = (struct slice){
			.tid = c->tid, .kind = SLICE_CALL, .index = i,
			.t0 = c->has_start ? c->start : c->first,
			.t1 = c->has_start ? c->end : c->last,
		};
		tids[n_tids++] = c->tid;
	}
	for (i = 0; i < m->n_phases; i++) {
		const struct mphase *p = &m->phases[i];
		const struct mcall *c = p->cookie ? trace_find_call((struct trace_model *)m, p->cookie) : NULL;

		sl[n++] = (struct slice){
			.tid = c ? c->tid : p->tid, .kind = SLICE_PHASE, .index = i,
			.t0 = p->t0, .t1 = p->t1,
		};
	}
	for (i = 0; i < m->n_waits; i++) {
		sl[n++] = (struct slice){
			.tid = m->waits[i].tid, .kind = SLICE_WAIT, .index = i,
			.t0 = m->waits[i].t0, .t1 = m->waits[i].t1,
		};
		tids[n_tids++] = m->waits[i].tid;
	}
	for (i = 0; i < m->n_marks; i++)
		tids[n_tids++] = m->marks[i].tid;
	tids[n_tids++] = 0;
	trace_sort(sl, n, sizeof(*sl), cmp_slice);
	trace_sort(tids, n_tids, sizeof(*tids), cmp_tid);
	for (i = 0, k = 0; i < n_tids; i++)
		if (k == 0 || tids[k - 1] != tids[i])
			tids[k++] = tids[i];
	*ret_n = n;
	*ret_n_tids = k;
}

/* Process and thread names, tracks sorted by tid. */
static void put_thread_names(struct json_ctx *j, const uint32_t *tids, size_t n_tids)
{
	FILE *f = j->f;

	fputs("\n{\"ph\":\"M\",\"pid\":", f);
	fprintf(f, "%d,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"asyncprobe\"}}", j->pid);
	j->first = false;
	for (size_t i = 0; i < n_tids; i++) {
		char name[48];

		if (tids[i] == 0)
			snprintf(name, sizeof(name), "main");
		else if (tids[i] < TID_OTHER_BASE)
			snprintf(name, sizeof(name), "worker %" PRIu32, tids[i]);
		else
			snprintf(name, sizeof(name), "thread %" PRIu32, tids[i] - TID_OTHER_BASE);
		fprintf(f, ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%" PRIu32
			",\"name\":\"thread_name\",\"args\":{\"name\":\"%s\"}}", j->pid, tids[i], name);
		fprintf(f, ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%" PRIu32
			",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":%" PRIu32 "}}",
			j->pid, tids[i], tids[i]);
	}
}

/*
 * Slices, per track, forced to nest: a slice that starts inside
 * another but would end after it is cut at the enclosing end.
 */
static void put_slices(struct json_ctx *j, struct slice *sl, size_t n, struct slice **stack)
{
	const struct trace_model *m = j->m;
	size_t depth = 0;

	for (size_t i = 0; i < n; i++) {
		struct slice *s = &sl[i];

		while (depth > 0 && (stack[depth - 1]->tid != s->tid || stack[depth - 1]->t1 <= s->t0))
			depth--;
		if (depth > 0 && s->t1 > stack[depth - 1]->t1)
			s->t1 = stack[depth - 1]->t1;
		stack[depth++] = s;
		switch (s->kind) {
		case SLICE_CALL:
			json_call(j, &m->calls[s->index], s);
			break;
		case SLICE_PHASE:
			json_phase(j, &m->phases[s->index], s);
			break;
		case SLICE_WAIT:
			json_wait(j, &m->waits[s->index], s);
			break;
		}
	}
}

/*
 * Schedules: an instant on the scheduling track, a flow to the start.
 * All in category "call": some viewers bind a flow to the event of
 * its category, thread and timestamp, others to the enclosing slice.
 * Then the marks.
 */
static void put_instants(struct json_ctx *j)
{
	const struct trace_model *m = j->m;
	FILE *f = j->f;
	size_t i;

	for (i = 0; i < m->n_calls; i++) {
		const struct mcall *c = &m->calls[i];

		if (!c->has_sched)
			continue;
		ev_begin(j, "i", c->sched_tid, c->sched);
		fprintf(f, ",\"s\":\"t\",\"cat\":\"call\",\"name\":\"schedule c%" PRIu64
			"\",\"args\":{\"cookie\":%" PRIu64 ",\"inline\":%s}}",
			c->cookie, c->cookie, c->inline_call ? "true" : "false");
		if (!c->has_start || c->inline_call)
			continue;
		ev_begin(j, "s", c->sched_tid, c->sched);
		fprintf(f, ",\"cat\":\"call\",\"name\":\"queued\",\"id\":%" PRIu64 "}", c->cookie);
		ev_begin(j, "f", c->tid, c->start);
		fprintf(f, ",\"bp\":\"e\",\"cat\":\"call\",\"name\":\"queued\",\"id\":%" PRIu64 "}",
			c->cookie);
	}
	for (i = 0; i < m->n_marks; i++) {
		const struct mmark *mk = &m->marks[i];
		const struct mcall *c = mk->cookie ? trace_find_call((struct trace_model *)m, mk->cookie) : NULL;

		ev_begin(j, "i", c ? c->tid : mk->tid, mk->t);
		fprintf(f, ",\"s\":\"%s\",\"cat\":\"mark\",\"name\":", c ? "t" : "g");
		ap_json_string(f, mk->what);
		fprintf(f, ",\"args\":{\"cookie\":%" PRIu64 "}}", mk->cookie);
	}
}

/* The run as a whole, for benchmarks (issue 6) and people: see output.h. */
static void put_other_data(FILE *f, const struct trace_model *m)
{
	size_t i, k;
	long rss;

	fputs("\n],\n\"otherData\":{\"generator\":\"asyncprobe " PACKAGE_VERSION "\",\"mode\":", f);
	ap_json_string(f, trace_model_mode(m));
	fprintf(f, ",\"base_monotonic_ns\":%" PRIu64 ",\"span_ms\":%.3f", m->base, (double)m->end / 1e6);
	fprintf(f, ",\"calls\":%u,\"started\":%u,\"finished\":%u,\"inline_calls\":%u"
		",\"workers\":%u,\"peak_running\":%u,\"peak_queued\":%u,\"events\":%" PRIu64
		",\"waits\":%" PRIu64 ",\"wait_ms\":%.3f,\"queued_ms\":%.3f,\"dropped\":%" PRIu64,
		m->sum.calls, m->sum.started, m->sum.finished, m->sum.inline_calls, m->sum.workers,
		m->sum.peak_running, m->sum.peak_queued, m->sum.events, m->sum.waits,
		(double)m->sum.wait_ns / 1e6, (double)m->sum.queued_ns / 1e6, m->sum.dropped);
	rss = ap_peak_rss_kib();
	if (rss >= 0)
		fprintf(f, ",\"peak_rss_kib\":%ld", rss);
	put_breakdown(f, m);
	put_critical(f, m);
	fputs(",\"marks\":{", f);
	for (i = 0; i < m->n_marks; i++) {
		/* the first time of each mark name */
		for (k = 0; k < i; k++)
			if (strcmp(m->marks[k].what, m->marks[i].what) == 0)
				break;
		if (k < i)
			continue;
		fputs(i ? "," : "", f);
		ap_json_string(f, m->marks[i].what);
		fprintf(f, ":%.3f", (double)m->marks[i].t / 1e6);
	}
	fputs("},\"meta\":{", f);
	for (i = 0; i < m->n_metas; i++) {
		fputs(i ? "," : "", f);
		ap_json_string(f, m->metas[i].key);
		fputc(':', f);
		ap_json_string(f, m->metas[i].value);
	}
	fputs("}}}\n", f);
}

static int write_chrome(FILE *f, const struct trace_model *m)
{
	_cleanup_free_ struct slice *sl = NULL;
	_cleanup_free_ struct slice **stack = NULL;
	_cleanup_free_ uint32_t *tids = NULL;
	struct json_ctx j = { .f = f, .m = m, .pid = (int)getpid(), .first = true };
	size_t n, n_tids;
	int r;

	sl = calloc(m->n_calls + m->n_phases + m->n_waits + 1, sizeof(*sl));
	stack = calloc(m->n_calls + m->n_phases + m->n_waits + 1, sizeof(*stack));
	tids = calloc(m->n_calls * 2 + m->n_phases + m->n_waits + m->n_marks + 1, sizeof(*tids));
	if (!sl || !stack || !tids)
		return -ENOMEM;
	collect_slices(m, sl, &n, tids, &n_tids);

	fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", f);
	put_thread_names(&j, tids, n_tids);
	put_slices(&j, sl, n, stack);
	put_instants(&j);
	/* Queued and running calls over time. */
	r = trace_model_sweep((struct trace_model *)m, json_counter, &j, NULL, NULL);
	if (r < 0)
		return r;
	put_other_data(f, m);
	return 0;
}

static int chrome_writer(FILE *f, const struct trace_model *m, const void *arg)
{
	(void)arg;
	return write_chrome(f, m);
}

int ap_trace_write_chrome(const char *path)
{
	return trace_model_write(path, chrome_writer, NULL);
}
