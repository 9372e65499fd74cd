/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-core: libasync against libuv's thread pool and GLib's GThreadPool,
 * one JSON object per line.  Built by "make bench" only.
 *
 * Workloads (each the best of a few repetitions, cold figures too):
 *   tiny      200000 empty calls, then wait for all: ns_per_task
 *   blocking  256 calls sleeping 20 ms each, then wait for all: ms_total
 *   ordered   100000 calls that each wait for their turn (libasync: their
 *             own cookie) and append to a shared log: ns_per_task,
 *             wakeups_per_task.  Peers use a mutex + condition variable
 *             turn counter, the natural way with a plain pool.
 *
 * libuv reads UV_THREADPOOL_SIZE once, at first use, so its 256-thread
 * configuration runs in a re-executed child: bench-core --libuv-only.
 */
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "async.h"

#ifdef HAVE_LIBUV
#include <uv.h>
#endif
#ifdef HAVE_GLIB
#include <glib.h>
#endif

extern char **environ;

#define TINY_N 200000u
#define BLOCK_N 256u
#define BLOCK_MS 20u
#define ORDER_N 100000u
/* With hundreds of threads a broadcast turn counter wakes them all per task. */
#define ORDER_N_WIDE 2000u

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static unsigned int reps(const char *workload)
{
	return strcmp(workload, "blocking") == 0 ? 3 : 5;
}

/* The shared log of the ordered workload. */
static unsigned int *order_log;
static unsigned int order_len;
static bool order_bad;

static void order_check(unsigned int n)
{
	if (order_len != n) {
		order_bad = true;
		return;
	}
	for (unsigned int i = 0; i < n; i++)
		if (order_log[i] != i)
			order_bad = true;
}

/* Turn counter for the peers' ordered workload. */
static pthread_mutex_t turn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_cond = PTHREAD_COND_INITIALIZER;
static unsigned int turn;
static uint64_t turn_wakeups;

static void turn_run(unsigned int i)
{
	pthread_mutex_lock(&turn_lock);
	while (turn != i) {
		pthread_cond_wait(&turn_cond, &turn_lock);
		turn_wakeups++;
	}
	order_log[order_len++] = i;
	turn++;
	pthread_cond_broadcast(&turn_cond);
	pthread_mutex_unlock(&turn_lock);
}

static void turn_reset(void)
{
	turn = 0;
	turn_wakeups = 0;
	order_len = 0;
}

/* ------------------------------------------------------------------ */
/* libasync                                                             */

static void la_nop(void *data, async_cookie_t cookie)
{
}

static void la_sleep(void *data, async_cookie_t cookie)
{
	sleep_ms(BLOCK_MS);
}

static async_cookie_t la_base;

static void la_ordered(void *data, async_cookie_t cookie)
{
	async_synchronize_cookie(cookie);
	order_log[order_len++] = (unsigned int)(cookie - la_base);
}

static void bench_libasync(void)
{
	struct async_stats st0, st1;
	double best = 1e30, cold = 0, wakeups = 0;
	unsigned int peak = 0;
	uint64_t inl = 0;

	async_set_enabled(true);

	/* tiny */
	for (unsigned int r = 0; r < reps("tiny"); r++) {
		uint64_t t0;
		double v;

		async_get_stats(&st0);
		t0 = now_ns();
		for (unsigned int i = 0; i < TINY_N; i++)
			async_schedule(la_nop, NULL);
		async_synchronize_full();
		v = (double)(now_ns() - t0) / TINY_N;
		async_get_stats(&st1);
		if (r == 0)
			cold = v;
		if (v < best) {
			best = v;
			inl = st1.inline_calls - st0.inline_calls;
		}
		if (st1.workers_peak > peak)
			peak = st1.workers_peak;
	}
	printf("{\"workload\":\"tiny\",\"impl\":\"libasync\",\"threads\":\"default\",\"tasks\":%u,"
	       "\"ns_per_task\":%.1f,\"ns_per_task_first\":%.1f,\"inline_calls\":%llu,\"workers_peak\":%u}\n",
	       TINY_N, best, cold, (unsigned long long)inl, peak);
	fflush(stdout);

	/* blocking: the first run starts the threads, later ones find them lingering */
	async_quiesce();
	best = 1e30;
	for (unsigned int r = 0; r < reps("blocking"); r++) {
		uint64_t t0 = now_ns();
		double v;

		for (unsigned int i = 0; i < BLOCK_N; i++)
			async_schedule(la_sleep, NULL);
		async_synchronize_full();
		v = (double)(now_ns() - t0) / 1e6;
		if (r == 0)
			cold = v;
		if (v < best)
			best = v;
	}
	async_get_stats(&st1);
	printf("{\"workload\":\"blocking\",\"impl\":\"libasync\",\"threads\":\"default\",\"tasks\":%u,"
	       "\"ms_total\":%.2f,\"ms_total_cold\":%.2f,\"workers_peak\":%u}\n",
	       BLOCK_N, best, cold, st1.workers_peak);
	fflush(stdout);

	/* ordered, after the blocking run's threads are gone */
	async_quiesce();
	best = 1e30;
	for (unsigned int r = 0; r < reps("ordered"); r++) {
		uint64_t t0;
		double v;

		order_len = 0;
		async_get_stats(&st0);
		t0 = now_ns();
		la_base = async_schedule(la_nop, NULL) + 1;
		for (unsigned int i = 0; i < ORDER_N; i++)
			async_schedule(la_ordered, NULL);
		async_synchronize_full();
		v = (double)(now_ns() - t0) / ORDER_N;
		async_get_stats(&st1);
		order_check(ORDER_N);
		if (r == 0)
			cold = v;
		if (v < best) {
			best = v;
			wakeups = (double)(st1.wakeups - st0.wakeups) / ORDER_N;
			inl = st1.inline_calls - st0.inline_calls;
		}
	}
	printf("{\"workload\":\"ordered\",\"impl\":\"libasync\",\"threads\":\"default\",\"tasks\":%u,"
	       "\"ns_per_task\":%.1f,\"ns_per_task_first\":%.1f,\"wakeups_per_task\":%.3f,"
	       "\"inline_calls\":%llu,\"order_ok\":%s}\n",
	       ORDER_N, best, cold, wakeups, (unsigned long long)inl, order_bad ? "false" : "true");
	fflush(stdout);
	async_quiesce();
}

