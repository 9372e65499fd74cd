/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The engine: one run of discovery, driver loading, probing and linking.
 * This file holds its API (start, wait for a path, finish with the
 * manifest snapshot, free, the state dump) and the Theory of Operation of
 * the whole; the parts live in engine-*.c, mapped in internal.h:
 * the order in engine-order.c, root first in engine-root.c, the calls in
 * engine-call.c, waiting for a driver in engine-wait.c, the hang rule and
 * stop requests in engine-settle.c, later devices in engine-hotplug.c.
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
 *      their place.  An NVMe multipath head behind two controllers is
 *      listed by one of them only, decided from sysfs (ap_owner_path():
 *      the first in devpath order with a path to it), not by which call
 *      enumerates first; should two parents list one device all the same
 *      (its paths changed during the run), it goes with the first in the
 *      order: when the later one registered it first, it moves, with its
 *      subtree, below the earlier one (eng_order_adopt_locked());
 *   3. is published at its turn (eng_order_pump()), and sealed.
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
 * order (eng_root_first_sort()): in the discovery call's list, the
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
 * logged (at the end of the run: no device has that by-path link).  In
 * fastboot runs the root's controller also probes first (engine-root.c,
 * "The root's controller probes first"): its driver goes in with
 * async_probe, the others' once it has been probed, so the kernel's
 * single asynchronous domain holds nothing of theirs before its ports.
 *
 * Sequentially (no fastboot) the calls run one at a time on one worker.
 * The top level runs next the first queued call in the order, except
 * that every queued controller runs before any other device: a SCSI
 * device's call inserts sd_mod, whose asynchronous probe of a disk that
 * never answers would hold a later controller's libata port probe (which
 * waits for every earlier asynchronous call in the kernel), so all
 * controller drivers go in before any SCSI upper driver, as in fastboot
 * (see "Waiting for a driver", engine-wait.c).  No call waits for its
 * turn (whoever seals the node at the frontier publishes), so running out
 * of order cannot deadlock, and the same cookies result in sequential,
 * fastboot and ASYNC_CHAOS runs.
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

#include "internal.h"
#include "device/device.h"
#include "modules/modules.h"
#include "probe/probe.h"
#include "engine/engine.h"
#include "output/output.h"
#include "links/links.h"

int ap_engine_new(struct ap_engine **ret, const struct ap_config *cfg)
{
	struct ap_engine *e;
	pthread_condattr_t ca;

	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	pthread_mutex_init(&e->lock, NULL);
	pthread_mutex_init(&e->out_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&e->cond, &ca);
	pthread_condattr_destroy(&ca);
	e->cfg = *cfg;
	e->run = eng_node_run;
	*ret = e;
	return 0;
}

int ap_engine_start(struct ap_engine **ret, const struct ap_config *cfg)
{
	struct ap_engine *e;
	int r;

	r = ap_engine_new(&e, cfg);
	if (r < 0)
		return r;
	r = ap_engine_run(e);
	if (r < 0) {
		ap_engine_free(e);
		return r;
	}
	*ret = e;
	return 0;
}

