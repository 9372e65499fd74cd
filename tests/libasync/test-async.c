/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests for libasync.  The library source is compiled into this
 * program so the tests can reach the private hooks in async-internal.h
 * (allocation failure, chaos counter).  No test asserts on wall-clock time:
 * where a wrong implementation would hang, a watchdog fails the run.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "async.h"
#include "libasync/async-internal.h"

#if defined(__SANITIZE_THREAD__)
#  define UNDER_TSAN 1
#elif defined(__has_feature)
#  if __has_feature(thread_sanitizer)
#    define UNDER_TSAN 1
#  endif
#endif
#ifndef UNDER_TSAN
#  define UNDER_TSAN 0
#endif

/* Iteration divisor: 1 normally, 10 under TSan; ASYNC_TEST_SCALE overrides. */
static unsigned int scale_div = 1;

static unsigned int scaled(unsigned int n)
{
	unsigned int v = n / scale_div;

	return v ? v : 1;
}

static void sleep_us(unsigned int us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* A gate: calls block on it until the test opens it. */
struct gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool open;
	unsigned int waiting;
};

#define GATE_INIT { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, 0 }

static void gate_wait(struct gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->waiting++;
	pthread_cond_broadcast(&g->cond);
	while (!g->open)
		pthread_cond_wait(&g->cond, &g->lock);
	pthread_mutex_unlock(&g->lock);
}

