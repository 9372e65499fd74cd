/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tracing: what ran when, on which thread, and what it waited for.
 *
 * Recording.  ap_trace_enable() installs a libasync trace hook.  The hook
 * and the program's own calls (labels, phases, marks) append fixed-size
 * records under one mutex: no I/O, no formatting, one short critical
 * section per event (events go into fixed-size chunks, so an append never
 * copies what came before), and the hook may be called from every worker
 * at once.  Strings (labels, phase names, domain names) are copied
 * once: phase and domain names are interned, labels duplicated.
 *
 * Each thread gets a serial number the first time it records something; a
 * synchronize wait is the begin/end pair of one thread, so the pairs are
 * matched per thread in recording order.  Chrome tracks are libasync worker
 * indices (tid = worker), the thread that enabled tracing is track 0, other
 * non-worker threads get tracks from 100000 up.
 *
 * Output.  Both writers first build a model under the lock (copies of the
 * arrays), then write without it: one call per cookie with its schedule,
 * start and end times, its phases clamped into its run, its waits.  A call
 * known only from labels and phases (libasync without a trace hook, or a
 * phase recorded for a cookie whose events are missing) spans its phases.
 * Each wait is blamed on the call whose end released it (the last to end
 * of those before its target), and the critical path is walked back from
 * the call that ended last through those waits, queueing and schedulers.
 *
 *  - Chrome trace-event JSON (object format): per track, complete events
 *    ("X") for calls, phases and waits, sorted and clamped so they nest
 *    properly; flow events from schedule to start; instants for schedules
 *    and marks; a counter of queued and running calls; thread names; an
 *    otherData summary (see trace.h) for benchmarks.
 *  - SVG: one row per call in cookie order, the bar split into queued,
 *    running, the phases and the waits; a time grid; a legend; marks as
 *    vertical lines; a tooltip per bar; the critical path in the header.
 *
 * Every string written is sanitized: invalid UTF-8 bytes become the text
 * \xNN, control characters are escaped as \u00XX (JSON, json.c) or become
 * the text \xNN (XML, where they are not allowed at all).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "asyncprobe.h"
#include "json.h"
#include "trace.h"
#include "utf8.h"

/* ------------------------------------------------------------ recording */

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

/*
 * Events are kept in fixed-size chunks, so recording one never copies the
 * ones before it (a growing array would, under the lock, in a worker).
 */
#define EV_CHUNK 2048

struct ev_chunk {
	struct ev_chunk *next;
	size_t n;
	struct ev_rec ev[EV_CHUNK];
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

struct domain_rec {
	const struct async_domain *ptr;
	char *name;
};

#define MAX_INTERNED 1024

/* Everything below is protected by rec.lock, except where noted. */
static struct {
	pthread_mutex_t lock;
	bool enabled;           /* also read without the lock (atomic) */
	uint64_t enable_ns;
	uint32_t main_thread;   /* serial of the thread that enabled tracing */

	struct ev_chunk *ev_first, *ev_last;
	size_t n_ev;
	struct label_rec *labels;
	size_t n_labels, cap_labels;
	struct phase_rec *phases;
	size_t n_phases, cap_phases;
	struct mark_rec *marks;
	size_t n_marks, cap_marks;
	struct meta_rec *metas;
	size_t n_metas, cap_metas;
	char **names;           /* interned phase names */
	size_t n_names, cap_names;
	struct domain_rec *domains;     /* [0] unused: "no domain" */
	size_t n_domains, cap_domains;
	uint64_t dropped;
} rec = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint32_t thread_counter;
static __thread uint32_t thread_serial;

static uint32_t self_serial(void)
{
	if (!thread_serial)
		thread_serial = __atomic_add_fetch(&thread_counter, 1, __ATOMIC_RELAXED);
	return thread_serial;
}

/* Make room for one more element; false on allocation failure. */
static bool grow(void **array, size_t *cap, size_t n, size_t size)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return true;
	ncap = *cap ? *cap * 2 : 256;
	p = realloc(*array, ncap * size);
	if (!p)
		return false;
	*array = p;
	*cap = ncap;
	return true;
}

#define GROW(arr, n, cap) grow((void **)&(arr), &(cap), (n), sizeof(*(arr)))

bool ap_trace_enabled(void)
{
	return __atomic_load_n(&rec.enabled, __ATOMIC_ACQUIRE);
}

/* Index of an interned phase name, UINT16_MAX on failure.  Under the lock. */
static uint16_t intern_name(const char *name)
{
	char *copy;
	size_t i;

	if (!name || !*name)
		name = "phase";
	for (i = 0; i < rec.n_names; i++)
		if (strcmp(rec.names[i], name) == 0)
			return (uint16_t)i;
	if (rec.n_names >= MAX_INTERNED || !GROW(rec.names, rec.n_names, rec.cap_names))
		return UINT16_MAX;
	copy = strdup(name);
	if (!copy)
		return UINT16_MAX;
	rec.names[rec.n_names] = copy;
	return (uint16_t)rec.n_names++;
}

/* Index of a domain, 0 for none or on failure.  Under the lock. */
static uint16_t intern_domain(const struct async_domain *d)
{
	const char *name;
	char *copy;
	size_t i;

	if (!d)
		return 0;
	name = d->name ? d->name : "(unnamed)";
	for (i = 1; i < rec.n_domains; i++)
		if (rec.domains[i].ptr == d && strcmp(rec.domains[i].name, name) == 0)
			return (uint16_t)i;
	if (rec.n_domains == 0)
		rec.n_domains = 1;      /* slot 0 means "no domain" */
	if (rec.n_domains >= MAX_INTERNED ||
	    !GROW(rec.domains, rec.n_domains, rec.cap_domains))
		return 0;
	copy = strdup(name);
	if (!copy)
		return 0;
	rec.domains[rec.n_domains] = (struct domain_rec){ .ptr = d, .name = copy };
	return (uint16_t)rec.n_domains++;
}

void ap_trace_record_event(const struct async_trace_event *ev)
{
	uint32_t serial;

	if (!ev || !ap_trace_enabled() || (unsigned int)ev->type >= _ASYNC_TRACE_TYPE_MAX)
		return;
	serial = self_serial();
	pthread_mutex_lock(&rec.lock);
	if (!rec.enabled) {
		pthread_mutex_unlock(&rec.lock);
		return;
	}
	if (!rec.ev_last || rec.ev_last->n == EV_CHUNK) {
		struct ev_chunk *c = malloc(sizeof(*c));

		if (c) {
			c->next = NULL;
			c->n = 0;
			if (rec.ev_last)
				rec.ev_last->next = c;
			else
				rec.ev_first = c;
			rec.ev_last = c;
		}
	}
	if (!rec.ev_last || rec.ev_last->n == EV_CHUNK) {
		rec.dropped++;
	} else {
		rec.n_ev++;
		rec.ev_last->ev[rec.ev_last->n++] = (struct ev_rec){
			.t = ev->time_ns,
			.cookie = ev->cookie,
			.target = ev->target,
			.thread = serial,
			.worker = ev->worker,
			.domain = intern_domain(ev->domain),
			.type = (uint8_t)ev->type,
			.inline_call = ev->inline_call,
		};
	}
	pthread_mutex_unlock(&rec.lock);
}

