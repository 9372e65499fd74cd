/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libasync's worker pool: the threads that run queued calls, and the
 * policy that decides how many there are.  The ordering core (async.c:
 * cookies, lists, waiters, scheduling, synchronization, abandonment) hands
 * calls to the pool through the work queue and asks it, under the one
 * library lock, for help at the points listed in async-internal.h; the
 * pool takes calls from that queue in cookie order and runs them with the
 * core's async_run_call() and async_complete_entry().  Nothing here decides
 * an order; a pool that ran every call on one thread would be correct, only
 * slower.
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
 * A worker whose call is abandoned leaves the pool at once (it no longer
 * counts against max_threads), and when that call returns at last, the
 * thread detaches itself and exits.
 *
 * Workers run with all signals blocked, so a program (PID 1, for instance)
 * keeps its signal handling in its own threads; all but the ones a fault
 * raises (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS): Linux kills
 * the process outright when a fault's signal is blocked, whatever its
 * handler, and a crash in a call must reach the program's handler.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "async.h"
#include "libasync/async-internal.h"

#define ASYNC_DEFAULT_MAX_THREADS 256u
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
/* Idle workers poll the queue this many times before sleeping. */
#define ASYNC_SPIN 2000u
/* Schedulers look for a stall only every this many calls. */
#define ASYNC_STALL_CHECK_EVERY 64u

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

/* Everything below is guarded by async_core.lock, unless marked otherwise. */
static pthread_cond_t async_quiesce_cond;  /* the pool emptied, the watchdog exited */
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
static uint64_t starts_seen, last_progress, last_verdict;
static bool stall_computing;               /* last verdict: calls compute, enough workers */
static bool stall_asleep;                  /* last verdict: calls sleep */
static unsigned int stall_tick;

/* The watchdog thread (see above). */
static enum { WATCHDOG_NONE, WATCHDOG_RUNNING, WATCHDOG_EXITED } watchdog_state;
static pthread_t watchdog_thread;
static pthread_cond_t watchdog_cond;
static bool watchdog_idle;                 /* waiting for a call to be queued */

static unsigned int max_threads = ASYNC_DEFAULT_MAX_THREADS;

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

/* ------------------------------------------------------------------ */
/* Workers                                                              */

/*
 * Reserve @n workers (capped); the caller starts one with async_pool_start_worker()
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
	if (nr_workers > async_core.counters.workers_peak)
		async_core.counters.workers_peak = nr_workers;
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
 * Look for a stalled queue (see the top of this file) and add workers
 * if it is, as many as calls_block() suggests.  Returns whether the caller
 * must start one.
 */
static bool stall_check(void)
{
	uint64_t now;
	unsigned int n, wake, busy = nr_workers - nr_idle;
	int verdict;

	if (!async_core.nr_queued) {
		stall_computing = false;
		return false;
	}
	if (busy >= max_threads)
		return false;
	now = async_now_ns();
	if (async_core.nr_starts != starts_seen ||
	    __atomic_load_n(&nr_returning, __ATOMIC_RELAXED)) {
		/* Calls started, or workers are about to take one: progress. */
		starts_seen = async_core.nr_starts;
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
		wake = async_core.nr_queued;
		n = stall_asleep ? async_core.nr_queued : 4 * busy;
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
	if (wake > async_core.nr_queued)
		wake = async_core.nr_queued;
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
		if (__atomic_load_n(&async_core.nr_queued, __ATOMIC_RELAXED))
			break;
		cpu_relax();
	}
	async_lock_acquire();
	__atomic_sub_fetch(&nr_returning, 1, __ATOMIC_RELAXED);
	spinning = false;
	found = async_core.nr_queued > 0;
	return found;
}

/*
 * Take @w off the list of live workers (async lock held): it exits, or its
 * call was abandoned.  The last one to leave wakes async_quiesce().
 */
static void worker_leave(struct async_worker *w)
{
	if (w->all_prev)
		w->all_prev->all_next = w->all_next;
	else
		all_workers = w->all_next;
	if (w->all_next)
		w->all_next->all_prev = w->all_prev;
	nr_workers--;
	if (!nr_workers)
		pthread_cond_broadcast(&async_quiesce_cond);
}

static void *worker_main(void *arg)
{
	struct async_worker *w = arg;
	unsigned int started_here = 0;

	async_set_thread_worker(w->index);
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
			async_pool_start_worker();
			async_lock_acquire();
		}

		/* 2. Take the oldest queued call, run it, retire it. */
		e = async_queue_pop();
		if (e) {
			async_trace_func_t *tfn = async_core.trace_fn;
			void *tud = async_core.trace_userdata;

			w->in_call = true;
			w->calls++;
			e->worker = w;
			async_lock_release();
			async_run_call(e, tfn, tud, false);
			__atomic_add_fetch(&nr_returning, 1, __ATOMIC_RELAXED);
			async_lock_acquire();
			__atomic_sub_fetch(&nr_returning, 1, __ATOMIC_RELAXED);
			w->in_call = false;
			async_complete_entry(e);
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
			struct timespec deadline = async_deadline_after(ASYNC_LINGER_NS);
			int r = 0;

			while (!w->woken && r != ETIMEDOUT)
				r = pthread_cond_timedwait(&w->cond, &async_core.lock, &deadline);
		}
		if (w->woken)
			nr_waking--;
		if (!w->woken) {
			remove_idle(w);
			if (!async_core.nr_queued)
				break;
		}
	}

	/* 4. Exit: leave the thread to be joined by a later start or quiesce. */
	worker_leave(w);
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

