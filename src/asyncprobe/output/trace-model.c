/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tracing, the analysis model (trace-model.c) both writers read.
 *
 * trace_model_build() copies the records (trace_records_copy()), then,
 * without the lock: one call per cookie with its schedule, start and end
 * times, its phases clamped into its run, its waits.  A call known only
 * from labels and phases (libasync without a trace hook, or a phase
 * recorded for a cookie whose events are missing) spans its phases.  Each
 * wait is blamed on the call whose end released it (the last to end of
 * those before its target), and the critical path is walked back from the
 * call that ended last through those waits, queueing and schedulers.
 * Times in the model count from the earliest time recorded (its base).
 * Chrome tracks are libasync worker indices (tid = worker), the thread
 * that enabled tracing is track 0, other non-worker threads get tracks
 * from TID_OTHER_BASE up.
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

void trace_model_free(struct trace_model *m)
{
	free(m->ev);
	free(m->labels);
	free(m->phases);
	free(m->waits);
	free(m->marks);
	free(m->metas);
	free(m->names);
	free(m->domains);
	free(m->calls);
	memset(m, 0, sizeof(*m));
}

static uint32_t tid_of(const struct trace_model *m, uint32_t thread, uint32_t worker)
{
	if (worker)
		return worker;
	if (thread == 0 || thread == m->main_thread)
		return 0;
	return TID_OTHER_BASE + thread;
}

