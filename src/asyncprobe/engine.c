/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The engine: one run of discovery, driver loading, probing and linking.
 *
 * Goals and Theory of Operation
 * -----------------------------
 * The slow parts of finding storage - inserting a controller driver,
 * waiting for its ports to be scanned, reading a disk's first sectors -
 * are done concurrently, each in an asynchronous call (libasync), as soon
 * as the device is discovered, at any depth.  The visible parts -
 * creating /dev/disk links, the "cookie" every log line, the manifest and
 * the link registry know a device by - happen in one order that depends
 * on the hardware tree alone, the order a strictly sequential boot uses.
 *
 * The order: depth first.  A controller, then its SCSI devices (or
 * sub-controllers: virtio under virtio-pci), each one's disk, that disk's
 * partitions, then the next controller; siblings in ap_devpath_compare()
 * order (PCI address, host10 after host2, H:C:T:L numerically, partition
 * number).  The discovery call comes first (cookie 1) and enumerates the
 * controllers and the disks without one (loop, scsi_debug).  A device
 * publishes once every device before it in that order has published or
 * been abandoned and every node before it has finished enumerating, so
 * nothing can still be put in front of it.  Its cookie is its place in
 * that order, given when its turn comes; libasync's own cookie of its call
 * (n->call, which depends on timing) only names the call in the trace.
 *
 * Each call:
 *
 *   1. does its slow work (modprobe, wait for child devices bounded by
 *      --device-timeout and driven by uevents, blkid, computing names,
 *      enumerating its children);
 *   2. is ready (call_ready()): under the engine lock, unless it was
 *      abandoned, its children are registered and put into the order
 *      right after it, in sorted order, and are spawned at once, whatever
 *      their place.  A device two parents list (an NVMe multipath head
 *      behind two controllers) goes with the first in the order: when the
 *      later one registered it first, it moves, with its subtree, below
 *      the earlier one (order_adopt_locked());
 *   3. is published at its turn (pump()), and sealed.
 *
 * The order is a doubly-linked list of nodes.  A node is sealed when it
 * has published (or was abandoned or stopped) and its children are in the
 * list (or never will be); the frontier is the first node not sealed, and
 * a node gets its cookie when the frontier reaches it.  Since a node puts
 * its children right after itself before it is sealed, and its later
 * siblings are after it, each subtree is contiguous and the list is the
 * depth-first order; everything before the frontier is final.  No thread
 * waits for its turn (a worker blocked so could starve the call it waits
 * for of a thread): when a call is ready it pumps - while the frontier is
 * ready, publish it and seal it - and so does every thread that seals a
 * node (a call's end, the top level after abandoning one); one thread
 * publishes at a time, so the frontier's node is published by its own call
 * when its turn has come already, or else by the thread whose sealing let
 * the frontier reach it.
 *
 * Root first: when the root device's by-path name is known
 * (asyncprobe.root_path=, --root-path, or the image's record), the root's
 * whole chain comes first.  Before a node's children are put into the
 * order (root_first_sort()): in the discovery call's list, the
 * controllers at the PCI address in the name move to the front; in the
 * list of a node on that controller, the child whose by-path value (udev's
 * path_id of a SCSI device, virtio device, disk or NVMe namespace) is the
 * name or begins it at a '-', or the partition whose value plus "-partN"
 * is the name, moves to the front of its siblings.  Both moves are stable,
 * so the root's controller, device, disk and partition publish first, one
 * after the other, and everything else keeps its order.  Since the first
 * claimant keeps a contested link, the root's devices win every name
 * conflict (a USB stick or a sibling disk labelled like the root cannot
 * take its link).  The order is still a function of the tree and that name
 * alone, the same in sequential, fastboot and chaos runs.  A name that
 * matches no controller, or no device below it, changes nothing and is
 * logged (at the end of the run: no device has that by-path link).
 *
 * Sequentially (no fastboot) the calls run one at a time on one worker.
 * The top level runs next the first queued call in the order, except
 * that every queued controller runs before any other device: a SCSI
 * device's call inserts sd_mod, whose asynchronous probe of a disk that
 * never answers would hold a later controller's libata port probe (which
 * waits for every earlier asynchronous call in the kernel), so all
 * controller drivers go in before any SCSI upper driver, as in fastboot
 * (see "Waiting for a driver").  No call waits for its turn (whoever
 * seals the node at the frontier publishes), so running out of order
 * cannot deadlock, and the same cookies result in sequential, fastboot
 * and ASYNC_CHAOS runs.
 *
 * A call that hangs.  A disk that stops answering can block a call for
 * good: in init_module() (a driver's probe reads the partition table), in
 * blkid's read, in an SG_IO inquiry.  Ordered publication would then wait
 * for it forever, and so would the boot.  The rule: each step of a call
 * (loading modules, a wait, probing, naming, enumerating) records when it
 * began; a call that has spent more than --device-timeout plus
 * AP_HANG_SLACK_MS in one step without reaching step 2 is abandoned by the
 * top level (async_abandon()) and its node is sealed, so later devices
 * publish as if it had returned with nothing; it publishes nothing itself,
 * has no children, and devices that appear below it are ignored.  Whether
 * a call becomes ready or is abandoned is decided once, under the engine
 * lock (at_sync against abandoned), so an abandoned call can never put
 * children into the order or publish late.  Waits are
 * bounded by --device-timeout already, so only a step that does not
 * return is caught.  Its thread cannot be stopped; it leaves libasync's
 * pool, the engine's memory is left alone while it runs (the process
 * exits or execs the real init, which ends it), and the run's exit status
 * is "degraded".  Sequential runs execute their calls on a worker thread
 * too, so the top level can abandon a hung call there as well; the next
 * call on the stack then runs.
 *
 * A stop request (ap_engine_request_stop(): SIGINT or SIGTERM outside
 * PID 1) ends a run early but leaves a link tree that some complete run
 * could have been in the middle of making: the links of every device up to
 * some cookie, and none after it.  The top level sees the request within
 * AP_HANG_CHECK_MS; from then on no call starts its work, no call that
 * reaches step 2 spawns, no node whose turn comes publishes (it is sealed
 * as stopped), and calls busy before step 2 are abandoned (so a hung one
 * does not keep the run alive).  A node already publishing finishes its
 * links.  Since nodes publish only at their turn, one after the other,
 * those that published form a prefix of the order; a rerun makes the
 * rest.
 *
 * Devices that appear later (the uevent monitor sees them after coldplug
 * is complete and no waiting parent claims them) are scheduled as they
 * arrive and put at the end of the order; their cookies depend on timing
 * by nature.
 *
 * Shared state is in struct ap_engine, guarded by its one mutex; each
 * field says so.  libudev objects never cross threads: every call makes its
 * own struct udev and devices from the syspath it was given.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libudev.h>

#include "asyncprobe.h"
#include "cmdline.h"
#include "coldplug.h"
#include "engine.h"
#include "manifest.h"
#include "identity.h"
#include "names.h"
#include "trace.h"

struct ap_config ap_cfg;

void ap_config_defaults(struct ap_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->dev_dir = "/dev";
	cfg->fastboot = -1;
	cfg->device_timeout_ms = 10000;
	cfg->log_target = AP_LOG_AUTO;
}

enum node_state {
	NODE_NEW = 0,       /* registered, not yet scheduled */
	NODE_SPAWNED,       /* in the FIFO or scheduled */
	NODE_RUNNING,
	NODE_COLLECTED,     /* has enumerated its children (later ones are hotplug) */
	NODE_DONE,
};

struct ap_node {
	struct ap_engine *e;
	struct ap_node *parent;
	bool queued;                    /* engine lock: sequential mode, spawned, not yet run */
	struct ap_node *o_prev, *o_next;        /* engine lock: publication order */
	enum node_state state;          /* engine lock */
	bool discovery;                 /* the enumeration call */
	bool hotplug;                   /* appeared after coldplug */
	enum ap_kind kind;
	async_cookie_t cookie;          /* engine lock: its number in publication order, 0 until its turn */
	async_cookie_t call;            /* libasync's cookie of its call (trace, async_abandon) */
	char *syspath;
	char *sysname;
	char *subsystem;
	char *modalias;
	char *driver;
	char *devname;                  /* block devices: node below /dev, "sda1" */
	char *devnode;                  /* "/dev/sda1" */
	unsigned int partnum;

	struct ap_fsinfo fs;
	int probe_r;                    /* ap_probe_device() result */
	struct ap_modload *loads;
	size_t n_loads;
	int mod_failed;
	int error;                      /* -errno: timeout waiting, ... */
	char *error_what;
	int links_failed;

	struct ap_found_list found;     /* enumerated by its call */
	struct ap_node **children;      /* registered and spawned when it is ready */
	size_t n_children;
	struct ap_namelist names;       /* block devices: computed by its call, published at its turn */

	uint64_t t_spawn, t_start, t_sync0, t_sync1, t_end;

	/* hung calls (see "A call that hangs" above) */
	const char *phase;              /* engine lock: the step it is in */
	uint64_t t_progress;            /* engine lock: when that step began */
	bool at_sync;                   /* engine lock: reached step 2, cannot be abandoned */
	bool ready;                     /* engine lock: step 2 passed, waits for its turn */
	bool sealed;                    /* engine lock: published, abandoned or stopped; children in the order */
	bool abandoned;                 /* engine lock: given up on; publishes nothing */
	bool abandoned_returned;        /* engine lock: ... and its call has returned */
	bool probed;                    /* engine lock: a controller's driver probed it (or did not take it) */
	bool stopped;                   /* engine lock: skipped, dropped or abandoned on a stop request */
	uint64_t t_abandoned;
	int sync_result;                /* the call's own: 0 not yet, 1 passed, -1 abandoned */
};

struct ap_engine {
	pthread_mutex_t lock;
	pthread_cond_t cond;            /* pending, queued, published changed */
	struct ap_node **nodes;         /* lock: every node, registration order */
	size_t n_nodes, allocated;
	struct ap_node **by_path;       /* lock: the same, hashed by syspath (open addressing) */
	size_t by_path_size;            /* lock: a power of two, at least twice n_nodes */
	unsigned int n_queued;          /* lock: sequential mode, nodes with queued set */
	unsigned int in_flight;         /* lock: sequential mode, a call handed to libasync */
	struct ap_node *order_head, *order_tail;        /* lock: publication order */
	struct ap_node *frontier;       /* lock: the first node in it not sealed */
	async_cookie_t order_seq;       /* lock: the last number given in that order */
	bool pumping;                   /* lock: a thread is publishing the frontier */
	unsigned int pending;           /* lock: nodes in the order not sealed */
	unsigned int done;              /* lock: ... sealed */
	bool coldplug_done;             /* lock */
	char **backlog;                 /* lock: uevent adds seen during coldplug */
	size_t n_backlog;
	char **bound;                   /* lock: syspaths of "bind" uevents (open addressing) */
	size_t bound_size, n_bound;     /* lock: bound_size a power of two or 0 */
	uint64_t publish_seq;           /* lock */
	unsigned int n_abandoned;       /* lock: calls given up on */
	unsigned int abandoned_running; /* lock: ... whose call has not returned */

	bool fastboot;                  /* concurrency requested */
	bool parallel;                  /* ... and provided by libasync */
	bool on_worker;                 /* calls run on worker threads (either mode) */
	bool modules_on;
	struct ap_modules *mods;
	struct ap_monitor *mon;
	struct ap_links *links;
	char *cmdline;

	pthread_mutex_t out_lock;       /* -v link log and progress line */
	size_t links_printed;           /* out_lock */
	bool progress;
	uint64_t t0, t1;
	bool finished;
	bool stopping;                  /* lock: a stop request was seen */
	char *root_path;                /* the root's by-path name (root first), or NULL */
	char root_pci[16];              /* ... the PCI address in it, or "" */
};

/*
 * Set from a signal handler: see "A stop request".  The handler may run on
 * any thread that does not block the signal (the monitor thread, say), so
 * this is a lock-free atomic, not just a volatile sig_atomic_t: that is
 * only safe against a handler on the thread that reads it.
 */
static int stop_request;

void ap_engine_request_stop(int sig)
{
	__atomic_store_n(&stop_request, sig ? sig : SIGTERM, __ATOMIC_SEQ_CST);
}

static int stop_signal(void)
{
	return __atomic_load_n(&stop_request, __ATOMIC_SEQ_CST);
}

static void node_run(void *data, async_cookie_t cookie);

/* -------------------------------------------------------------- helpers */

static char *strdup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static const char *node_label(const struct ap_node *n)
{
	if (n->discovery)
		return "discovery";
	return n->devname ? n->devname : n->sysname ? n->sysname : "?";
}

/*
 * A call that stays longer than --device-timeout plus this in one step is
 * abandoned; its waits are bounded by --device-timeout, and this covers a
 * wait's last re-check on a slow (emulated) machine.
 */
#define AP_HANG_SLACK_MS 2000
/* How often the top level looks for hung calls while calls are pending. */
#define AP_HANG_CHECK_MS 250

/* A call begins a step: what the hang rule and the log call it. */
static void node_step(struct ap_node *n, const char *phase)
{
	pthread_mutex_lock(&n->e->lock);
	if (!n->abandoned) {    /* frozen at what it hung in */
		n->phase = phase;
		n->t_progress = ap_now_ns();
	}
	pthread_mutex_unlock(&n->e->lock);
}

static void node_free(struct ap_node *n)
{
	size_t i;

	if (!n)
		return;
	free(n->syspath);
	free(n->sysname);
	free(n->subsystem);
	free(n->modalias);
	free(n->driver);
	free(n->devname);
	free(n->devnode);
	free(n->error_what);
	ap_fsinfo_clear(&n->fs);
	for (i = 0; i < n->n_loads; i++)
		ap_modload_clear(&n->loads[i]);
	free(n->loads);
	free(n->children);
	ap_found_list_free(&n->found);
	ap_namelist_free(&n->names);
	free(n);
}

/* Fill the plain-data description of a node from its udev device. */
static void node_describe(struct ap_node *n, struct udev_device *dev)
{
	const char *devnode = udev_device_get_devnode(dev);
	const char *dn = udev_device_get_property_value(dev, "DEVNAME");

	free(n->sysname);
	n->sysname = strdup_or_null(udev_device_get_sysname(dev));
	free(n->subsystem);
	n->subsystem = strdup_or_null(udev_device_get_subsystem(dev));
	free(n->modalias);
	n->modalias = strdup_or_null(udev_device_get_property_value(dev, "MODALIAS"));
	free(n->driver);
	n->driver = strdup_or_null(udev_device_get_driver(dev));
	if (n->kind == AP_KIND_DISK || n->kind == AP_KIND_PARTITION) {
		free(n->devnode);
		n->devnode = strdup_or_null(devnode);
		free(n->devname);
		if (dn && dn[0] != '/')
			n->devname = strdup(dn);
		else if (devnode && strncmp(devnode, "/dev/", 5) == 0)
			n->devname = strdup(devnode + 5);
		else
			n->devname = strdup_or_null(udev_device_get_sysname(dev));
		if (n->kind == AP_KIND_PARTITION) {
			const char *p = udev_device_get_sysattr_value(dev, "partition");

			n->partnum = p ? (unsigned int)strtoul(p, NULL, 10) : 0;
		}
	}
}

/*
 * The syspath index: every registration looked its path up by walking all
 * nodes, quadratic in the devices (100,000 string compares for 446 nodes,
 * about 2 million at 1024 disks).  FNV-1a, linear probing; nodes are only
 * removed all at once, in ap_engine_free().
 */
static size_t path_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return (size_t)h;
}