int ap_engine_run(struct ap_engine *e)
{
	struct ap_node *disc;
	size_t i;
	int r;

	e->t0 = ap_now_ns();
	/* unset here: the kernel command line said nothing (ap_config_apply_kernel()) */
	e->fastboot = e->cfg.fastboot > 0;
	/*
	 * Both modes run calls on worker threads, so the top level stays free
	 * to abandon a hung one; sequentially on a single worker, one call at
	 * a time, controllers first, then in the order (eng_order_drain()).  What the
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
	eng_root_first_setup(e);
	async_set_max_threads(!e->parallel ? 1 : e->cfg.max_threads ? e->cfg.max_threads
								    : AP_DEFAULT_MAX_THREADS);
	if (e->cfg.trace_file || e->cfg.plot_file)
		ap_trace_enable();
	e->progress = e->cfg.progress;

	if (!e->cfg.no_modules) {
		r = ap_modules_new(&e->mods, e->cfg.basedir, e->cfg.modules_dir,
				   e->cfg.kernel_version, e->cfg.modprobe_config, e->cfg.dry_run);
		if (r < 0 && (e->cfg.basedir || e->cfg.modules_dir || e->cfg.kernel_version ||
			      e->cfg.modprobe_config)) {
			/* an explicit tree that does not work is a configuration error */
			log_error("module tree unusable: %s", strerror(-r));
			return r == -ENOENT ? -ENOENT : r;
		}
		if (r < 0)
			log_warning("drivers cannot be loaded: built-in drivers only (see -b, --modules-dir)");
		e->modules_on = r >= 0;
		for (i = 0; e->mods && i < e->cfg.n_blacklist; i++)
			ap_modules_blacklist(e->mods, e->cfg.blacklist[i]);
	}
	if (!e->cfg.no_links) {
		e->links = ap_links_new(e->cfg.dev_dir, e->cfg.dry_run);
		if (!e->links) {
			log_error("cannot set up links below %s", e->cfg.dev_dir);
			return -ENOMEM;
		}
	}

	/* The monitor first: nothing that appears during enumeration is missed. */
	r = ap_monitor_start(&e->mon, eng_hotplug_on_uevent, e);
	if (r < 0) {
		log_warning("no kernel uevent monitor (%s): waits re-check every 20 ms",
			    strerror(-r));
		e->mon = NULL;
	}

	log_info("%s run%s, %s, device timeout %u ms", e->parallel ? "fastboot (concurrent)" :
		 "sequential", e->cfg.dry_run ? " (dry run)" : "",
		 e->modules_on ? ap_modules_dir(e->mods) : "no module loading",
		 e->cfg.device_timeout_ms);

	pthread_mutex_lock(&e->lock);
	disc = eng_node_register_locked(e, "", AP_KIND_NONE, NULL);
	if (disc) {
		*eng_node_path_slot_locked(e, "") = NULL;   /* out of the index; the only node, no chain broken */
		eng_order_insert_locked(e, NULL, disc);     /* the head of the order: cookie 1 */
	}
	pthread_mutex_unlock(&e->lock);
	if (!disc)
		return -ENOMEM;
	free(disc->syspath);
	disc->syspath = NULL;   /* never matches a device */
	disc->discovery = true;
	eng_order_spawn(e, disc);

	/* Sequentially, everything runs here; concurrently, this returns at once. */
	if (!e->parallel)
		eng_settle(e, NULL, NULL, 0);
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
	snprintf(p.path, sizeof(p.path), "%s/%s", e->cfg.dev_dir, relpath);
	if (timeout_ms != 0 && timeout_ms != UINT32_MAX)
		deadline = ap_now_ns() + (uint64_t)timeout_ms * 1000000ULL;

	for (;;) {
		bool stopping;

		if (path_exists(e, &p))
			return 0;
		eng_settle(e, path_exists, &p, deadline);
		if (path_exists(e, &p))
			return 0;
		pthread_mutex_lock(&e->lock);
		eng_settle_stop_if_requested_locked(e);
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
	m->dry_run = e->cfg.dry_run;
	m->modules_dir = e->modules_on ? ap_modules_dir(e->mods) : NULL;
	m->dev_dir = e->cfg.dev_dir;
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
	eng_settle(e, NULL, NULL, 0);
	pthread_mutex_lock(&e->lock);
	e->finished = true;             /* later uevents are ignored */
	pthread_mutex_unlock(&e->lock);
	ap_monitor_stop(e->mon);        /* joins: no callback runs after this */
	eng_settle(e, NULL, NULL, 0);       /* hotplugs that slipped in meanwhile */
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
	eng_call_progress_clear(e);
	e->progress = false;

	if (engine_snapshot(e, &m, &nodes, &links) < 0)
		return AP_EXIT_SYSTEM;
	if (e->stopping)
		m.counts.stop_signal = engine_stop_signal(e);
	c = m.counts;
	status = ap_counts_exit_status(&c);

	if (ap_udev_rules_finish(e->links, &e->cfg) < 0)
		status = status ?: AP_EXIT_DEGRADED;
	if (e->cfg.json_file && ap_manifest_write(&m, e->cfg.json_file) < 0)
		status = status ?: AP_EXIT_DEGRADED;
	if (e->cfg.trace_file) {
		r = ap_trace_write_chrome(e->cfg.trace_file);
		if (r < 0)
			log_error("cannot write trace %s: %s", e->cfg.trace_file, strerror(-r));
	}
	if (e->cfg.plot_file) {
		r = ap_trace_write_svg(e->cfg.plot_file, "asyncprobe");
		if (r < 0)
			log_error("cannot write plot %s: %s", e->cfg.plot_file, strerror(-r));
	}
	if (e->root_path && e->links && !e->cfg.dry_run && !e->stopping) {
		char rp[PATH_MAX];
		struct stat st;

		snprintf(rp, sizeof(rp), "%s/disk/by-path/%s", e->cfg.dev_dir, e->root_path);
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
			   engine_stop_signal(e) == SIGINT ? "SIGINT" : "SIGTERM", c.stopped,
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
		eng_node_free(e->nodes[i]);
	free(e->nodes);
	free(e->by_path);
	ap_strv_free(e->backlog, e->n_backlog);
	ap_strv_free(e->bound, e->bound_size);      /* sparse: NULL where empty */
	ap_modules_free(e->mods);
	ap_links_free(e->links);
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
			n->state == NODE_NEW ? n->syspath : eng_node_label(n),
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