void trace_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_phase(const void *a, const void *b)
{
	const struct mphase *x = a, *y = b;

	if (x->cookie != y->cookie)
		return x->cookie < y->cookie ? -1 : 1;
	if (x->t0 != y->t0)
		return x->t0 < y->t0 ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_wait(const void *a, const void *b)
{
	const struct mwait *x = a, *y = b;

	if (x->cookie != y->cookie)
		return x->cookie < y->cookie ? -1 : 1;
	return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

struct mcall *trace_find_call(struct trace_model *m, async_cookie_t cookie)
{
	size_t lo = 0, hi = m->n_calls;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->calls[mid].cookie == cookie)
			return &m->calls[mid];
		if (m->calls[mid].cookie < cookie)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

struct sweep_pt {
	uint64_t t;
	int dq;                 /* change of the queued count */
	int dr;                 /* change of the running depth of tid */
	uint32_t tid;
};

static int cmp_sweep(const void *a, const void *b)
{
	const struct sweep_pt *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	/* ends before starts at the same time */
	return (x->dq + x->dr) - (y->dq + y->dr);
}

int trace_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The sweep behind the concurrency figures and the Chrome counter track.
 * Calls @emit (if not NULL) once per time at which the counts change.
 */
int trace_model_sweep(struct trace_model *m, void (*emit)(void *ud, uint64_t t, unsigned int q, unsigned int r),
		       void *ud, unsigned int *ret_peak_q, unsigned int *ret_peak_r)
{
	_cleanup_free_ struct sweep_pt *pts = NULL;
	_cleanup_free_ uint32_t *tids = NULL;
	_cleanup_free_ unsigned int *depth = NULL;
	size_t n = 0, n_tids = 0, i, k;
	unsigned int q = 0, running = 0, peak_q = 0, peak_r = 0;

	if (m->n_calls) {
		pts = calloc(m->n_calls * 4, sizeof(*pts));
		tids = calloc(m->n_calls, sizeof(*tids));
		depth = calloc(m->n_calls, sizeof(*depth));
		if (!pts || !tids || !depth)
			return -ENOMEM;
	}
	for (i = 0; i < m->n_calls; i++) {
		const struct mcall *c = &m->calls[i];
		uint64_t s, e;

		if (c->has_sched && c->has_start && c->start >= c->sched) {
			pts[n++] = (struct sweep_pt){ .t = c->sched, .dq = 1 };
			pts[n++] = (struct sweep_pt){ .t = c->start, .dq = -1 };
		}
		s = c->has_start ? c->start : c->first;
		e = c->has_start ? c->end : c->last;
		if (!c->has_start && !c->phase_count)
			continue;       /* never ran as far as we know */
		pts[n++] = (struct sweep_pt){ .t = s, .dr = 1, .tid = c->tid };
		pts[n++] = (struct sweep_pt){ .t = e, .dr = -1, .tid = c->tid };
		tids[n_tids++] = c->tid;
	}
	trace_sort(pts, n, sizeof(*pts), cmp_sweep);
	trace_sort(tids, n_tids, sizeof(*tids), trace_cmp_u32);
	for (i = 0, k = 0; i < n_tids; i++)
		if (k == 0 || tids[k - 1] != tids[i])
			tids[k++] = tids[i];
	n_tids = k;

	for (i = 0; i < n; i++) {
		struct sweep_pt *p = &pts[i];

		if (p->dq > 0)
			q++;
		else if (p->dq < 0 && q > 0)
			q--;
		if (p->dr) {
			uint32_t *at = bsearch(&p->tid, tids, n_tids, sizeof(*tids), trace_cmp_u32);
			unsigned int *d = &depth[at - tids];

			if (p->dr > 0) {
				if ((*d)++ == 0)
					running++;
			} else if (*d > 0) {
				if (--(*d) == 0)
					running--;
			}
		}
		if (q > peak_q)
			peak_q = q;
		if (running > peak_r)
			peak_r = running;
		if (emit && (i + 1 == n || pts[i + 1].t != p->t))
			emit(ud, p->t, q, running);
	}
	if (ret_peak_q)
		*ret_peak_q = peak_q;
	if (ret_peak_r)
		*ret_peak_r = peak_r;
	return 0;
}

/*
 * Which call each wait waited for: a synchronization returns when every
 * call before its target has ended, so the one of those that ended last
 * released it.  Global waits use a running maximum over cookie order;
 * waits in a domain look at that domain's calls only.
 */
static int model_blame(struct trace_model *m)
{
	_cleanup_free_ size_t *latest = NULL;       /* per call: index of the latest end so far */
	size_t i, j, n;

	if (!m->n_calls || !m->n_waits)
		return 0;
	latest = malloc(m->n_calls * sizeof(*latest));
	if (!latest)
		return -ENOMEM;
	for (i = 0; i < m->n_calls; i++) {
		const struct mcall *c = &m->calls[i];

		latest[i] = i > 0 ? latest[i - 1] : SIZE_MAX;
		if (!c->has_start)
			continue;
		if (latest[i] == SIZE_MAX || c->end > m->calls[latest[i]].end)
			latest[i] = i;
	}
	for (j = 0; j < m->n_waits; j++) {
		struct mwait *w = &m->waits[j];
		size_t lo = 0, hi = m->n_calls, best = SIZE_MAX;

		/* n = calls with a cookie below the target */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (m->calls[mid].cookie < w->target)
				lo = mid + 1;
			else
				hi = mid;
		}
		n = lo;
		if (!n)
			continue;
		if (!w->domain) {
			best = latest[n - 1];
		} else {
			for (i = 0; i < n; i++) {
				const struct mcall *c = &m->calls[i];

				if (c->has_start && c->domain == w->domain &&
				    (best == SIZE_MAX || c->end > m->calls[best].end))
					best = i;
			}
		}
		if (best != SIZE_MAX && m->calls[best].cookie != w->cookie)
			w->released_by = m->calls[best].cookie;
	}
	return 0;
}

/* The innermost call running on @tid at @t, other than @not. */
static struct mcall *call_at(struct trace_model *m, uint32_t tid, uint64_t t, const struct mcall *not)
{
	struct mcall *best = NULL;
	size_t i;

	for (i = 0; i < m->n_calls; i++) {
		struct mcall *c = &m->calls[i];

		if (c == not || !c->has_start || c->tid != tid || c->start > t || c->end < t)
			continue;
		if (!best || c->start >= best->start)
			best = c;
	}
	return best;
}

/*
 * The critical path, walked back from the call that ended last: a call's
 * own time back to the end of its latest sync wait, then the call that
 * released that wait; or, without a wait, its run and its time queued,
 * then the call that scheduled it (the one running on the scheduling
 * thread then).  What is left before the first call is the program's.
 * Each call is credited with its stretches; they add up to the span.
 */
static void model_critical(struct trace_model *m)
{
	struct mcall *cur = NULL;
	size_t i, steps = 0;
	uint64_t t;

	for (i = 0; i < m->n_calls; i++)
		if (m->calls[i].has_start && (!cur || m->calls[i].end > cur->end))
			cur = &m->calls[i];
	if (!cur)
		return;
	t = cur->end;
	m->sum.critical_ns = t;
	while (cur && steps++ < 4 * m->n_calls + 4) {
		const struct mwait *w = NULL;
		struct mcall *next;
		size_t j;

		/* the latest wait that ended by t, released by another call */
		for (j = cur->wait_first; j < cur->wait_first + cur->wait_count; j++) {
			const struct mwait *x = &m->waits[j];

			if (x->released_by && x->t1 <= t && x->t1 > x->t0)
				w = x;
		}
		if (w) {
			next = trace_find_call(m, w->released_by);
			if (next && next->has_start && next->end > w->t0) {
				uint64_t resume = next->end < w->t1 ? next->end : w->t1;

				cur->crit_ns += t - resume;
				t = resume;
				cur = next;
				continue;
			}
		}
		/* no wait held it back: its run, its queueing, its scheduler */
		if (t > cur->start)
			cur->crit_ns += t - cur->start;
		t = cur->start < t ? cur->start : t;
		if (cur->has_sched && cur->sched < t) {
			cur->crit_ns += t - cur->sched;
			cur->crit_queued_ns += t - cur->sched;
			t = cur->sched;
		}
		next = cur->has_sched ? call_at(m, cur->sched_tid, t, cur) : NULL;
		cur = next;
	}
	m->crit_program_ns = t;
	for (i = 0; i < m->n_calls; i++)
		m->sum.critical_calls += m->calls[i].crit_ns > 0;
}

/* Time 0: tracing enabled, or anything recorded before that. */
static void model_base(struct trace_model *m, const struct phase_rec *ph, const struct mark_rec *mk)
{
	uint64_t base = m->base ? m->base : UINT64_MAX;
	size_t i;

	for (i = 0; i < m->n_ev; i++)
		if (m->ev[i].t < base)
			base = m->ev[i].t;
	for (i = 0; i < m->n_phases; i++)
		if (ph[i].t0 < base)
			base = ph[i].t0;
	for (i = 0; i < m->n_marks; i++)
		if (mk[i].t < base)
			base = mk[i].t;
	m->base = base == UINT64_MAX ? 0 : base;
}

/* A recorded time relative to the base. */
static uint64_t rel(const struct trace_model *m, uint64_t t)
{
	return t >= m->base ? t - m->base : 0;
}

/* The calls: every cookie mentioned anywhere, sorted. */
static int model_calls(struct trace_model *m, const struct phase_rec *ph)
{
	_cleanup_free_ uint64_t *cookies = NULL;
	size_t n_cookies = 0, i, k;

	cookies = malloc((m->n_ev + m->n_labels + m->n_phases + 1) * sizeof(*cookies));
	if (!cookies)
		return -ENOMEM;
	for (i = 0; i < m->n_ev; i++)
		if (m->ev[i].cookie)
			cookies[n_cookies++] = m->ev[i].cookie;
	for (i = 0; i < m->n_labels; i++)
		if (m->labels[i].cookie)
			cookies[n_cookies++] = m->labels[i].cookie;
	for (i = 0; i < m->n_phases; i++)
		if (ph[i].cookie)
			cookies[n_cookies++] = ph[i].cookie;
	trace_sort(cookies, n_cookies, sizeof(*cookies), cmp_u64);
	for (i = 0, k = 0; i < n_cookies; i++)
		if (k == 0 || cookies[k - 1] != cookies[i])
			cookies[k++] = cookies[i];
	n_cookies = k;
	if (n_cookies) {
		m->calls = calloc(n_cookies, sizeof(*m->calls));
		if (!m->calls)
			return -ENOMEM;
	}
	m->n_calls = n_cookies;
	for (i = 0; i < n_cookies; i++) {
		m->calls[i].cookie = cookies[i];
		m->calls[i].first = UINT64_MAX;
	}
	return 0;
}

/* Waits begun and not yet ended while the events are replayed. */
struct open_waits {
	struct mwait *v;
	size_t n;
};

/* A synchronize end: close the innermost open wait of its thread and call. */
static void wait_end(struct trace_model *m, struct open_waits *open, const struct ev_rec *e, uint64_t t)
{
	size_t j;

	for (j = open->n; j > 0; j--) {
		struct mwait *w = &open->v[j - 1];

		if (w->thread == e->thread && w->tid == tid_of(m, e->thread, e->worker) &&
		    w->cookie == e->cookie) {
			w->t1 = t >= w->t0 ? t : w->t0;
			m->waits[m->n_waits++] = *w;
			memmove(w, w + 1, (open->n - j) * sizeof(*w));
			open->n--;
			return;
		}
	}
}

/*
 * Events, in recording order (per-thread order is preserved): schedule,
 * start and end times of the calls, closed waits into m->waits, the
 * workers seen into @workers.  Returns the last time.
 */
static uint64_t model_events(struct trace_model *m, struct open_waits *open, uint32_t *workers,
			     size_t *n_workers)
{
	uint64_t end = 0;
	size_t i;

	for (i = 0; i < m->n_ev; i++) {
		const struct ev_rec *e = &m->ev[i];
		uint64_t t = rel(m, e->t);
		struct mcall *c = e->cookie ? trace_find_call(m, e->cookie) : NULL;

		if (t > end)
			end = t;
		switch (e->type) {
		case ASYNC_TRACE_SCHEDULE:
			if (!c || c->has_sched)
				break;
			c->has_sched = true;
			c->sched = t;
			c->sched_tid = tid_of(m, e->thread, e->worker);
			c->inline_call |= e->inline_call;
			if (e->domain)
				c->domain = e->domain;
			break;
		case ASYNC_TRACE_START:
			if (!c || c->has_start)
				break;
			c->has_start = true;
			c->start = t;
			c->worker = e->worker;
			c->tid = tid_of(m, e->thread, e->worker);
			c->inline_call |= e->inline_call;
			if (e->domain && !c->domain)
				c->domain = e->domain;
			if (e->worker)
				workers[(*n_workers)++] = e->worker;
			break;
		case ASYNC_TRACE_END:
			if (!c || c->has_end)
				break;
			c->has_end = true;
			c->end = t;
			break;
		case ASYNC_TRACE_SYNC_BEGIN:
			open->v[open->n++] = (struct mwait){
				.cookie = e->cookie, .target = e->target, .t0 = t,
				.thread = e->thread, .tid = tid_of(m, e->thread, e->worker),
				.domain = e->domain,
			};
			break;
		case ASYNC_TRACE_SYNC_END:
			wait_end(m, open, e, t);
			break;
		}
	}
	return end;
}

/* Phases and marks, relative.  Returns the last time, at least @end. */
static int model_phases_marks(struct trace_model *m, const struct phase_rec *ph,
			      const struct mark_rec *mk, uint64_t *end)
{
	size_t i;

	if (m->n_phases) {
		m->phases = malloc(m->n_phases * sizeof(*m->phases));
		if (!m->phases)
			return -ENOMEM;
	}
	for (i = 0; i < m->n_phases; i++) {
		m->phases[i] = (struct mphase){
			.cookie = ph[i].cookie, .t0 = rel(m, ph[i].t0), .t1 = rel(m, ph[i].t1),
			.tid = tid_of(m, ph[i].thread, 0), .seq = ph[i].seq, .name = ph[i].name,
		};
		if (m->phases[i].t1 > *end)
			*end = m->phases[i].t1;
	}
	if (m->n_marks) {
		m->marks = malloc(m->n_marks * sizeof(*m->marks));
		if (!m->marks)
			return -ENOMEM;
	}
	for (i = 0; i < m->n_marks; i++) {
		m->marks[i] = (struct mmark){
			.cookie = mk[i].cookie, .t = rel(m, mk[i].t),
			.tid = tid_of(m, mk[i].thread, 0), .what = mk[i].what,
		};
		if (m->marks[i].t > *end)
			*end = m->marks[i].t;
	}
	return 0;
}

/* Labels (the last one per cookie wins); phases and waits to their calls. */
static void model_attach(struct trace_model *m)
{
	size_t i;

	for (i = 0; i < m->n_labels; i++) {
		struct mcall *c = m->labels[i].cookie ? trace_find_call(m, m->labels[i].cookie) : NULL;

		if (c) {
			c->kind = m->labels[i].kind;
			c->label = m->labels[i].label;
		}
	}

	/* cookie 0 sorts first */
	trace_sort(m->phases, m->n_phases, sizeof(*m->phases), cmp_phase);
	trace_sort(m->waits, m->n_waits, sizeof(*m->waits), cmp_wait);
	for (i = 0; i < m->n_phases && m->phases[i].cookie == 0; i++)
		;
	m->program_phases = i;
	for (; i < m->n_phases; i++) {
		struct mcall *c = trace_find_call(m, m->phases[i].cookie);

		if (!c->phase_count)
			c->phase_first = i;
		c->phase_count++;
	}
	for (i = 0; i < m->n_waits && m->waits[i].cookie == 0; i++)
		;
	m->program_waits = i;
	for (; i < m->n_waits; i++) {
		struct mcall *c = trace_find_call(m, m->waits[i].cookie);

		if (!c)
			continue;       /* a wait by a cookie we know nothing else of */
		if (!c->wait_count)
			c->wait_first = i;
		c->wait_count++;
	}
}

/* Per call: end of an unfinished call, extent, track, phases clamped into its run. */
static void call_extent(struct trace_model *m, struct mcall *c)
{
	size_t j;

	if (c->has_start && !c->has_end)
		c->end = m->end;
	if (c->has_start && c->end < c->start)
		c->end = c->start;
	if (c->has_sched)
		c->first = c->sched;
	if (c->has_start) {
		if (c->start < c->first)
			c->first = c->start;
		c->last = c->end;
	}
	for (j = c->phase_first; j < c->phase_first + c->phase_count; j++) {
		struct mphase *p = &m->phases[j];

		if (c->has_start && p->t1 > c->start && p->t0 < c->end) {
			if (p->t0 < c->start)
				p->t0 = c->start;
			if (p->t1 > c->end)
				p->t1 = c->end;
		}
		if (p->t0 < c->first)
			c->first = p->t0;
		if (p->t1 > c->last)
			c->last = p->t1;
	}
	for (j = c->wait_first; j < c->wait_first + c->wait_count; j++) {
		if (m->waits[j].t0 < c->first)
			c->first = m->waits[j].t0;
		if (m->waits[j].t1 > c->last)
			c->last = m->waits[j].t1;
	}
	if (c->first == UINT64_MAX)
		c->first = c->last = 0;
	if (c->last < c->first)
		c->last = c->first;     /* only scheduled */
	if (!c->has_start) {
		if (c->phase_count)
			c->tid = m->phases[c->phase_first].tid;
		else if (c->wait_count)
			c->tid = m->waits[c->wait_first].tid;
		else
			c->tid = c->sched_tid;
	}
}

/* The figures of struct ap_trace_summary. */
static int model_figures(struct trace_model *m, uint32_t *workers, size_t n_workers)
{
	size_t i;

	m->sum.base_ns = m->base;
	m->sum.span_ns = m->end;
	m->sum.calls = (unsigned int)m->n_calls;
	m->sum.dropped = m->dropped;
	m->sum.phases = m->n_phases;
	m->sum.events = m->n_ev;
	m->sum.waits = m->n_waits;
	for (i = 0; i < m->n_waits; i++)
		m->sum.wait_ns += m->waits[i].t1 - m->waits[i].t0;
	for (i = 0; i < m->n_calls; i++) {
		const struct mcall *c = &m->calls[i];

		m->sum.started += c->has_start;
		m->sum.finished += c->has_end;
		m->sum.inline_calls += c->inline_call;
		if (c->has_sched && c->has_start && c->start > c->sched)
			m->sum.queued_ns += c->start - c->sched;
	}
	trace_sort(workers, n_workers, sizeof(*workers), trace_cmp_u32);
	for (i = 0; i < n_workers; i++)
		if (i == 0 || workers[i] != workers[i - 1])
			m->sum.workers++;
	return trace_model_sweep(m, NULL, NULL, &m->sum.peak_queued, &m->sum.peak_running);
}

int trace_model_build(struct trace_model *m)
{
	_cleanup_free_ struct phase_rec *ph = NULL;
	_cleanup_free_ struct mark_rec *mk = NULL;
	_cleanup_free_ uint32_t *workers = NULL;
	struct open_waits open = { NULL, 0 };
	size_t n_workers = 0, i;
	uint64_t end;
	int r;

	memset(m, 0, sizeof(*m));
	r = trace_records_copy(m, &ph, &mk);
	if (r < 0)
		goto fail;
	model_base(m, ph, mk);
	r = model_calls(m, ph);
	if (r < 0)
		goto fail;
	if (m->n_ev) {
		open.v = malloc(m->n_ev * sizeof(*open.v));
		m->waits = malloc(m->n_ev * sizeof(*m->waits));
		workers = malloc(m->n_ev * sizeof(*workers));
		if (!open.v || !m->waits || !workers) {
			r = -ENOMEM;
			goto fail;
		}
	}
	end = model_events(m, &open, workers, &n_workers);
	r = model_phases_marks(m, ph, mk, &end);
	if (r < 0)
		goto fail;
	m->end = end;
	/* waits still open at the end of the trace */
	for (i = 0; i < open.n; i++) {
		open.v[i].t1 = end;
		open.v[i].unfinished = true;
		m->waits[m->n_waits++] = open.v[i];
	}
	free(open.v);
	open.v = NULL;
	model_attach(m);
	for (i = 0; i < m->n_calls; i++)
		call_extent(m, &m->calls[i]);
	r = model_blame(m);
	if (r < 0)
		goto fail;
	model_critical(m);
	r = model_figures(m, workers, n_workers);
	if (r < 0)
		goto fail;
	return 0;
fail:
	free(open.v);
	trace_model_free(m);
	return r;
}

int ap_trace_get_summary(struct ap_trace_summary *ret)
{
	struct trace_model m;
	int r;

	r = trace_model_build(&m);
	if (r < 0)
		return r;
	*ret = m.sum;
	trace_model_free(&m);
	return 0;
}

const char *trace_model_meta(const struct trace_model *m, const char *key)
{
	size_t i;

	for (i = 0; i < m->n_metas; i++)
		if (strcmp(m->metas[i].key, key) == 0)
			return m->metas[i].value;
	return NULL;
}

const char *trace_model_mode(const struct trace_model *m)
{
	const char *mode = trace_model_meta(m, "mode");

	if (mode)
		return mode;
	return async_get_enabled() ? "fastboot" : "sequential";
}

const char *trace_phase_name(const struct trace_model *m, uint16_t i)
{
	return i < m->n_names ? m->names[i] : "phase";
}

int trace_model_write(const char *path,
		      int (*writer)(FILE *f, const struct trace_model *m, const void *arg),
		      const void *arg)
{
	struct trace_model m;
	FILE *f;
	int r, err = 0;

	if (!path)
		return -EINVAL;
	r = trace_model_build(&m);
	if (r < 0)
		return r;
	f = ap_out_open(path, &err);
	if (!f) {
		trace_model_free(&m);
		return err;
	}
	r = writer(f, &m, arg);
	err = ap_out_close(f);
	trace_model_free(&m);
	return r < 0 ? r : err;
}

size_t trace_critical_top(const struct trace_model *m, size_t *ret, size_t max)
{
	_cleanup_free_ bool *done = NULL;
	size_t n, i, best;

	if (!m->n_calls)
		return 0;
	done = calloc(m->n_calls, sizeof(*done));
	if (!done)
		return 0;
	for (n = 0; n < max; n++) {
		best = SIZE_MAX;
		for (i = 0; i < m->n_calls; i++)
			if (!done[i] && m->calls[i].crit_ns &&
			    (best == SIZE_MAX || m->calls[i].crit_ns > m->calls[best].crit_ns))
				best = i;
		if (best == SIZE_MAX)
			break;
		done[best] = true;
		ret[n] = best;
	}
	return n;
}