/* ------------------------------------------------------------------ */
/* libuv                                                                */

#ifdef HAVE_LIBUV
static uv_work_t *uv_reqs;

static void uv_nop(uv_work_t *req)
{
}

static void uv_sleep_cb(uv_work_t *req)
{
	sleep_ms(BLOCK_MS);
}

static void uv_ordered(uv_work_t *req)
{
	turn_run((unsigned int)(uintptr_t)req->data);
}

static void uv_after(uv_work_t *req, int status)
{
}

static double uv_round(uv_work_cb cb, unsigned int n)
{
	uv_loop_t *loop = uv_default_loop();
	uint64_t t0 = now_ns();

	for (unsigned int i = 0; i < n; i++) {
		uv_reqs[i].data = (void *)(uintptr_t)i;
		uv_queue_work(loop, &uv_reqs[i], cb, uv_after);
	}
	uv_run(loop, UV_RUN_DEFAULT);
	return (double)(now_ns() - t0);
}

static void bench_libuv(const char *threads)
{
	double best, v, cold = 0;

	uv_reqs = calloc(TINY_N, sizeof(*uv_reqs));
	if (!uv_reqs)
		exit(1);

	best = 1e30;
	for (unsigned int r = 0; r < reps("tiny"); r++) {
		v = uv_round(uv_nop, TINY_N) / TINY_N;
		if (r == 0)
			cold = v;
		best = v < best ? v : best;
	}
	printf("{\"workload\":\"tiny\",\"impl\":\"libuv\",\"threads\":\"%s\",\"tasks\":%u,"
	       "\"ns_per_task\":%.1f,\"ns_per_task_first\":%.1f}\n", threads, TINY_N, best, cold);
	fflush(stdout);

	best = 1e30;
	for (unsigned int r = 0; r < (strcmp(threads, "4") == 0 ? 1 : reps("blocking")); r++) {
		v = uv_round(uv_sleep_cb, BLOCK_N) / 1e6;
		if (r == 0)
			cold = v;
		best = v < best ? v : best;
	}
	printf("{\"workload\":\"blocking\",\"impl\":\"libuv\",\"threads\":\"%s\",\"tasks\":%u,"
	       "\"ms_total\":%.2f,\"ms_total_cold\":%.2f}\n", threads, BLOCK_N, best, cold);
	fflush(stdout);

	best = 1e30;
	{
		double wk = 0;

		unsigned int n = strcmp(threads, "4") == 0 ? ORDER_N : ORDER_N_WIDE;

		for (unsigned int r = 0; r < reps("ordered"); r++) {
			turn_reset();
			v = uv_round(uv_ordered, n) / n;
			order_check(n);
			if (r == 0)
				cold = v;
			if (v < best) {
				best = v;
				wk = (double)turn_wakeups / n;
			}
		}
		printf("{\"workload\":\"ordered\",\"impl\":\"libuv\",\"threads\":\"%s\",\"tasks\":%u,"
		       "\"ns_per_task\":%.1f,\"ns_per_task_first\":%.1f,\"wakeups_per_task\":%.3f,"
		       "\"order_ok\":%s}\n",
		       threads, n, best, cold, wk, order_bad ? "false" : "true");
	}
	fflush(stdout);
	free(uv_reqs);
}
#endif

/* ------------------------------------------------------------------ */
/* GLib                                                                 */

#ifdef HAVE_GLIB
static GMutex g_done_lock;
static GCond g_done_cond;
static unsigned int g_done, g_target;

static void g_finish(void)
{
	g_mutex_lock(&g_done_lock);
	if (++g_done == g_target)
		g_cond_signal(&g_done_cond);
	g_mutex_unlock(&g_done_lock);
}

