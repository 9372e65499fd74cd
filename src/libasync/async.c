/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libasync: asynchronous function calls with in-order visible effects.
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
 * Data structures (all guarded by the one mutex async_lock):
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
 * thread cannot be stopped; it leaves the pool (nr_workers, all_workers),
 * so the cap counts only threads that can take calls, and a replacement is
 * started when queued calls are left without a worker.  When the call
 * returns at last, its entry is recycled without touching the lists and
 * the thread exits.  Only a started call can be abandoned.
 *
 * Workers.  Threads are started on demand, up to max_threads.  A new call
 * wakes an idle worker if no worker is busy (the most recently idle one,
 * so the others can time out), or starts the first one.  More are added
 * only when queued calls stall: calls are waiting, no worker is idle or
 * about to take one, and no call has started for ASYNC_STALL_NS.  Tiny
 * calls keep starting, so they never cause more threads.  At a stall the
 * busy workers are looked at (their scheduler state in /proc, else their
 * CPU time): if they sleep, idle workers are woken for every waiting call,
 * four times as many new ones are started, and every waiting call gets
 * one if they still sleep at the next stall; if they
 * compute, workers are added up to twice the CPUs and no more; at the
 * first stall, before anything is known, one.  Woken and new workers wake
 * and start the next ones themselves, four and two at a time, so bringing
 * up hundreds of threads is spread over the CPUs.  The stall is noticed by
 * schedulers (every ASYNC_STALL_CHECK_EVERY calls) and by non-async threads
 * blocked in a synchronize call, which wait with a timeout while the queue
 * stalls, and by the watchdog: when calls are queued while every worker is
 * inside a call, nothing else may come to look (a program that scheduled a
 * handful of calls which all block in init_module() or a disk read, and
 * waits on its own condition variable), so a watchdog thread looks every
 * ASYNC_WATCH_NS as long as that lasts.  It is started with the first
 * queued call that finds every worker busy, sleeps while no call waits,
 * and exits after ASYNC_LINGER_NS without work, as workers do.
 * An idle worker polls the queue briefly (one at a time), then
 * sleeps; it exits after ASYNC_LINGER_NS, or at once when async_quiesce()
 * asks, which then joins them all, the watchdog too.
 *
 * Workers run with all signals blocked, so a program (PID 1, for instance)
 * keeps its signal handling in its own threads.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "async.h"
#include "libasync/async-internal.h"

#define ASYNC_DEFAULT_MAX_THREADS 256u
#define ASYNC_DEFAULT_MAX_PENDING 32768u
/* No call started for this long while calls wait: add workers. */
#define ASYNC_STALL_NS 50000ull
/* An idle worker exits after this long without work. */
#define ASYNC_LINGER_NS 200000000ull
/*
 * Worker stacks.  Smaller than the usual 8 MiB default because mapping
 * those makes starting hundreds of threads several times slower; the
 * sanitizers need more.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ASYNC_STACK_SIZE (1024u * 1024u)
#else
#define ASYNC_STACK_SIZE (256u * 1024u)
#endif
/* The watchdog looks for a stalled queue this often while calls wait. */
#define ASYNC_WATCH_NS 1000000ull
/* Free entries kept for reuse (freed by async_quiesce()). */
#define ASYNC_FREE_MAX 16384u
/* Idle workers poll the queue this many times before sleeping. */
#define ASYNC_SPIN 2000u
/* Schedulers look for a stall only every this many calls. */
#define ASYNC_STALL_CHECK_EVERY 64u

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

struct async_waiter {
	struct async_waiter *next, *prev;
	struct async_waiter *tail;      /* valid in the head of a list only */
	async_cookie_t target;
	pthread_cond_t cond;
	bool done;
};

struct async_worker {
	struct async_worker *next;                /* idle stack, zombie list */
	struct async_worker *all_prev, *all_next; /* all live workers */
	pthread_t thread;
	pthread_cond_t cond;
	clockid_t cpu_clock;                      /* this thread's CPU time */
	pid_t tid;
	uint64_t calls;                           /* calls taken */
	uint64_t sample_calls, sample_cpu, sample_wall;
	unsigned int index;
	bool woken;
	bool in_call;
	bool have_clock;
	bool abandoned;                           /* its call was abandoned: not counted */
};

