/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The publication order (engine.c, "The order" and "Sequentially"): the
 * doubly-linked list of nodes, inserting a parent's children after it,
 * moving a device two parents list (eng_order_adopt_locked()), sealing, the
 * frontier and its cookies, publishing at a node's turn (eng_order_pump()),
 * and handing nodes to libasync: at once concurrently, queued and run one
 * at a time sequentially (eng_order_drain()).  Calls only engine-node.c; a
 * node's call runs through ap_engine.run.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "output/output.h"

/* The frontier moves to @n: its number in the order is given now. */
static void frontier_set_locked(struct ap_engine *e, struct ap_node *n)
{
	e->frontier = n;
	if (n && !n->cookie)
		n->cookie = ++e->order_seq;
}

/*
 * Put @n into the order right after @after (NULL: at the end).  A parent
 * inserts its children, in sorted order, right after itself before it is
 * sealed, so they come before every node its later siblings and their
 * subtrees will insert: depth first.
 */
void eng_order_insert_locked(struct ap_engine *e, struct ap_node *after, struct ap_node *n)
{
	if (!after)
		after = e->order_tail;
	n->o_prev = after;
	n->o_next = after ? after->o_next : e->order_head;
	if (n->o_next)
		n->o_next->o_prev = n;
	else
		e->order_tail = n;
	if (after)
		after->o_next = n;
	else
		e->order_head = n;
	e->pending++;
	if (!e->frontier)
		frontier_set_locked(e, n);      /* after coldplug: a hotplug with nothing ahead */
}

/* Is @a before @b in the order?  (Only for the rare device two parents list.) */
bool eng_order_before_locked(const struct ap_node *a, const struct ap_node *b)
{
	for (a = a->o_next; a; a = a->o_next)
		if (a == b)
			return true;
	return false;
}

static bool descends_from(const struct ap_node *n, const struct ap_node *anc)
{
	for (n = n->parent; n; n = n->parent)
		if (n == anc)
			return true;
	return false;
}

/*
 * A device two parents list (an NVMe multipath head behind two
 * controllers) belongs to the one first in the order, whichever enumerated
 * first: @c, registered by a later parent, moves with its subtree (which
 * is contiguous) to right after @after, below @parent.  Neither it nor
 * anything in its subtree has had its turn: @parent, before them, is not
 * sealed yet.  Returns the last node moved.
 */
struct ap_node *eng_order_adopt_locked(struct ap_engine *e, struct ap_node *parent,
					  struct ap_node *after, struct ap_node *c)
{
	struct ap_node *last = c;

	while (last->o_next && descends_from(last->o_next, c))
		last = last->o_next;
	/* unlink c..last */
	if (c->o_prev)
		c->o_prev->o_next = last->o_next;
	else
		e->order_head = last->o_next;
	if (last->o_next)
		last->o_next->o_prev = c->o_prev;
	else
		e->order_tail = c->o_prev;
	/* and put it after @after */
	c->o_prev = after;
	last->o_next = after->o_next;
	if (after->o_next)
		after->o_next->o_prev = last;
	else
		e->order_tail = last;
	after->o_next = c;
	log_debug("%s: listed by %s and %s, it goes with %s (first in the order)",
		  eng_node_label(c), eng_node_label(parent), eng_node_label(c->parent), eng_node_label(parent));
	c->parent = parent;
	return last;
}

/*
 * @n is published, abandoned or stopped, and its children are in the order
 * (or never will be): nodes after it no longer wait for it.
 */
void eng_order_seal_locked(struct ap_engine *e, struct ap_node *n)
{
	if (n->sealed)
		return;
	n->sealed = true;
	n->ready = false;
	e->pending--;
	e->done++;
	while (e->frontier && e->frontier->sealed)
		frontier_set_locked(e, e->frontier->o_next);
	pthread_cond_broadcast(&e->cond);
}

/*
 * Hand a node to libasync: at once concurrently; sequentially it is marked
 * queued and the top level runs it in its turn (see eng_order_drain()).
 */
void eng_order_spawn(struct ap_engine *e, struct ap_node *n)
{
	pthread_mutex_lock(&e->lock);
	if (e->stopping) {
		n->stopped = true;      /* never scheduled */
		eng_order_seal_locked(e, n);
		pthread_mutex_unlock(&e->lock);
		return;
	}
	n->state = NODE_SPAWNED;
	n->t_spawn = ap_now_ns();
	if (!e->parallel) {
		n->queued = true;
		e->n_queued++;
		pthread_cond_broadcast(&e->cond);
		pthread_mutex_unlock(&e->lock);
		return;
	}
	pthread_mutex_unlock(&e->lock);
	async_schedule(e->run, n);
}