/* Block every signal but a fault's (see above) in this thread; @old gets the mask it had. */
static void block_signals(sigset_t *old)
{
	static const int faults[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS };
	sigset_t set;
	size_t i;

	sigfillset(&set);
	for (i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
		sigdelset(&set, faults[i]);
	pthread_sigmask(SIG_SETMASK, &set, old);
}

/*
 * Start one reserved worker.  Called without the lock.  On failure the
 * reservation (and whatever is still owed) is dropped; if that leaves no
 * worker at all, this thread runs the queued calls itself.
 */
bool async_pool_start_worker(void)
{
	struct async_worker *w, *dead;
	sigset_t old;
	int r = -ENOMEM;

	async_lock_acquire();
	dead = zombies;
	zombies = NULL;
	async_lock_release();
	join_zombies(dead);

	w = calloc(1, sizeof(*w));
	if (w) {
		pthread_cond_init(&w->cond, &async_core.condattr);
		async_lock_acquire();
		w->index = (unsigned int)++async_core.counters.workers_started;
		async_lock_release();
		pthread_attr_t attr;

		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, ASYNC_STACK_SIZE);
		block_signals(&old);    /* the new thread inherits the mask */
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
		async_drain_queue_here();
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

		if (async_core.nr_queued && nr_workers > nr_idle &&
		    nr_workers - nr_idle < max_threads) {
			/* Rarely while calls were last seen computing with workers enough. */
			deadline = async_deadline_after(stall_computing ? ASYNC_STALL_NS * 100 : ASYNC_WATCH_NS);
			pthread_cond_timedwait(&watchdog_cond, &async_core.lock, &deadline);
			if (!quiescing && stall_check()) {
				async_lock_release();
				async_pool_start_worker();
				async_lock_acquire();
			}
			continue;
		}
		watchdog_idle = true;
		deadline = async_deadline_after(ASYNC_LINGER_NS);
		while (watchdog_idle && !quiescing && r != ETIMEDOUT)
			r = pthread_cond_timedwait(&watchdog_cond, &async_core.lock, &deadline);
		if (watchdog_idle && r == ETIMEDOUT && !async_core.nr_queued)
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
	sigset_t prev;
	pthread_attr_t attr;
	int r;

	if (join)
		pthread_join(old, NULL);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64u * 1024u);
	block_signals(&prev);
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
/* What the core asks of the pool                                       */

void async_pool_init(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	pthread_cond_init(&async_quiesce_cond, &async_core.condattr);
	pthread_cond_init(&watchdog_cond, &async_core.condattr);
	nr_cpus = n > 0 ? (unsigned int)n : 1;
}

void async_pool_queued(struct async_pool_kick *k)
{
	k->start = false;
	k->watch_join = false;
	if (nr_workers == nr_idle)
		k->start = add_workers(1);      /* nobody busy: wake or start one */
	else if (++stall_tick % ASYNC_STALL_CHECK_EVERY == 0)
		k->start = stall_check();
	k->watch_old = watchdog_thread;
	k->watch = watchdog_poke(&k->watch_join);
}

void async_pool_kick(const struct async_pool_kick *k)
{
	if (k->start)
		async_pool_start_worker();
	if (k->watch)
		watchdog_start(k->watch_join, k->watch_old);
}

void async_pool_wait(pthread_cond_t *cond, const bool *done, bool in_call)
{
	while (!*done) {
		bool start = false;

		if (!nr_workers && async_core.nr_queued) {
			/* No worker could be started: run the queue here. */
			async_drain_queue_here();
			continue;
		}
		if (!in_call && async_core.nr_queued && nr_workers - nr_idle < max_threads) {
			/* Watch for a stalled queue while waiting; rarely if calls compute. */
			struct timespec deadline = async_deadline_after(stall_computing ? ASYNC_STALL_NS * 100 : ASYNC_STALL_NS);

			pthread_cond_timedwait(cond, &async_core.lock, &deadline);
			async_core.counters.wakeups++;
			if (!*done)
				start = stall_check();
		} else {
			pthread_cond_wait(cond, &async_core.lock);
			async_core.counters.wakeups++;
		}
		if (start) {
			async_lock_release();
			async_pool_start_worker();
			async_lock_acquire();
		}
	}
}

bool async_pool_abandon(struct async_worker *w)
{
	if (!w || w->abandoned)
		return false;
	/* Its thread leaves the pool: the cap counts the workers that can take calls. */
	w->abandoned = true;
	worker_leave(w);
	/* What the hung call held up may be queued with no one to take it. */
	if (async_core.nr_queued && nr_workers == nr_idle)
		return add_workers(1);
	return false;
}

void async_pool_quiesce(struct async_pool_dead *d)
{
	quiescing++;
	while (wake_idle_worker())
		;
	pthread_cond_signal(&watchdog_cond);
	while (nr_workers || watchdog_state == WATCHDOG_RUNNING)
		pthread_cond_wait(&async_quiesce_cond, &async_core.lock);
	quiescing--;
	d->join_watchdog = watchdog_state == WATCHDOG_EXITED;
	watchdog_state = WATCHDOG_NONE;
	d->zombies = zombies;
	zombies = NULL;
}

void async_pool_reap(const struct async_pool_dead *d)
{
	if (d->join_watchdog)
		pthread_join(watchdog_thread, NULL);
	join_zombies(d->zombies);
}

unsigned int async_pool_workers_now(void)
{
	return nr_workers - spawn_owed;
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