static struct ap_node **path_slot_locked(struct ap_engine *e, const char *syspath)
{
	size_t mask = e->by_path_size - 1, i = path_hash(syspath) & mask;

	while (e->by_path[i] && strcmp(e->by_path[i]->syspath, syspath) != 0)
		i = (i + 1) & mask;
	return &e->by_path[i];
}

/* Room for one more node in the index.  Returns 0 or -ENOMEM. */
static int path_index_grow_locked(struct ap_engine *e)
{
	struct ap_node **old = e->by_path;
	size_t old_size = e->by_path_size, i;

	if (old && (e->n_nodes + 1) * 2 <= old_size)
		return 0;
	e->by_path_size = old_size ? old_size * 2 : 128;
	e->by_path = calloc(e->by_path_size, sizeof(*e->by_path));
	if (!e->by_path) {
		e->by_path = old;
		e->by_path_size = old_size;
		return -ENOMEM;
	}
	for (i = 0; i < old_size; i++)
		if (old[i])
			*path_slot_locked(e, old[i]->syspath) = old[i];
	free(old);
	return 0;
}

static struct ap_node *node_find_locked(struct ap_engine *e, const char *syspath)
{
	return e->by_path ? *path_slot_locked(e, syspath) : NULL;
}

/*
 * Register a device (dedup by syspath).  Returns the new node, or NULL when
 * it is known already (or on OOM).  Engine lock held by the caller.
 */
static struct ap_node *node_register_locked(struct ap_engine *e, const char *syspath,
					    enum ap_kind kind, struct ap_node *parent)
{
	struct ap_node *n;

	if (node_find_locked(e, syspath))
		return NULL;
	if (path_index_grow_locked(e) < 0)
		return NULL;
	if (e->n_nodes == e->allocated) {
		size_t na = e->allocated ? e->allocated * 2 : 64;
		struct ap_node **v = realloc(e->nodes, na * sizeof(*v));

		if (!v)
			return NULL;
		e->nodes = v;
		e->allocated = na;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->syspath = strdup(syspath);
	if (!n->syspath) {
		free(n);
		return NULL;
	}
	n->e = e;
	n->kind = kind;
	n->parent = parent;
	e->nodes[e->n_nodes++] = n;
	*path_slot_locked(e, n->syspath) = n;
	return n;
}

/* ------------------------------------------------------ publication order */

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
static void order_insert_locked(struct ap_engine *e, struct ap_node *after, struct ap_node *n)
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
static bool order_before_locked(const struct ap_node *a, const struct ap_node *b)
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
static struct ap_node *order_adopt_locked(struct ap_engine *e, struct ap_node *parent,
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
		  node_label(c), node_label(parent), node_label(c->parent), node_label(parent));
	c->parent = parent;
	return last;
}

/*
 * @n is published, abandoned or stopped, and its children are in the order
 * (or never will be): nodes after it no longer wait for it.
 */
static void seal_locked(struct ap_engine *e, struct ap_node *n)
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
 * queued and the top level runs it in its turn (see drain()).
 */
static void ap_spawn(struct ap_engine *e, struct ap_node *n)
{
	pthread_mutex_lock(&e->lock);
	if (e->stopping) {
		n->stopped = true;      /* never scheduled */
		seal_locked(e, n);
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
	async_schedule(node_run, n);
}

/* Spawn @n's children, in their order. */
static void spawn_children(struct ap_engine *e, struct ap_node *n)
{
	size_t i;

	for (i = 0; i < n->n_children; i++)
		ap_spawn(e, n->children[i]);
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
static void drain(struct ap_engine *e)
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
		async_schedule(node_run, n);
	}
}

/* ------------------------------------------------------------- progress */

static void progress_update(struct ap_engine *e, const struct ap_node *n)
{
	unsigned int done, total;
	char line[200];

	if (!e->progress)
		return;
	pthread_mutex_lock(&e->lock);
	done = e->done;
	total = (unsigned int)e->n_nodes;
	pthread_mutex_unlock(&e->lock);
	snprintf(line, sizeof(line), "asyncprobe: [%u/%u] %s %s", done, total,
		 n->discovery ? "discovery" : ap_kind_to_string(n->kind),
		 n->discovery ? "" : node_label(n));
	ap_log_progress(line);
}

static void progress_clear(struct ap_engine *e)
{
	if (e->progress)
		ap_log_progress(NULL);
}

/* ---------------------------------------------------------------- waits */

struct wait_ctx {
	struct udev *udev;
	const char *syspath;
	const char *subsystem;
	const char *devtype;
};

static bool pred_has_child(void *data)
{
	struct wait_ctx *w = data;

	return ap_has_child(w->udev, w->syspath, w->subsystem, w->devtype);
}