/* Spawn @n's children, in their order. */
void eng_order_spawn_children(struct ap_engine *e, struct ap_node *n)
{
	size_t i;

	for (i = 0; i < n->n_children; i++)
		eng_order_spawn(e, n->children[i]);
}

/*
 * Sequential mode: the call to run next (engine lock held): the first
 * queued controller in the order, else the first queued node.  Queued
 * nodes are unsealed, so none is before the frontier; every spawned node
 * is in the order.
 */
static struct ap_node *next_queued_locked(struct ap_engine *e)
{
	struct ap_node *o, *first = NULL;

	if (!e->n_queued)
		return NULL;
	for (o = e->frontier ? e->frontier : e->order_head; o; o = o->o_next) {
		if (!o->queued)
			continue;
		if (o->kind == AP_KIND_CONTROLLER && !o->discovery)
			return o;
		if (!first)
			first = o;
	}
	return first;
}

/*
 * Sequential mode: run the next queued call (next_queued_locked()) once
 * the one before it has returned (or was abandoned).
 */
void eng_order_drain(struct ap_engine *e)
{
	for (;;) {
		struct ap_node *n;

		pthread_mutex_lock(&e->lock);
		n = e->in_flight ? NULL : next_queued_locked(e);
		if (n) {
			n->queued = false;
			e->n_queued--;
			e->in_flight++;
		}
		pthread_mutex_unlock(&e->lock);
		if (!n)
			return;
		async_schedule(e->run, n);
	}
}

static void print_new_links(struct ap_engine *e)
{
	size_t i, n;

	if (!e->links)
		return;
	pthread_mutex_lock(&e->out_lock);
	n = ap_links_log_size(e->links);
	for (i = e->links_printed; i < n; i++) {
		const struct ap_link_event *ev = ap_links_log_get(e->links, i);

		if (!ev)
			continue;
		log_info("link %s: %s -> %s%s%s (cookie %llu)", ap_link_action_to_string(ev->action),
			 ev->name ? ev->name : "?", ev->target ? ev->target : "?",
			 ev->owner ? ", kept by " : "", ev->owner ? ev->owner : "",
			 (unsigned long long)ev->cookie);
	}
	e->links_printed = n;
	pthread_mutex_unlock(&e->out_lock);
}

/*
 * Publish @n at its turn: its links (block devices); nothing for the
 * others.  @own: in its own call.  Otherwise its call has returned, and
 * the trace gets nothing: a phase outside the call's run would be drawn
 * on a track another call may be using, and a mark per device would
 * crowd the plot (the manifest has the times: sync_ms, sync_wait_ms).
 */
static void publish(struct ap_engine *e, struct ap_node *n, bool own)
{
	uint64_t t0;

	n->t_sync1 = ap_now_ns();
	if (own)
		ap_trace_phase(n->call, "sync", n->t_sync0, n->t_sync1);
	if (e->links && n->devname &&
	    (n->kind == AP_KIND_DISK || n->kind == AP_KIND_PARTITION)) {
		t0 = ap_now_ns();
		n->links_failed = ap_links_publish(e->links, n->cookie, n->devname,
						   n->kind == AP_KIND_PARTITION && n->parent
						   ? n->parent->devname : NULL, &n->names);
		if (own)
			ap_trace_phase(n->call, "links", t0, ap_now_ns());
		print_new_links(e);
		pthread_mutex_lock(&e->lock);
		e->publish_seq++;
		pthread_cond_broadcast(&e->cond);
		pthread_mutex_unlock(&e->lock);
	}
	ap_namelist_free(&n->names);
}

/*
 * Publish what can be: while the frontier (the first node not sealed) is
 * ready, publish it and seal it.  Called by every thread that may have
 * made the frontier ready or sealed a node; one of them publishes at a
 * time (pumping), the others leave it to that one, which looks again
 * after each node.  No thread ever waits for its turn.  After a stop
 * request the nodes are sealed unpublished: the links made stay a prefix
 * of the order.  @self: the node whose call this is, or NULL.
 */
void eng_order_pump(struct ap_engine *e, struct ap_node *self)
{
	pthread_mutex_lock(&e->lock);
	while (!e->pumping && e->frontier && e->frontier->ready) {
		struct ap_node *n = e->frontier;
		bool stopping = e->stopping;

		e->pumping = true;
		if (stopping) {
			n->stopped = true;
			n->sync_result = -1;
		}
		pthread_mutex_unlock(&e->lock);
		if (!stopping)
			publish(e, n, n == self);
		else
			ap_namelist_free(&n->names);
		pthread_mutex_lock(&e->lock);
		e->pumping = false;
		eng_order_seal_locked(e, n);
	}
	pthread_mutex_unlock(&e->lock);
}
