/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libasync: asynchronous function calls with in-order visible effects.
 *
 * A userspace port of the idea behind Linux's kernel/async.c (2.6.29):
 * async_schedule() runs a function out of order and hands it a cookie;
 * before doing anything globally visible the function calls
 * async_synchronize_cookie() with its own cookie, which returns once every
 * call scheduled before it has completed.  Work overlaps, effects retire in
 * the order a strictly sequential program would produce them.
 *
 * See async(3) for the full contract.
 */
#ifndef ASYNC_H
#define ASYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && __GNUC__ >= 4
#  define ASYNC_EXPORT __attribute__((visibility("default")))
#  define _async_nonnull_(...) __attribute__((nonnull(__VA_ARGS__)))
#  define _async_deprecated_ __attribute__((deprecated))
#else
#  define ASYNC_EXPORT
#  define _async_nonnull_(...)
#  define _async_deprecated_
#endif

/* A cookie orders calls: cookies strictly increase across all domains. */
typedef uint64_t async_cookie_t;

/* The maximum cookie, accepted by the synchronize calls as "everything". */
#define ASYNC_COOKIE_MAX UINT64_MAX

/* An asynchronous function; @cookie is the call's own cookie. */
typedef void async_func_t(void *data, async_cookie_t cookie);

/*
 * A domain is a separate list of calls that can be synchronized on its own.
 * Declare one with ASYNC_DOMAIN() (waited for by async_synchronize_full())
 * or ASYNC_DOMAIN_EXCLUSIVE() (only waited for through its own calls).
 * The fields are private to the library.
 */
struct async_entry;
struct async_waiter;
struct async_domain {
	struct async_entry *_first;     /* pending or running, cookie order */
	struct async_entry *_last;
	struct async_waiter *_waiters;  /* blocked synchronizers, target order */
	const char *name;
	unsigned int registered : 1;
};

#define ASYNC_DOMAIN_INIT(_name, _registered) \
	{ ._first = NULL, ._last = NULL, ._waiters = NULL, .name = #_name, \
	  .registered = (_registered) }
#define ASYNC_DOMAIN(_name) \
	struct async_domain _name = ASYNC_DOMAIN_INIT(_name, 1)
#define ASYNC_DOMAIN_EXCLUSIVE(_name) \
	struct async_domain _name = ASYNC_DOMAIN_INIT(_name, 0)

/* Scheduling: never fails; falls back to a synchronous call. */
ASYNC_EXPORT async_cookie_t async_schedule(async_func_t *func, void *data)
	_async_nonnull_(1);
ASYNC_EXPORT async_cookie_t async_schedule_domain(async_func_t *func, void *data,
						  struct async_domain *domain)
	_async_nonnull_(1, 3);

/*
 * Synchronization.  async_synchronize_cookie_domain(c, d) returns once every
 * call of @d with a cookie below @c has returned; ASYNC_COOKIE_MAX means all
 * of them.  async_synchronize_full() waits until nothing is pending or
 * running in any registered domain, counting calls scheduled by running
 * calls.
 *
 * From inside a call, a target beyond the caller's own cookie (a later
 * cookie, ASYNC_COOKIE_MAX, any full synchronization) would wait for the
 * caller itself: it waits instead for the calls scheduled before the caller
 * only, logs a warning once per process and counts a self_sync.  So a call
 * never deadlocks on itself.
 */
ASYNC_EXPORT void async_synchronize_full(void);
ASYNC_EXPORT void async_synchronize_full_domain(struct async_domain *domain)
	_async_nonnull_(1);
ASYNC_EXPORT void async_synchronize_cookie(async_cookie_t cookie);
ASYNC_EXPORT void async_synchronize_cookie_domain(async_cookie_t cookie,
						  struct async_domain *domain)
	_async_nonnull_(2);
ASYNC_EXPORT void async_unregister_domain(struct async_domain *domain)
	_async_nonnull_(1);

/*
 * Abandonment: for a call that hangs (a read from a disk that stopped
 * answering).  async_abandon(c) takes the running call with cookie @c off
 * its domain: from then on no synchronization waits for it, as if it had
 * returned, so the calls after it go on.  Nothing can stop its thread: the
 * call keeps running, must not make anything visible once it is abandoned
 * (async_current_abandoned() tells it; a caller with its own lock can
 * decide that under it instead), and its thread leaves the pool, so the
 * worker cap counts only threads that can take calls.
 * Returns 0; -ENOENT when no call with that cookie is pending or running
 * in the domain (it returned already); -EAGAIN when it is queued and not
 * started (a call that has not started cannot hang).
 */
ASYNC_EXPORT int async_abandon(async_cookie_t cookie);
ASYNC_EXPORT int async_abandon_domain(async_cookie_t cookie, struct async_domain *domain)
	_async_nonnull_(2);
/* True when the calling thread runs a call that was abandoned. */
ASYNC_EXPORT bool async_current_abandoned(void);