static ASYNC_DOMAIN(async_dfl_domain);

/* Everything below is guarded by async_lock, unless marked otherwise. */
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
/* Spins a little before sleeping: critical sections are a few dozen instructions. */
static pthread_mutex_t async_lock = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
#else
static pthread_mutex_t async_lock = PTHREAD_MUTEX_INITIALIZER;
#endif
static pthread_cond_t async_quiesce_cond;
static pthread_condattr_t async_condattr;  /* CLOCK_MONOTONIC; set once */

static async_cookie_t next_cookie = 1;
static struct async_entry *reg_first, *reg_last;
static struct async_waiter *reg_waiters;
static struct async_entry *queue_first, *queue_last;
static unsigned int nr_queued;             /* on the work queue; atomic reads outside */
static unsigned int nr_inflight;           /* queued or running on a worker */
static struct async_entry *free_entries;
static unsigned int nr_free;

static struct async_worker *idle_workers;  /* stack, most recently idle first */
static struct async_worker *zombies;       /* exited, to be joined */
static struct async_worker *all_workers;   /* running worker_main() */
static unsigned int nr_cpus = 1;           /* set once */
static unsigned int nr_workers;            /* alive or being started */
static unsigned int nr_idle;
static unsigned int spawn_owed;            /* reserved, not yet started */
static unsigned int nr_starting;           /* reserved, not yet running */
static unsigned int nr_waking;             /* woken from idle, not yet running */
static unsigned int wake_owed;             /* idle workers to wake, by woken ones */
static bool spinning;                   /* an idle worker polls the queue */
static unsigned int nr_returning;          /* atomic: workers out of a call, waiting for the lock */
static unsigned int quiescing;
static unsigned int nr_abandoned_running;  /* abandoned calls still running */
static uint64_t nr_starts, starts_seen, last_progress, last_verdict;
static bool stall_computing;               /* last verdict: calls compute, enough workers */
static bool stall_asleep;                  /* last verdict: calls sleep */
static unsigned int stall_tick;

/* The watchdog thread (see the Theory of Operation). */
static enum { WATCHDOG_NONE, WATCHDOG_RUNNING, WATCHDOG_EXITED } watchdog_state;
static pthread_t watchdog_thread;
static pthread_cond_t watchdog_cond;
static bool watchdog_idle;                 /* waiting for a call to be queued */

static unsigned int max_threads = ASYNC_DEFAULT_MAX_THREADS;
static unsigned int max_pending = ASYNC_DEFAULT_MAX_PENDING;
static bool enabled;
static bool warned_self_sync;

static async_trace_func_t *trace_fn;
static void *trace_userdata;
static async_log_func_t *log_fn;
static void *log_userdata;

static struct async_stats stats;

unsigned int async_test_fail_alloc;
uint64_t async_test_chaos_delays;

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

static void async_lock_acquire(void)
{
	pthread_mutex_lock(&async_lock);
}

