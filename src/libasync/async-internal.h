/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libasync internals: what the ordering core (async.c) and the worker pool
 * (pool.c) share, and the test hooks of the unit tests, which compile both
 * files into themselves.  Nothing here is exported from libasync.so: the
 * names are hidden, and libasync.sym keeps everything else local.
 *
 * The state the two files share is one object, async_core; whatever else
 * either file keeps is static to it.  Every field of async_core is guarded
 * by, and every function here runs under, the one library lock,
 * async_core.lock, unless its comment says otherwise.
 */
#ifndef ASYNC_INTERNAL_H
#define ASYNC_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "async.h"

#pragma GCC visibility push(hidden)

/* A call in progress (see the Theory of Operation in async.c). */
struct async_entry {
	struct async_entry *dom_prev, *dom_next;  /* domain list */
	struct async_entry *reg_prev, *reg_next;  /* registered list */
	struct async_entry *queue_next;           /* work queue, free list */
	async_cookie_t cookie;
	async_func_t *func;
	void *data;
	struct async_domain *domain;
	struct async_worker *worker;              /* running it, NULL: queued or inline */
	bool on_reg;                              /* on the registered list */
	bool on_heap;                             /* queued; else inline, on a stack */
	bool started;                             /* running (or returned) */
	bool abandoned;                           /* async_abandon(): off every list */
};

/* A pool thread; private to pool.c. */
struct async_worker;

/* ---- the state async.c and pool.c share ---- */

/*
 * The one instance, async_core, is defined in async.c.  Above each field:
 * what it holds, who writes it, and what guards it ("lock" is
 * async_core.lock).
 */
struct async_core {
	/*
	 * The library lock: guards the fields below, unless marked, and
	 * every list and counter that async.c and pool.c keep static.
	 */
	pthread_mutex_t lock;

	/*
	 * CLOCK_MONOTONIC, for every condition variable of the library.
	 * Set once by the library's initialisation (pthread_once), before
	 * any condition variable exists; read-only afterwards, no lock.
	 */
	pthread_condattr_t condattr;

	/*
	 * Calls on the work queue.  Written by async.c (queue push and pop)
	 * under the lock, with relaxed atomic stores, so that idle workers
	 * (pool.c: idle_spin()) may poll it with atomic loads without the
	 * lock; every other read is under the lock.
	 */
	unsigned int nr_queued;

	/*
	 * Calls taken off the queue so far: async.c counts them, pool.c
	 * compares it to tell a stalled queue.  Lock.
	 */
	uint64_t nr_starts;

	/*
	 * The trace callback and its userdata (async_set_trace()).  Lock;
	 * trace_fn is also stored atomically, because synchronize()'s fast
	 * path in async.c loads it atomically without the lock.  Whoever
	 * traces reads both under the lock and calls trace_fn after
	 * dropping it.
	 */
	async_trace_func_t *trace_fn;
	void *trace_userdata;

	/*
	 * The statistics async_get_stats() copies (workers_now aside, which
	 * it asks the pool for): async.c counts calls, pool.c workers and
	 * wakeups.  Lock.
	 */
	struct async_stats counters;

	/*
	 * Test hook: while positive, each entry allocation fails (and
	 * decrements it), so the out-of-memory fallback can be exercised.
	 * Lock; a test sets it only while no other thread schedules.
	 */
	unsigned int test_fail_alloc;

	/*
	 * Chaos delays taken so far, so tests can see chaos is on.
	 * Atomic, no lock.
	 */
	uint64_t test_chaos_delays;
};

extern struct async_core async_core;

static inline void async_lock_acquire(void)
{
	pthread_mutex_lock(&async_core.lock);
}

static inline void async_lock_release(void)
{
	pthread_mutex_unlock(&async_core.lock);
}

/* ---- the ordering core, async.c ---- */

/* CLOCK_MONOTONIC now, and as a deadline @ns from now.  Any context. */
uint64_t async_now_ns(void);
struct timespec async_deadline_after(uint64_t ns);

/* Take the oldest queued call, marked started; NULL if none. */
struct async_entry *async_queue_pop(void);
/* Run a call in this thread; without the lock, the entry stays on its lists. */
void async_run_call(struct async_entry *e, async_trace_func_t *tfn, void *tud, bool inline_call);
/* A call has returned: take it off its lists, recycle it. */
void async_complete_entry(struct async_entry *e);
/* Run the queued calls in this thread (no worker could be started). */
void async_drain_queue_here(void);
/* This thread is worker number @index (for traces); without the lock. */
void async_set_thread_worker(unsigned int index);

/* ---- the worker pool, pool.c ---- */

/* What async_pool_queued() decided, to be done without the lock. */
struct async_pool_kick {
	bool start;                  /* start a worker */
	bool watch;                  /* start the watchdog */
	bool watch_join;             /* after joining the one that exited */
	pthread_t watch_old;
};

/* Threads the pool leaves to async_quiesce() to join, without the lock. */
struct async_pool_dead {
	struct async_worker *zombies;
	bool join_watchdog;
};

/* Once, from the library's initialisation (after async_core.condattr). */
void async_pool_init(void);
/* A call was queued: wake or start workers, look for a stall, poke the watchdog. */
void async_pool_queued(struct async_pool_kick *k);
/* Without the lock: carry out what async_pool_queued() decided. */
void async_pool_kick(const struct async_pool_kick *k);
/* Start one reserved worker; without the lock. */
bool async_pool_start_worker(void);
/*
 * Wait on @cond (with the lock) until *@done, meanwhile watching for a
 * stalled queue unless the waiter is itself inside a call (@in_call).
 */
void async_pool_wait(pthread_cond_t *cond, const bool *done, bool in_call);
/*
 * @w's call was abandoned: the thread leaves the pool.  Returns whether
 * the caller must start a worker (async_pool_start_worker()) after
 * dropping the lock.  @w may be NULL (an inline call).
 */
bool async_pool_abandon(struct async_worker *w);
/* Stop every worker and the watchdog; waits (the lock dropped meanwhile). */
void async_pool_quiesce(struct async_pool_dead *d);
/* Without the lock: join what async_pool_quiesce() stopped. */
void async_pool_reap(const struct async_pool_dead *d);
/* Workers alive or starting, for async_get_stats(). */
unsigned int async_pool_workers_now(void);

#pragma GCC visibility pop

#endif /* ASYNC_INTERNAL_H */