static void trace_hook(const struct async_trace_event *ev, void *userdata)
{
	ap_trace_record_event(ev);
}

void ap_trace_enable(void)
{
	uint32_t serial = self_serial();
	bool was;

	pthread_mutex_lock(&rec.lock);
	was = rec.enabled;
	if (!was) {
		rec.enable_ns = ap_now_ns();
		rec.main_thread = serial;
		__atomic_store_n(&rec.enabled, true, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&rec.lock);
	if (!was)
		async_set_trace(trace_hook, NULL);
}

void ap_trace_label(async_cookie_t cookie, const char *kind, const char *label)
{
	char *k, *l;

	if (!ap_trace_enabled())
		return;
	k = strdup(kind ? kind : "");
	l = strdup(label ? label : "");
	pthread_mutex_lock(&rec.lock);
	if (!k || !l || !rec.enabled || !GROW(rec.labels, rec.n_labels, rec.cap_labels)) {
		if (rec.enabled)
			rec.dropped++;
		pthread_mutex_unlock(&rec.lock);
		free(k);
		free(l);
		return;
	}
	rec.labels[rec.n_labels++] = (struct label_rec){ .cookie = cookie, .kind = k, .label = l };
	pthread_mutex_unlock(&rec.lock);
}

void ap_trace_phase(async_cookie_t cookie, const char *phase, uint64_t t0_ns, uint64_t t1_ns)
{
	uint32_t serial;
	uint16_t name;

	if (!ap_trace_enabled())
		return;
	serial = self_serial();
	if (t1_ns < t0_ns)
		t1_ns = t0_ns;
	pthread_mutex_lock(&rec.lock);
	if (!rec.enabled) {
		pthread_mutex_unlock(&rec.lock);
		return;
	}
	name = intern_name(phase);
	if (name == UINT16_MAX || !GROW(rec.phases, rec.n_phases, rec.cap_phases)) {
		rec.dropped++;
	} else {
		rec.phases[rec.n_phases] = (struct phase_rec){
			.cookie = cookie, .t0 = t0_ns, .t1 = t1_ns, .thread = serial,
			.seq = (uint32_t)rec.n_phases, .name = name,
		};
		rec.n_phases++;
	}
	pthread_mutex_unlock(&rec.lock);
}

void ap_trace_mark(async_cookie_t cookie, const char *what, uint64_t t_ns)
{
	uint32_t serial;
	char *w;

	if (!ap_trace_enabled())
		return;
	serial = self_serial();
	w = strdup(what ? what : "mark");
	pthread_mutex_lock(&rec.lock);
	if (!w || !rec.enabled || !GROW(rec.marks, rec.n_marks, rec.cap_marks)) {
		if (rec.enabled)
			rec.dropped++;
		pthread_mutex_unlock(&rec.lock);
		free(w);
		return;
	}
	rec.marks[rec.n_marks++] = (struct mark_rec){ .cookie = cookie, .t = t_ns, .thread = serial, .what = w };
	pthread_mutex_unlock(&rec.lock);
}

void ap_trace_meta(const char *key, const char *value)
{
	char *k, *v;
	size_t i;

	if (!ap_trace_enabled() || !key)
		return;
	k = strdup(key);
	v = strdup(value ? value : "");
	pthread_mutex_lock(&rec.lock);
	if (!k || !v || !rec.enabled)
		goto fail;
	for (i = 0; i < rec.n_metas; i++)
		if (strcmp(rec.metas[i].key, key) == 0) {
			free(rec.metas[i].value);
			rec.metas[i].value = v;
			pthread_mutex_unlock(&rec.lock);
			free(k);
			return;
		}
	if (!GROW(rec.metas, rec.n_metas, rec.cap_metas))
		goto fail;
	rec.metas[rec.n_metas++] = (struct meta_rec){ .key = k, .value = v };
	pthread_mutex_unlock(&rec.lock);
	return;
fail:
	if (rec.enabled)
		rec.dropped++;
	pthread_mutex_unlock(&rec.lock);
	free(k);
	free(v);
}

void ap_trace_reset(void)
{
	size_t i;
	bool was;

	pthread_mutex_lock(&rec.lock);
	was = rec.enabled;
	__atomic_store_n(&rec.enabled, false, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&rec.lock);
	if (was)
		async_set_trace(NULL, NULL);

	pthread_mutex_lock(&rec.lock);
	for (i = 0; i < rec.n_labels; i++) {
		free(rec.labels[i].kind);
		free(rec.labels[i].label);
	}
	for (i = 0; i < rec.n_marks; i++)
		free(rec.marks[i].what);
	for (i = 0; i < rec.n_metas; i++) {
		free(rec.metas[i].key);
		free(rec.metas[i].value);
	}
	for (i = 0; i < rec.n_names; i++)
		free(rec.names[i]);
	for (i = 1; i < rec.n_domains; i++)
		free(rec.domains[i].name);
	while (rec.ev_first) {
		struct ev_chunk *next = rec.ev_first->next;

		free(rec.ev_first);
		rec.ev_first = next;
	}
	rec.ev_last = NULL;
	free(rec.labels);
	free(rec.phases);
	free(rec.marks);
	free(rec.metas);
	free(rec.names);
	free(rec.domains);
	rec.labels = NULL;
	rec.phases = NULL;
	rec.marks = NULL;
	rec.metas = NULL;
	rec.names = NULL;
	rec.domains = NULL;
	rec.n_ev = rec.n_labels = rec.cap_labels = 0;
	rec.n_phases = rec.cap_phases = rec.n_marks = rec.cap_marks = 0;
	rec.n_metas = rec.cap_metas = rec.n_names = rec.cap_names = 0;
	rec.n_domains = rec.cap_domains = 0;
	rec.dropped = 0;
	rec.enable_ns = 0;
	rec.main_thread = 0;
	pthread_mutex_unlock(&rec.lock);
}

/* ---------------------------------------------------------------- model */

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

struct model {
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

static void model_free(struct model *m)
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

static uint32_t tid_of(const struct model *m, uint32_t thread, uint32_t worker)
{
	if (worker)
		return worker;
	if (thread == 0 || thread == m->main_thread)
		return 0;
	return TID_OTHER_BASE + thread;
}

/* qsort() that accepts an empty (NULL) array. */
static void sort_array(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
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

static struct mcall *find_call(struct model *m, async_cookie_t cookie)
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

static void *dup_array(const void *src, size_t n, size_t size)
{
	void *p;

	if (!n)
		return NULL;
	p = malloc(n * size);
	if (p)
		memcpy(p, src, n * size);
	return p;
}

/* Copy the records under the lock. */
static int model_copy(struct model *m, struct phase_rec **ret_phases, struct mark_rec **ret_marks)
{
	struct phase_rec *ph = NULL;
	struct mark_rec *mk = NULL;
	size_t i;
	int r = 0;

	pthread_mutex_lock(&rec.lock);
	m->base = rec.enable_ns;
	m->main_thread = rec.main_thread;
	m->dropped = rec.dropped;
	m->n_ev = rec.n_ev;
	m->n_labels = rec.n_labels;
	m->n_phases = rec.n_phases;
	m->n_marks = rec.n_marks;
	m->n_metas = rec.n_metas;
	m->n_names = rec.n_names;
	m->n_domains = rec.n_domains;
	if (rec.n_ev) {
		m->ev = malloc(rec.n_ev * sizeof(*m->ev));
		if (m->ev) {
			size_t at = 0;

			for (const struct ev_chunk *c = rec.ev_first; c; c = c->next) {
				memcpy(m->ev + at, c->ev, c->n * sizeof(*c->ev));
				at += c->n;
			}
		}
	}
	m->labels = dup_array(rec.labels, rec.n_labels, sizeof(*rec.labels));
	ph = dup_array(rec.phases, rec.n_phases, sizeof(*rec.phases));
	mk = dup_array(rec.marks, rec.n_marks, sizeof(*rec.marks));
	m->metas = dup_array(rec.metas, rec.n_metas, sizeof(*rec.metas));
	if (rec.n_names)
		m->names = malloc(rec.n_names * sizeof(char *));
	if (rec.n_domains)
		m->domains = malloc(rec.n_domains * sizeof(char *));
	if ((rec.n_ev && !m->ev) || (rec.n_labels && !m->labels) || (rec.n_phases && !ph) ||
	    (rec.n_marks && !mk) || (rec.n_metas && !m->metas) ||
	    (rec.n_names && !m->names) || (rec.n_domains && !m->domains)) {
		r = -ENOMEM;
	} else {
		for (i = 0; i < rec.n_names; i++)
			m->names[i] = rec.names[i];
		for (i = 0; i < rec.n_domains; i++)
			m->domains[i] = i ? rec.domains[i].name : "";
	}
	pthread_mutex_unlock(&rec.lock);
	if (r < 0) {
		free(ph);
		free(mk);
		return r;
	}
	*ret_phases = ph;
	*ret_marks = mk;
	return 0;
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

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The sweep behind the concurrency figures and the Chrome counter track.
 * Calls @emit (if not NULL) once per time at which the counts change.
 */
static int model_sweep(struct model *m, void (*emit)(void *ud, uint64_t t, unsigned int q, unsigned int r),
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
	sort_array(pts, n, sizeof(*pts), cmp_sweep);
	sort_array(tids, n_tids, sizeof(*tids), cmp_u32);
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
			uint32_t *at = bsearch(&p->tid, tids, n_tids, sizeof(*tids), cmp_u32);
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
static int model_blame(struct model *m)
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
static struct mcall *call_at(struct model *m, uint32_t tid, uint64_t t, const struct mcall *not)
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
static void model_critical(struct model *m)
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
			next = find_call(m, w->released_by);
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

static int model_build(struct model *m)
{
	_cleanup_free_ struct phase_rec *ph = NULL;
	_cleanup_free_ struct mark_rec *mk = NULL;
	_cleanup_free_ uint64_t *cookies = NULL;
	_cleanup_free_ struct mwait *open = NULL;
	_cleanup_free_ uint32_t *workers = NULL;
	size_t n_cookies = 0, n_open = 0, n_workers = 0, i, j, k;
	uint64_t base, end = 0;
	int r;

	memset(m, 0, sizeof(*m));
	r = model_copy(m, &ph, &mk);
	if (r < 0)
		goto fail;

	/* Time 0: tracing enabled, or anything recorded before that. */
	base = m->base ? m->base : UINT64_MAX;
	for (i = 0; i < m->n_ev; i++)
		if (m->ev[i].t < base)
			base = m->ev[i].t;
	for (i = 0; i < m->n_phases; i++)
		if (ph[i].t0 < base)
			base = ph[i].t0;
	for (i = 0; i < m->n_marks; i++)
		if (mk[i].t < base)
			base = mk[i].t;
	if (base == UINT64_MAX)
		base = 0;
	m->base = base;

#define REL(t) ((t) >= base ? (t) - base : 0)

	/* The calls: every cookie mentioned anywhere. */
	cookies = malloc((m->n_ev + m->n_labels + m->n_phases + 1) * sizeof(*cookies));
	if (!cookies) {
		r = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < m->n_ev; i++)
		if (m->ev[i].cookie)
			cookies[n_cookies++] = m->ev[i].cookie;
	for (i = 0; i < m->n_labels; i++)
		if (m->labels[i].cookie)
			cookies[n_cookies++] = m->labels[i].cookie;
	for (i = 0; i < m->n_phases; i++)
		if (ph[i].cookie)
			cookies[n_cookies++] = ph[i].cookie;
	sort_array(cookies, n_cookies, sizeof(*cookies), cmp_u64);
	for (i = 0, k = 0; i < n_cookies; i++)
		if (k == 0 || cookies[k - 1] != cookies[i])
			cookies[k++] = cookies[i];
	n_cookies = k;
	if (n_cookies) {
		m->calls = calloc(n_cookies, sizeof(*m->calls));
		if (!m->calls) {
			r = -ENOMEM;
			goto fail;
		}
	}
	m->n_calls = n_cookies;
	for (i = 0; i < n_cookies; i++) {
		m->calls[i].cookie = cookies[i];
		m->calls[i].first = UINT64_MAX;
	}

	/* Events, in recording order (per-thread order is preserved). */
	if (m->n_ev) {
		open = malloc(m->n_ev * sizeof(*open));
		m->waits = malloc(m->n_ev * sizeof(*m->waits));
		workers = malloc(m->n_ev * sizeof(*workers));
		if (!open || !m->waits || !workers) {
			r = -ENOMEM;
			goto fail;
		}
	}
	for (i = 0; i < m->n_ev; i++) {
		const struct ev_rec *e = &m->ev[i];
		uint64_t t = REL(e->t);
		struct mcall *c = e->cookie ? find_call(m, e->cookie) : NULL;

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
				workers[n_workers++] = e->worker;
			break;
		case ASYNC_TRACE_END:
			if (!c || c->has_end)
				break;
			c->has_end = true;
			c->end = t;
			break;
		case ASYNC_TRACE_SYNC_BEGIN:
			open[n_open++] = (struct mwait){
				.cookie = e->cookie, .target = e->target, .t0 = t,
				.thread = e->thread, .tid = tid_of(m, e->thread, e->worker),
				.domain = e->domain,
			};
			break;
		case ASYNC_TRACE_SYNC_END:
			for (j = n_open; j > 0; j--) {
				struct mwait *w = &open[j - 1];

				if (w->thread == e->thread && w->tid == tid_of(m, e->thread, e->worker) &&
				    w->cookie == e->cookie) {
					w->t1 = t >= w->t0 ? t : w->t0;
					m->waits[m->n_waits++] = *w;
					memmove(w, w + 1, (n_open - j) * sizeof(*w));
					n_open--;
					break;
				}
			}
			break;
		}
	}

	/* Phases and marks, relative. */
	if (m->n_phases) {
		m->phases = malloc(m->n_phases * sizeof(*m->phases));
		if (!m->phases) {
			r = -ENOMEM;
			goto fail;
		}
	}
	for (i = 0; i < m->n_phases; i++) {
		m->phases[i] = (struct mphase){
			.cookie = ph[i].cookie, .t0 = REL(ph[i].t0), .t1 = REL(ph[i].t1),
			.tid = tid_of(m, ph[i].thread, 0), .seq = ph[i].seq, .name = ph[i].name,
		};
		if (m->phases[i].t1 > end)
			end = m->phases[i].t1;
	}
	if (m->n_marks) {
		m->marks = malloc(m->n_marks * sizeof(*m->marks));
		if (!m->marks) {
			r = -ENOMEM;
			goto fail;
		}
	}
	for (i = 0; i < m->n_marks; i++) {
		m->marks[i] = (struct mmark){
			.cookie = mk[i].cookie, .t = REL(mk[i].t),
			.tid = tid_of(m, mk[i].thread, 0), .what = mk[i].what,
		};
		if (m->marks[i].t > end)
			end = m->marks[i].t;
	}
	m->end = end;

	/* Waits still open at the end of the trace. */
	for (j = 0; j < n_open; j++) {
		open[j].t1 = end;
		open[j].unfinished = true;
		m->waits[m->n_waits++] = open[j];
	}
#undef REL

	/* Labels: the last one per cookie wins. */
	for (i = 0; i < m->n_labels; i++) {
		struct mcall *c = m->labels[i].cookie ? find_call(m, m->labels[i].cookie) : NULL;

		if (c) {
			c->kind = m->labels[i].kind;
			c->label = m->labels[i].label;
		}
	}

	/* Attach phases and waits to their calls (cookie 0 sorts first). */
	sort_array(m->phases, m->n_phases, sizeof(*m->phases), cmp_phase);
	sort_array(m->waits, m->n_waits, sizeof(*m->waits), cmp_wait);
	for (i = 0; i < m->n_phases && m->phases[i].cookie == 0; i++)
		;
	m->program_phases = i;
	for (; i < m->n_phases; i++) {
		struct mcall *c = find_call(m, m->phases[i].cookie);

		if (!c->phase_count)
			c->phase_first = i;
		c->phase_count++;
	}
	for (i = 0; i < m->n_waits && m->waits[i].cookie == 0; i++)
		;
	m->program_waits = i;
	for (; i < m->n_waits; i++) {
		struct mcall *c = find_call(m, m->waits[i].cookie);

		if (!c)
			continue;       /* a wait by a cookie we know nothing else of */
		if (!c->wait_count)
			c->wait_first = i;
		c->wait_count++;
	}

	/* Per call: end of unfinished calls, extent, tracks, clamping. */
	for (i = 0; i < m->n_calls; i++) {
		struct mcall *c = &m->calls[i];

		if (c->has_start && !c->has_end)
			c->end = end;
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

	r = model_blame(m);
	if (r < 0)
		goto fail;
	model_critical(m);

	/* The figures. */
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
	sort_array(workers, n_workers, sizeof(*workers), cmp_u32);
	for (i = 0; i < n_workers; i++)
		if (i == 0 || workers[i] != workers[i - 1])
			m->sum.workers++;
	r = model_sweep(m, NULL, NULL, &m->sum.peak_queued, &m->sum.peak_running);
	if (r < 0)
		goto fail;
	return 0;
fail:
	model_free(m);
	return r;
}

int ap_trace_get_summary(struct ap_trace_summary *ret)
{
	struct model m;
	int r;

	r = model_build(&m);
	if (r < 0)
		return r;
	*ret = m.sum;
	model_free(&m);
	return 0;
}

static const char *model_meta(const struct model *m, const char *key)
{
	size_t i;

	for (i = 0; i < m->n_metas; i++)
		if (strcmp(m->metas[i].key, key) == 0)
			return m->metas[i].value;
	return NULL;
}

static const char *model_mode(const struct model *m)
{
	const char *mode = model_meta(m, "mode");

	if (mode)
		return mode;
	return async_get_enabled() ? "fastboot" : "sequential";
}

static const char *phase_name(const struct model *m, uint16_t i)
{
	return i < m->n_names ? m->names[i] : "phase";
}

/* --------------------------------------------------------------- output */

/*
 * XML character data or attribute value, at most @max characters (an
 * invalid byte counts as one); longer text ends in an ellipsis.
 */
static void put_xml(FILE *f, const char *str, size_t max)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	size_t len, n = 0;
	uint32_t cp;

	while (*s) {
		if (n++ == max) {
			fputs("\xe2\x80\xa6", f);
			return;
		}
		len = ap_utf8_decode((const char *)s, &cp);
		if (!len) {
			fprintf(f, "\\x%02x", *s);
			s++;
			continue;
		}
		switch (cp) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		default:
			if (cp < 0x20 || cp == 0x7f)
				fprintf(f, "\\x%02x", cp);
			else if (cp == 0xfffe || cp == 0xffff)
				fputs("\xef\xbf\xbd", f);
			else
				fwrite(s, 1, len, f);
		}
		s += len;
	}
}

/* Microseconds with nanosecond digits, as Chrome's ts and dur want. */
static void put_us(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%03u", ns / 1000, (unsigned int)(ns % 1000));
}

/* A duration for people: "850 us", "12.3 ms", "1.52 s". */
static void fmt_dur(char *buf, size_t size, uint64_t ns)
{
	if (ns < 1000000)
		snprintf(buf, size, "%.0f \xc2\xb5s", (double)ns / 1e3);
	else if (ns < 10000000000ULL)
		snprintf(buf, size, "%.1f ms", (double)ns / 1e6);
	else
		snprintf(buf, size, "%.2f s", (double)ns / 1e9);
}

/* ---------------------------------------------------------- Chrome JSON */

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
	const struct model *m;
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
	ap_json_string(f, phase_name(j->m, p->name));
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
	return cmp_u32(a, b);
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

static void put_breakdown(FILE *f, const struct model *m)
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
static void put_critical(FILE *f, const struct model *m)
{
	_cleanup_free_ bool *done = NULL;
	size_t i, best;
	int shown;

	fprintf(f, ",\"critical_path_ms\":%.3f,\"critical_path_calls\":%u,\"program_ms\":%.3f"
		",\"critical_path\":[", (double)m->sum.critical_ns / 1e6, m->sum.critical_calls,
		(double)m->crit_program_ns / 1e6);
	if (m->n_calls)
		done = calloc(m->n_calls, sizeof(*done));
	for (shown = 0; done && shown < 10; shown++) {
		best = SIZE_MAX;
		for (i = 0; i < m->n_calls; i++)
			if (!done[i] && m->calls[i].crit_ns &&
			    (best == SIZE_MAX || m->calls[i].crit_ns > m->calls[best].crit_ns))
				best = i;
		if (best == SIZE_MAX)
			break;
		done[best] = true;
		fprintf(f, "%s{\"cookie\":%" PRIu64 ",\"kind\":", shown ? "," : "", m->calls[best].cookie);
		ap_json_string(f, m->calls[best].kind ? m->calls[best].kind : "");
		fputs(",\"label\":", f);
		ap_json_string(f, m->calls[best].label ? m->calls[best].label : "");
		fprintf(f, ",\"ms\":%.3f,\"queued_ms\":%.3f}", (double)m->calls[best].crit_ns / 1e6,
			(double)m->calls[best].crit_queued_ns / 1e6);
	}
	fputc(']', f);
}

static int write_chrome(FILE *f, const struct model *m)
{
	_cleanup_free_ struct slice *sl = NULL;
	_cleanup_free_ struct slice **stack = NULL;
	_cleanup_free_ uint32_t *tids = NULL;
	struct json_ctx j = { .f = f, .m = m, .pid = (int)getpid(), .first = true };
	size_t n = 0, depth = 0, n_tids = 0, i, k;
	long rss;
	int r;

	sl = calloc(m->n_calls + m->n_phases + m->n_waits + 1, sizeof(*sl));
	stack = calloc(m->n_calls + m->n_phases + m->n_waits + 1, sizeof(*stack));
	tids = calloc(m->n_calls * 2 + m->n_phases + m->n_waits + m->n_marks + 1, sizeof(*tids));
	if (!sl || !stack || !tids)
		return -ENOMEM;

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
		const struct mcall *c = p->cookie ? find_call((struct model *)m, p->cookie) : NULL;

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
	sort_array(sl, n, sizeof(*sl), cmp_slice);
	sort_array(tids, n_tids, sizeof(*tids), cmp_tid);
	for (i = 0, k = 0; i < n_tids; i++)
		if (k == 0 || tids[k - 1] != tids[i])
			tids[k++] = tids[i];
	n_tids = k;

	fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", f);

	/* Process and thread names, tracks sorted by tid. */
	fputs("\n{\"ph\":\"M\",\"pid\":", f);
	fprintf(f, "%d,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"asyncprobe\"}}", j.pid);
	j.first = false;
	for (i = 0; i < n_tids; i++) {
		char name[48];

		if (tids[i] == 0)
			snprintf(name, sizeof(name), "main");
		else if (tids[i] < TID_OTHER_BASE)
			snprintf(name, sizeof(name), "worker %" PRIu32, tids[i]);
		else
			snprintf(name, sizeof(name), "thread %" PRIu32, tids[i] - TID_OTHER_BASE);
		fprintf(f, ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%" PRIu32
			",\"name\":\"thread_name\",\"args\":{\"name\":\"%s\"}}", j.pid, tids[i], name);
		fprintf(f, ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%" PRIu32
			",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":%" PRIu32 "}}",
			j.pid, tids[i], tids[i]);
	}

	/*
	 * Slices, per track, forced to nest: a slice that starts inside
	 * another but would end after it is cut at the enclosing end.
	 */
	for (i = 0; i < n; i++) {
		struct slice *s = &sl[i];

		while (depth > 0 && (stack[depth - 1]->tid != s->tid || stack[depth - 1]->t1 <= s->t0))
			depth--;
		if (depth > 0 && s->t1 > stack[depth - 1]->t1)
			s->t1 = stack[depth - 1]->t1;
		stack[depth++] = s;
		switch (s->kind) {
		case SLICE_CALL:
			json_call(&j, &m->calls[s->index], s);
			break;
		case SLICE_PHASE:
			json_phase(&j, &m->phases[s->index], s);
			break;
		case SLICE_WAIT:
			json_wait(&j, &m->waits[s->index], s);
			break;
		}
	}

	/*
	 * Schedules: an instant on the scheduling track, a flow to the start.
	 * All in category "call": some viewers bind a flow to the event of
	 * its category, thread and timestamp, others to the enclosing slice.
	 */
	for (i = 0; i < m->n_calls; i++) {
		const struct mcall *c = &m->calls[i];

		if (!c->has_sched)
			continue;
		ev_begin(&j, "i", c->sched_tid, c->sched);
		fprintf(f, ",\"s\":\"t\",\"cat\":\"call\",\"name\":\"schedule c%" PRIu64
			"\",\"args\":{\"cookie\":%" PRIu64 ",\"inline\":%s}}",
			c->cookie, c->cookie, c->inline_call ? "true" : "false");
		if (!c->has_start || c->inline_call)
			continue;
		ev_begin(&j, "s", c->sched_tid, c->sched);
		fprintf(f, ",\"cat\":\"call\",\"name\":\"queued\",\"id\":%" PRIu64 "}", c->cookie);
		ev_begin(&j, "f", c->tid, c->start);
		fprintf(f, ",\"bp\":\"e\",\"cat\":\"call\",\"name\":\"queued\",\"id\":%" PRIu64 "}",
			c->cookie);
	}

	/* Marks. */
	for (i = 0; i < m->n_marks; i++) {
		const struct mmark *mk = &m->marks[i];
		const struct mcall *c = mk->cookie ? find_call((struct model *)m, mk->cookie) : NULL;

		ev_begin(&j, "i", c ? c->tid : mk->tid, mk->t);
		fprintf(f, ",\"s\":\"%s\",\"cat\":\"mark\",\"name\":", c ? "t" : "g");
		ap_json_string(f, mk->what);
		fprintf(f, ",\"args\":{\"cookie\":%" PRIu64 "}}", mk->cookie);
	}

	/* Queued and running calls over time. */
	r = model_sweep((struct model *)m, json_counter, &j, NULL, NULL);
	if (r < 0)
		return r;

	/* The run as a whole, for benchmarks (issue 6) and people. */
	fputs("\n],\n\"otherData\":{\"generator\":\"asyncprobe " PACKAGE_VERSION "\",\"mode\":", f);
	ap_json_string(f, model_mode(m));
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
	return 0;
}

int ap_trace_write_chrome(const char *path)
{
	struct model m;
	FILE *f;
	int r, err = 0;

	if (!path)
		return -EINVAL;
	r = model_build(&m);
	if (r < 0)
		return r;
	f = ap_out_open(path, &err);
	if (!f) {
		model_free(&m);
		return err;
	}
	r = write_chrome(f, &m);
	err = ap_out_close(f);
	model_free(&m);
	return r < 0 ? r : err;
}

/* ------------------------------------------------------------------ SVG */

/*
 * Colours: the fixed categories first, then one per other phase name.
 * Class kN of the stylesheet is entry N.
 */
static const struct {
	const char *name;
	const char *colour;
} svg_fixed[] = {
	{ "queued", "#d4d4d4" },
	{ "running", "#a6cee3" },
	{ "modprobe", "#fd8d3c" },
	{ "wait", "#fed976" },
	{ "probe", "#41ab5d" },
	{ "sync-wait", "#e31a1c" },
	{ "links", "#6a51a3" },
};
static const char *const svg_extra[] = {
	"#17becf", "#e377c2", "#8c564b", "#bcbd22", "#1f78b4", "#7f7f7f", "#b15928", "#fb9a99",
};

enum { K_QUEUED, K_RUNNING, K_MODPROBE, K_WAIT, K_PROBE, K_SYNC, K_LINKS, K_FIXED };

#define N_FIXED (sizeof(svg_fixed) / sizeof(svg_fixed[0]))
#define N_EXTRA (sizeof(svg_extra) / sizeof(svg_extra[0]))

/* The colour class of phase name @i. */
static unsigned int phase_class(const struct model *m, uint16_t i)
{
	const char *name = phase_name(m, i);
	unsigned int k, extra = 0;
	size_t j;

	if (strcmp(name, "sync") == 0)
		return K_SYNC;
	for (k = K_MODPROBE; k < K_FIXED; k++)
		if (strcmp(name, svg_fixed[k].name) == 0)
			return k;
	/* the how-manieth unknown name this is */
	for (j = 0; j < i && j < m->n_names; j++) {
		const char *o = m->names[j];
		bool known = strcmp(o, "sync") == 0;

		for (k = K_MODPROBE; k < K_FIXED && !known; k++)
			known = strcmp(o, svg_fixed[k].name) == 0;
		extra += !known;
	}
	return K_FIXED + extra % N_EXTRA;
}

struct svg_geom {
	double x0, w;           /* plot area */
	double scale;           /* px per ns */
	double top;             /* first row */
	double row_h, bar_h;
	bool bands;
	int font;
	uint64_t axis_ns, step_ns;
};

/* Long charts repeat the tick labels in a band every BAND_ROWS rows. */
#define BAND_ROWS 50
#define BAND_H 14.0

static double row_y(const struct svg_geom *g, size_t row)
{
	return g->top + (double)row * g->row_h + (g->bands ? (double)(row / BAND_ROWS) * BAND_H : 0);
}

static double sx(const struct svg_geom *g, uint64_t t)
{
	return g->x0 + (double)t * g->scale;
}

/* A bar segment of at least @minw pixels. */
static void svg_rect(FILE *f, const struct svg_geom *g, double y, uint64_t t0, uint64_t t1,
		     unsigned int cls, double minw)
{
	double x = sx(g, t0), w = (double)(t1 - t0) * g->scale;

	if (w < minw)
		w = minw;
	if (w < 0.05)
		return;         /* nothing to see: a call queued for no time */
	fprintf(f, "<rect class=\"k%u\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>",
		cls, x, y, w, g->bar_h);
}

static void fmt_tick(char *buf, size_t size, uint64_t t, uint64_t step)
{
	if (step >= 1000000)
		snprintf(buf, size, "%" PRIu64 " ms", t / 1000000);
	else if (step >= 100000)
		snprintf(buf, size, "%.1f ms", (double)t / 1e6);
	else if (step >= 10000)
		snprintf(buf, size, "%.2f ms", (double)t / 1e6);
	else
		snprintf(buf, size, "%.3f ms", (double)t / 1e6);
}

static void svg_tick_labels(FILE *f, const struct svg_geom *g, double y)
{
	uint64_t t;
	char buf[32];

	fputs("<g class=\"tick\">", f);
	for (t = 0; t <= g->axis_ns; t += g->step_ns) {
		fmt_tick(buf, sizeof(buf), t, g->step_ns);
		fprintf(f, "<text x=\"%.2f\" y=\"%.2f\">%s</text>", sx(g, t), y, buf);
	}
	fprintf(f, "</g>\n");
}

/* The tooltip and the text beside a call's bar. */
/* put_xml() into a new string, NULL when out of memory. */
static char *xml_string(const char *str, size_t max)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *t = open_memstream(&buf, &size);

	if (!t)
		return NULL;
	put_xml(t, str, max);
	if (fclose(t) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Roughly how many glyphs XML text shows: a character or an entity each. */
static double glyphs(const char *s)
{
	double n = 0;

	for (; *s; s++) {
		if (*s == '&') {
			const char *e = strchr(s, ';');

			if (e)
				s = e;
		} else if (((unsigned char)*s & 0xc0) == 0x80) {
			continue;
		}
		n++;
	}
	return n;
}

static void svg_call_text(FILE *f, const struct model *m, const struct mcall *c,
			  const struct svg_geom *g, double x0, double x1, double y, double width)
{
	char dur[32], buf[32], *text = NULL;
	size_t size = 0;
	double tw;
	FILE *t;
	uint64_t run = c->has_start ? c->end - c->start : c->last - c->first;
	size_t j;

	fmt_dur(dur, sizeof(dur), run);
	fprintf(f, "<title>c%" PRIu64 " ", c->cookie);
	put_xml(f, c->kind, SIZE_MAX);
	fputc(' ', f);
	put_xml(f, c->label, SIZE_MAX);
	if (c->has_start) {
		fprintf(f, "\n%s %u, domain ", c->worker ? "worker" : "main thread", c->worker);
		put_xml(f, c->domain < m->n_domains ? m->domains[c->domain] : "", 64);
		fmt_dur(buf, sizeof(buf), c->start);
		fprintf(f, "\nstarted at %s", buf);
		if (c->has_sched && c->start > c->sched) {
			fmt_dur(buf, sizeof(buf), c->start - c->sched);
			fprintf(f, " after %s queued", buf);
		}
		fprintf(f, ", ran %s%s%s", dur, c->inline_call ? " inline" : "",
			c->has_end ? "" : " (unfinished)");
	} else {
		fprintf(f, "\nfrom its phases: %s", dur);
	}
	if (c->crit_ns) {
		fmt_dur(buf, sizeof(buf), c->crit_ns);
		fprintf(f, "\non the critical path for %s", buf);
	}
	for (j = c->phase_first; j < c->phase_first + c->phase_count; j++) {
		const struct mphase *p = &m->phases[j];

		fmt_dur(buf, sizeof(buf), p->t1 - p->t0);
		fputc('\n', f);
		put_xml(f, phase_name(m, p->name), 64);
		fprintf(f, " %s", buf);
	}
	for (j = c->wait_first; j < c->wait_first + c->wait_count; j++) {
		const struct mwait *w = &m->waits[j];

		fmt_dur(buf, sizeof(buf), w->t1 - w->t0);
		if (w->target == ASYNC_COOKIE_MAX)
			fprintf(f, "\nsync-wait full %s", buf);
		else
			fprintf(f, "\nsync-wait c%" PRIu64 " %s", w->target, buf);
		if (w->released_by) {
			const struct mcall *b = find_call((struct model *)m, w->released_by);

			fprintf(f, ", until c%" PRIu64 " ", w->released_by);
			put_xml(f, b ? b->kind : "", 24);
			fputc(' ', f);
			put_xml(f, b ? b->label : "", 72);
			fputs(" ended", f);
		}
	}
	fputs("</title>", f);

	/*
	 * The label, beside the bar's end; when it would run off the picture
	 * and fits before the bar's start, it goes there instead.
	 */
	fputs("<text ", f);
	t = open_memstream(&text, &size);
	if (!t) {
		fputs("/>", f);
		return;
	}
	fprintf(t, "c%" PRIu64 " ", c->cookie);
	put_xml(t, c->kind, 24);
	fputc(' ', t);
	put_xml(t, c->label, 72);
	fprintf(t, " \xc2\xb7 %s", dur);
	if (c->inline_call)
		fputs(" inline", t);
	else if (c->has_sched && c->has_start && c->start - c->sched >= 50000) {
		fmt_dur(buf, sizeof(buf), c->start - c->sched);
		fprintf(t, " (+%s queued)", buf);
	}
	if (c->has_start && !c->has_end)
		fputs(" unfinished", t);
	if (c->crit_ns && c->crit_ns * 20 >= m->sum.critical_ns) {
		/* a twentieth or more of the critical path */
		fmt_dur(buf, sizeof(buf), c->crit_ns);
		fprintf(t, " \xc2\xb7 critical %s", buf);
	}
	if (fclose(t) != 0 || !text) {
		free(text);
		fputs("/>", f);
		return;
	}
	tw = glyphs(text) * 0.6 * g->font;
	if (x1 + 4 + tw > width && x0 - 4 - tw > 0)
		fprintf(f, "x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">", x0 - 4, y);
	else
		fprintf(f, "x=\"%.2f\" y=\"%.2f\">", x1 + 4, y);
	fputs(text, f);
	fputs("</text>", f);
	free(text);
}

static int write_svg(FILE *f, const struct model *m, const char *title)
{
	static const double PLOT_W = 1000, LABEL_W = 500, X0 = 30;
	struct svg_geom g = { .x0 = X0, .w = PLOT_W };
	bool program_row = m->program_phases > 0 || m->program_waits > 0;
	size_t rows = m->n_calls + program_row, row, i, j, k, n_classes;
	bool used[K_FIXED + N_EXTRA] = { false };
	double y, chart_h, width, height, lx, mark_end[2] = { -1e9, -1e9 };
	struct {
		char *text;
		double x;
		unsigned int line;
	} legend[K_FIXED + N_EXTRA] = { { NULL } };
	unsigned int legend_lines = 1;
	double legend_y;
	uint64_t total;
	int r = 0;
	char buf[64], dur[32];

	/* Scale: a round step giving at most 15 grid lines. */
	for (uint64_t p = 1000; !g.step_ns; p *= 10) {
		static const unsigned int mult[] = { 1, 2, 5 };

		for (k = 0; k < 3 && !g.step_ns; k++)
			if (m->end / (mult[k] * p) < 15)
				g.step_ns = mult[k] * p;
	}
	g.axis_ns = (m->end + g.step_ns - 1) / g.step_ns * g.step_ns;
	if (g.axis_ns == 0)
		g.axis_ns = g.step_ns;
	g.scale = PLOT_W / (double)g.axis_ns;
	g.row_h = rows <= 100 ? 18 : rows <= 400 ? 14 : 12;
	g.bar_h = g.row_h - 5;
	g.font = rows <= 100 ? 11 : rows <= 400 ? 10 : 9;
	/* Which colours appear, for the legend. */
	used[K_QUEUED] = used[K_RUNNING] = true;
	used[K_MODPROBE] = used[K_WAIT] = used[K_PROBE] = used[K_SYNC] = used[K_LINKS] = true;
	for (i = 0; i < m->n_phases; i++)
		used[phase_class(m, m->phases[i].name)] = true;
	n_classes = K_FIXED + N_EXTRA;

	/* Legend layout first: it may take several lines. */
	for (k = 0, lx = 16; k < n_classes; k++) {
		const char *name = k < K_FIXED ? svg_fixed[k].name : NULL;
		double w;

		if (!used[k])
			continue;
		if (!name) {
			/* the first other phase name with this colour */
			for (i = 0; i < m->n_names; i++)
				if (phase_class(m, (uint16_t)i) == k)
					break;
			name = i < m->n_names ? m->names[i] : "other";
		}
		legend[k].text = xml_string(name, 24);
		if (!legend[k].text) {
			r = -ENOMEM;
			goto out;
		}
		w = 16 + glyphs(legend[k].text) * 6.6 + 18;
		if (lx + w > X0 + PLOT_W + LABEL_W - 16 && lx > 16) {
			legend_lines++;
			lx = 16;
		}
		legend[k].x = lx;
		legend[k].line = legend_lines - 1;
		lx += w;
	}
	legend_y = m->sum.critical_calls ? 94 : 76;
	g.top = legend_y + 42 + 16.0 * (legend_lines - 1) + (m->n_marks ? 28 : 0);
	g.bands = rows > BAND_ROWS + 10;
	chart_h = rows ? row_y(&g, rows - 1) + g.row_h - g.top : 0;
	width = X0 + PLOT_W + LABEL_W;
	height = g.top + chart_h + 36;


	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
		"width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n", width, height, width, height);
	fputs("<style>\n"
	      "text { font-family: 'DejaVu Sans', Verdana, Helvetica, Arial, sans-serif; fill: #222; }\n"
	      ".title { font-size: 18px; font-weight: bold; }\n"
	      ".head { font-size: 12px; }\n"
	      ".legend text { font-size: 11px; }\n"
	      ".tick text { font-size: 10px; fill: #555; text-anchor: middle; }\n"
	      ".grid { stroke: #c8c8c8; stroke-width: 1; }\n"
	      ".stripe { fill: #f3f3f3; }\n"
	      ".mark { stroke: #b00; stroke-width: 1; stroke-dasharray: 4 3; }\n"
	      ".marktext { font-size: 10px; fill: #b00; }\n"
	      ".progwait { fill: #e31a1c; opacity: 0.3; }\n", f);
	fprintf(f, ".call text, .prog text { font-size: %dpx; }\n", g.font);
	for (k = 0; k < n_classes; k++)
		fprintf(f, ".k%zu { fill: %s; }\n", k,
			k < K_FIXED ? svg_fixed[k].colour : svg_extra[k - K_FIXED]);
	fputs("</style>\n", f);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#fff\"/>\n", width, height);

	/* Title and header. */
	fputs("<text class=\"title\" x=\"16\" y=\"26\">", f);
	put_xml(f, title && *title ? title : "asyncprobe", 200);
	fputs("</text>\n", f);
	fmt_dur(dur, sizeof(dur), m->end);
	fprintf(f, "<text class=\"head\" x=\"16\" y=\"46\">total %s \xc2\xb7 %u calls", dur, m->sum.calls);
	if (m->sum.inline_calls)
		fprintf(f, " (%u inline)", m->sum.inline_calls);
	if (m->sum.workers)
		fprintf(f, " \xc2\xb7 %u worker%s", m->sum.workers, m->sum.workers == 1 ? "" : "s");
	else
		fputs(" \xc2\xb7 no workers", f);
	fprintf(f, " \xc2\xb7 peak %u running \xc2\xb7 mode ", m->sum.peak_running);
	put_xml(f, model_mode(m), 40);
	if (m->sum.waits) {
		fmt_dur(buf, sizeof(buf), m->sum.wait_ns);
		fprintf(f, " \xc2\xb7 %" PRIu64 " sync waits (%s summed)", m->sum.waits, buf);
	}
	if (m->sum.dropped)
		fprintf(f, " \xc2\xb7 %" PRIu64 " records lost", m->sum.dropped);
	fputs("</text>\n", f);

	/* Marks and facts on the second line. */
	fputs("<text class=\"head\" x=\"16\" y=\"64\">", f);
	for (i = 0, j = 0; i < m->n_marks && j < 8; i++, j++) {
		fmt_dur(buf, sizeof(buf), m->marks[i].t);
		fputs(j ? " \xc2\xb7 " : "", f);
		put_xml(f, m->marks[i].what, 40);
		fprintf(f, " at %s", buf);
	}
	for (i = 0; i < m->n_metas; i++, j++) {
		if (strcmp(m->metas[i].key, "mode") == 0)
			continue;
		fputs(j ? " \xc2\xb7 " : "", f);
		put_xml(f, m->metas[i].key, 32);
		fputs(": ", f);
		put_xml(f, m->metas[i].value, 64);
	}
	fprintf(f, "%st = 0 at %.3f s monotonic</text>\n", j ? " \xc2\xb7 " : "", (double)m->base / 1e9);

	/* The critical path: the three calls longest on it. */
	if (m->sum.critical_calls) {
		_cleanup_free_ bool *done = calloc(m->n_calls, sizeof(bool));

		fmt_dur(dur, sizeof(dur), m->sum.critical_ns);
		fprintf(f, "<text class=\"head\" x=\"16\" y=\"82\">critical path %s over %u call%s", dur,
			m->sum.critical_calls, m->sum.critical_calls == 1 ? "" : "s");
		for (k = 0; done && k < 3; k++) {
			size_t best = SIZE_MAX;

			for (i = 0; i < m->n_calls; i++)
				if (!done[i] && m->calls[i].crit_ns &&
				    (best == SIZE_MAX || m->calls[i].crit_ns > m->calls[best].crit_ns))
					best = i;
			if (best == SIZE_MAX)
				break;
			done[best] = true;
			fmt_dur(buf, sizeof(buf), m->calls[best].crit_ns);
			fprintf(f, "%s c%" PRIu64 " ", k ? "," : ":", m->calls[best].cookie);
			put_xml(f, m->calls[best].kind, 24);
			fputc(' ', f);
			put_xml(f, m->calls[best].label, 48);
			fprintf(f, " %s", buf);
		}
		fputs("</text>\n", f);
	}

	/* Legend. */
	fputs("<g class=\"legend\">", f);
	for (k = 0; k < n_classes; k++) {
		if (!legend[k].text)
			continue;
		fprintf(f, "<rect class=\"k%zu\" x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\"/>",
			k, legend[k].x, legend_y + 16.0 * legend[k].line);
		fprintf(f, "<text x=\"%.0f\" y=\"%.0f\">%s</text>", legend[k].x + 16,
			legend_y + 10 + 16.0 * legend[k].line, legend[k].text);
	}
	fputs("</g>\n", f);

	/* Stripes, grid, tick labels above and below (and in the bands). */
	for (i = 1; i < rows; i += 2)
		fprintf(f, "<rect class=\"stripe\" x=\"0\" y=\"%.2f\" width=\"%.0f\" height=\"%.2f\"/>\n",
			row_y(&g, i), width, g.row_h);
	fputs("<g class=\"grid\">", f);
	for (uint64_t t = 0; t <= g.axis_ns; t += g.step_ns)
		fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>",
			sx(&g, t), g.top - 4, sx(&g, t), g.top + chart_h);
	fputs("</g>\n", f);
	svg_tick_labels(f, &g, g.top - 8);
	svg_tick_labels(f, &g, g.top + chart_h + 14);
	for (i = BAND_ROWS; g.bands && i < rows; i += BAND_ROWS)
		svg_tick_labels(f, &g, row_y(&g, i) - 3);

	/*
	 * Marks: dashed lines behind the bars, labels in two lines above the
	 * tick labels, each on the first line where it does not overlap.
	 */
	for (i = 0; i < m->n_marks; i++) {
		double x = sx(&g, m->marks[i].t), tw = 6.0 * (double)(strlen(m->marks[i].what) + 10);
		unsigned int line = 0;

		if (x < mark_end[0] + 6)
			line = x < mark_end[1] + 6 ? (mark_end[0] < mark_end[1] ? 0 : 1) : 1;
		mark_end[line] = x + tw;
		fmt_dur(buf, sizeof(buf), m->marks[i].t);
		fprintf(f, "<line class=\"mark\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>",
			x, g.top - 38 + (double)line * 13, x, g.top + chart_h);
		fprintf(f, "<text class=\"marktext\" x=\"%.2f\" y=\"%.2f\">", x + 3,
			g.top - 30 + (double)line * 13);
		put_xml(f, m->marks[i].what, 40);
		fprintf(f, " %s</text>\n", buf);
	}
	/* The program's own row: phases and waits outside any call. */
	y = g.top;
	row = 0;
	if (program_row) {
		double by = y + (g.row_h - g.bar_h) / 2, tx = sx(&g, 0);

		fputs("<g class=\"prog\">", f);
		for (i = 0; i < m->program_phases; i++) {
			svg_rect(f, &g, by, m->phases[i].t0, m->phases[i].t1,
				 phase_class(m, m->phases[i].name), 1.0);
			if (sx(&g, m->phases[i].t1) > tx)
				tx = sx(&g, m->phases[i].t1);
		}
		for (i = 0; i < m->program_waits; i++) {
			/* the main thread waiting for everything: drawn light */
			fprintf(f, "<rect class=\"progwait\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>",
				sx(&g, m->waits[i].t0), by,
				(double)(m->waits[i].t1 - m->waits[i].t0) * g.scale + 1.0, g.bar_h);
			if (sx(&g, m->waits[i].t1) > tx)
				tx = sx(&g, m->waits[i].t1);
		}
		for (i = 0, total = 0; i < m->program_waits; i++)
			total += m->waits[i].t1 - m->waits[i].t0;
		fmt_dur(buf, sizeof(buf), total);
		fprintf(f, "<text x=\"%.2f\" y=\"%.2f\">program, outside calls: %s in sync waits</text></g>\n",
			tx + 4, y + g.row_h - 5, buf);
		row++;
	}

	/* One row per call, in cookie order. */
	for (i = 0; i < m->n_calls; i++, row++) {
		const struct mcall *c = &m->calls[i];
		double by, x1;
		uint64_t s = c->has_start ? c->start : c->first;
		uint64_t e = c->has_start ? c->end : c->last;

		y = row_y(&g, row);
		by = y + (g.row_h - g.bar_h) / 2;
		fprintf(f, "<g class=\"call\" data-cookie=\"%" PRIu64 "\">", c->cookie);
		if (c->has_sched && c->has_start && c->start > c->sched)
			svg_rect(f, &g, by, c->sched, c->start, K_QUEUED, 0.0);
		svg_rect(f, &g, by, s, e, K_RUNNING, 2.0);
		for (j = c->phase_first; j < c->phase_first + c->phase_count; j++)
			svg_rect(f, &g, by, m->phases[j].t0, m->phases[j].t1,
				 phase_class(m, m->phases[j].name), 1.0);
		for (j = c->wait_first; j < c->wait_first + c->wait_count; j++)
			svg_rect(f, &g, by, m->waits[j].t0, m->waits[j].t1, K_SYNC, 1.0);
		x1 = sx(&g, e);
		if (x1 < sx(&g, s) + 2.0)
			x1 = sx(&g, s) + 2.0;
		svg_call_text(f, m, c, &g, sx(&g, c->first), x1, y + g.row_h - 5, width);
		fputs("</g>\n", f);
	}

	fputs("</svg>\n", f);
out:
	for (k = 0; k < K_FIXED + N_EXTRA; k++)
		free(legend[k].text);
	return r;
}

int ap_trace_write_svg(const char *path, const char *title)
{
	struct model m;
	FILE *f;
	int r, err = 0;

	if (!path)
		return -EINVAL;
	r = model_build(&m);
	if (r < 0)
		return r;
	f = ap_out_open(path, &err);
	if (!f) {
		model_free(&m);
		return err;
	}
	r = write_svg(f, &m, title);
	err = ap_out_close(f);
	model_free(&m);
	return r < 0 ? r : err;
}
