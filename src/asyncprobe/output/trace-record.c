/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tracing, recording (trace-record.c): what ran when, on which thread, and
 * what it waited for.
 *
 * ap_trace_enable() installs a libasync trace hook.  The hook and the
 * program's own calls (labels, phases, marks) append fixed-size records
 * under one mutex: no I/O, no formatting, one short critical section per
 * event (events go into fixed-size chunks, so an append never copies what
 * came before), and the hook may be called from every worker at once.
 * Strings (labels, phase names, domain names) are copied once: phase and
 * domain names are interned, labels duplicated.
 *
 * Each thread gets a serial number the first time it records something; a
 * synchronize wait is the begin/end pair of one thread, so the pairs are
 * matched per thread in recording order (trace-model.c).
 *
 * The writers never read the records directly: trace_records_copy() hands
 * trace-model.c a copy taken under the lock.
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

/* ---------------------------------------------------------------- copy */

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
int trace_records_copy(struct trace_model *m, struct phase_rec **ret_phases, struct mark_rec **ret_marks)
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