/* NVMe: the controller's class device is live and has a namespace. */
static bool pred_nvme_ready(void *data)
{
	struct wait_ctx *w = data;

	return ap_nvme_ctrl_ready(w->udev, w->syspath);
}

/*
 * Waiting for a driver.  Modules are inserted with async_probe (modules.c
 * says which and why), so an insertion no longer waits for every
 * asynchronous probe in the system: a disk whose probe hangs holds no
 * other insertion.  But then an insertion's return does not say "its
 * devices are probed" either (sd_mod's returns at once, and a user's
 * module.async_probe=1 makes every driver probe asynchronously).  What
 * each call waits for instead, and why it is exact:
 *
 *  - A device's probe has returned when the kernel sent its "bind" uevent
 *    (driver_bound(), after the driver's probe function returned 0).  The
 *    "driver" link is not that signal: it appears before the probe
 *    function runs (driver_sysfs_add()).  The monitor records every bind
 *    from the start of the run (bound_add()); a device whose driver's
 *    module this run did not insert was bound before the run, and one
 *    with no driver link after the grace was declined.  While the link is
 *    there and no bind came, the probe is running, and the call stays in
 *    its step, so a probe that never returns (a disk that stops answering
 *    during the partition scan in device_add_disk()) gets the call
 *    abandoned by the hang rule, and nothing below that device is
 *    touched: its block device may already be in sysfs, but opening it
 *    would sleep uninterruptibly on the scan.
 *  - A SCSI HBA scans its buses inside its probe when scsi_mod's scan
 *    parameter is "sync" (modules.c inserts scsi_mod so): its bind means
 *    every SCSI device it found is registered.  With scan=async (the
 *    user's choice) the scan runs after the probe, unmarked in sysfs, and
 *    only the insertion's own wait (the HBA driver is inserted without
 *    async_probe) covers it.
 *  - libata (ahci, ata_piix, ...) registers its ports in the probe and
 *    probes them afterwards, one asynchronous call per port: error
 *    handling resets each link, attaches the devices it finds, then the
 *    port adds a SCSI device per ATA or ATAPI device
 *    (pred_ata_ports_done() says how that shows in sysfs), bounded by
 *    --device-timeout.
 *  - A SCSI device's upper driver (sd, sr) probes asynchronously; its bind
 *    comes after the disk and its partitions were added.
 *
 * A device that appears below a controller after its call enumerated is
 * a hotplug (its cookie depends on timing), so each wait ends only on a
 * signal that the kernel has finished with the controller.
 */
#define AP_BIND_GRACE_MS 1000

/* Open-addressing set of syspaths (FNV-1a, path_hash()), engine lock. */
static void bound_add(struct ap_engine *e, const char *syspath)
{
	size_t i, mask;
	char *dup;

	pthread_mutex_lock(&e->lock);
	if ((e->n_bound + 1) * 2 > e->bound_size) {
		size_t old_size = e->bound_size, ns = old_size ? old_size * 2 : 64;
		char **old = e->bound, **v = calloc(ns, sizeof(*v));

		if (!v)
			goto out;
		for (i = 0; i < old_size; i++)
			if (old[i]) {
				size_t j = path_hash(old[i]) & (ns - 1);

				while (v[j])
					j = (j + 1) & (ns - 1);
				v[j] = old[i];
			}
		free(old);
		e->bound = v;
		e->bound_size = ns;
	}
	mask = e->bound_size - 1;
	for (i = path_hash(syspath) & mask; e->bound[i]; i = (i + 1) & mask)
		if (strcmp(e->bound[i], syspath) == 0)
			goto out;
	dup = strdup(syspath);
	if (dup) {
		e->bound[i] = dup;
		e->n_bound++;
	}
out:
	pthread_mutex_unlock(&e->lock);
}

static bool bound_seen(struct ap_engine *e, const char *syspath)
{
	bool found = false;
	size_t i, mask;

	pthread_mutex_lock(&e->lock);
	if (e->bound_size) {
		mask = e->bound_size - 1;
		for (i = path_hash(syspath) & mask; e->bound[i] && !found; i = (i + 1) & mask)
			found = strcmp(e->bound[i], syspath) == 0;
	}
	pthread_mutex_unlock(&e->lock);
	return found;
}

struct probe_wait {
	struct ap_engine *e;
	const char *syspath;
};

static bool pred_probe_returned(void *data)
{
	struct probe_wait *p = data;

	return bound_seen(p->e, p->syspath);
}

/* The module of @syspath's driver ("sd_mod"), or "" when none is named. */
static void driver_module(const char *syspath, char *buf, size_t size)
{
	char path[PATH_MAX], target[PATH_MAX];
	const char *base;
	ssize_t k;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/driver/module", syspath);
	k = readlink(path, target, sizeof(target) - 1);
	if (k <= 0)
		return;
	target[k] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strlen(base) < size)
		memcpy(buf, base, strlen(base) + 1);
}

static bool node_given_up(struct ap_node *n)
{
	bool r;

	pthread_mutex_lock(&n->e->lock);
	r = n->abandoned || n->e->stopping;
	pthread_mutex_unlock(&n->e->lock);
	return r || stop_signal();
}

/*
 * Wait until the driver's probe of @n's device has returned (see "Waiting
 * for a driver").  Returns 1 when it has (or the device was bound before
 * this run), 0 when no driver took the device within @grace ms,
 * -1 when the call was given up (abandoned, stop request) while the probe
 * still ran.  A probe that outlasts --device-timeout is logged once and
 * waited for further: the hang rule decides, in the caller's step.
 */
static int wait_probe_returned(struct ap_node *n, struct udev *udev, unsigned int grace)
{
	struct probe_wait p = { .e = n->e, .syspath = n->syspath };
	unsigned int timeout = ap_cfg.device_timeout_ms;
	uint64_t t0 = ap_now_ns();
	bool warned = false;

	for (;;) {
		struct udev_device *d;
		char mod[256] = "";
		bool attached;
		double ms;

		if (ap_monitor_wait(n->e->mon, pred_probe_returned, &p, n->e->mon ? 250 : 0) == 0)
			return 1;
		d = udev_device_new_from_syspath(udev, n->syspath);
		attached = d && udev_device_get_driver(d);
		if (d)
			udev_device_unref(d);
		ms = ap_ms_between(t0, ap_now_ns());
		if (!attached) {
			if (ms >= grace || ms >= timeout)
				return 0;
			if (!n->e->mon)
				usleep(20000);
			continue;
		}
		driver_module(n->syspath, mod, sizeof(mod));
		/* bound before this run, or no uevents to tell: the old rule */
		if (!n->e->mon || !ap_modules_touched(n->e->mods, mod))
			return 1;
		if (!warned && ms >= timeout) {
			log_warning("%s: its driver's probe has not returned after %u ms",
				    node_label(n), timeout);
			warned = true;
		}
		if (node_given_up(n))
			return -1;
	}
}

static int count_children(struct udev *udev, const char *syspath, const char *subsystem,
			  bool (*match)(struct udev_device *d, void *arg), void *arg)
{
	struct udev_device *parent = udev_device_new_from_syspath(udev, syspath);
	struct udev_enumerate *en = udev_enumerate_new(udev);
	struct udev_list_entry *item;
	int n = 0;

	if (!parent || !en)
		goto out;
	udev_enumerate_add_match_parent(en, parent);
	udev_enumerate_add_match_subsystem(en, subsystem);
	if (udev_enumerate_scan_devices(en) < 0)
		goto out;
	udev_list_entry_foreach(item, udev_enumerate_get_list_entry(en)) {
		struct udev_device *d;

		if (!match) {
			n++;
			continue;
		}
		d = udev_device_new_from_syspath(udev, udev_list_entry_get_name(item));
		if (d) {
			n += match(d, arg);
			udev_device_unref(d);
		}
	}
out:
	if (en)
		udev_enumerate_unref(en);
	if (parent)
		udev_device_unref(parent);
	return n;
}

static bool is_scsi_device(struct udev_device *d, void *arg)
{
	const char *t = udev_device_get_devtype(d);

	(void)arg;
	return t && strcmp(t, "scsi_device") == 0;
}

struct ata_count {
	int unknown, present;
	char *report;           /* NULL, or where to list what each device showed */
	size_t report_size;
};

/*
 * One ATA device position (dev1.0).  "class" is "unknown" until error
 * handling attaches a device there, and stays so for an empty position;
 * what tells an empty position that was probed from one not probed yet is
 * "pio_mode": "<n/a>" until the port's first reset, which sets every
 * position of the link to PIO0.  A SATA link that came up after that
 * reset shows its speed in its ata_link's "sata_spd" (else "<unknown>"):
 * a device is expected there, and counted as not probed until it has its
 * class.  (PATA has no sata_spd: an empty position counts as probed after
 * the reset, one with a device once error handling has set its class.)
 */
static bool count_ata_class(struct udev_device *d, void *arg)
{
	struct ata_count *c = arg;
	const char *cls = udev_device_get_sysattr_value(d, "class");
	const char *pio = udev_device_get_sysattr_value(d, "pio_mode");
	const char *spd = NULL;
	struct udev_device *link;
	char spd_buf[32];

	/* ata_device dev1.0 sits in link1/dev1.0/ata_device/dev1.0; its link: link1/ata_link/link1 */
	link = udev_device_get_parent(udev_device_get_parent(d));
	if (link) {
		char path[PATH_MAX];
		struct udev_device *ld;

		snprintf(path, sizeof(path), "%s/ata_link/%s", udev_device_get_syspath(link),
			 udev_device_get_sysname(link));
		ld = udev_device_new_from_syspath(udev_device_get_udev(d), path);
		if (ld) {
			const char *v = udev_device_get_sysattr_value(ld, "sata_spd");

			if (v) {
				snprintf(spd_buf, sizeof(spd_buf), "%s", v);
				spd = spd_buf;
			}
			udev_device_unref(ld);
		}
	}
	if (cls && (strncmp(cls, "ata", 3) == 0 || strncmp(cls, "zac", 3) == 0))
		c->present++;
	else if (!cls || !pio || strncmp(pio, "<n/a>", 5) == 0 ||
		 (spd && strncmp(spd, "<unknown>", 9) != 0))
		c->unknown++;
	if (c->report) {
		size_t k = strlen(c->report);

		snprintf(c->report + k, c->report_size - k, " %s=%s/%s/%s",
			 udev_device_get_sysname(d), cls ? cls : "?", pio ? pio : "?",
			 spd ? spd : "-");
	}
	return true;
}

