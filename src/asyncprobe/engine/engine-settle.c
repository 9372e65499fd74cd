/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The top level (engine.c, "A call that hangs" and "A stop request"):
 * its loop, eng_settle(), which runs the queue, publishes what can be and
 * waits; the hang rule, which abandons a call stuck in one step; and
 * stop requests.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>

#include "internal.h"
#include "output/output.h"

void ap_engine_request_stop(struct ap_engine *e, int sig)
{
	__atomic_store_n(&e->stop_request, sig ? sig : SIGTERM, __ATOMIC_SEQ_CST);
}

/* Give up on a hung call (engine lock held).  See "A call that hangs". */
static void abandon_locked(struct ap_engine *e, struct ap_node *n, uint64_t now)
{
	int r = async_abandon(n->call);

	if (r < 0) {
		/* -ENOENT: it has just returned; -EAGAIN cannot be (it runs) */
		if (r != -ENOENT)
			log_dev_error(eng_node_label(n), "cannot abandon its call: %s",
				      strerror(-r));
		return;
	}
	n->abandoned = true;
	n->t_abandoned = now;
	if (!e->parallel)
		e->in_flight--; /* the next call may run */
	e->n_abandoned++;
	e->abandoned_running++;
	log_dev_error(eng_node_label(n),
		      "abandoned, no answer after %.1f s %s (--device-timeout %u ms + %u ms); "
		      "its call keeps running but publishes nothing, later devices go on", ap_ms_between(n->t_progress, now) / 1000.0,
		      n->phase ? n->phase : "", e->cfg.device_timeout_ms, AP_HANG_SLACK_MS);
	ap_trace_mark(n->call, "abandoned", now);
	eng_order_seal_locked(e, n);      /* later nodes go on; the caller pumps */
}

/* Abandon every call stuck in one step for too long (engine lock held). */
static void abandon_hung_locked(struct ap_engine *e)
{
	uint64_t now = ap_now_ns();
	uint64_t limit = ((uint64_t)e->cfg.device_timeout_ms + AP_HANG_SLACK_MS) * 1000000ULL;
	size_t i;

	if (!e->on_worker)
		return;     /* calls run in this thread: nobody is left to look */
	for (i = 0; i < e->n_nodes; i++) {
		struct ap_node *n = e->nodes[i];

		if ((n->state == NODE_RUNNING || n->state == NODE_COLLECTED) && !n->at_sync &&
		    !n->abandoned && now - n->t_progress > limit)
			abandon_locked(e, n, now);
	}
}

/*
 * Act on a stop request (engine lock held): see "A stop request".  Calls
 * not yet started return at once when they start, so only the calls busy
 * before step 2 are abandoned here.
 */
void eng_settle_stop_if_requested_locked(struct ap_engine *e)
{
	uint64_t now;
	unsigned int n_busy = 0;
	size_t i;

	if (!engine_stop_signal(e) || e->stopping)
		return;
	e->stopping = true;
	now = ap_now_ns();
	for (i = 0; e->on_worker && i < e->n_nodes; i++) {
		struct ap_node *n = e->nodes[i];

		if ((n->state != NODE_RUNNING && n->state != NODE_COLLECTED) || n->at_sync ||
		    n->abandoned || async_abandon(n->call) < 0)
			continue;
		n->abandoned = n->stopped = true;
		n->t_abandoned = now;
		if (!e->parallel)
			e->in_flight--;
		e->abandoned_running++;
		eng_order_seal_locked(e, n);
		n_busy++;
		ap_trace_mark(n->call, "stopped", now);
	}
	log_notice("stopping on %s: %u call%s in progress left unfinished, no further device "
		   "is probed or published", engine_stop_signal(e) == SIGINT ? "SIGINT" : "SIGTERM",
		   n_busy, n_busy == 1 ? "" : "s");
	pthread_cond_broadcast(&e->cond);
}

/*
 * The top level's loop: drain the FIFO (sequential mode) and wait until
 * nothing is pending, or @until returns true, or @deadline_ns passes.
 */
void eng_settle(struct ap_engine *e, bool (*until)(struct ap_engine *, const void *),
		   const void *arg, uint64_t deadline_ns)
{
	struct timespec ts;

	for (;;) {
		bool idle;

		pthread_mutex_lock(&e->lock);
		eng_settle_stop_if_requested_locked(e);
		pthread_mutex_unlock(&e->lock);
		eng_order_pump(e, NULL);  /* abandoned or stopped nodes may have let the frontier on */
		eng_order_drain(e);
		pthread_mutex_lock(&e->lock);
		idle = e->pending == 0 && !e->n_queued;
		pthread_mutex_unlock(&e->lock);
		if (idle) {
			bool was = e->coldplug_done;

			eng_hotplug_coldplug_complete(e);
			if (!was)
				continue;   /* the backlog may have spawned something */
		}
		if (until && until(e, arg))
			return;
		if (idle)
			return;
		pthread_mutex_lock(&e->lock);
		while (e->pending > 0 && !(e->n_queued && !e->in_flight)) {
			uint64_t seq = e->publish_seq;
			unsigned int pend = e->pending;
			uint64_t now = ap_now_ns(), wake = now + AP_HANG_CHECK_MS * 1000000ULL;

			if (deadline_ns && now >= deadline_ns)
				break;
			if (deadline_ns && deadline_ns < wake)
				wake = deadline_ns;
			ts.tv_sec = (time_t)(wake / 1000000000ULL);
			ts.tv_nsec = (long)(wake % 1000000000ULL);
			pthread_cond_timedwait(&e->cond, &e->lock, &ts);
			eng_settle_stop_if_requested_locked(e);
			abandon_hung_locked(e);
			if (e->frontier && e->frontier->ready && !e->pumping)
				break;  /* to pump */
			if (until && (e->publish_seq != seq || e->pending != pend))
				break;
		}
		pthread_mutex_unlock(&e->lock);
		if (deadline_ns && ap_now_ns() >= deadline_ns)
			return;
	}
}