static void g_task(gpointer data, gpointer user)
{
	unsigned int kind = GPOINTER_TO_UINT(user);
	unsigned int i = GPOINTER_TO_UINT(data) - 1;

	if (kind == 1)
		sleep_ms(BLOCK_MS);
	else if (kind == 2)
		turn_run(i);
	g_finish();
}

static double g_round(unsigned int kind, unsigned int n, int max_threads)
{
	GThreadPool *pool = g_thread_pool_new(g_task, GUINT_TO_POINTER(kind), max_threads, FALSE, NULL);
	uint64_t t0;
	double v;

	g_done = 0;
	g_target = n;
	t0 = now_ns();
	for (unsigned int i = 0; i < n; i++)
		g_thread_pool_push(pool, GUINT_TO_POINTER(i + 1), NULL);
	g_mutex_lock(&g_done_lock);
	while (g_done < g_target)
		g_cond_wait(&g_done_cond, &g_done_lock);
	g_mutex_unlock(&g_done_lock);
	v = (double)(now_ns() - t0);
	g_thread_pool_free(pool, FALSE, TRUE);
	return v;
}

static void bench_glib(int max_threads)
{
	double best, v, cold = 0, wk = 0;
	unsigned int n;

	best = 1e30;
	for (unsigned int r = 0; r < reps("tiny"); r++) {
		v = g_round(0, TINY_N, max_threads) / TINY_N;
		if (r == 0)
			cold = v;
		best = v < best ? v : best;
	}
	printf("{\"workload\":\"tiny\",\"impl\":\"glib\",\"threads\":\"%d\",\"tasks\":%u,"
	       "\"ns_per_task\":%.1f,\"ns_per_task_first\":%.1f}\n", max_threads, TINY_N, best, cold);
	fflush(stdout);

	best = 1e30;
	for (unsigned int r = 0; r < (max_threads < 16 ? 1 : reps("blocking")); r++) {
		v = g_round(1, BLOCK_N, max_threads) / 1e6;
		if (r == 0)
			cold = v;
		best = v < best ? v : best;
	}
	printf("{\"workload\":\"blocking\",\"impl\":\"glib\",\"threads\":\"%d\",\"tasks\":%u,"
	       "\"ms_total\":%.2f,\"ms_total_cold\":%.2f}\n", max_threads, BLOCK_N, best, cold);
	fflush(stdout);

	best = 1e30;
	n = max_threads < 16 ? ORDER_N : ORDER_N_WIDE;
	for (unsigned int r = 0; r < reps("ordered"); r++) {
		turn_reset();
		v = g_round(2, n, max_threads) / n;
		order_check(n);
		if (r == 0)
			cold = v;
		if (v < best) {
			best = v;
			wk = (double)turn_wakeups / n;
		}
	}
	printf("{\"workload\":\"ordered\",\"impl\":\"glib\",\"threads\":\"%d\",\"tasks\":%u,"
	       "\"ns_per_task\":%.1f,\"ns_per_task_first\":%.1f,\"wakeups_per_task\":%.3f,"
	       "\"order_ok\":%s}\n",
	       max_threads, n, best, cold, wk, order_bad ? "false" : "true");
	fflush(stdout);
}
#endif

static void skip(const char *impl, const char *why)
{
	printf("{\"impl\":\"%s\",\"skipped\":\"%s\"}\n", impl, why);
	fflush(stdout);
}

#ifdef HAVE_LIBUV
/* libuv with 256 threads, in a child that sets UV_THREADPOOL_SIZE first. */
static void run_libuv_child(const char *self)
{
	char *argv[] = { (char *)self, (char *)"--libuv-only", NULL };
	pid_t pid;
	int status, r;

	r = setenv("UV_THREADPOOL_SIZE", "256", 1);
	if (r == 0)
		r = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ);
	unsetenv("UV_THREADPOOL_SIZE");
	if (r != 0) {
		skip("libuv", "cannot re-execute for UV_THREADPOOL_SIZE=256");
		return;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
}
#endif

int main(int argc, char **argv)
{
	order_log = calloc(ORDER_N, sizeof(*order_log));
	if (!order_log)
		return 1;

	if (argc > 1 && strcmp(argv[1], "--libuv-only") == 0) {
#ifdef HAVE_LIBUV
		const char *n = getenv("UV_THREADPOOL_SIZE");

		bench_libuv(n ? n : "4");
#endif
		return order_bad ? 1 : 0;
	}

	bench_libasync();
#ifdef HAVE_LIBUV
	/* The default pool (4 threads; UV_THREADPOOL_SIZE unset). */
	unsetenv("UV_THREADPOOL_SIZE");
	bench_libuv("4");
	run_libuv_child(argv[0]);
#else
	skip("libuv", "not found by configure");
#endif
#ifdef HAVE_GLIB
	bench_glib(2);
	bench_glib(256);
#else
	skip("glib", "not found by configure");
#endif
	return order_bad ? 1 : 0;
}