/* libata: every port has classified its devices and added their SCSI devices. */
static bool pred_ata_ports_done(void *data)
{
	struct wait_ctx *w = data;
	struct ata_count c = { 0, 0, NULL, 0 };

	count_children(w->udev, w->syspath, "ata_device", count_ata_class, &c);
	return c.unknown == 0 &&
	       count_children(w->udev, w->syspath, "scsi", is_scsi_device, NULL) >= c.present;
}

/*
 * After the controller's probe returned: wait for what its driver does
 * after that (see "Waiting for a driver").  Bounded by --device-timeout.
 */
static void wait_enumerated(struct ap_node *n, struct udev *udev)
{
	struct wait_ctx w = { .udev = udev, .syspath = n->syspath, .subsystem = "scsi",
			      .devtype = "scsi_device" };
	unsigned int timeout = ap_cfg.device_timeout_ms;
	uint64_t t0 = ap_now_ns();

	if (count_children(udev, n->syspath, "ata_port", NULL, NULL) > 0) {
		if (ap_monitor_wait(n->e->mon, pred_ata_ports_done, &w, timeout) < 0) {
			char report[1024] = "";
			struct ata_count c = { 0, 0, report, sizeof(report) };

			count_children(udev, n->syspath, "ata_device", count_ata_class, &c);
			log_warning("%s: ATA ports not all probed after %u ms (class/pio/link speed:%s)",
				    n->sysname, timeout, report);
		} else
			log_info("%s: ATA ports probed after %.0f ms", n->sysname,
				 ap_ms_between(t0, ap_now_ns()));
	} else if (count_children(udev, n->syspath, "scsi_host", NULL, NULL) > 0 &&
		   !ap_modules_scsi_scan_sync()) {
		/* the insertion's own barrier covered the scan (see above) */
		log_debug("%s: scsi_mod scans asynchronously (scan= set by the user?)", n->sysname);
	}
}

/*
 * Fastboot: a SCSI device's upper driver (sd) probes in the kernel's
 * global asynchronous domain, and libata's port probes wait there for
 * every call scheduled before them (async_synchronize_cookie() in
 * async_port_probe()).  A disk whose sd probe hangs would keep the ports
 * of every SATA controller whose driver probed after it from being
 * scanned, the root's perhaps, and a controller driver's insertion
 * (inserted without async_probe) would never return.  So a SCSI device
 * call loads its driver once every controller call has had its own
 * driver probe and enumeration (or was given up).  Sequential runs never
 * wait here: they run every controller before any other device.
 */
static bool pred_controllers_probed(void *data)
{
	struct ap_engine *e = data;
	bool all = true;
	size_t i;

	pthread_mutex_lock(&e->lock);
	for (i = 0; i < e->n_nodes && all; i++) {
		const struct ap_node *c = e->nodes[i];

		if (c->kind != AP_KIND_CONTROLLER || c->hotplug || c->discovery)
			continue;
		if ((c->state == NODE_SPAWNED || c->state == NODE_RUNNING) &&
		    !c->probed && !c->abandoned && !c->stopped && !e->stopping)
			all = false;
	}
	pthread_mutex_unlock(&e->lock);
	return all;
}

static void wait_controllers_probed(struct ap_node *n)
{
	struct ap_engine *e = n->e;
	uint64_t t0, limit;

	if (!e->parallel || !e->modules_on || !n->modalias || ap_cfg.dry_run)
		return;
	/*
	 * Not bounded by --device-timeout: each controller call is bounded by
	 * its own waits and by the hang rule, which abandons it (and so ends
	 * this wait) when one step does not return.  The step is renewed
	 * while waiting, so this call is not taken for hung meanwhile; the
	 * last bound is only a backstop.
	 */
	t0 = ap_now_ns();
	limit = 4 * ((uint64_t)ap_cfg.device_timeout_ms + AP_HANG_SLACK_MS) * 1000000ULL;
	for (;;) {
		bool stop;

		node_step(n, "waiting for the controllers' drivers");
		if (ap_monitor_wait(e->mon, pred_controllers_probed, e, AP_HANG_SLACK_MS / 2) == 0)
			break;
		pthread_mutex_lock(&e->lock);
		stop = e->stopping || n->abandoned;
		pthread_mutex_unlock(&e->lock);
		if (stop)
			break;
		if (ap_now_ns() - t0 > limit) {
			log_info("%s: controllers' drivers still probing after %.0f ms, loading its own",
				 node_label(n), ap_ms_between(t0, ap_now_ns()));
			break;
		}
	}
	ap_trace_phase(n->call, "wait", t0, ap_now_ns());
}

/* A controller call is past its driver's probe: SCSI device calls may load theirs. */
static void controller_probed(struct ap_node *n)
{
	pthread_mutex_lock(&n->e->lock);
	n->probed = true;
	pthread_mutex_unlock(&n->e->lock);
	ap_monitor_kick(n->e->mon);
}

static void node_fail(struct ap_node *n, int error, const char *what)
{
	if (n->error)
		return;
	n->error = error;
	n->error_what = strdup(what);
}

/* --------------------------------------------------------------- children */

/*
 * Enumerate the devices @n owns (slow part; before step 2).  They are
 * registered as its children, put into the order and spawned at step 2
 * (call_ready()), unless the call was abandoned by then.
 */
static void collect_children(struct udev *udev, struct ap_node *n)
{
	struct ap_engine *e = n->e;
	int r;

	/* From here on a new device below @n is a hotplug (see hotplug_one()). */
	pthread_mutex_lock(&e->lock);
	n->state = NODE_COLLECTED;
	if (!n->abandoned) {
		n->phase = "enumerating its devices";
		n->t_progress = ap_now_ns();
	}
	pthread_mutex_unlock(&e->lock);

	r = ap_enumerate(udev, n->discovery ? NULL : n->syspath, ap_cfg.all_modules,
			 ap_cfg.include_loop, &n->found);
	if (r < 0) {
		log_error("%s: cannot enumerate devices: %s", node_label(n), strerror(-r));
		node_fail(n, r, "enumeration failed");
		return;
	}
	if (n->driver && strcmp(n->driver, "nvme") == 0) {
		ap_enumerate_nvme_heads(udev, n->syspath, &n->found);
		ap_found_list_sort(&n->found);
	}
}

/* ------------------------------------------------------------- the calls */

/* ------------------------------------------------------------ root first */

/* "dddd:bb:dd.f" at @s, ending there or with a '-'. */
static bool at_pci_address(const char *s)
{
	static const char pattern[] = "hhhh:hh:hh.h";
	size_t i;

	for (i = 0; i < sizeof(pattern) - 1; i++) {
		if (pattern[i] == 'h' ? !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))
				      : s[i] != pattern[i])
			return false;
	}
	return s[i] == '\0' || s[i] == '-';
}

/*
 * Root first: asyncprobe.root_path= on the kernel command line, else
 * --root-path, else in the initramfs AP_ROOT_PATH_FILE (what
 * asyncprobe-mkinitramfs recorded), names the root device's
 * /dev/disk/by-path link.  The PCI address in it (udev's by-path
 * names hold the storage controller's, the closest PCI device) picks the
 * controllers that come first in the order; "none" or nothing: none.
 */
#define AP_ROOT_PATH_FILE "/etc/asyncprobe/root-path"

static void root_first_setup(struct ap_engine *e)
{
	_cleanup_free_ char *v = NULL, *line = NULL;
	const char *name = ap_cfg.root_path, *src = "--root-path", *p;

	if (e->cmdline && ap_cmdline_get(e->cmdline, "asyncprobe.root_path", &v)) {
		name = v ? v : "";
		src = "asyncprobe.root_path";
	} else if (!name && ap_cfg.init_mode) {
		/* what the image was made for (asyncprobe-mkinitramfs) */
		FILE *f = fopen(AP_ROOT_PATH_FILE, "re");
		size_t len = 0;

		if (f) {
			if (getline(&line, &len, f) > 0) {
				line[strcspn(line, " \t\r\n")] = '\0';
				name = line;
				src = AP_ROOT_PATH_FILE;
			}
			fclose(f);
		}
	}
	if (!name || !*name || strcmp(name, "none") == 0)
		return;
	if (strncmp(name, "/dev/", 5) == 0)
		name += 5;
	if (strncmp(name, "disk/by-path/", 13) == 0)
		name += 13;
	e->root_path = strdup(name);
	if (!e->root_path)
		return;
	for (p = name; (p = strstr(p, "pci-")); p += 4)
		if ((p == name || p[-1] == '-') && at_pci_address(p + 4)) {
			memcpy(e->root_pci, p + 4, 12);
			e->root_pci[12] = '\0';
			break;
		}
	if (!e->root_pci[0])
		log_warning("%s=%s: no PCI address in this by-path name; the order is unchanged",
			    src, name);
	else
		log_info("%s=%s: the root's controller %s comes first", src, name, e->root_pci);
}

/* Is @syspath the root's PCI device or below it? */
static bool on_root_controller(const struct ap_engine *e, const char *syspath)
{
	const char *p = syspath;
	size_t len = strlen(e->root_pci);

	while ((p = strstr(p, e->root_pci))) {
		if (p > syspath && p[-1] == '/' && (p[len] == '/' || p[len] == '\0'))
			return true;
		p += len;
	}
	return false;
}

/* Move the entries @first marks to the front of @l, keeping both groups' order. */
static void stable_front(struct ap_found_list *l, const bool *first)
{
	struct ap_found *v = malloc(l->n * sizeof(*v));
	size_t i, k = 0;

	if (!v)
		return;
	for (i = 0; i < l->n; i++)
		if (first[i])
			v[k++] = l->v[i];
	for (i = 0; i < l->n; i++)
		if (!first[i])
			v[k++] = l->v[i];
	memcpy(l->v, v, l->n * sizeof(*v));
	free(v);
}