static void async_lock_release(void)
{
	pthread_mutex_unlock(&async_lock);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct timespec deadline_after(uint64_t ns)
{
	uint64_t t = now_ns() + ns;

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

#define trace(fn, ud, type, ...) trace_at(fn, ud, type, now_ns(), __VA_ARGS__)

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
	__atomic_add_fetch(&async_test_chaos_delays, 1, __ATOMIC_RELAXED);
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

	pthread_condattr_init(&async_condattr);
	pthread_condattr_setclock(&async_condattr, CLOCK_MONOTONIC);
	pthread_cond_init(&async_quiesce_cond, &async_condattr);
	pthread_cond_init(&watchdog_cond, &async_condattr);
	{
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		nr_cpus = n > 0 ? (unsigned int)n : 1;
	}

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
static void complete_entry(struct async_entry *e)
{
	if (e->abandoned) {
		nr_abandoned_running--;
		stats.abandoned_returned++;
	} else {
		unlink_entry(e);
		stats.completed++;
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

	if (async_test_fail_alloc) {
		async_test_fail_alloc--;
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
	__atomic_store_n(&nr_queued, nr_queued + 1, __ATOMIC_RELAXED);
}

static struct async_entry *queue_pop(void)
{
	struct async_entry *e = queue_first;

	if (!e)
		return NULL;
	queue_first = e->queue_next;
	if (!queue_first)
		queue_last = NULL;
	__atomic_store_n(&nr_queued, nr_queued - 1, __ATOMIC_RELAXED);
	nr_starts++;
	e->started = true;
	return e;
}

/* ------------------------------------------------------------------ */
/* Running calls                                                        */

/*
 * Run one call in this thread.  Called without the lock; the entry is on
 * its lists and stays there until the caller completes it.
 */
static void run_call(struct async_entry *e, async_trace_func_t *tfn, void *tud, bool inline_call)
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
static void drain_queue_here(void)
{
	struct async_entry *e;

	while ((e = queue_pop())) {
		async_trace_func_t *tfn = trace_fn;
		void *tud = trace_userdata;

		async_lock_release();
		run_call(e, tfn, tud, true);
		async_lock_acquire();
		complete_entry(e);
	}
}

/* ------------------------------------------------------------------ */
/* Workers                                                              */

static bool start_worker(void);

/*
 * Reserve @n workers (capped); the caller starts one with start_worker()
 * after dropping the lock, the new threads start the rest.  Returns whether
 * the caller must start one.
 */
static bool reserve_workers(unsigned int n)
{
	if (nr_workers >= max_threads)
		return false;
	if (n > max_threads - nr_workers)
		n = max_threads - nr_workers;
	if (!n)
		return false;
	nr_workers += n;
	nr_starting += n;
	spawn_owed += n - 1;
	if (nr_workers > stats.workers_peak)
		stats.workers_peak = nr_workers;
	return true;
}

/* Wake one idle worker. */
static bool wake_idle_worker(void)
{
	struct async_worker *w = idle_workers;

	if (!w)
		return false;
	idle_workers = w->next;
	nr_idle--;
	nr_waking++;
	w->woken = true;
	pthread_cond_signal(&w->cond);
	return true;
}

/*
 * Put @n more workers on the queue: idle ones first, then new ones.
 * Returns whether the caller must start one (see reserve_workers()).
 */
static bool add_workers(unsigned int n)
{
	unsigned int wake = n < nr_idle ? n : nr_idle;

	/* Wake one here; it wakes two more, and so on. */
	if (wake) {
		wake_idle_worker();
		wake_owed += wake - 1;
		n -= wake;
	}
	return n ? reserve_workers(n) : false;
}

/*
 * The scheduler state of a worker thread ('R' running or runnable, 'S',
 * 'D' sleeping...), from /proc/self/task/TID/stat, or 0.
 */
static char worker_state(const struct async_worker *w)
{
	char path[64], buf[512];
	const char *p;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)w->tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');              /* the name may hold anything */
	if (!p || p[1] != ' ')
		return 0;
	return p[2];
}

/*
 * Do the busy workers block, or compute?  Looks at up to eight workers
 * still inside the call they were in at the previous stall: their
 * scheduler state where /proc tells it (a thread that computes on an
 * overloaded machine is runnable, not blocked), else their CPU time since
 * then against the time that passed.
 * Returns 1 (blocking: three quarters or more are asleep, or used less than
 * a quarter of the time), 0 (computing) or -1 (cannot tell yet).
 */
static int calls_block(uint64_t now)
{
	uint64_t cpu_sum = 0, wall_sum = 0;
	unsigned int sampled = 0, judged = 0, asleep = 0, states = 0;

	for (struct async_worker *w = all_workers; w && sampled < 8; w = w->all_next) {
		struct timespec ts;
		uint64_t cpu = 0;
		bool same;
		char st;

		if (!w->in_call)
			continue;
		sampled++;
		/* Only a call that outlasted a stall period tells anything. */
		same = w->sample_wall && w->sample_calls == w->calls;
		st = worker_state(w);
		if (!st && w->have_clock && clock_gettime(w->cpu_clock, &ts) == 0)
			cpu = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		if (same && st) {
			states++;
			asleep += st != 'R';
		} else if (same && cpu) {
			cpu_sum += cpu - w->sample_cpu;
			wall_sum += now - w->sample_wall;
			judged++;
		}
		w->sample_calls = w->calls;
		w->sample_cpu = cpu;
		w->sample_wall = now;
	}
	if (states)
		return asleep * 4 >= states * 3;
	if (!judged)
		return -1;
	return cpu_sum * 4 < wall_sum;
}

/*
 * Look for a stalled queue (see the Theory of Operation) and add workers
 * if it is, as many as calls_block() suggests.  Returns whether the caller
 * must start one.
 */
static bool stall_check(void)
{
	uint64_t now;
	unsigned int n, wake, busy = nr_workers - nr_idle;
	int verdict;

	if (!nr_queued) {
		stall_computing = false;
		return false;
	}
	if (busy >= max_threads)
		return false;
	now = now_ns();
	if (nr_starts != starts_seen || __atomic_load_n(&nr_returning, __ATOMIC_RELAXED)) {
		/* Calls started, or workers are about to take one: progress. */
		starts_seen = nr_starts;
		last_progress = now;
		return false;
	}
	if (nr_starting || nr_waking || wake_owed)
		return false;                   /* help is on its way */
	if (now - last_progress < ASYNC_STALL_NS)
		return false;
	/* Calls were seen computing with workers enough: look again later. */
	if (stall_computing && now - last_verdict < ASYNC_STALL_NS * 100)
		return false;
	last_progress = now;
	last_verdict = now;
	verdict = calls_block(now);
	if (verdict != 1)
		stall_asleep = false;
	/*
	 * Idle workers are cheap to wake; new threads are not: @wake says how
	 * many workers to put on the queue, @n how many of those may be new.
	 */
	switch (verdict) {
	case 1:
		/* They sleep: a worker per call, new ones once seen twice in a row. */
		wake = nr_queued;
		n = stall_asleep ? nr_queued : 4 * busy;
		stall_asleep = true;
		stall_computing = false;
		break;
	case 0:
		/* They compute: up to twice the CPUs, then no more. */
		wake = n = busy < 2 * nr_cpus ? nr_cpus : 0;
		stall_computing = !n;
		break;
	default:
		/* Not known yet: a few idle ones or one new, then wait for a verdict. */
		wake = 4 * busy;
		n = busy < 2 ? 1 : 0;
		break;
	}
	if (wake > nr_queued)
		wake = nr_queued;
	if (wake > nr_idle) {
		unsigned int more = wake - nr_idle;

		wake = nr_idle;
		if (n > more)
			n = more;
	} else {
		n = 0;
	}
	return add_workers(wake + n);
}

static void remove_idle(struct async_worker *w)
{
	struct async_worker **p;

	for (p = &idle_workers; *p; p = &(*p)->next) {
		if (*p == w) {
			*p = w->next;
			nr_idle--;
			return;
		}
	}
}

/*
 * Before sleeping, look at the queue for a little while without the lock:
 * a stream of tiny calls then costs no wakeups.  Called and returns with
 * the lock held; returns whether work arrived.
 */
static bool idle_spin(void)
{
	bool found;

	/* One spinner at a time: hundreds of idle workers must not burn the CPUs. */
	if (spinning)
		return false;
	spinning = true;
	__atomic_add_fetch(&nr_returning, 1, __ATOMIC_RELAXED);
	async_lock_release();
	for (unsigned int i = 0; i < ASYNC_SPIN; i++) {
		if (__atomic_load_n(&nr_queued, __ATOMIC_RELAXED))
			break;
		cpu_relax();
	}
	async_lock_acquire();
	__atomic_sub_fetch(&nr_returning, 1, __ATOMIC_RELAXED);
	spinning = false;
	found = nr_queued > 0;
	return found;
}

static void *worker_main(void *arg)
{
	struct async_worker *w = arg;
	unsigned int started_here = 0;

	tls_worker = w->index;
	w->have_clock = pthread_getcpuclockid(pthread_self(), &w->cpu_clock) == 0;
	w->tid = (pid_t)syscall(SYS_gettid);
	async_lock_acquire();
	nr_starting--;
	w->all_prev = NULL;
	w->all_next = all_workers;
	if (all_workers)
		all_workers->all_prev = w;
	all_workers = w;
	for (;;) {
		struct async_entry *e;

		/* 1. Help wake (four) and start (two) the workers asked for. */
		for (unsigned int i = 0; i < 4 && wake_owed; i++) {
			wake_owed--;
			wake_idle_worker();
		}
		if (!nr_idle)
			wake_owed = 0;
		while (spawn_owed && started_here < 2) {
			spawn_owed--;
			started_here++;
			async_lock_release();
			start_worker();
			async_lock_acquire();
		}

		/* 2. Take the oldest queued call, run it, retire it. */
		e = queue_pop();
		if (e) {
			async_trace_func_t *tfn = trace_fn;
			void *tud = trace_userdata;

			w->in_call = true;
			w->calls++;
			e->worker = w;
			async_lock_release();
			run_call(e, tfn, tud, false);
			__atomic_add_fetch(&nr_returning, 1, __ATOMIC_RELAXED);
			async_lock_acquire();
			__atomic_sub_fetch(&nr_returning, 1, __ATOMIC_RELAXED);
			w->in_call = false;
			complete_entry(e);
			if (w->abandoned)
				goto abandoned;     /* already uncounted by async_abandon() */
			continue;
		}

		/* 3. Nothing to do: linger, unless asked to go or over the cap. */
		if (quiescing || nr_workers > max_threads)
			break;
		if (idle_spin())
			continue;
		w->woken = false;
		w->next = idle_workers;
		idle_workers = w;
		nr_idle++;
		{
			struct timespec deadline = deadline_after(ASYNC_LINGER_NS);
			int r = 0;

			while (!w->woken && r != ETIMEDOUT)
				r = pthread_cond_timedwait(&w->cond, &async_lock, &deadline);
		}
		if (w->woken)
			nr_waking--;
		if (!w->woken) {
			remove_idle(w);
			if (!queue_first)
				break;
		}
	}

	/* 4. Exit: leave the thread to be joined by a later start or quiesce. */
	if (w->all_prev)
		w->all_prev->all_next = w->all_next;
	else
		all_workers = w->all_next;
	if (w->all_next)
		w->all_next->all_prev = w->all_prev;
	nr_workers--;
	if (!nr_workers)
		pthread_cond_broadcast(&async_quiesce_cond);
	w->next = zombies;
	zombies = w;
	async_lock_release();
	return NULL;

abandoned:
	/*
	 * Off every list since async_abandon(), and perhaps returning after the
	 * last async_quiesce() (which does not wait for it): nobody would join
	 * it, so it detaches and frees its own descriptor.
	 */
	async_lock_release();
	pthread_cond_destroy(&w->cond);
	pthread_detach(w->thread);
	free(w);
	return NULL;
}

static void join_zombies(struct async_worker *list)
{
	while (list) {
		struct async_worker *next = list->next;

		pthread_join(list->thread, NULL);
		pthread_cond_destroy(&list->cond);
		free(list);
		list = next;
	}
}

/*
 * Start one reserved worker.  Called without the lock.  On failure the
 * reservation (and whatever is still owed) is dropped; if that leaves no
 * worker at all, this thread runs the queued calls itself.
 */
static bool start_worker(void)
{
	struct async_worker *w, *dead;
	sigset_t all, old;
	int r = -ENOMEM;

	async_lock_acquire();
	dead = zombies;
	zombies = NULL;
	async_lock_release();
	join_zombies(dead);

	w = calloc(1, sizeof(*w));
	if (w) {
		pthread_cond_init(&w->cond, &async_condattr);
		async_lock_acquire();
		w->index = (unsigned int)++stats.workers_started;
		async_lock_release();
		pthread_attr_t attr;

		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, ASYNC_STACK_SIZE);
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		r = -pthread_create(&w->thread, &attr, worker_main, w);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_attr_destroy(&attr);
		if (r == 0)
			return true;
		pthread_cond_destroy(&w->cond);
		free(w);
	}

	async_lock_acquire();
	nr_workers -= 1 + spawn_owed;
	nr_starting -= 1 + spawn_owed;
	spawn_owed = 0;
	if (!nr_workers)
		drain_queue_here();
	async_lock_release();
	return false;
}

/*
 * The watchdog.  Runs stall_check() every ASYNC_WATCH_NS while calls wait
 * and no worker is free to take them; otherwise sleeps until a call is
 * queued, and exits after ASYNC_LINGER_NS of that, or when async_quiesce()
 * asks.  Holds the lock except while it sleeps or starts a worker.
 */
static void *watchdog_main(void *arg)
{
	(void)arg;
	async_lock_acquire();
	while (!quiescing) {
		struct timespec deadline;
		int r = 0;

		if (nr_queued && nr_workers > nr_idle && nr_workers - nr_idle < max_threads) {
			/* Rarely while calls were last seen computing with workers enough. */
			deadline = deadline_after(stall_computing ? ASYNC_STALL_NS * 100 : ASYNC_WATCH_NS);
			pthread_cond_timedwait(&watchdog_cond, &async_lock, &deadline);
			if (!quiescing && stall_check()) {
				async_lock_release();
				start_worker();
				async_lock_acquire();
			}
			continue;
		}
		watchdog_idle = true;
		deadline = deadline_after(ASYNC_LINGER_NS);
		while (watchdog_idle && !quiescing && r != ETIMEDOUT)
			r = pthread_cond_timedwait(&watchdog_cond, &async_lock, &deadline);
		if (watchdog_idle && r == ETIMEDOUT && !nr_queued)
			break;
		watchdog_idle = false;
	}
	watchdog_idle = false;
	watchdog_state = WATCHDOG_EXITED;
	pthread_cond_broadcast(&async_quiesce_cond);
	async_lock_release();
	return NULL;
}

/*
 * Under the lock, after a call was queued: wake the watchdog, or say that
 * one must be started (watchdog_start(), without the lock).  Returns
 * whether to start it; *join is set when an exited one must be joined.
 */
static bool watchdog_poke(bool *join)
{
	if (nr_workers == nr_idle)
		return false;                  /* a worker is free: no stall to watch */
	if (watchdog_state == WATCHDOG_RUNNING) {
		if (watchdog_idle) {
			watchdog_idle = false;
			pthread_cond_signal(&watchdog_cond);
		}
		return false;
	}
	*join = watchdog_state == WATCHDOG_EXITED;
	watchdog_state = WATCHDOG_RUNNING;
	return true;
}

static void watchdog_start(bool join, pthread_t old)
{
	sigset_t all, prev;
	pthread_attr_t attr;
	int r;

	if (join)
		pthread_join(old, NULL);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64u * 1024u);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &prev);
	r = pthread_create(&watchdog_thread, &attr, watchdog_main, NULL);
	pthread_sigmask(SIG_SETMASK, &prev, NULL);
	pthread_attr_destroy(&attr);
	if (r != 0) {
		/* Not fatal: schedulers and waiters still look; try again later. */
		async_lock_acquire();
		watchdog_state = WATCHDOG_NONE;
		async_lock_release();
	}
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
	bool start = false, queued, watch = false, watch_join = false;
	pthread_t watch_old;

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
		stats.inline_calls++;
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
	stats.scheduled++;
	/* Once queued, the entry belongs to the workers: do not touch it below. */
	queued = e->on_heap;
	if (queued) {
		nr_inflight++;
		queue_push(e);
		if (nr_workers == nr_idle)
			start = add_workers(1);     /* nobody busy: wake or start one */
		else if (++stall_tick % ASYNC_STALL_CHECK_EVERY == 0)
			start = stall_check();
		watch_old = watchdog_thread;
		watch = watchdog_poke(&watch_join);
	}
	tfn = trace_fn;
	tud = trace_userdata;
	/* Stamped under the lock: a worker may start the call before we report it. */
	if (tfn)
		sched_ns = now_ns();
	async_lock_release();

	if (tfn)
		trace_at(tfn, tud, ASYNC_TRACE_SCHEDULE, sched_ns, func, data, cookie, 0, domain, !queued);
	if (start)
		start_worker();
	if (watch)
		watchdog_start(watch_join, watch_old);
	if (!queued) {
		run_call(e, tfn, tud, true);
		async_lock_acquire();
		complete_entry(e);
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
	    !__atomic_load_n(&trace_fn, __ATOMIC_RELAXED)) {
		chaos_delay();
		return;
	}

	async_lock_acquire();
	if (own && target > own) {
		/* Waiting for the caller itself: wait for what came before it. */
		target = own;
		stats.self_syncs++;
		if (!warned_self_sync) {
			warned_self_sync = true;
			warn = true;
			lfn = log_fn;
			lud = log_userdata;
		}
	}
	tfn = trace_fn;
	tud = trace_userdata;
	first = domain ? domain->_first : reg_first;
	if (!first || first->cookie >= target) {
		async_lock_release();
		if (tfn) {
			trace(tfn, tud, ASYNC_TRACE_SYNC_BEGIN, NULL, NULL, own, asked, domain, false);
			trace(tfn, tud, ASYNC_TRACE_SYNC_END, NULL, NULL, own, asked, domain, false);
		}
		goto out;
	}

	stats.waits++;
	w.target = target;
	w.done = false;
	pthread_cond_init(&w.cond, &async_condattr);
	insert_waiter(domain ? &domain->_waiters : &reg_waiters, &w);
	async_lock_release();
	if (tfn)
		trace(tfn, tud, ASYNC_TRACE_SYNC_BEGIN, NULL, NULL, own, asked, domain, false);
	async_lock_acquire();
	while (!w.done) {
		bool start = false;

		if (!nr_workers && queue_first) {
			/* No worker could be started: run the queue here. */
			drain_queue_here();
			continue;
		}
		if (!own && queue_first && nr_workers - nr_idle < max_threads) {
			/* Watch for a stalled queue while waiting; rarely if calls compute. */
			struct timespec deadline = deadline_after(stall_computing ? ASYNC_STALL_NS * 100 : ASYNC_STALL_NS);

			pthread_cond_timedwait(&w.cond, &async_lock, &deadline);
			stats.wakeups++;
			if (!w.done)
				start = stall_check();
		} else {
			pthread_cond_wait(&w.cond, &async_lock);
			stats.wakeups++;
		}
		if (start) {
			async_lock_release();
			start_worker();
			async_lock_acquire();
		}
	}
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
	struct async_worker *w;
	bool start = false;

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
	stats.abandoned++;
	w = e->worker;
	if (w && !w->abandoned) {
		/* Its thread leaves the pool: the cap counts the workers that can take calls. */
		w->abandoned = true;
		if (w->all_prev)
			w->all_prev->all_next = w->all_next;
		else
			all_workers = w->all_next;
		if (w->all_next)
			w->all_next->all_prev = w->all_prev;
		nr_workers--;
		if (!nr_workers)
			pthread_cond_broadcast(&async_quiesce_cond);
		/* What the hung call held up may be queued with no one to take it. */
		if (queue_first && nr_workers == nr_idle)
			start = add_workers(1);
	}
	async_lock_release();
	if (start)
		start_worker();
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

ASYNC_EXPORT unsigned int async_set_max_threads(unsigned int max)
{
	unsigned int old;

	async_lock_acquire();
	old = max_threads;
	max_threads = max ? max : ASYNC_DEFAULT_MAX_THREADS;
	/* Idle workers over the new cap leave now. */
	while (nr_workers > max_threads && wake_idle_worker())
		;
	async_lock_release();
	return old;
}

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
	struct async_worker *dead;
	struct async_entry *spare;
	bool join_watchdog;

	if (current_is_async())
		return -EDEADLK;
	async_synchronize_full();

	async_lock_acquire();
	quiescing++;
	while (wake_idle_worker())
		;
	pthread_cond_signal(&watchdog_cond);
	while (nr_workers || watchdog_state == WATCHDOG_RUNNING)
		pthread_cond_wait(&async_quiesce_cond, &async_lock);
	quiescing--;
	join_watchdog = watchdog_state == WATCHDOG_EXITED;
	watchdog_state = WATCHDOG_NONE;
	dead = zombies;
	zombies = NULL;
	spare = free_entries;
	free_entries = NULL;
	nr_free = 0;
	async_lock_release();
	if (join_watchdog)
		pthread_join(watchdog_thread, NULL);
	join_zombies(dead);
	while (spare) {
		struct async_entry *next = spare->queue_next;

		free(spare);
		spare = next;
	}
	/* Threads of abandoned calls are not waited for: they may never return. */
	return __atomic_load_n(&nr_abandoned_running, __ATOMIC_RELAXED) ? -EBUSY : 0;
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
	__atomic_store_n(&trace_fn, fn, __ATOMIC_RELAXED);
	trace_userdata = userdata;
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
	*ret = stats;
	ret->workers_now = nr_workers - spawn_owed;
	async_lock_release();
}
