/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-trace: what tracing costs.  Records hook events from 1, 2 and 4
 * threads at once and times the writers on a 1024-disk-sized trace.
 * Prints one JSON object per line (make bench); asserts nothing.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/base.h"
#include "output/output.h"

enum { EVENTS = 400000 };

static unsigned int per_thread;

static void *recorder(void *arg)
{
	struct async_trace_event ev = { .worker = (unsigned int)(uintptr_t)arg };
	unsigned int i;

	for (i = 0; i < per_thread; i++) {
		ev.type = (enum async_trace_type)(i % 3);
		ev.cookie = i / 3 + 1;
		ev.time_ns = ap_now_ns();
		ap_trace_record_event(&ev);
	}
	return NULL;
}

static void bench_hook(unsigned int threads)
{
	pthread_t th[8];
	uint64_t t0, t1;
	uintptr_t i;

	ap_trace_reset();
	ap_trace_enable();
	per_thread = EVENTS / threads;
	t0 = ap_now_ns();
	for (i = 0; i < threads; i++)
		if (pthread_create(&th[i], NULL, recorder, (void *)(i + 1)) != 0) {
			perror("pthread_create");
			exit(1);
		}
	for (i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	t1 = ap_now_ns();
	printf("{\"bench\":\"trace_hook\",\"threads\":%u,\"events\":%u,\"ns_per_event\":%.1f}\n",
	       threads, per_thread * threads, (double)(t1 - t0) / (per_thread * threads));
}

/* A run shaped like 1024 disks with a partition each on 16 workers. */
static void bench_write(void)
{
	enum { CALLS = 2 * 1024 + 2, W = 16 };
	uint64_t base, t0, t1, t2;
	struct async_trace_event ev = { 0 };
	struct rusage ru;
	char name[32];
	int i;

	ap_trace_reset();
	ap_trace_enable();
	base = ap_now_ns();
	for (i = 1; i <= CALLS; i++) {
		uint64_t t = base + (uint64_t)((i - 1) / W) * 500000;

		snprintf(name, sizeof(name), "sd%d", i);
		ap_trace_label(i, i % 2 ? "disk" : "partition", name);
		ev = (struct async_trace_event){ .type = ASYNC_TRACE_SCHEDULE, .cookie = i, .time_ns = t };
		ap_trace_record_event(&ev);
		ev.type = ASYNC_TRACE_START;
		ev.worker = (unsigned int)((i - 1) % W) + 1;
		ev.time_ns = t + 10000;
		ap_trace_record_event(&ev);
		ap_trace_phase(i, "probe", t + 20000, t + 300000);
		ev.type = ASYNC_TRACE_SYNC_BEGIN;
		ev.target = i;
		ev.time_ns = t + 300000;
		ap_trace_record_event(&ev);
		ev.type = ASYNC_TRACE_SYNC_END;
		ev.time_ns = t + 400000;
		ap_trace_record_event(&ev);
		ap_trace_phase(i, "links", t + 400000, t + 450000);
		ev.type = ASYNC_TRACE_END;
		ev.time_ns = t + 460000;
		ap_trace_record_event(&ev);
	}
	t0 = ap_now_ns();
	if (ap_trace_write_chrome("/dev/null") < 0)
		exit(1);
	t1 = ap_now_ns();
	if (ap_trace_write_svg("/dev/null", NULL) < 0)
		exit(1);
	t2 = ap_now_ns();
	getrusage(RUSAGE_SELF, &ru);
	printf("{\"bench\":\"trace_write\",\"calls\":%d,\"chrome_ms\":%.2f,\"svg_ms\":%.2f,"
	       "\"peak_rss_kib\":%ld}\n", CALLS, (double)(t1 - t0) / 1e6, (double)(t2 - t1) / 1e6,
	       ru.ru_maxrss);
	ap_trace_reset();
}

int main(void)
{
	bench_write();
	bench_hook(1);
	bench_hook(2);
	bench_hook(4);
	ap_trace_reset();
	return 0;
}
