/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The engine's private header: struct ap_engine and struct ap_node, shared
 * by the engine's files, and what each of them offers the others.  The
 * Theory of Operation is in engine.c.  The files call each other in one
 * direction only (a file calls those listed below it, never one above):
 *
 *   engine.c          the API: start, wait for a path, finish, free, snapshot
 *   engine-settle.c   the top level's loop, the hang rule, stop requests
 *   engine-hotplug.c  uevents: bind records, devices that appear later
 *   engine-call.c     a device's call: its steps, step 2 (call_ready)
 *   engine-wait.c     waiting for a driver: probe returned, ports, controllers
 *   engine-root.c     root first: the root's chain moves to the front
 *   engine-order.c    the publication order: insert, adopt, seal, pump, queue
 *   engine-node.c     nodes: registration, the syspath index, description
 *
 * engine-order.c runs a node's call through ap_engine.run, a pointer
 * engine.c sets to eng_node_run(), so that it does not call engine-call.c.
 */
#ifndef ASYNCPROBE_ENGINE_INTERNAL_H
#define ASYNCPROBE_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <libudev.h>

#include "base/base.h"
#include "device/device.h"
#include "modules/modules.h"
#include "probe/probe.h"
#include "engine/engine.h"
#include "links/links.h"

/*
 * A call that stays longer than --device-timeout plus this in one step is
 * abandoned; its waits are bounded by --device-timeout, and this covers a
 * wait's last re-check on a slow (emulated) machine.
 */
#define AP_HANG_SLACK_MS 2000
/* How often the top level looks for hung calls while calls are pending. */
#define AP_HANG_CHECK_MS 250
/* How long a device may stay without a driver before it counts as declined. */
#define AP_BIND_GRACE_MS 1000
/* How often the wait for libata's ports looks again without a uevent (engine-wait.c). */
#define AP_ATA_RECHECK_MS 25

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

	/* hung calls (see "A call that hangs" in engine.c) */
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

	pthread_mutex_t out_lock;       /* -v link log and progress line */
	size_t links_printed;           /* out_lock */
	bool progress;
	uint64_t t0, t1;
	bool finished;
	bool stopping;                  /* lock: a stop request was seen */
	/*
	 * Set from a signal handler (ap_engine_request_stop()): see "A stop
	 * request".  The handler may run on any thread that does not block the
	 * signal (the monitor thread, say), so this is a lock-free atomic, not
	 * just a volatile sig_atomic_t: that is only safe against a handler on
	 * the thread that reads it.
	 */
	int stop_request;
	struct ap_config cfg;           /* the run's settings, the caller's copy */
	async_func_t *run;              /* the call of a node (engine-call.c): eng_order_spawn() and
					 * eng_order_drain() schedule it without calling that file */
	char *root_path;                /* the root's by-path name (root first), or NULL */
	char root_pci[16];              /* ... the PCI address in it, or "" */
	bool root_ctl_probed;           /* lock: the root's controller's driver probed it, or
					 * there is none to wait for (eng_root_controller_wait()) */
};

/* The signal a stop request came with (ap_engine_request_stop()), or 0. */
static inline int engine_stop_signal(struct ap_engine *e)
{
	return __atomic_load_n(&e->stop_request, __ATOMIC_SEQ_CST);
}

/* What a wait looks for below @syspath (engine-wait.c's predicates). */
struct wait_ctx {
	struct udev *udev;
	const char *syspath;
	const char *subsystem;
	const char *devtype;
};

/* engine-node.c */
const char *eng_node_label(const struct ap_node *n);
void eng_node_step(struct ap_node *n, const char *phase);
void eng_node_free(struct ap_node *n);
void eng_node_describe(struct ap_node *n, struct udev_device *dev);
/*
 * The same for a SCSI device, from its attributes and links without
 * libudev (what eng_node_describe() reads of it is all there); false when
 * its "modalias" attribute cannot be read (a recording may lack it).
 */
bool eng_node_describe_scsi(struct ap_node *n);
/* @n->driver: the driver bound to its device now, from its "driver" link. */
void eng_node_read_driver(struct ap_node *n);
size_t eng_node_path_hash(const char *s);
struct ap_node **eng_node_path_slot_locked(struct ap_engine *e, const char *syspath);
struct ap_node *eng_node_find_locked(struct ap_engine *e, const char *syspath);
struct ap_node *eng_node_register_locked(struct ap_engine *e, const char *syspath,
				     enum ap_kind kind, struct ap_node *parent);
void eng_node_fail(struct ap_node *n, int error, const char *what);

/* engine-order.c */
void eng_order_insert_locked(struct ap_engine *e, struct ap_node *after, struct ap_node *n);
bool eng_order_before_locked(const struct ap_node *a, const struct ap_node *b);
struct ap_node *eng_order_adopt_locked(struct ap_engine *e, struct ap_node *parent,
				   struct ap_node *after, struct ap_node *c);
void eng_order_seal_locked(struct ap_engine *e, struct ap_node *n);
void eng_order_spawn(struct ap_engine *e, struct ap_node *n);
void eng_order_spawn_children(struct ap_engine *e, struct ap_node *n);
void eng_order_drain(struct ap_engine *e);
void eng_order_pump(struct ap_engine *e, struct ap_node *self);

/* engine-root.c */
void eng_root_first_setup(struct ap_engine *e);
void eng_root_first_sort(struct ap_engine *e, struct udev *udev, struct ap_node *n);
/* Is @n (a SCSI or virtio device, a disk, a partition) on the root's chain? */
bool eng_root_chain_node(struct ap_engine *e, struct udev *udev, const struct ap_node *n);
bool eng_root_controller_node(const struct ap_engine *e, const struct ap_node *n);
bool eng_root_first_async(const struct ap_engine *e);
void eng_root_controller_probed(struct ap_engine *e, const struct ap_node *n);
void eng_root_controller_wait(struct ap_node *n);

/* engine-wait.c */
bool eng_wait_pred_has_child(void *data);
bool eng_wait_pred_nvme_ready(void *data);
void eng_wait_bound_add(struct ap_engine *e, const char *syspath);
int eng_wait_probe_returned(struct ap_node *n, struct udev *udev, unsigned int grace);
void eng_wait_enumerated(struct ap_node *n, struct udev *udev);
void eng_wait_controllers_probed(struct ap_node *n);
void eng_wait_controller_probed(struct ap_node *n);

/* engine-call.c */
void eng_call_progress_clear(struct ap_engine *e);
void eng_node_run(void *data, async_cookie_t cookie);

/* engine-hotplug.c */
void eng_hotplug_on_uevent(const char *action, const char *syspath, void *userdata);
void eng_hotplug_coldplug_complete(struct ap_engine *e);

/* engine-settle.c */
void eng_settle_stop_if_requested_locked(struct ap_engine *e);
void eng_settle(struct ap_engine *e, bool (*until)(struct ap_engine *, const void *),
	    const void *arg, uint64_t deadline_ns);

#endif