/*
 * Is the by-path value @name the root's, or one the root's continues
 * ("pci-X-ata-2.0" for "pci-X-ata-2.0-part1", never "pci-X-ata-2" for
 * "pci-X-ata-2.0": names continue at a '-')?  @exact: equal only.  A root
 * named by its "virtio-pci-..." alias is compared without "virtio-".
 */
static bool root_path_has(const struct ap_engine *e, const char *name, bool exact)
{
	const char *r = e->root_path;
	size_t len;

	if (!name)
		return false;
	if (strncmp(r, "virtio-", 7) == 0 && strncmp(name, "virtio-", 7) != 0)
		r += 7;
	len = strlen(name);
	return strncmp(r, name, len) == 0 && (r[len] == '\0' || (!exact && r[len] == '-'));
}

/*
 * Is @f (a child of a node on the root's controller) on the root's chain?
 * Its by-path value, as path_id gives it for a SCSI device, a virtio
 * device, a disk or an NVMe namespace (a partition: its disk's plus
 * "-partN"), is the root's name or a beginning of it.
 */
static bool on_root_chain(const struct ap_engine *e, struct udev *udev, const struct ap_found *f)
{
	struct udev_device *d = udev_device_new_from_syspath(udev, f->syspath), *of = d;
	_cleanup_free_ char *path = NULL, *compat = NULL;
	bool hit = false;

	if (!d)
		return false;
	if (f->kind == AP_KIND_PARTITION)
		of = udev_device_get_parent(d); /* path_id reads a namespace's nsid where it starts */
	if (of && ap_path_id(of, &path, &compat) == 0) {
		if (f->kind == AP_KIND_PARTITION) {
			const char *names[] = { path, compat };
			char part[PATH_MAX];

			for (size_t i = 0; i < 2 && !hit; i++)
				hit = names[i] && snprintf(part, sizeof(part), "%s-part%u", names[i],
							   f->partnum) < (int)sizeof(part) &&
				      root_path_has(e, part, true);
		} else {
			hit = root_path_has(e, path, false) || root_path_has(e, compat, false);
		}
	}
	udev_device_unref(d);
	return hit;
}

/*
 * Root first, applied to @n's list of children (sorted by topology)
 * before they are put into the order.  Discovery's list: the controllers
 * at the root's PCI address first.  Below them: the child on the root's
 * chain (its SCSI device or virtio device, its disk, its partition) before
 * its siblings.  Both moves are stable, so every other device keeps its
 * place relative to the rest; the result depends on the tree and the root
 * path alone.
 */
static void root_first_sort(struct ap_engine *e, struct udev *udev, struct ap_node *n)
{
	struct ap_found_list *l = &n->found;
	_cleanup_free_ bool *first = NULL;
	size_t i, k = 0;

	if (!e->root_pci[0] || !l->n)
		return;
	if (!n->discovery && !on_root_controller(e, n->syspath))
		return;
	first = calloc(l->n, sizeof(*first));
	if (!first)
		return;
	for (i = 0; i < l->n; i++) {
		first[i] = n->discovery ? on_root_controller(e, l->v[i].syspath)
					: on_root_chain(e, udev, &l->v[i]);
		k += first[i];
	}
	if (!k) {
		if (n->discovery)
			log_notice("root path %s: no controller at %s (a disk moved, or another machine's "
				   "image): the order is unchanged", e->root_path, e->root_pci);
		return;
	}
	if (!n->discovery)
		for (i = 0; i < l->n; i++)
			if (first[i])
				log_debug("%s: %s is on the root's chain (%s), it comes first",
					  node_label(n), l->v[i].syspath, e->root_path);
	stable_front(l, first);
}

/*
 * Step 2: the call's work is done.  Decided under the engine lock, against
 * abandon_locked(): an abandoned call stops here; a stop request seals the
 * node unpublished; otherwise its children are registered and put into the
 * order right after it, and it is ready to publish at its turn.  Then the
 * children are described and spawned (whatever their place in the order).
 */
static void call_ready(struct udev *udev, struct ap_node *n)
{
	struct ap_engine *e = n->e;
	struct ap_node *after = n;
	size_t i;

	root_first_sort(e, udev, n);
	n->children = calloc(n->found.n ? n->found.n : 1, sizeof(*n->children));
	n->t_sync0 = ap_now_ns();
	pthread_mutex_lock(&e->lock);
	if (n->abandoned) {
		n->sync_result = -1;
		pthread_mutex_unlock(&e->lock);
		ap_found_list_free(&n->found);
		return;
	}
	n->at_sync = true;
	if (e->stopping) {
		n->stopped = true;
		n->sync_result = -1;
		seal_locked(e, n);
		pthread_mutex_unlock(&e->lock);
		ap_found_list_free(&n->found);
		return;
	}
	for (i = 0; n->children && i < n->found.n; i++) {
		struct ap_node *c = node_register_locked(e, n->found.v[i].syspath,
							 n->found.v[i].kind, n);

		if (!c) {
			/* known: keep the order a function of the tree, not of timing */
			c = node_find_locked(e, n->found.v[i].syspath);
			if (c && c->parent && c->parent != n && !c->hotplug &&
			    order_before_locked(n, c->parent))
				after = order_adopt_locked(e, n, after, c);
			continue;
		}
		n->children[n->n_children++] = c;
		order_insert_locked(e, after, c);
		after = c;
	}
	n->sync_result = 1;
	n->ready = true;
	pthread_mutex_unlock(&e->lock);
	ap_found_list_free(&n->found);

	for (i = 0; i < n->n_children; i++) {
		struct udev_device *d = udev_device_new_from_syspath(udev, n->children[i]->syspath);

		if (d) {
			node_describe(n->children[i], d);
			udev_device_unref(d);
		}
	}
	spawn_children(e, n);
}

static void print_new_links(struct ap_engine *e);

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
static void pump(struct ap_engine *e, struct ap_node *self)
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
		seal_locked(e, n);
	}
	pthread_mutex_unlock(&e->lock);
}

static void load_modules(struct ap_node *n, const char *who)
{
	struct ap_engine *e = n->e;
	uint64_t t0;

	if (!e->modules_on || !n->modalias || !*n->modalias)
		return;
	node_step(n, "loading its driver");
	t0 = ap_now_ns();
	n->mod_failed += ap_modules_load_alias(e->mods, n->modalias, who, &n->loads, &n->n_loads);
	ap_trace_phase(n->call, "modprobe", t0, ap_now_ns());
}

static bool any_module_ok(const struct ap_node *n)
{
	size_t i;

	for (i = 0; i < n->n_loads; i++)
		if (n->loads[i].result == AP_MOD_OK || n->loads[i].result == AP_MOD_BUILTIN)
			return true;
	return false;
}

static void run_discovery(struct ap_node *n, struct udev *udev)
{
	collect_children(udev, n);
	log_info("discovery: %zu controllers and devices without one", n->found.n);
}

static void run_controller(struct ap_node *n, struct udev *udev)
{
	struct wait_ctx w = { .udev = udev, .syspath = n->syspath };
	unsigned int timeout = ap_cfg.device_timeout_ms;
	struct udev_device *d;
	uint64_t t0;

	load_modules(n, n->sysname);

	if (!ap_cfg.dry_run) {
		t0 = ap_now_ns();
		/*
		 * The insertion returned before the driver probed (async_probe):
		 * wait for its probe, in the step "loading its driver", then for
		 * what the driver enumerates after it (see "Waiting for a
		 * driver").  A driver may also decline a device.
		 */
		if (n->driver || any_module_ok(n)) {
			int r = wait_probe_returned(n, udev, AP_BIND_GRACE_MS);

			if (r < 0)
				return;         /* given up: its devices are not touched */
			if (r == 0)
				log_info("%s: no driver bound after %u ms", n->sysname,
					 AP_BIND_GRACE_MS);
			else
				wait_enumerated(n, udev);
		}
		node_step(n, "waiting for its devices");
		d = udev_device_new_from_syspath(udev, n->syspath);
		if (d) {
			free(n->driver);
			n->driver = strdup_or_null(udev_device_get_driver(d));
			udev_device_unref(d);
		}
		if (n->driver && strcmp(n->driver, "nvme") == 0) {
			/* namespaces are scanned from a workqueue once the controller is live */
			if (ap_monitor_wait(n->e->mon, pred_nvme_ready, &w, timeout) < 0)
				log_warning("%s: NVMe controller not live with a namespace after %u ms",
					    n->sysname, timeout);
		} else if (n->driver && (strcmp(n->driver, "usb-storage") == 0 ||
					 strcmp(n->driver, "uas") == 0)) {
			/* usb-storage scans from delayed work, after init_module returned */
			w.subsystem = "scsi";
			w.devtype = "scsi_device";
			if (ap_monitor_wait(n->e->mon, pred_has_child, &w, timeout) < 0)
				log_warning("%s: no SCSI device after %u ms", n->sysname, timeout);
		}
		ap_trace_phase(n->call, "wait", t0, ap_now_ns());
	}
	controller_probed(n);
	if (n->e->modules_on)
		ap_modules_note_unbound(n->e->mods, n->modalias, n->sysname, n->syspath, n->driver,
					&n->loads, &n->n_loads);
	log_info("controller %s%s%s%s", n->sysname, n->driver ? " [" : "",
		 n->driver ? n->driver : "", n->driver ? "]" : "");
	collect_children(udev, n);
}