static void gate_open(struct gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->open = true;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

/* Wait until @n calls wait on the gate. */
static void gate_wait_waiting(struct gate *g, unsigned int n)
{
	pthread_mutex_lock(&g->lock);
	while (g->waiting < n)
		pthread_cond_wait(&g->cond, &g->lock);
	pthread_mutex_unlock(&g->lock);
}

static unsigned int load_u(const unsigned int *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static void store_u(unsigned int *p, unsigned int v)
{
	__atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

static void inc_u(unsigned int *p)
{
	__atomic_add_fetch(p, 1, __ATOMIC_SEQ_CST);
}

static struct async_stats stats_now(void)
{
	struct async_stats st;

	async_get_stats(&st);
	return st;
}

/* Threads before the library was used (sanitizers may add their own). */
static unsigned int base_threads;

static unsigned int count_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	unsigned int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/*
 * The thread count once it is at most @want, or after 2 s.  A joined
 * thread's task can stay listed in /proc/self/task for a moment: the
 * kernel wakes pthread_join() (the tid futex) before the task has left.
 */
static unsigned int count_threads_settled(unsigned int want)
{
	unsigned int n = count_threads();

	for (int i = 0; i < 200 && n > want; i++) {
		usleep(10000);
		n = count_threads();
	}
	return n;
}

/* Log capture. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int log_count;
static char log_last[256];

static void log_capture(int priority, const char *msg, void *userdata)
{
	pthread_mutex_lock(&log_lock);
	log_count++;
	snprintf(log_last, sizeof(log_last), "%s", msg);
	pthread_mutex_unlock(&log_lock);
}

static int setup(void **state)
{
	async_set_enabled(true);
	async_set_max_threads(0);
	async_set_max_pending(0);
	async_set_chaos(0);
	async_set_trace(NULL, NULL);
	async_set_log(log_capture, NULL);
	return 0;
}

static int teardown(void **state)
{
	assert_int_equal(async_quiesce(), 0);
	async_set_enabled(true);
	async_set_max_threads(0);
	async_set_max_pending(0);
	async_set_chaos(0);
	async_set_trace(NULL, NULL);
	return 0;
}

/* ------------------------------------------------------------------ */

static async_cookie_t seen_cookie;
static bool seen_async;

static void record_cookie(void *data, async_cookie_t cookie)
{
	seen_cookie = cookie;
	seen_async = current_is_async();
	*(bool *)data = true;
}

/* Runs first: cookies start at 1; disabled mode runs calls inline. */
static void test_sequential_default(void **state)
{
	struct async_stats before;
	bool ran = false;
	async_cookie_t c;

	assert_false(async_get_enabled());
	before = stats_now();
	c = async_schedule(record_cookie, &ran);
	assert_int_equal(c, 1);
	assert_true(ran);                 /* ran before async_schedule returned */
	assert_int_equal(seen_cookie, 1);
	assert_true(seen_async);
	assert_false(current_is_async());
	ran = false;
	c = async_schedule(record_cookie, &ran);
	assert_int_equal(c, 2);
	assert_true(ran);
	assert_int_equal(stats_now().inline_calls - before.inline_calls, 2);
	assert_int_equal(stats_now().workers_started, 0);
	async_synchronize_full();
	async_synchronize_cookie(c);
}

static ASYNC_DOMAIN(dom_a);
static ASYNC_DOMAIN(dom_b);
static ASYNC_DOMAIN_EXCLUSIVE(dom_x);

static void nop(void *data, async_cookie_t cookie)
{
}

static void test_cookies_increase(void **state)
{
	async_cookie_t last = 0;
	struct async_domain *doms[] = { NULL, &dom_a, &dom_b, &dom_x };

	for (unsigned int i = 0; i < 400; i++) {
		struct async_domain *d = doms[i % 4];
		async_cookie_t c = d ? async_schedule_domain(nop, NULL, d) : async_schedule(nop, NULL);

		assert_true(c > last);
		last = c;
		if (i == 200)
			async_set_enabled(false);
	}
	async_synchronize_full();
	async_synchronize_full_domain(&dom_x);
}

static void test_current_is_async(void **state)
{
	bool ran = false;

	seen_async = false;
	async_schedule(record_cookie, &ran);
	async_synchronize_full();
	assert_true(ran);
	assert_true(seen_async);
	assert_false(current_is_async());
}

/* Ordering: calls finish out of order, their synchronized parts in order. */
#define ORDER_N 200
static unsigned int order_log[ORDER_N];
static unsigned int order_len;
static async_cookie_t order_base;

static void ordered_call(void *data, async_cookie_t cookie)
{
	unsigned int i = (unsigned int)(cookie - order_base);

	sleep_us((ORDER_N - i) % 7 * 50);   /* later calls tend to finish first */
	async_synchronize_cookie(cookie);
	order_log[order_len++] = i;          /* serialized by the synchronization */
}

static void test_sync_cookie_order(void **state)
{
	async_cookie_t c;

	order_len = 0;
	order_base = async_schedule(nop, NULL) + 1;
	for (unsigned int i = 0; i < ORDER_N; i++) {
		c = async_schedule(ordered_call, NULL);
		assert_int_equal(c, order_base + i);
	}
	async_synchronize_full();
	assert_int_equal(order_len, ORDER_N);
	for (unsigned int i = 0; i < ORDER_N; i++)
		assert_int_equal(order_log[i], i);
}

/* async_synchronize_cookie(c) from outside returns once everything before c is done. */
static unsigned int done_flags[64];

static void flag_call(void *data, async_cookie_t cookie)
{
	unsigned int i = (unsigned int)(uintptr_t)data;

	sleep_us((64 - i) * 30);
	store_u(&done_flags[i], 1);
}

static void test_sync_cookie_outside(void **state)
{
	async_cookie_t cookies[64];

	memset(done_flags, 0, sizeof(done_flags));
	for (unsigned int i = 0; i < 64; i++)
		cookies[i] = async_schedule(flag_call, (void *)(uintptr_t)i);
	for (unsigned int k = 0; k < 64; k += 9) {
		async_synchronize_cookie(cookies[k]);
		for (unsigned int j = 0; j < k; j++)
			assert_int_equal(load_u(&done_flags[j]), 1);
	}
	async_synchronize_cookie(ASYNC_COOKIE_MAX);    /* "all" */
	for (unsigned int j = 0; j < 64; j++)
		assert_int_equal(load_u(&done_flags[j]), 1);
}

/* The 2.6.29 disk/partition bug: full sync must wait for nested calls. */
#define DISKS 8
#define PARTS 6
static ASYNC_DOMAIN(dom_part);
static unsigned int parts_done;
static unsigned int disks_done;

static void part_call(void *data, async_cookie_t cookie)
{
	sleep_us(300 + (unsigned int)(uintptr_t)data * 50);
	inc_u(&parts_done);
}

static void disk_call(void *data, async_cookie_t cookie)
{
	uintptr_t mode = (uintptr_t)data;

	sleep_us(200);
	for (unsigned int p = 0; p < PARTS; p++) {
		if (mode == 0)
			async_schedule(part_call, (void *)(uintptr_t)p);
		else
			async_schedule_domain(part_call, (void *)(uintptr_t)p, &dom_part);
		sleep_us(20);
	}
	inc_u(&disks_done);
}

static void test_full_sync_nested(void **state)
{
	for (uintptr_t mode = 0; mode < 2; mode++) {
		store_u(&parts_done, 0);
		store_u(&disks_done, 0);
		for (unsigned int d = 0; d < DISKS; d++)
			async_schedule(disk_call, (void *)mode);
		async_synchronize_full();
		assert_int_equal(load_u(&disks_done), DISKS);
		assert_int_equal(load_u(&parts_done), DISKS * PARTS);
	}
}

/* A slow call in one domain never delays synchronizing another. */
static struct gate slow_gate = GATE_INIT;
static unsigned int slow_done, fast_done;

static void slow_call(void *data, async_cookie_t cookie)
{
	gate_wait(data);
	store_u(&slow_done, 1);
}

static void fast_call(void *data, async_cookie_t cookie)
{
	inc_u(&fast_done);
}

static void test_domains_independent(void **state)
{
	async_cookie_t c = 0;

	slow_gate = (struct gate)GATE_INIT;
	store_u(&slow_done, 0);
	store_u(&fast_done, 0);
	/* The slow call has the lowest cookie of all. */
	async_schedule_domain(slow_call, &slow_gate, &dom_a);
	gate_wait_waiting(&slow_gate, 1);
	for (unsigned int i = 0; i < 50; i++)
		c = async_schedule_domain(fast_call, NULL, &dom_b);
	async_synchronize_cookie_domain(c, &dom_b);
	assert_true(load_u(&fast_done) >= 49);
	async_synchronize_full_domain(&dom_b);
	assert_int_equal(load_u(&fast_done), 50);
	/* The default domain is independent of dom_a too. */
	c = async_schedule(fast_call, NULL);
	async_synchronize_cookie(c + 1);
	assert_int_equal(load_u(&fast_done), 51);
	assert_int_equal(load_u(&slow_done), 0);     /* still blocked: nobody waited for it */
	gate_open(&slow_gate);
	async_synchronize_full_domain(&dom_a);
	assert_int_equal(load_u(&slow_done), 1);
}

/* Exclusive domains are not waited for by full sync; unregistered ones neither. */
static void test_exclusive_domain(void **state)
{
	static ASYNC_DOMAIN(dom_unreg);
	struct gate g = GATE_INIT, g2 = GATE_INIT;

	slow_done = 0;
	async_schedule_domain(slow_call, &g, &dom_x);
	gate_wait_waiting(&g, 1);
	async_schedule(fast_call, NULL);
	async_synchronize_full();                    /* returns: dom_x is exclusive */
	assert_int_equal(load_u(&slow_done), 0);
	gate_open(&g);
	async_synchronize_full_domain(&dom_x);
	assert_int_equal(load_u(&slow_done), 1);

	async_schedule_domain(nop, NULL, &dom_unreg);
	async_unregister_domain(&dom_unreg);         /* waits for the domain first */
	assert_null(dom_unreg._first);
	assert_int_equal(dom_unreg.registered, 0);
	store_u(&slow_done, 0);
	async_schedule_domain(slow_call, &g2, &dom_unreg);
	gate_wait_waiting(&g2, 1);
	async_synchronize_full();                    /* not waited for any more */
	assert_int_equal(load_u(&slow_done), 0);
	gate_open(&g2);
	async_synchronize_full_domain(&dom_unreg);
	assert_int_equal(load_u(&slow_done), 1);
}

/* The 2.6.29 names are wrappers over domains. */
static void test_special(void **state)
{
	static ASYNC_DOMAIN_EXCLUSIVE(running);
	async_cookie_t c = 0;

	store_u(&fast_done, 0);
	memset(done_flags, 0, sizeof(done_flags));
	for (unsigned int i = 0; i < 10; i++)
		c = async_schedule_special(flag_call, (void *)(uintptr_t)i, &running);
	async_synchronize_cookie_special(c, &running);
	for (unsigned int i = 0; i < 9; i++)
		assert_int_equal(load_u(&done_flags[i]), 1);
	async_synchronize_full_special(&running);
	assert_int_equal(load_u(&done_flags[9]), 1);
	assert_null(running._first);
}

/* Self-synchronization: never a deadlock, waits for what came before, warns once. */
static unsigned int before_done;
static unsigned int self_result[3];
static unsigned int self_bad;

static void before_call(void *data, async_cookie_t cookie)
{
	sleep_us(2000);
	inc_u(&before_done);
}

static void after_call(void *data, async_cookie_t cookie)
{
	sleep_us(100);
}

static void self_sync_call(void *data, async_cookie_t cookie)
{
	/* Schedule something after us, then try to wait for it. */
	async_cookie_t later = async_schedule(after_call, NULL);

	if (later <= cookie)
		inc_u(&self_bad);
	async_synchronize_cookie(later + 10);
	self_result[0] = load_u(&before_done);
	async_synchronize_full();
	self_result[1] = load_u(&before_done);
	async_synchronize_full_domain(data);
	self_result[2] = load_u(&before_done);
}

static void test_self_sync(void **state)
{
	struct async_stats before = stats_now();
	unsigned int logs;

	pthread_mutex_lock(&log_lock);
	logs = log_count;
	pthread_mutex_unlock(&log_lock);
	store_u(&before_done, 0);
	for (unsigned int i = 0; i < 4; i++)
		async_schedule(before_call, NULL);
	async_schedule(self_sync_call, &dom_b);     /* default domain call, other domain sync */
	async_synchronize_full();
	assert_int_equal(load_u(&self_bad), 0);
	assert_int_equal(self_result[0], 4);
	assert_int_equal(self_result[1], 4);
	assert_int_equal(self_result[2], 4);
	assert_int_equal(stats_now().self_syncs - before.self_syncs, 3);

	/* In its own domain, too. */
	store_u(&before_done, 0);
	for (unsigned int i = 0; i < 3; i++)
		async_schedule_domain(before_call, NULL, &dom_a);
	async_schedule_domain(self_sync_call, &dom_a, &dom_a);
	async_synchronize_full();
	async_synchronize_full_domain(&dom_a);
	assert_int_equal(self_result[2], 3);
	assert_int_equal(stats_now().self_syncs - before.self_syncs, 6);

	/* An inline call (sequential mode) doing a full sync. */
	async_set_enabled(false);
	store_u(&before_done, 0);
	async_schedule(self_sync_call, &dom_b);
	async_set_enabled(true);
	assert_int_equal(stats_now().self_syncs - before.self_syncs, 9);

	pthread_mutex_lock(&log_lock);
	/* Warned once per process: at most one message, from this test. */
	assert_true(log_count - logs <= 1);
	if (logs == 0) {
		assert_int_equal(log_count, 1);
		assert_non_null(strstr(log_last, "before it"));
	}
	pthread_mutex_unlock(&log_lock);
}

/* Synchronous fallbacks: allocation failure and the pending bound. */
static pthread_t main_thread;
static bool ran_in_main;

static void where_call(void *data, async_cookie_t cookie)
{
	ran_in_main = pthread_equal(pthread_self(), main_thread);
	*(bool *)data = true;
}

static void test_fallback_oom(void **state)
{
	struct gate g = GATE_INIT;
	struct async_stats before = stats_now();
	bool ran = false;
	async_cookie_t c1, c2, c3;

	main_thread = pthread_self();
	c1 = async_schedule(slow_call, &g);
	gate_wait_waiting(&g, 1);
	async_core.test_fail_alloc = 1;
	c2 = async_schedule(where_call, &ran);
	assert_true(ran);                            /* ran inline, before returning */
	assert_true(ran_in_main);
	c3 = async_schedule(nop, NULL);
	assert_int_equal(c2, c1 + 1);
	assert_int_equal(c3, c2 + 1);
	assert_int_equal(stats_now().inline_calls - before.inline_calls, 1);
	gate_open(&g);
	async_synchronize_full();
}

/* An inline call still orders after the queued calls before it. */
static unsigned int fallback_seen;

static void inline_ordered_call(void *data, async_cookie_t cookie)
{
	async_synchronize_cookie(cookie);
	fallback_seen = load_u(&before_done);
}

static void test_fallback_max_pending(void **state)
{
	struct gate g = GATE_INIT;
	struct async_stats before = stats_now();
	bool ran = false;

	main_thread = pthread_self();
	assert_int_equal(async_set_max_pending(3), 32768);
	async_schedule(slow_call, &g);
	gate_wait_waiting(&g, 1);
	async_schedule(nop, NULL);
	async_schedule(nop, NULL);
	async_schedule(where_call, &ran);            /* the fourth: over the bound */
	assert_true(ran);
	assert_true(ran_in_main);
	assert_int_equal(stats_now().inline_calls - before.inline_calls, 1);
	gate_open(&g);
	async_synchronize_full();

	/* Inline beyond the bound, yet in order after the queued ones. */
	store_u(&before_done, 0);
	for (unsigned int i = 0; i < 3; i++)
		async_schedule(before_call, NULL);
	async_schedule(inline_ordered_call, NULL);
	assert_int_equal(fallback_seen, 3);
	assert_int_equal(async_set_max_pending(0), 3);
	async_synchronize_full();
}

/* Worker caps. */
static struct gate many_gate;
static unsigned int many_running;

/*
 * Worker counts are read from inside calls, while the workers are surely
 * there: after a sync, idle workers leave on their own (200 ms), so a
 * count read then depends on timing.
 */
static unsigned int workers_seen_max;

static void note_workers(void)
{
	unsigned int now = stats_now().workers_now, m = load_u(&workers_seen_max);

	while (now > m && !__atomic_compare_exchange_n(&workers_seen_max, &m, now, false,
						       __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
}

static void rendezvous_call(void *data, async_cookie_t cookie)
{
	unsigned int n = (unsigned int)(uintptr_t)data;

	pthread_mutex_lock(&many_gate.lock);
	many_running++;
	pthread_cond_broadcast(&many_gate.cond);
	while (many_running < n)
		pthread_cond_wait(&many_gate.cond, &many_gate.lock);
	pthread_mutex_unlock(&many_gate.lock);
	/* all n calls are running now, each on a worker of its own */
	note_workers();
}

static void test_workers_grow_for_blocking(void **state)
{
	/* 64 calls that can only finish once all 64 run at the same time. */
	many_gate = (struct gate)GATE_INIT;
	many_running = 0;
	store_u(&workers_seen_max, 0);
	for (unsigned int i = 0; i < 64; i++)
		async_schedule(rendezvous_call, (void *)(uintptr_t)64);
	async_synchronize_full();
	assert_int_equal(many_running, 64);
	assert_true(load_u(&workers_seen_max) >= 64);
	assert_true(stats_now().workers_peak <= 256);
}

/*
 * A few calls that block, scheduled by a thread that then waits on its
 * own condition variable, not in libasync: nobody schedules or
 * synchronizes, so only the watchdog can see that the queue stalls.  The
 * calls can only finish once all of them run at the same time.
 */
static void test_watchdog_grows_quiet_queue(void **state)
{
	const unsigned int n = 5;

	many_gate = (struct gate)GATE_INIT;
	many_running = 0;
	for (unsigned int i = 0; i < n; i++)
		async_schedule(rendezvous_call, (void *)(uintptr_t)n);
	pthread_mutex_lock(&many_gate.lock);
	while (many_running < n)
		pthread_cond_wait(&many_gate.cond, &many_gate.lock);
	pthread_mutex_unlock(&many_gate.lock);
	async_synchronize_full();
	assert_true(stats_now().workers_peak >= n);
}

/*
 * Abandonment: a call that hangs (on a gate nobody opens yet) no longer
 * holds back later cookies once abandoned, under a cap of one worker: the
 * hung call's thread leaves the pool, a replacement runs the queued calls,
 * and full synchronization returns while the hung call is still running.
 */
static struct gate hang_gate = GATE_INIT;
static unsigned int hang_saw_abandoned, hang_returned;

static void hanging_call(void *data, async_cookie_t cookie)
{
	(void)data;
	(void)cookie;
	gate_wait(&hang_gate);
	store_u(&hang_saw_abandoned, async_current_abandoned());
	store_u(&hang_returned, 1);
}

static void test_abandon(void **state)
{
	async_cookie_t hung, c;
	struct async_stats st;

	(void)state;
	hang_gate = (struct gate)GATE_INIT;
	store_u(&hang_returned, 0);
	store_u(&hang_saw_abandoned, 0);
	assert_int_equal(async_set_max_threads(1), 256);
	hung = async_schedule(hanging_call, NULL);
	gate_wait_waiting(&hang_gate, 1);       /* started, now hangs */
	for (unsigned int i = 0; i < 8; i++)
		store_u(&done_flags[i], 0);
	for (unsigned int i = 0; i < 8; i++)
		c = async_schedule(flag_call, (void *)(uintptr_t)i);
	assert_false(async_current_abandoned());
	assert_int_equal(async_abandon(hung + 100), -ENOENT);
	assert_int_equal(async_abandon(hung), 0);
	assert_int_equal(async_abandon(hung), -ENOENT);   /* off the list now */
	/* The queued calls run on a replacement worker and retire in order. */
	async_synchronize_cookie(c + 1);
	for (unsigned int i = 0; i < 8; i++)
		assert_int_equal(load_u(&done_flags[i]), 1);
	async_synchronize_full();
	assert_int_equal(load_u(&hang_returned), 0);
	async_get_stats(&st);
	assert_int_equal(st.abandoned, 1);
	assert_int_equal(st.abandoned_returned, 0);
	assert_true(st.workers_now <= 1);
	/* quiesce does not wait for the hung thread, and says so */
	assert_int_equal(async_quiesce(), -EBUSY);
	gate_open(&hang_gate);
	while (!load_u(&hang_returned))
		sleep_us(100);
	assert_int_equal(load_u(&hang_saw_abandoned), 1);
	while (stats_now().abandoned_returned != 1)
		sleep_us(100);
	assert_int_equal(async_set_max_threads(0), 1);
}

static unsigned int concurrent, concurrent_max;

static void count_concurrency(void *data, async_cookie_t cookie)
{
	unsigned int c = __atomic_add_fetch(&concurrent, 1, __ATOMIC_SEQ_CST);
	unsigned int m = load_u(&concurrent_max);

	while (c > m && !__atomic_compare_exchange_n(&concurrent_max, &m, c, false,
						     __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
	note_workers();
	sleep_us(200);
	__atomic_sub_fetch(&concurrent, 1, __ATOMIC_SEQ_CST);
}

static void test_cap_one(void **state)
{
	assert_int_equal(async_quiesce(), 0);
	assert_int_equal(async_set_max_threads(1), 256);
	store_u(&concurrent_max, 0);
	store_u(&workers_seen_max, 0);
	for (unsigned int i = 0; i < 100; i++)
		async_schedule(count_concurrency, NULL);
	async_synchronize_full();
	assert_int_equal(load_u(&concurrent_max), 1);
	/* seen from inside the calls: one worker, never more */
	assert_int_equal(load_u(&workers_seen_max), 1);
	/* The ordering test still passes with one worker. */
	test_sync_cookie_order(state);
	assert_int_equal(async_set_max_threads(0), 1);
}

/* Waiters wake only when the lowest cookie in progress passes theirs. */
#define CHAIN 20
static async_cookie_t chain_cookies[CHAIN];

static unsigned int chain_bad;

static void *waiter_thread(void *arg)
{
	unsigned int i = (unsigned int)(uintptr_t)arg;

	async_synchronize_cookie(chain_cookies[i]);
	for (unsigned int j = 0; j < i; j++)
		if (load_u(&done_flags[j]) != 1)
			inc_u(&chain_bad);
	return NULL;
}

static void chain_call(void *data, async_cookie_t cookie)
{
	store_u(&done_flags[(uintptr_t)data], 1);
}

static void test_wakeups_targeted(void **state)
{
	struct gate g = GATE_INIT;
	pthread_t th[CHAIN];
	struct async_stats before, after;

	memset(done_flags, 0, sizeof(done_flags));
	assert_int_equal(async_quiesce(), 0);
	async_set_max_threads(1);
	async_schedule(slow_call, &g);
	gate_wait_waiting(&g, 1);
	for (unsigned int i = 0; i < CHAIN; i++)
		chain_cookies[i] = async_schedule(chain_call, (void *)(uintptr_t)i);
	before = stats_now();
	for (unsigned int i = 0; i < CHAIN; i++)
		assert_int_equal(pthread_create(&th[i], NULL, waiter_thread, (void *)(uintptr_t)i), 0);
	/* Let them all block. */
	for (;;) {
		struct async_stats st = stats_now();

		if (st.waits - before.waits == CHAIN)
			break;
		sleep_us(500);
	}
	gate_open(&g);
	for (unsigned int i = 0; i < CHAIN; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(load_u(&chain_bad), 0);
	after = stats_now();
	assert_int_equal(after.waits - before.waits, CHAIN);
	/* One wakeup per waiter (a broadcast would be ~CHAIN^2/2); allow spurious ones. */
	assert_true(after.wakeups - before.wakeups <= CHAIN + 3);
	async_set_max_threads(0);
	async_synchronize_full();
}

/* Tracing. */
#define TRACE_MAX 4096
static struct async_trace_event trace_ev[TRACE_MAX];
static unsigned int trace_n;
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned int trace_bad_userdata;

static void trace_capture(const struct async_trace_event *ev, void *userdata)
{
	if (userdata != &trace_n)
		inc_u(&trace_bad_userdata);
	pthread_mutex_lock(&trace_lock);
	if (trace_n < TRACE_MAX)
		trace_ev[trace_n++] = *ev;
	pthread_mutex_unlock(&trace_lock);
}

static void trace_sync_call(void *data, async_cookie_t cookie)
{
	sleep_us(100);
	async_synchronize_cookie(cookie);
}

static void test_trace(void **state)
{
	async_cookie_t first = 0, last = 0;
	uint64_t sched[40] = { 0 }, start[40] = { 0 }, end[40] = { 0 };
	unsigned int sync_begin = 0, sync_end = 0, inl = 0;

	trace_n = 0;
	async_set_trace(trace_capture, &trace_n);
	for (unsigned int i = 0; i < 30; i++) {
		last = async_schedule(trace_sync_call, NULL);
		if (!first)
			first = last;
	}
	async_set_enabled(false);
	for (unsigned int i = 0; i < 10; i++)
		last = async_schedule(nop, NULL);
	async_set_enabled(true);
	async_synchronize_full();
	async_set_trace(NULL, NULL);

	assert_int_equal(load_u(&trace_bad_userdata), 0);
	pthread_mutex_lock(&trace_lock);
	for (unsigned int i = 0; i < trace_n; i++) {
		const struct async_trace_event *ev = &trace_ev[i];

		switch (ev->type) {
		case ASYNC_TRACE_SCHEDULE:
		case ASYNC_TRACE_START:
		case ASYNC_TRACE_END: {
			unsigned int k;

			assert_true(ev->cookie >= first && ev->cookie <= last);
			k = (unsigned int)(ev->cookie - first);
			if (ev->type == ASYNC_TRACE_SCHEDULE)
				sched[k] = ev->time_ns;
			else if (ev->type == ASYNC_TRACE_START)
				start[k] = ev->time_ns;
			else
				end[k] = ev->time_ns;
			if (k < 30) {
				assert_false(ev->inline_call);
				if (ev->type != ASYNC_TRACE_SCHEDULE)
					assert_true(ev->worker >= 1);
				if (ev->type != ASYNC_TRACE_SCHEDULE)
					assert_ptr_equal(ev->func, trace_sync_call);
			} else {
				assert_true(ev->inline_call);
				if (ev->type == ASYNC_TRACE_START)
					inl++;
			}
			break;
		}
		case ASYNC_TRACE_SYNC_BEGIN:
			sync_begin++;
			if (ev->cookie)
				assert_int_equal(ev->cookie, ev->target);
			else
				assert_int_equal(ev->target, ASYNC_COOKIE_MAX);
			break;
		case ASYNC_TRACE_SYNC_END:
			sync_end++;
			break;
		default:
			fail();
		}
	}
	pthread_mutex_unlock(&trace_lock);
	for (unsigned int k = 0; k < 40; k++) {
		assert_true(sched[k] > 0);
		assert_true(start[k] >= sched[k]);
		assert_true(end[k] >= start[k]);
	}
	assert_int_equal(inl, 10);
	assert_int_equal(sync_begin, 31);     /* 30 calls + the full sync */
	assert_int_equal(sync_end, 31);
}

/* Chaos: delays happen, results do not change. */
static void test_chaos_set(void **state)
{
	uint64_t d0 = __atomic_load_n(&async_core.test_chaos_delays, __ATOMIC_SEQ_CST);

	async_chaos_point();                        /* off: no delay */
	assert_int_equal(__atomic_load_n(&async_core.test_chaos_delays, __ATOMIC_SEQ_CST), d0);
	async_set_chaos(12345);
	for (unsigned int i = 0; i < 20; i++)
		async_chaos_point();
	assert_true(__atomic_load_n(&async_core.test_chaos_delays, __ATOMIC_SEQ_CST) > d0);
	test_sync_cookie_order(state);
	test_full_sync_nested(state);
	async_set_chaos(0);
}

/* ------------------------------------------------------------------ */
/* Stress: many calls, nesting, several domains, ordering checked.    */

#define STRESS_DOMAINS 3
static struct async_domain stress_dom[STRESS_DOMAINS] = {
	ASYNC_DOMAIN_INIT(stress0, 1), ASYNC_DOMAIN_INIT(stress1, 1), ASYNC_DOMAIN_INIT(stress2, 0),
};

struct stress_log {
	async_cookie_t last;         /* written only after synchronizing: serialized */
	unsigned int count;
	bool bad;
};
static struct stress_log stress_logs[STRESS_DOMAINS];
static unsigned int stress_total;
static unsigned int stress_children;

static void stress_call(void *data, async_cookie_t cookie);

static void stress_child(void *data, async_cookie_t cookie)
{
	struct stress_log *l = &stress_logs[(uintptr_t)data];

	async_synchronize_cookie_domain(cookie, &stress_dom[(uintptr_t)data]);
	if (l->last >= cookie)
		l->bad = true;
	l->last = cookie;
	l->count++;
	inc_u(&stress_total);
}

static void stress_call(void *data, async_cookie_t cookie)
{
	uintptr_t d = (uintptr_t)data;
	struct stress_log *l = &stress_logs[d];

	if (cookie % 97 == 0) {
		/* Nested: children in the next domain, before our own sync. */
		async_schedule_domain(stress_child, (void *)((d + 1) % STRESS_DOMAINS),
				      &stress_dom[(d + 1) % STRESS_DOMAINS]);
		inc_u(&stress_children);
	}
	if (cookie % 5 == 0)
		async_chaos_point();
	if (cookie % 61 == 0)
		note_workers();
	async_synchronize_cookie_domain(cookie, &stress_dom[d]);
	if (l->last >= cookie)
		l->bad = true;
	l->last = cookie;
	l->count++;
	inc_u(&stress_total);
}

static void stress_run(unsigned int n, unsigned int cap)
{
	unsigned int per[STRESS_DOMAINS] = { 0 };

	assert_int_equal(async_quiesce(), 0);
	async_set_max_threads(cap);
	store_u(&workers_seen_max, 0);
	memset(stress_logs, 0, sizeof(stress_logs));
	store_u(&stress_total, 0);
	store_u(&stress_children, 0);
	for (unsigned int i = 0; i < n; i++) {
		uintptr_t d = i % 7 == 0 ? 2 : i % 2;

		async_schedule_domain(stress_call, (void *)d, &stress_dom[d]);
		per[d]++;
	}
	async_synchronize_full_domain(&stress_dom[2]);   /* exclusive: by hand */
	async_synchronize_full();
	async_synchronize_full_domain(&stress_dom[2]);   /* children scheduled late */
	assert_int_equal(load_u(&stress_total), n + load_u(&stress_children));
	for (unsigned int d = 0; d < STRESS_DOMAINS; d++) {
		assert_false(stress_logs[d].bad);
		assert_true(stress_logs[d].count >= per[d]);
	}
	assert_true(stats_now().workers_peak <= 256);
	if (cap == 1)   /* seen from inside the calls */
		assert_int_equal(load_u(&workers_seen_max), 1);
	async_set_max_threads(0);
}

static void test_stress_default(void **state)
{
	struct async_stats before = stats_now(), after;

	stress_run(scaled(100000), 0);
	after = stats_now();
	assert_true(after.completed - before.completed >= scaled(100000));
}

static void test_stress_cap1(void **state)
{
	stress_run(scaled(100000), 1);
}

static void test_stress_cap256(void **state)
{
	stress_run(scaled(20000), 256);
}

static void test_stress_chaos(void **state)
{
	async_set_chaos(777);
	stress_run(scaled(3000), 0);
	stress_run(scaled(1000), 1);
	async_set_chaos(0);
}

/* Tiny calls do not start hundreds of threads. */
static void test_no_thread_explosion(void **state)
{
	uint64_t started;

	/*
	 * Counted as threads started, which idle workers leaving (200 ms)
	 * cannot lower: quiesce joined them all, so every thread of this
	 * run is a new one.
	 */
	assert_int_equal(async_quiesce(), 0);
	started = stats_now().workers_started;
	for (unsigned int i = 0; i < scaled(200000); i++)
		async_schedule(nop, NULL);
	async_synchronize_full();
	/* A stall (the machine busy elsewhere) may add some, never one per call. */
	assert_in_range(stats_now().workers_started - started, 1, 64);
}

/* Calls that compute for a while get a few more workers, not one each. */
static void compute_call(void *data, async_cookie_t cookie)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 2000000L);
}

static void test_computing_calls(void **state)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t started;

	/* threads started, not workers_now: idle ones leave after 200 ms */
	assert_int_equal(async_quiesce(), 0);
	started = stats_now().workers_started;
	async_set_max_threads(256);
	for (unsigned int i = 0; i < scaled(200) + 20; i++)
		async_schedule(compute_call, NULL);
	async_synchronize_full();
	/*
	 * 1 + 1 at the first stall, then up to twice the CPUs.  On a loaded
	 * machine one stall may misread computing threads as asleep (a page
	 * fault, say), which adds 4 x busy more; a second one in a row would
	 * be needed for a worker per call (~220).
	 */
	assert_in_range(stats_now().workers_started - started, 1,
			25 + 2 * (unsigned int)(cpus > 0 ? cpus : 1) + 4);
}

/*
 * A worker blocks what is sent from outside (SIGINT, SIGTERM: the
 * program's own threads take them) but not a fault's signal, which Linux
 * would otherwise turn into the process's death whatever its handler.
 */
struct mask_seen {
	int sigint, sigterm, sigsegv, sigbus;
	bool on_worker;
};

static void mask_call(void *data, async_cookie_t cookie)
{
	struct mask_seen *m = data;
	sigset_t cur;

	(void)cookie;
	pthread_sigmask(SIG_SETMASK, NULL, &cur);
	m->sigint = sigismember(&cur, SIGINT);
	m->sigterm = sigismember(&cur, SIGTERM);
	m->sigsegv = sigismember(&cur, SIGSEGV);
	m->sigbus = sigismember(&cur, SIGBUS);
	m->on_worker = current_is_async();
}

static void test_worker_signal_mask(void **state)
{
	struct mask_seen m = { -1, -1, -1, -1, false };

	(void)state;
	async_schedule(mask_call, &m);
	async_synchronize_full();
	assert_true(m.on_worker);
	assert_int_equal(m.sigint, 1);
	assert_int_equal(m.sigterm, 1);
	assert_int_equal(m.sigsegv, 0);
	assert_int_equal(m.sigbus, 0);
}

/* Quiesce: all workers gone, the process is single-threaded again. */
static void quiesce_inside(void *data, async_cookie_t cookie)
{
	*(int *)data = async_quiesce();
}

static void test_quiesce(void **state)
{
	uint64_t started;
	unsigned int n;
	int r = 0;

	for (unsigned int i = 0; i < 32; i++)
		async_schedule(before_call, NULL);
	async_schedule(quiesce_inside, &r);
	assert_int_equal(async_quiesce(), 0);
	assert_int_equal(r, -EDEADLK);
	assert_int_equal(stats_now().workers_now, 0);
	/* TSan starts a thread of its own with the first pthread_create(). */
	n = count_threads_settled(base_threads + UNDER_TSAN);
	assert_true(n >= 1 && n <= base_threads + UNDER_TSAN);
	/* And it starts again on demand. */
	started = stats_now().workers_started;
	test_current_is_async(state);
	assert_true(stats_now().workers_started > started);
	assert_int_equal(async_quiesce(), 0);
	assert_int_equal(count_threads_settled(n), n);
}

static void watchdog(int sig)
{
	static const char msg[] = "Bail out! watchdog: a test hung (deadlock?)\n";

	(void)!write(STDOUT_FILENO, msg, sizeof(msg) - 1);
	_exit(1);
}

int main(void)
{
	const char *s = getenv("ASYNC_TEST_SCALE");
	const struct CMUnitTest tests[] = {
		/* First: it sees the library untouched. */
		cmocka_unit_test(test_sequential_default),
		cmocka_unit_test_setup_teardown(test_cookies_increase, setup, teardown),
		cmocka_unit_test_setup_teardown(test_current_is_async, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_cookie_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_cookie_outside, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_sync_nested, setup, teardown),
		cmocka_unit_test_setup_teardown(test_domains_independent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exclusive_domain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_special, setup, teardown),
		cmocka_unit_test_setup_teardown(test_self_sync, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fallback_oom, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fallback_max_pending, setup, teardown),
		cmocka_unit_test_setup_teardown(test_workers_grow_for_blocking, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watchdog_grows_quiet_queue, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cap_one, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abandon, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wakeups_targeted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chaos_set, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stress_default, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stress_cap1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stress_cap256, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stress_chaos, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_thread_explosion, setup, teardown),
		cmocka_unit_test_setup_teardown(test_computing_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worker_signal_mask, setup, teardown),
		cmocka_unit_test_setup_teardown(test_quiesce, setup, teardown),
	};
	int r;

	base_threads = count_threads();
	if (s && atoi(s) > 0)
		scale_div = (unsigned int)atoi(s);
	else if (UNDER_TSAN)
		scale_div = 10;
	signal(SIGALRM, watchdog);
	alarm(300);
	r = cmocka_run_group_tests_name("libasync", tests, NULL, NULL);
	return r;
}
