/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libasync: asynchronous function calls with in-order visible effects.
 *
 * This file is the ordering core: cookies, the domain and registered
 * lists, the work queue, waiters, scheduling, synchronization,
 * abandonment, configuration, logging, tracing and chaos.  The threads
 * that run queued calls, and the policy of how many, are pool.c's; what
 * the two share is declared in async-internal.h.
 *
 * Goals and Theory of Operation
 * =============================
 *
 * The goal is to let a program (an early-boot helper, say) run a sequence
 * of slow, independent steps concurrently while every globally visible
 * effect of those steps still happens in the order a strictly sequential
 * run would produce.  The model is the one of Linux 2.6.29's kernel/async.c
 * and of an out-of-order CPU: calls execute out of order, their visible
 * parts retire in order.
 *
 * async_schedule() hands a function to the library and returns a cookie.
 * Cookies come from one counter and strictly increase, across all domains,
 * so a cookie is a position in the sequential program.  A call that is
 * about to do something visible first calls async_synchronize_cookie()
 * with its own cookie: that returns once every call with a lower cookie (in
 * the same domain) has completed.  The part before the synchronization
 * overlaps with other calls; the part after it is serialized in cookie
 * order.  async_synchronize_full() waits until no call is pending or
 * running in any registered domain, including calls that running calls
 * schedule from inside themselves: a scheduled child is linked before its
 * parent completes, so "nothing in progress" can never be observed while a
 * child is still on its way (the 2.6.29 disk/partition bug).
 *
 * Data structures (all guarded by the one mutex, async_core.lock):
 *
 *  - Every call in progress (queued, running, or running inline in its
 *    caller) is an async_entry.  Entries are appended at schedule time,
 *    under the lock that also hands out the cookie, so each list below is
 *    in cookie order without sorting.
 *  - Each domain keeps its entries in progress on a doubly linked list;
 *    its head is the lowest cookie in progress in that domain.  Entries of
 *    registered domains are also on one global list, whose head is the
 *    lowest cookie in progress anywhere async_synchronize_full() looks.
 *  - Entries waiting for a worker are on one FIFO queue, in cookie order,
 *    shared by all domains.  Workers always take its head, so when a call
 *    starts, every call with a lower cookie has started too.
 *  - A blocked synchronize call is an async_waiter on its own stack, with
 *    its own condition variable, on a list sorted by target (per domain,
 *    or the global one for full synchronization).
 *
 * The wait condition is the kernel's: "the lowest cookie in progress has
 * reached my target" (an empty list counts as ASYNC_COOKIE_MAX, and the
 * target ASYNC_COOKIE_MAX means "all").  The lowest cookie only changes
 * when the head of a list completes, so only then are waiters looked at,
 * and only those whose target has been reached are signalled, each on its
 * own condition variable: no waiter is woken for a completion that does not
 * concern it, unlike the kernel's single wait queue.
 *
 * Deadlock freedom.  A call never waits for a call with a cookie at or
 * after its own: a synchronization from inside a call whose target is
 * beyond the caller's cookie (including full synchronization) is clamped to
 * the caller's cookie, i.e. it waits for everything scheduled before the
 * caller, and a warning is logged once.  With that rule every wait points
 * to strictly lower cookies, and since workers take calls in cookie order,
 * all lower calls have a thread: the wait-for graph has no cycle and the
 * lowest call in progress always runs.  Inline calls nested in another call
 * are clamped to the outermost call's cookie for the same reason.
 *
 * Synchronous fallback.  When concurrency is off (the default), when an
 * entry cannot be allocated, or when max_pending calls are already in
 * progress, the call runs in the caller before async_schedule() returns.
 * It still takes a cookie and an entry (on the caller's stack) in its
 * domain's list for the time it runs, so the ordering seen by everybody
 * else is identical.  A call scheduled from inside a running call is
 * queued even beyond max_pending: run inline it would be nested in its
 * parent, which is still in progress with a lower cookie, and could not
 * wait for the calls scheduled between the two.  Only allocation failure
 * runs such a call inline, and its synchronization is then clamped to the
 * parent's cookie (see below).
 *
 * Abandonment.  A call that hangs (blocked on a disk that stopped
 * answering) would hold back every later cookie forever.  async_abandon()
 * is the way out, decided by the program (which knows what "too long"
 * means): the entry leaves its domain and registered lists exactly as if
 * it had returned, waking the waiters that only it held back, and is
 * flagged.  The rule that makes this safe is the program's: an abandoned
 * call publishes nothing, so the effects that retire in cookie order are
 * those of a sequential run in which that call did nothing visible.  Its
 * thread cannot be stopped; it leaves the pool (pool.c: nr_workers),
 * so the cap counts only threads that can take calls, and a replacement is
 * started when queued calls are left without a worker.  When the call
 * returns at last, its entry is recycled without touching the lists and
 * the thread exits.  Only a started call can be abandoned.
 *
 * Workers.  Queued calls are run by a pool of threads, started on demand
 * up to max_threads and grown when the queue stalls; how many there are is
 * policy, not ordering, and lives in pool.c with its own description.
 * Workers take calls from the head of the queue only, so the order above
 * holds however many there are.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "async.h"
#include "libasync/async-internal.h"

#define ASYNC_DEFAULT_MAX_PENDING 32768u
/* Free entries kept for reuse (freed by async_quiesce()). */
#define ASYNC_FREE_MAX 16384u

struct async_waiter {
	struct async_waiter *next, *prev;
	struct async_waiter *tail;      /* valid in the head of a list only */
	async_cookie_t target;
	pthread_cond_t cond;
	bool done;
};

static ASYNC_DOMAIN(async_dfl_domain);

/* What async.c and pool.c share: see async-internal.h, field by field. */
struct async_core async_core = {
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
	/* Spins a little before sleeping: critical sections are a few dozen instructions. */
	.lock = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP,
#else
	.lock = PTHREAD_MUTEX_INITIALIZER,
#endif
};

/* Everything below is guarded by async_core.lock, unless marked otherwise. */
static async_cookie_t next_cookie = 1;
static struct async_entry *reg_first, *reg_last;
static struct async_waiter *reg_waiters;
static struct async_entry *queue_first, *queue_last;
static unsigned int nr_inflight;           /* queued or running on a worker */
static struct async_entry *free_entries;
static unsigned int nr_free;
static unsigned int nr_abandoned_running;  /* abandoned calls still running */

static unsigned int max_pending = ASYNC_DEFAULT_MAX_PENDING;
static bool enabled;
static bool warned_self_sync;

static async_log_func_t *log_fn;
static void *log_userdata;

/* Chaos state: atomics, read without the lock. */
static uint64_t chaos_seed;
static uint64_t chaos_generation;
static unsigned int chaos_threads;

/*
 * Per thread.  Initial-exec: in a shared library the default model calls
 * __tls_get_addr() for every access, 11% of the instructions of a stream
 * of empty calls (callgrind).  It takes a few dozen bytes of the static TLS
 * block, which glibc keeps spare even for a library loaded by dlopen().
 */
#define ASYNC_TLS __thread __attribute__((tls_model("initial-exec")))
static ASYNC_TLS async_cookie_t tls_outer;       /* outermost call's cookie, 0: none */
static ASYNC_TLS unsigned int tls_depth;         /* calls running on this thread */
static ASYNC_TLS struct async_entry *tls_entry;  /* the call running, innermost */
static ASYNC_TLS unsigned int tls_worker;        /* worker index, 0: not a worker */
static ASYNC_TLS uint64_t tls_rng;
static ASYNC_TLS uint64_t tls_rng_generation;
static ASYNC_TLS unsigned int tls_rng_id;

static pthread_once_t async_once = PTHREAD_ONCE_INIT;

uint64_t async_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct timespec async_deadline_after(uint64_t ns)
{
	uint64_t t = async_now_ns() + ns;

	return (struct timespec){ .tv_sec = (time_t)(t / 1000000000ull),
				  .tv_nsec = (long)(t % 1000000000ull) };
}

/* ------------------------------------------------------------------ */
/* Logging, tracing, chaos                                              */

static void log_default(int priority, const char *msg, void *userdata)
{
	fprintf(stderr, "libasync: %s\n", msg);
}

/* Called without the lock; fn and userdata were read under it. */
static void log_msg(async_log_func_t *fn, void *userdata, int priority, const char *msg)
{
	(fn ? fn : log_default)(priority, msg, userdata);
}

static void trace_at(async_trace_func_t *fn, void *userdata, enum async_trace_type type,
		     uint64_t time_ns, async_func_t *func, void *data, async_cookie_t cookie,
		     async_cookie_t target, const struct async_domain *domain, bool inline_call)
{
	struct async_trace_event ev = {
		.type = type,
		.cookie = cookie,
		.target = target,
		.time_ns = time_ns,
		.domain = domain,
		.func = func,
		.data = data,
		.worker = tls_worker,
		.inline_call = inline_call,
	};

	fn(&ev, userdata);
}

#define trace(fn, ud, type, ...) trace_at(fn, ud, type, async_now_ns(), __VA_ARGS__)

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * A chaos point: when chaos is on, sleep for a random short time (no delay
 * one time in four, otherwise 10 to 300 microseconds).  The generator is
 * per thread, seeded from the chaos seed and a per-thread number.
 */
static void chaos_delay(void)
{
	uint64_t seed = __atomic_load_n(&chaos_seed, __ATOMIC_RELAXED);
	uint64_t gen, r;
	struct timespec ts;

	if (!seed)
		return;
	gen = __atomic_load_n(&chaos_generation, __ATOMIC_RELAXED);
	if (tls_rng_generation != gen) {
		if (!tls_rng_id)
			tls_rng_id = __atomic_add_fetch(&chaos_threads, 1, __ATOMIC_RELAXED);
		tls_rng = seed ^ ((uint64_t)tls_rng_id * 0xd6e8feb86659fd93ull);
		tls_rng_generation = gen;
	}
	r = splitmix64(&tls_rng);
	if ((r & 3) == 0)
		return;
	__atomic_add_fetch(&async_core.test_chaos_delays, 1, __ATOMIC_RELAXED);
	ts.tv_sec = 0;
	ts.tv_nsec = (long)(10000 + (r >> 16) % 290000);
	nanosleep(&ts, NULL);
}

static void chaos_set(uint64_t seed)
{
	__atomic_add_fetch(&chaos_generation, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&chaos_seed, seed, __ATOMIC_RELAXED);
}

static void async_init(void)
{
	const char *s;

	pthread_condattr_init(&async_core.condattr);
	pthread_condattr_setclock(&async_core.condattr, CLOCK_MONOTONIC);
	async_pool_init();

	s = getenv("ASYNC_CHAOS");
	if (s && *s) {
		char *end;
		unsigned long long v;

		errno = 0;
		v = strtoull(s, &end, 0);
		if (errno == 0 && *end == '\0')
			chaos_set(v);
		else
			log_msg(NULL, NULL, LOG_WARNING,
				"ASYNC_CHAOS is not a number, chaos mode stays off");
	}
}

static void async_init_once(void)
{
	pthread_once(&async_once, async_init);
}

/* ------------------------------------------------------------------ */
/* Lists (all under the lock)                                           */

static void link_entry(struct async_entry *e)
{
	struct async_domain *d = e->domain;

	e->dom_next = NULL;
	e->dom_prev = d->_last;
	if (d->_last)
		d->_last->dom_next = e;
	else
		__atomic_store_n(&d->_first, e, __ATOMIC_RELEASE);
	d->_last = e;

	e->on_reg = d->registered;
	if (!e->on_reg)
		return;
	e->reg_next = NULL;
	e->reg_prev = reg_last;
	if (reg_last)
		reg_last->reg_next = e;
	else
		reg_first = e;
	reg_last = e;
}

/* Signal, in target order, the waiters whose target @low has reached. */
static void wake_waiters(struct async_waiter **list, async_cookie_t low)
{
	while (*list && (*list)->target <= low) {
		struct async_waiter *w = *list;

		*list = w->next;
		if (w->next) {
			w->next->prev = NULL;
			w->next->tail = w->tail;
		}
		w->done = true;
		pthread_cond_signal(&w->cond);
	}
}

/* Take a call off its lists, wake whom that concerns. */
static void unlink_entry(struct async_entry *e)
{
	struct async_domain *d = e->domain;
	bool was_head = !e->dom_prev;

	if (e->dom_prev)
		e->dom_prev->dom_next = e->dom_next;
	else
		__atomic_store_n(&d->_first, e->dom_next, __ATOMIC_RELEASE);
	if (e->dom_next)
		e->dom_next->dom_prev = e->dom_prev;
	else
		d->_last = e->dom_prev;
	if (was_head && d->_waiters)
		wake_waiters(&d->_waiters, d->_first ? d->_first->cookie : ASYNC_COOKIE_MAX);

	if (e->on_reg) {
		was_head = !e->reg_prev;
		if (e->reg_prev)
			e->reg_prev->reg_next = e->reg_next;
		else
			reg_first = e->reg_next;
		if (e->reg_next)
			e->reg_next->reg_prev = e->reg_prev;
		else
			reg_last = e->reg_prev;
		if (was_head && reg_waiters)
			wake_waiters(&reg_waiters, reg_first ? reg_first->cookie : ASYNC_COOKIE_MAX);
	}
}

/* A call has returned: unlink it (unless abandoned before), recycle it. */
void async_complete_entry(struct async_entry *e)
{
	if (e->abandoned) {
		nr_abandoned_running--;
		async_core.counters.abandoned_returned++;
	} else {
		unlink_entry(e);
		async_core.counters.completed++;
	}
	if (!e->on_heap)
		return;
	nr_inflight--;
	if (nr_free < ASYNC_FREE_MAX) {
		e->queue_next = free_entries;
		free_entries = e;
		nr_free++;
	} else {
		free(e);
	}
}

static struct async_entry *entry_alloc(void)
{
	struct async_entry *e;

	if (async_core.test_fail_alloc) {
		async_core.test_fail_alloc--;
		return NULL;
	}
	e = free_entries;
	if (e) {
		free_entries = e->queue_next;
		nr_free--;
		return e;
	}
	return malloc(sizeof(*e));
}

static void queue_push(struct async_entry *e)
{
	e->queue_next = NULL;
	if (queue_last)
		queue_last->queue_next = e;
	else
		queue_first = e;
	queue_last = e;
	__atomic_store_n(&async_core.nr_queued, async_core.nr_queued + 1, __ATOMIC_RELAXED);
}

struct async_entry *async_queue_pop(void)
{
	struct async_entry *e = queue_first;

	if (!e)
		return NULL;
	queue_first = e->queue_next;
	if (!queue_first)
		queue_last = NULL;
	__atomic_store_n(&async_core.nr_queued, async_core.nr_queued - 1, __ATOMIC_RELAXED);
	async_core.nr_starts++;
	e->started = true;
	return e;
}

/* ------------------------------------------------------------------ */
/* Running calls                                                        */

/*
 * Run one call in this thread.  Called without the lock; the entry is on
 * its lists and stays there until the caller completes it.
 */
void async_run_call(struct async_entry *e, async_trace_func_t *tfn, void *tud, bool inline_call)
{
	async_cookie_t saved_outer = tls_outer;
	struct async_entry *saved_entry = tls_entry;

	chaos_delay();
	if (!tls_depth++ || e->cookie < tls_outer)
		tls_outer = e->cookie;
	tls_entry = e;
	if (tfn)
		trace(tfn, tud, ASYNC_TRACE_START, e->func, e->data, e->cookie, 0, e->domain, inline_call);
	e->func(e->data, e->cookie);
	if (tfn)
		trace(tfn, tud, ASYNC_TRACE_END, e->func, e->data, e->cookie, 0, e->domain, inline_call);
	tls_entry = saved_entry;
	if (!--tls_depth)
		tls_outer = 0;
	else
		tls_outer = saved_outer;
}

/*
 * Run queued calls in this thread until the queue is empty.  Only used
 * when no worker could be started at all, so queued calls still run.
 * Called and returns with the lock held.
 */
void async_drain_queue_here(void)
{
	struct async_entry *e;

	while ((e = async_queue_pop())) {
		async_trace_func_t *tfn = async_core.trace_fn;
		void *tud = async_core.trace_userdata;

		async_lock_release();
		async_run_call(e, tfn, tud, true);
		async_lock_acquire();
		async_complete_entry(e);
	}
}

void async_set_thread_worker(unsigned int index)
{
	tls_worker = index;
}

/* ------------------------------------------------------------------ */
/* Scheduling                                                           */

static async_cookie_t schedule(async_func_t *func, void *data, struct async_domain *domain)
{
	struct async_entry stack_entry, *e = NULL;
	async_trace_func_t *tfn;
	void *tud;
	async_cookie_t cookie;
	uint64_t sched_ns = 0;
	struct async_pool_kick kick;
	bool queued;

	async_init_once();
	chaos_delay();

	async_lock_acquire();
	/*
	 * A call scheduled from inside a call is queued even beyond the
	 * pending bound (and on a worker even when disabled): run inline, it
	 * would be nested in its still-running parent and could not wait for
	 * the calls between the two.
	 */
	if ((enabled || tls_worker) && (nr_inflight < max_pending || tls_depth))
		e = entry_alloc();
	if (e) {
		e->on_heap = true;
	} else {
		e = &stack_entry;
		e->on_heap = false;
		async_core.counters.inline_calls++;
	}
	cookie = next_cookie++;
	e->cookie = cookie;
	e->func = func;
	e->data = data;
	e->domain = domain;
	e->worker = NULL;
	e->started = !e->on_heap;
	e->abandoned = false;
	link_entry(e);
	async_core.counters.scheduled++;
	/* Once queued, the entry belongs to the workers: do not touch it below. */
	queued = e->on_heap;
	if (queued) {
		nr_inflight++;
		queue_push(e);
		async_pool_queued(&kick);
	}
	tfn = async_core.trace_fn;
	tud = async_core.trace_userdata;
	/* Stamped under the lock: a worker may start the call before we report it. */
	if (tfn)
		sched_ns = async_now_ns();
	async_lock_release();

	if (tfn)
		trace_at(tfn, tud, ASYNC_TRACE_SCHEDULE, sched_ns, func, data, cookie, 0, domain, !queued);
	if (queued)
		async_pool_kick(&kick);
	if (!queued) {
		async_run_call(e, tfn, tud, true);
		async_lock_acquire();
		async_complete_entry(e);
		async_lock_release();
	}
	return cookie;
}

ASYNC_EXPORT async_cookie_t async_schedule_domain(async_func_t *func, void *data,
						  struct async_domain *domain)
{
	return schedule(func, data, domain);
}

ASYNC_EXPORT async_cookie_t async_schedule(async_func_t *func, void *data)
{
	return schedule(func, data, &async_dfl_domain);
}

ASYNC_EXPORT async_cookie_t async_schedule_special(async_func_t *func, void *data,
						   struct async_domain *domain)
{
	return schedule(func, data, domain);
}

/* ------------------------------------------------------------------ */
/* Synchronization                                                      */

/*
 * Waiters come nearly in target order (each call syncing on its own
 * cookie, workers starting them a little out of order): the list is
 * doubly linked and the head keeps the tail, so a new waiter is placed by
 * walking back from the tail over the few with a higher target, not from
 * the head over every blocked waiter (quadratic with thousands of them).
 * Equal targets stay in arrival order.
 */
static void insert_waiter(struct async_waiter **list, struct async_waiter *w)
{
	struct async_waiter *head = *list, *t;

	w->tail = NULL;
	if (!head) {
		w->next = w->prev = NULL;
		w->tail = w;
		*list = w;
		return;
	}
	for (t = head->tail; t && t->target > w->target; t = t->prev)
		;
	if (!t) {
		/* before the head: the new head takes the tail over */
		w->prev = NULL;
		w->next = head;
		w->tail = head->tail;
		head->prev = w;
		*list = w;
		return;
	}
	w->prev = t;
	w->next = t->next;
	if (t->next)
		t->next->prev = w;
	else
		head->tail = w;
	t->next = w;
}

/*
 * Wait until every call with a cookie below @target in @domain (NULL: in
 * all registered domains) has completed.
 */
static void synchronize(async_cookie_t target, struct async_domain *domain)
{
	async_cookie_t own = tls_outer, asked = target;
	struct async_entry *first;
	struct async_waiter w;
	async_log_func_t *lfn = NULL;
	void *lud = NULL;
	async_trace_func_t *tfn;
	void *tud;
	bool warn = false;
	char msg[200];

	async_init_once();
	chaos_delay();

	/*
	 * Fast path, without the lock: a call synchronizing on (at most) its
	 * own cookie in its own domain, and already at the head of it.  The
	 * release store that made it the head orders the earlier calls'
	 * effects before ours.
	 */
	if (tls_depth == 1 && domain && tls_entry->domain == domain &&
	    target <= tls_entry->cookie &&
	    __atomic_load_n(&domain->_first, __ATOMIC_ACQUIRE) == tls_entry &&
	    !__atomic_load_n(&async_core.trace_fn, __ATOMIC_RELAXED)) {
		chaos_delay();
		return;
	}

	async_lock_acquire();
	if (own && target > own) {
		/* Waiting for the caller itself: wait for what came before it. */
		target = own;
		async_core.counters.self_syncs++;
		if (!warned_self_sync) {
			warned_self_sync = true;
			warn = true;
			lfn = log_fn;
			lud = log_userdata;
		}
	}
	tfn = async_core.trace_fn;
	tud = async_core.trace_userdata;
	first = domain ? domain->_first : reg_first;
	if (!first || first->cookie >= target) {
		async_lock_release();
		if (tfn) {
			trace(tfn, tud, ASYNC_TRACE_SYNC_BEGIN, NULL, NULL, own, asked, domain, false);
			trace(tfn, tud, ASYNC_TRACE_SYNC_END, NULL, NULL, own, asked, domain, false);
		}
		goto out;
	}

	async_core.counters.waits++;
	w.target = target;
	w.done = false;
	pthread_cond_init(&w.cond, &async_core.condattr);
	insert_waiter(domain ? &domain->_waiters : &reg_waiters, &w);
	async_lock_release();
	if (tfn)
		trace(tfn, tud, ASYNC_TRACE_SYNC_BEGIN, NULL, NULL, own, asked, domain, false);
	async_lock_acquire();
	async_pool_wait(&w.cond, &w.done, own != 0);
	async_lock_release();
	pthread_cond_destroy(&w.cond);
	if (tfn)
		trace(tfn, tud, ASYNC_TRACE_SYNC_END, NULL, NULL, own, asked, domain, false);
out:
	if (warn) {
		if (asked == ASYNC_COOKIE_MAX)
			snprintf(msg, sizeof(msg),
				 "call %" PRIu64 " asked to wait for everything, itself included: "
				 "waiting only for the calls scheduled before it (logged once)", own);
		else
			snprintf(msg, sizeof(msg),
				 "call %" PRIu64 " synchronized on cookie %" PRIu64 ", after its own: "
				 "waiting only for the calls scheduled before it (logged once)",
				 own, asked);
		log_msg(lfn, lud, LOG_WARNING, msg);
	}
	chaos_delay();
}

ASYNC_EXPORT void async_synchronize_full(void)
{
	synchronize(ASYNC_COOKIE_MAX, NULL);
}

ASYNC_EXPORT void async_synchronize_full_domain(struct async_domain *domain)
{
	synchronize(ASYNC_COOKIE_MAX, domain);
}

ASYNC_EXPORT void async_synchronize_cookie_domain(async_cookie_t cookie, struct async_domain *domain)
{
	synchronize(cookie, domain);
}

ASYNC_EXPORT void async_synchronize_cookie(async_cookie_t cookie)
{
	synchronize(cookie, &async_dfl_domain);
}

ASYNC_EXPORT void async_synchronize_cookie_special(async_cookie_t cookie, struct async_domain *domain)
{
	synchronize(cookie, domain);
}

ASYNC_EXPORT void async_synchronize_full_special(struct async_domain *domain)
{
	synchronize(ASYNC_COOKIE_MAX, domain);
}

ASYNC_EXPORT void async_unregister_domain(struct async_domain *domain)
{
	synchronize(ASYNC_COOKIE_MAX, domain);
	async_lock_acquire();
	domain->registered = 0;
	async_lock_release();
}

/*
 * Abandonment (see the Theory of Operation): the call keeps running, but
 * nothing waits for it any more.
 */
static int abandon(async_cookie_t cookie, struct async_domain *domain)
{
	struct async_entry *e;
	bool start;

	async_init_once();
	async_lock_acquire();
	for (e = domain->_first; e && e->cookie < cookie; e = e->dom_next)
		;
	if (!e || e->cookie != cookie) {
		async_lock_release();
		return -ENOENT;                 /* returned already, or never was */
	}
	if (!e->started) {
		async_lock_release();
		return -EAGAIN;                 /* queued: nothing hangs yet */
	}
	unlink_entry(e);
	e->abandoned = true;
	nr_abandoned_running++;
	async_core.counters.abandoned++;
	start = async_pool_abandon(e->worker);
	async_lock_release();
	if (start)
		async_pool_start_worker();
	return 0;
}

ASYNC_EXPORT int async_abandon(async_cookie_t cookie)
{
	return abandon(cookie, &async_dfl_domain);
}

ASYNC_EXPORT int async_abandon_domain(async_cookie_t cookie, struct async_domain *domain)
{
	return abandon(cookie, domain);
}

ASYNC_EXPORT bool async_current_abandoned(void)
{
	bool r;

	if (!tls_entry)
		return false;
	async_lock_acquire();
	r = tls_entry->abandoned;
	async_lock_release();
	return r;
}

ASYNC_EXPORT bool current_is_async(void)
{
	return tls_depth > 0;
}

/* ------------------------------------------------------------------ */
/* Configuration                                                        */

ASYNC_EXPORT void async_set_enabled(bool on)
{
	async_init_once();
	async_lock_acquire();
	enabled = on;
	async_lock_release();
}

ASYNC_EXPORT bool async_get_enabled(void)
{
	bool on;

	async_lock_acquire();
	on = enabled;
	async_lock_release();
	return on;
}

/* async_set_max_threads() is the pool's: pool.c. */

ASYNC_EXPORT unsigned int async_set_max_pending(unsigned int max)
{
	unsigned int old;

	async_lock_acquire();
	old = max_pending;
	max_pending = max ? max : ASYNC_DEFAULT_MAX_PENDING;
	async_lock_release();
	return old;
}

ASYNC_EXPORT int async_quiesce(void)
{
	struct async_pool_dead dead;
	struct async_entry *spare;
	unsigned int abandoned;

	if (current_is_async())
		return -EDEADLK;
	async_synchronize_full();

	async_lock_acquire();
	async_pool_quiesce(&dead);
	spare = free_entries;
	free_entries = NULL;
	nr_free = 0;
	/* under the lock: abandoned calls that return change it (async_complete_entry) */
	abandoned = nr_abandoned_running;
	async_lock_release();
	async_pool_reap(&dead);
	while (spare) {
		struct async_entry *next = spare->queue_next;

		free(spare);
		spare = next;
	}
	/* Threads of abandoned calls are not waited for: they may never return. */
	return abandoned ? -EBUSY : 0;
}

ASYNC_EXPORT void async_set_chaos(uint64_t seed)
{
	async_init_once();
	chaos_set(seed);
}

ASYNC_EXPORT void async_chaos_point(void)
{
	async_init_once();
	chaos_delay();
}

ASYNC_EXPORT void async_set_trace(async_trace_func_t *fn, void *userdata)
{
	async_lock_acquire();
	__atomic_store_n(&async_core.trace_fn, fn, __ATOMIC_RELAXED);
	async_core.trace_userdata = userdata;
	async_lock_release();
}

ASYNC_EXPORT void async_set_log(async_log_func_t *fn, void *userdata)
{
	async_lock_acquire();
	log_fn = fn;
	log_userdata = userdata;
	async_lock_release();
}

ASYNC_EXPORT void async_get_stats(struct async_stats *ret)
{
	async_lock_acquire();
	*ret = async_core.counters;
	ret->workers_now = async_pool_workers_now();
	async_lock_release();
}