static void run_scsi(struct ap_node *n, struct udev *udev)
{
	struct wait_ctx w = { .udev = udev, .syspath = n->syspath, .subsystem = "block",
			      .devtype = "disk" };
	struct udev_device *d;
	const char *type;
	unsigned long t = ~0UL;
	uint64_t t0;

	wait_controllers_probed(n);
	load_modules(n, n->sysname);
	d = udev_device_new_from_syspath(udev, n->syspath);
	if (d) {
		type = udev_device_get_sysattr_value(d, "type");
		if (type)
			t = strtoul(type, NULL, 10);
		udev_device_unref(d);
	}
	/*
	 * disk, optical, RBC: a block device follows, sd_mod probes
	 * asynchronously.  Its block device is in sysfs before the probe
	 * has read the partition table; only the probe's return ("bind")
	 * says the disk is ready to be opened (see "Waiting for a driver").
	 */
	if (!ap_cfg.dry_run && (t == 0 || t == 5 || t == 7 || t == 0xe) &&
	    (n->driver || any_module_ok(n))) {
		node_step(n, "waiting for its block device");
		t0 = ap_now_ns();
		/* sd's probes are queued: one may start late on a loaded machine */
		int r = wait_probe_returned(n, udev, ap_cfg.device_timeout_ms);

		if (r < 0)
			return;         /* given up while sd's probe still ran */
		/* no driver took it within the timeout: look once, do not wait again */
		if (ap_monitor_wait(n->e->mon, pred_has_child, &w,
				    r > 0 ? ap_cfg.device_timeout_ms : 0) < 0) {
			log_warning("%s: no block device after %u ms", n->sysname,
				    ap_cfg.device_timeout_ms);
			node_fail(n, -ETIMEDOUT, "no block device");
		}
		ap_trace_phase(n->call, "wait", t0, ap_now_ns());
	}
	d = udev_device_new_from_syspath(udev, n->syspath);
	if (d) {
		free(n->driver);
		n->driver = strdup_or_null(udev_device_get_driver(d));
		udev_device_unref(d);
	}
	collect_children(udev, n);
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

static void run_block(struct ap_node *n, struct udev *udev)
{
	struct ap_engine *e = n->e;
	struct udev_device *d;
	uint64_t t0;
	int r;

	node_step(n, "probing");
	t0 = ap_now_ns();
	if (n->devnode) {
		n->probe_r = ap_probe_device(n->devnode, &n->fs);
		if (n->probe_r < 0) {
			log_warning("%s: cannot probe %s: %s", n->devname, n->devnode,
				    strerror(-n->probe_r));
			node_fail(n, n->probe_r, "probe failed");
		}
	} else {
		node_fail(n, -ENODEV, "no device node");
	}
	ap_trace_phase(n->call, "probe", t0, ap_now_ns());

	d = udev_device_new_from_syspath(udev, n->syspath);
	if (d && e->links) {
		/* Names are pure computation (and SG_IO inquiries): before step 2. */
		node_step(n, "computing its names");
		t0 = ap_now_ns();
		r = ap_names_for_device(d, &n->fs, &n->names);
		if (r < 0)
			log_warning("%s: cannot compute link names: %s", n->devname, strerror(-r));
		ap_trace_phase(n->call, "names", t0, ap_now_ns());
	}
	if (n->kind == AP_KIND_DISK)
		collect_children(udev, n);
	if (d)
		udev_device_unref(d);

	log_info("%s %s: %s%s%s%s%s", ap_kind_to_string(n->kind), n->devname,
		 n->fs.type ? n->fs.type : n->fs.pttype ? n->fs.pttype : "-",
		 n->fs.label ? " label=" : "", n->fs.label ? n->fs.label : "",
		 n->fs.uuid ? " uuid=" : "", n->fs.uuid ? n->fs.uuid : "");
}

static void node_run(void *data, async_cookie_t cookie)
{
	struct ap_node *n = data;
	struct ap_engine *e = n->e;
	struct udev *udev;
	char label[300];
	bool skip;

	n->t_start = ap_now_ns();
	pthread_mutex_lock(&e->lock);
	n->call = cookie;
	n->state = NODE_RUNNING;
	n->phase = "starting";
	n->t_progress = n->t_start;
	skip = n->stopped = e->stopping;
	if (skip)
		seal_locked(e, n);
	pthread_mutex_unlock(&e->lock);
	if (skip)
		goto done;

	snprintf(label, sizeof(label), "%s", node_label(n));
	ap_trace_label(cookie, n->discovery ? "discover" : ap_kind_to_string(n->kind), label);
	progress_update(e, n);

	udev = udev_new();
	if (!udev) {
		node_fail(n, -ENOMEM, "out of memory");
		call_ready(NULL, n);    /* no children: udev is not used */
	} else {
		if (n->discovery)
			run_discovery(n, udev);
		else if (n->kind == AP_KIND_CONTROLLER)
			run_controller(n, udev);
		else if (n->kind == AP_KIND_SCSI)
			run_scsi(n, udev);
		else
			run_block(n, udev);
		call_ready(udev, n);
		udev_unref(udev);
	}

	pthread_mutex_lock(&e->lock);
	if (n->abandoned) {
		/* counted as done when it was abandoned; touch nothing shared */
		if (n->stopped)
			log_debug("%s: the call stopped returned after %.1f s; its results are dropped",
				  node_label(n), ap_ms_between(n->t_start, ap_now_ns()) / 1000.0);
		else
			log_notice("%s: the abandoned call returned after %.1f s; its results are dropped",
				   node_label(n), ap_ms_between(n->t_start, ap_now_ns()) / 1000.0);
		n->abandoned_returned = true;
		e->abandoned_running--;
		pthread_cond_broadcast(&e->cond);
		pthread_mutex_unlock(&e->lock);
		return;
	}
	pthread_mutex_unlock(&e->lock);

done:
	/* its own turn may have come, or it was the one the frontier waited for */
	pump(e, n);
	n->t_end = ap_now_ns();
	pthread_mutex_lock(&e->lock);
	n->state = NODE_DONE;
	n->phase = NULL;
	if (!e->parallel)
		e->in_flight--;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	progress_update(e, n);
	ap_monitor_kick(e->mon);
}

/* -------------------------------------------------------------- hotplug */

/*
 * The abandoned call at or above @syspath (engine lock held).  Its device
 * may be locked for good: the kernel holds a device's lock while its driver
 * probes, and reading its "uevent" file takes that lock (uninterruptibly),
 * as libudev does for the device and for every parent it walks to.  So
 * nothing below an abandoned call is looked at, by path alone.
 */
static struct ap_node *abandoned_above_locked(struct ap_engine *e, const char *syspath)
{
	size_t i, len;

	if (!e->n_abandoned)
		return NULL;
	for (i = 0; i < e->n_nodes; i++) {
		struct ap_node *n = e->nodes[i];

		if (!n->abandoned || !n->syspath)
			continue;
		len = strlen(n->syspath);
		if (strncmp(syspath, n->syspath, len) == 0 &&
		    (syspath[len] == '/' || syspath[len] == '\0'))
			return n;
	}
	return NULL;
}

static void hotplug_one(struct ap_engine *e, const char *syspath)
{
	struct udev *udev;
	struct udev_device *d, *owner;
	struct ap_node *parent = NULL, *n = NULL;
	enum ap_kind kind;

	pthread_mutex_lock(&e->lock);
	parent = abandoned_above_locked(e, syspath);
	/*
	 * Only a block device is worth a notice: the abandoned device's own
	 * add and its class devices (bsg, scsi_disk) would use up the kernel
	 * log's rate limit for user space (10 records in 5 s) before the
	 * run's summary.
	 */
	if (parent)
		ap_log(strstr(syspath + strlen(parent->syspath), "/block/") ? AP_LOG_NOTICE :
		       AP_LOG_INFO, "%s: ignored, it belongs to the abandoned call of %s", syspath,
		       node_label(parent));
	pthread_mutex_unlock(&e->lock);
	if (parent)
		return;
	udev = udev_new();
	if (!udev)
		return;
	d = udev_device_new_from_syspath(udev, syspath);
	if (!d)
		goto out;
	kind = ap_classify(d, ap_cfg.all_modules, ap_cfg.include_loop);
	if (kind == AP_KIND_NONE)
		goto out;
	owner = ap_owner(d, ap_cfg.all_modules, ap_cfg.include_loop);

	pthread_mutex_lock(&e->lock);
	if (owner) {
		parent = node_find_locked(e, udev_device_get_syspath(owner));
		/* a parent that has not enumerated yet will find it itself */
		if (parent && parent->state < NODE_COLLECTED && !parent->abandoned) {
			pthread_mutex_unlock(&e->lock);
			goto out;
		}
		if (parent && parent->abandoned) {
			pthread_mutex_unlock(&e->lock);
			log_notice("%s: ignored, it belongs to the abandoned call of %s", syspath,
				   node_label(parent));
			goto out;
		}
	}
	if (kind == AP_KIND_PARTITION && !parent) {
		/* a partition of a disk we do not handle */
		pthread_mutex_unlock(&e->lock);
		goto out;
	}
	n = node_register_locked(e, syspath, kind, parent);
	if (n) {
		n->hotplug = true;
		order_insert_locked(e, NULL, n);        /* at the end: its number depends on timing */
	}
	pthread_mutex_unlock(&e->lock);
	if (n) {
		node_describe(n, d);
		log_info("hotplug: %s %s", ap_kind_to_string(kind), node_label(n));
		ap_spawn(e, n);
	}
out:
	if (d)
		udev_device_unref(d);
	udev_unref(udev);
}

static void on_uevent(const char *action, const char *syspath, void *userdata)
{
	struct ap_engine *e = userdata;
	char **v;

	if (strcmp(action, "bind") == 0) {
		bound_add(e, syspath);
		return;
	}
	if (strcmp(action, "add") != 0)
		return;
	pthread_mutex_lock(&e->lock);
	if (e->finished || e->stopping) {
		pthread_mutex_unlock(&e->lock);
		return;
	}
	if (!e->coldplug_done) {
		v = realloc(e->backlog, (e->n_backlog + 1) * sizeof(*v));
		if (v) {
			e->backlog = v;
			v[e->n_backlog] = strdup(syspath);
			if (v[e->n_backlog])
				e->n_backlog++;
		}
		pthread_mutex_unlock(&e->lock);
		return;
	}
	pthread_mutex_unlock(&e->lock);
	hotplug_one(e, syspath);
}

/*
 * Called when the coldplug tree is complete (pending reached 0 for the
 * first time): devices seen by the monitor meanwhile that nobody claimed
 * are hotplug.
 */
static void coldplug_complete(struct ap_engine *e)
{
	char **backlog;
	size_t n, i;

	pthread_mutex_lock(&e->lock);
	if (e->coldplug_done) {
		pthread_mutex_unlock(&e->lock);
		return;
	}
	e->coldplug_done = true;
	backlog = e->backlog;
	n = e->n_backlog;
	e->backlog = NULL;
	e->n_backlog = 0;
	pthread_mutex_unlock(&e->lock);
	ap_trace_mark(0, "coldplug complete", ap_now_ns());
	for (i = 0; i < n; i++) {
		hotplug_one(e, backlog[i]);
		free(backlog[i]);
	}
	free(backlog);
}

/* Give up on a hung call (engine lock held).  See "A call that hangs". */
static void abandon_locked(struct ap_engine *e, struct ap_node *n, uint64_t now)
{
	int r = async_abandon(n->call);

	if (r < 0) {
		/* -ENOENT: it has just returned; -EAGAIN cannot be (it runs) */
		if (r != -ENOENT)
			log_error("%s: cannot abandon its call: %s", node_label(n), strerror(-r));
		return;
	}
	n->abandoned = true;
	n->t_abandoned = now;
	if (!e->parallel)
		e->in_flight--; /* the next call may run */
	e->n_abandoned++;
	e->abandoned_running++;
	log_error("%s: abandoned, no answer after %.1f s %s (--device-timeout %u ms + %u ms); "
		  "its call keeps running but publishes nothing, later devices go on",
		  node_label(n), ap_ms_between(n->t_progress, now) / 1000.0,
		  n->phase ? n->phase : "", ap_cfg.device_timeout_ms, AP_HANG_SLACK_MS);
	ap_trace_mark(n->call, "abandoned", now);
	seal_locked(e, n);      /* later nodes go on; the caller pumps */
}

/* Abandon every call stuck in one step for too long (engine lock held). */
static void abandon_hung_locked(struct ap_engine *e)
{
	uint64_t now = ap_now_ns();
	uint64_t limit = ((uint64_t)ap_cfg.device_timeout_ms + AP_HANG_SLACK_MS) * 1000000ULL;
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
static void stop_if_requested_locked(struct ap_engine *e)
{
	uint64_t now;
	unsigned int n_busy = 0;
	size_t i;

	if (!stop_signal() || e->stopping)
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
		seal_locked(e, n);
		n_busy++;
		ap_trace_mark(n->call, "stopped", now);
	}
	log_notice("stopping on %s: %u call%s in progress left unfinished, no further device "
		   "is probed or published", stop_signal() == SIGINT ? "SIGINT" : "SIGTERM",
		   n_busy, n_busy == 1 ? "" : "s");
	pthread_cond_broadcast(&e->cond);
}

/*
 * The top level's loop: drain the FIFO (sequential mode) and wait until
 * nothing is pending, or @until returns true, or @deadline_ns passes.
 */
static void settle(struct ap_engine *e, bool (*until)(struct ap_engine *, const void *),
		   const void *arg, uint64_t deadline_ns)
{
	struct timespec ts;

	for (;;) {
		bool idle;

		pthread_mutex_lock(&e->lock);
		stop_if_requested_locked(e);
		pthread_mutex_unlock(&e->lock);
		pump(e, NULL);  /* abandoned or stopped nodes may have let the frontier on */
		drain(e);
		pthread_mutex_lock(&e->lock);
		idle = e->pending == 0 && !e->n_queued;
		pthread_mutex_unlock(&e->lock);
		if (idle) {
			bool was = e->coldplug_done;

			coldplug_complete(e);
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
			stop_if_requested_locked(e);
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

/* ---------------------------------------------------------------- API */

int ap_engine_start(struct ap_engine **ret)
{
	struct ap_engine *e;
	struct ap_node *disc;
	pthread_condattr_t ca;
	char *bl = NULL;
	int r;

	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	pthread_mutex_init(&e->lock, NULL);
	pthread_mutex_init(&e->out_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&e->cond, &ca);
	pthread_condattr_destroy(&ca);
	e->t0 = ap_now_ns();

	if (ap_cmdline_read(&e->cmdline) < 0)
		e->cmdline = NULL;
	if (ap_cfg.fastboot < 0)
		e->fastboot = e->cmdline && ap_cmdline_get(e->cmdline, "fastboot", NULL);
	else
		e->fastboot = ap_cfg.fastboot > 0;
	/*
	 * Both modes run calls on worker threads, so the top level stays free
	 * to abandon a hung one; sequentially on a single worker, one call at
	 * a time, controllers first, then in the order (drain()).  What the
	 * library does, not what was asked, decides: if it runs calls inline
	 * anyway (built without threads), the queue is used and nothing can
	 * be abandoned.
	 */
	async_set_enabled(true);
	e->on_worker = async_get_enabled();
	e->parallel = e->fastboot && e->on_worker;
	if (e->fastboot && !e->parallel)
		log_info("fastboot requested, but libasync runs calls synchronously");
	if (!e->on_worker)
		async_set_enabled(false);
	root_first_setup(e);
	async_set_max_threads(!e->parallel ? 1 : ap_cfg.max_threads ? ap_cfg.max_threads
								    : AP_DEFAULT_MAX_THREADS);
	if (ap_cfg.trace_file || ap_cfg.plot_file)
		ap_trace_enable();
	e->progress = ap_cfg.progress;

	if (!ap_cfg.no_modules) {
		r = ap_modules_new(&e->mods, ap_cfg.basedir, ap_cfg.modules_dir,
				   ap_cfg.kernel_version, ap_cfg.modprobe_config, ap_cfg.dry_run);
		if (r < 0 && (ap_cfg.basedir || ap_cfg.modules_dir || ap_cfg.kernel_version ||
			      ap_cfg.modprobe_config)) {
			/* an explicit tree that does not work is a configuration error */
			log_error("module tree unusable: %s", strerror(-r));
			ap_engine_free(e);
			return r == -ENOENT ? -ENOENT : r;
		}
		if (r < 0)
			log_warning("drivers cannot be loaded: built-in drivers only (see -b, --modules-dir)");
		e->modules_on = r >= 0;
		if (e->mods && e->cmdline && ap_cmdline_get(e->cmdline, "modprobe.blacklist", &bl) && bl) {
			ap_modules_blacklist(e->mods, bl);
			free(bl);
		}
	}
	if (!ap_cfg.no_links) {
		e->links = ap_links_new(ap_cfg.dev_dir, ap_cfg.dry_run);
		if (!e->links) {
			log_error("cannot set up links below %s", ap_cfg.dev_dir);
			ap_engine_free(e);
			return -ENOMEM;
		}
	}

	/* The monitor first: nothing that appears during enumeration is missed. */
	r = ap_monitor_start(&e->mon, on_uevent, e);
	if (r < 0) {
		log_warning("no kernel uevent monitor (%s): waits re-check every 20 ms",
			    strerror(-r));
		e->mon = NULL;
	}

	log_info("%s run%s, %s, device timeout %u ms", e->parallel ? "fastboot (concurrent)" :
		 "sequential", ap_cfg.dry_run ? " (dry run)" : "",
		 e->modules_on ? ap_modules_dir(e->mods) : "no module loading",
		 ap_cfg.device_timeout_ms);

	pthread_mutex_lock(&e->lock);
	disc = node_register_locked(e, "", AP_KIND_NONE, NULL);
	if (disc) {
		*path_slot_locked(e, "") = NULL;   /* out of the index; the only node, no chain broken */
		order_insert_locked(e, NULL, disc);     /* the head of the order: cookie 1 */
	}
	pthread_mutex_unlock(&e->lock);
	if (!disc) {
		ap_engine_free(e);
		return -ENOMEM;
	}
	free(disc->syspath);
	disc->syspath = NULL;   /* never matches a device */
	disc->discovery = true;
	ap_spawn(e, disc);

	/* Sequentially, everything runs here; concurrently, this returns at once. */
	if (!e->parallel)
		settle(e, NULL, NULL, 0);
	*ret = e;
	return 0;
}

struct path_arg {
	char path[PATH_MAX];
};

static bool path_exists(struct ap_engine *e, const void *arg)
{
	const struct path_arg *p = arg;
	struct stat st;

	return stat(p->path, &st) == 0 || lstat(p->path, &st) == 0;
}

int ap_engine_wait_path(struct ap_engine *e, const char *relpath, unsigned int timeout_ms)
{
	struct path_arg p;
	uint64_t deadline = 0;
	bool idle;

	if (!e || !relpath)
		return -EINVAL;
	snprintf(p.path, sizeof(p.path), "%s/%s", ap_cfg.dev_dir, relpath);
	if (timeout_ms != 0 && timeout_ms != UINT32_MAX)
		deadline = ap_now_ns() + (uint64_t)timeout_ms * 1000000ULL;

	for (;;) {
		bool stopping;

		if (path_exists(e, &p))
			return 0;
		settle(e, path_exists, &p, deadline);
		if (path_exists(e, &p))
			return 0;
		pthread_mutex_lock(&e->lock);
		stop_if_requested_locked(e);
		stopping = e->stopping;
		idle = e->pending == 0 && !e->n_queued && e->coldplug_done;
		pthread_mutex_unlock(&e->lock);
		if (stopping)
			return -EINTR;
		if (deadline && ap_now_ns() >= deadline)
			return -ETIMEDOUT;
		if (idle && timeout_ms == 0)
			return -ENOENT;
		if (idle) {
			/* forever, or until the deadline: wait for hotplug */
			struct timespec ts;

			uint64_t wake = ap_now_ns() + AP_HANG_CHECK_MS * 1000000ULL;

			/* woken by hotplug; a stop request is polled */
			if (deadline && deadline < wake)
				wake = deadline;
			pthread_mutex_lock(&e->lock);
			if (!e->n_queued && e->pending == 0) {
				ts.tv_sec = (time_t)(wake / 1000000000ULL);
				ts.tv_nsec = (long)(wake % 1000000000ULL);
				pthread_cond_timedwait(&e->cond, &e->lock, &ts);
			}
			pthread_mutex_unlock(&e->lock);
		}
	}
}

/* ------------------------------------------------------------- manifest */

static int manifest_node_cmp(const void *x, const void *y)
{
	const struct ap_manifest_node *a = x, *b = y;

	if (a->cookie != b->cookie)
		return a->cookie < b->cookie ? -1 : 1;
	return 0;
}

/*
 * The read-only view manifest.c counts and writes, in cookie order, taken
 * once every call has finished (an abandoned call may still run: its
 * manifest entry shows only what it had when it was given up on).  It
 * points into the nodes; the caller frees *ret_nodes and *ret_links.
 */
static int engine_snapshot(struct ap_engine *e, struct ap_manifest *m,
			   struct ap_manifest_node **ret_nodes, const struct ap_link_event ***ret_links)
{
	struct ap_manifest_node *v;
	const struct ap_link_event **links = NULL;
	size_t i, nl = e->links ? ap_links_log_size(e->links) : 0;

	memset(m, 0, sizeof(*m));
	if (nl) {
		links = calloc(nl, sizeof(*links));
		if (!links)
			return -ENOMEM;
		for (i = 0; i < nl; i++)
			links[i] = ap_links_log_get(e->links, i);
	}
	pthread_mutex_lock(&e->lock);
	v = calloc(e->n_nodes ? e->n_nodes : 1, sizeof(*v));
	for (i = 0; v && i < e->n_nodes; i++) {
		const struct ap_node *n = e->nodes[i];

		static const struct ap_fsinfo no_fs;

		/* fields an abandoned call fixed before it ran, or that the engine sets */
		v[i] = (struct ap_manifest_node){
			.cookie = n->cookie, .parent = n->parent ? n->parent->cookie : 0,
			.kind = n->kind, .discovery = n->discovery, .hotplug = n->hotplug,
			.abandoned = n->abandoned, .stopped = n->stopped, .phase = n->phase,
			.sysname = n->sysname, .subsystem = n->subsystem, .syspath = n->syspath,
			.modalias = n->modalias, .devname = n->devname, .partnum = n->partnum,
			.fs = &no_fs, .t_spawn = n->t_spawn, .t_start = n->t_start,
			.t_abandoned = n->t_abandoned, .call = n->call,
		};
		/*
		 * An abandoned call may still be running and writing the rest of
		 * its node without the lock (its probe results, times, module
		 * loads): not read; the manifest shows none of it for such a node.
		 */
		if (n->abandoned)
			continue;
		v[i].dropped_at_sync = n->sync_result < 0;
		v[i].driver = n->driver;
		v[i].fs = &n->fs;
		v[i].loads = n->loads;
		v[i].n_loads = n->n_loads;
		v[i].error = n->error;
		v[i].error_what = n->error_what;
		v[i].links_failed = n->links_failed;
		v[i].t_sync0 = n->t_sync0;
		v[i].t_sync1 = n->t_sync1;
		v[i].t_end = n->t_end;
	}
	m->n_nodes = e->n_nodes;
	pthread_mutex_unlock(&e->lock);
	if (!v) {
		free(links);
		return -ENOMEM;
	}
	qsort(v, m->n_nodes, sizeof(*v), manifest_node_cmp);
	m->fastboot = e->fastboot;
	m->dry_run = ap_cfg.dry_run;
	m->modules_dir = e->modules_on ? ap_modules_dir(e->mods) : NULL;
	m->dev_dir = ap_cfg.dev_dir;
	m->chaos = getenv("ASYNC_CHAOS");
	m->nodes = v;
	m->links = links;
	m->n_links = nl;
	m->t0 = e->t0;
	m->t1 = e->t1;
	ap_manifest_count(m, &m->counts);
	*ret_nodes = v;
	*ret_links = links;
	return 0;
}

int ap_engine_finish(struct ap_engine *e)
{
	_cleanup_free_ struct ap_manifest_node *nodes = NULL;
	_cleanup_free_ const struct ap_link_event **links = NULL;
	struct ap_manifest m;
	struct ap_counts c;
	unsigned int running;
	int r, status;

	if (!e)
		return AP_EXIT_SYSTEM;
	settle(e, NULL, NULL, 0);
	pthread_mutex_lock(&e->lock);
	e->finished = true;             /* later uevents are ignored */
	pthread_mutex_unlock(&e->lock);
	ap_monitor_stop(e->mon);        /* joins: no callback runs after this */
	settle(e, NULL, NULL, 0);       /* hotplugs that slipped in meanwhile */
	async_synchronize_full();
	pthread_mutex_lock(&e->lock);
	running = e->abandoned_running;
	pthread_mutex_unlock(&e->lock);
	if (!running) {
		ap_monitor_free(e->mon); /* no call waits on it any more */
		e->mon = NULL;
	}
	r = async_quiesce();
	if (r == -EBUSY && running)
		log_notice("%u abandoned call%s still running; the process leaves %s behind when "
			   "it exits or starts init", running, running == 1 ? " is" : "s are",
			   running == 1 ? "it" : "them");
	else if (r < 0)
		log_warning("cannot stop the worker threads: %s", strerror(-r));
	e->t1 = ap_now_ns();
	progress_clear(e);
	e->progress = false;

	if (engine_snapshot(e, &m, &nodes, &links) < 0)
		return AP_EXIT_SYSTEM;
	if (e->stopping)
		m.counts.stop_signal = stop_signal();
	c = m.counts;
	status = ap_counts_exit_status(&c);

	if (ap_udev_rules_finish(e->links) < 0)
		status = status ?: AP_EXIT_DEGRADED;
	if (ap_cfg.json_file && ap_manifest_write(&m, ap_cfg.json_file) < 0)
		status = status ?: AP_EXIT_DEGRADED;
	if (ap_cfg.trace_file) {
		r = ap_trace_write_chrome(ap_cfg.trace_file);
		if (r < 0)
			log_error("cannot write trace %s: %s", ap_cfg.trace_file, strerror(-r));
	}
	if (ap_cfg.plot_file) {
		r = ap_trace_write_svg(ap_cfg.plot_file, "asyncprobe");
		if (r < 0)
			log_error("cannot write plot %s: %s", ap_cfg.plot_file, strerror(-r));
	}
	if (e->root_path && e->links && !ap_cfg.dry_run && !e->stopping) {
		char rp[PATH_MAX];
		struct stat st;

		snprintf(rp, sizeof(rp), "%s/disk/by-path/%s", ap_cfg.dev_dir, e->root_path);
		if (lstat(rp, &st) < 0)
			log_notice("root path %s: no device has this by-path name (a disk moved?); "
				   "it changed only the order", e->root_path);
	}
	if (c.abandoned)
		log_error("%u device%s abandoned (no answer within --device-timeout)", c.abandoned,
			  c.abandoned == 1 ? "" : "s");
	if (e->stopping)
		log_notice("stopped on %s: %u call%s not run to the end; the links made are those "
			   "of every device up to the first of them, a rerun makes the rest",
			   stop_signal() == SIGINT ? "SIGINT" : "SIGTERM", c.stopped,
			   c.stopped == 1 ? "" : "s");
	log_notice("%u controllers, %u devices, %u links, %u modules loaded, %u failed, "
		   "%u without a module, %.0f ms (%s)%s", c.controllers, c.devices, c.links,
		   c.mod_ok, c.mod_failed, c.mod_none,
		   ap_ms_between(e->t0, e->t1), e->fastboot ? "fastboot" : "sequential",
		   status == AP_EXIT_DEGRADED ? ", degraded" : "");
	return status;
}

struct ap_engine *ap_engine_free(struct ap_engine *e)
{
	unsigned int running;
	size_t i;

	if (!e)
		return NULL;
	pthread_mutex_lock(&e->lock);
	running = e->abandoned_running;
	pthread_mutex_unlock(&e->lock);
	if (running) {
		/* abandoned calls still use the nodes, the monitor and libkmod: leave it all */
		log_debug("engine left in place: %u abandoned calls run", running);
		return NULL;
	}
	if (e->mon) {
		ap_monitor_stop(e->mon);
		async_synchronize_full();
		ap_monitor_free(e->mon);
	}
	for (i = 0; i < e->n_nodes; i++)
		node_free(e->nodes[i]);
	free(e->nodes);
	free(e->by_path);
	for (i = 0; i < e->n_backlog; i++)
		free(e->backlog[i]);
	free(e->backlog);
	for (i = 0; i < e->bound_size; i++)
		free(e->bound[i]);
	free(e->bound);
	ap_modules_free(e->mods);
	ap_links_free(e->links);
	free(e->cmdline);
	free(e->root_path);
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
	pthread_mutex_destroy(&e->out_lock);
	free(e);
	return NULL;
}

void ap_engine_dump_state(struct ap_engine *e, FILE *f)
{
	static const char *const states[] = { "new", "spawned", "running", "collected", "done" };
	size_t i, j;

	if (!e)
		return;
	pthread_mutex_lock(&e->lock);
	fprintf(f, "asyncprobe: %zu devices known, %u pending, modules %s\n", e->n_nodes,
		e->pending, e->modules_on ? ap_modules_dir(e->mods) : "not loaded");
	for (i = 0; i < e->n_nodes; i++) {
		struct ap_node *n = e->nodes[i];

		if (n->discovery)
			continue;
		/* a new node's names are being filled in by its parent */
		fprintf(f, "  [%llu] %-10s %-12s %s", (unsigned long long)n->cookie,
			ap_kind_to_string(n->kind),
			n->state == NODE_NEW ? n->syspath : node_label(n),
			n->abandoned ? "abandoned while" : states[n->state]);
		if (n->abandoned)
			fprintf(f, " %s", n->phase ? n->phase : "running");
		/* what a running call is still writing is shown once it is done */
		if (n->state != NODE_DONE || n->abandoned) {
			fputc('\n', f);
			continue;
		}
		if (n->driver)
			fprintf(f, " driver=%s", n->driver);
		if (n->fs.type)
			fprintf(f, " type=%s", n->fs.type);
		for (j = 0; j < n->n_loads; j++)
			fprintf(f, " %s:%s", n->loads[j].module, ap_modresult_to_string(n->loads[j].result));
		if (n->error)
			fprintf(f, " error: %s: %s", n->error_what ? n->error_what : "",
				strerror(-n->error));
		fputc('\n', f);
	}
	pthread_mutex_unlock(&e->lock);
}