/* True when the calling thread is running an asynchronous call. */
ASYNC_EXPORT bool current_is_async(void);

/*
 * The Linux 2.6.29 "special" names, kept for code written against them.
 * The kernel passed a private running list; here that list is a domain.
 */
ASYNC_EXPORT async_cookie_t async_schedule_special(async_func_t *func, void *data,
						   struct async_domain *domain)
	_async_nonnull_(1, 3);
ASYNC_EXPORT void async_synchronize_cookie_special(async_cookie_t cookie,
						   struct async_domain *domain)
	_async_nonnull_(2);
ASYNC_EXPORT void async_synchronize_full_special(struct async_domain *domain)
	_async_nonnull_(1);

/*
 * Configuration.  Concurrency is off until a program turns it on: while off,
 * every call runs in the caller before async_schedule() returns, with the
 * same cookies and ordering.  The same synchronous fallback is taken when
 * memory runs out or max_pending calls are in progress (calls scheduled
 * from inside a call are queued beyond that bound).
 */
ASYNC_EXPORT void async_set_enabled(bool enabled);
ASYNC_EXPORT bool async_get_enabled(void);
/* Worker cap, default 256; 0 restores the default.  Returns the old cap. */
ASYNC_EXPORT unsigned int async_set_max_threads(unsigned int max);
/* Pending bound beyond which calls run synchronously, default 32768. */
ASYNC_EXPORT unsigned int async_set_max_pending(unsigned int max);
/*
 * Wait for everything (as async_synchronize_full()), then for every worker
 * thread to exit, so the process can fork or exec with a single thread.
 * Must not be called from an asynchronous call.  Returns 0 or -errno:
 * -EBUSY when abandoned calls are still running (their threads are left
 * alone; exec or exit ends them).
 */
ASYNC_EXPORT int async_quiesce(void);

/*
 * Chaos mode: random delays before and inside calls (at schedule, start and
 * synchronize points), from a seed, to show that results do not depend on
 * timing.  Also turned on by the environment variable ASYNC_CHAOS=<seed>.
 * A seed of 0 turns it off.
 */
ASYNC_EXPORT void async_set_chaos(uint64_t seed);
/* For long-running calls: a chaos delay point, no-op when chaos is off. */
ASYNC_EXPORT void async_chaos_point(void);

/* Tracing: one callback per event, called from the thread concerned. */
enum async_trace_type {
	ASYNC_TRACE_SCHEDULE = 0,   /* a call was queued (or is about to run inline) */
	ASYNC_TRACE_START = 1,      /* a call starts running */
	ASYNC_TRACE_END = 2,        /* a call returned */
	ASYNC_TRACE_SYNC_BEGIN = 3, /* a synchronize call starts waiting */
	ASYNC_TRACE_SYNC_END = 4,   /* ... and returns */
	_ASYNC_TRACE_TYPE_MAX,
	_ASYNC_TRACE_TYPE_INT = INT32_MAX
};

struct async_trace_event {
	enum async_trace_type type;
	async_cookie_t cookie;     /* the call's cookie (for sync: the caller's, 0 outside a call) */
	async_cookie_t target;     /* sync: the cookie waited for, ASYNC_COOKIE_MAX for full */
	uint64_t time_ns;          /* CLOCK_MONOTONIC */
	const struct async_domain *domain;
	async_func_t *func;
	void *data;
	unsigned int worker;       /* worker index, 0 for a non-worker thread */
	bool inline_call;          /* ran synchronously in the caller */
};

typedef void async_trace_func_t(const struct async_trace_event *ev, void *userdata);
ASYNC_EXPORT void async_set_trace(async_trace_func_t *fn, void *userdata);

/* Log messages (warnings: misuse such as a self-synchronization). */
typedef void async_log_func_t(int priority, const char *msg, void *userdata);
/* NULL restores the default, which writes to stderr. */
ASYNC_EXPORT void async_set_log(async_log_func_t *fn, void *userdata);

/* Counters, for tests and benchmarks. */
struct async_stats {
	uint64_t scheduled;        /* calls scheduled */
	uint64_t inline_calls;     /* ... of which ran synchronously */
	uint64_t completed;
	uint64_t workers_started;  /* threads created since start */
	unsigned int workers_now;  /* threads alive */
	unsigned int workers_peak;
	uint64_t waits;            /* synchronize calls that had to block */
	uint64_t wakeups;          /* times a blocked waiter was woken */
	uint64_t self_syncs;       /* synchronize calls that would have waited for the caller */
	uint64_t abandoned;        /* calls abandoned (not counted in completed) */
	uint64_t abandoned_returned; /* ... that have returned since */
};
ASYNC_EXPORT void async_get_stats(struct async_stats *ret) _async_nonnull_(1);

#ifdef __cplusplus
}
#endif

#endif /* ASYNC_H */
