/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A device's call (engine.c, "Each call"): its steps by kind - discovery,
 * a controller (its driver and what the driver enumerates), a SCSI device
 * (its upper driver), a disk or partition (blkid, names) - enumerating its
 * children, and step 2 (call_ready()), where its children go into the
 * order and are spawned.  libasync runs eng_node_run() through ap_engine.run.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "internal.h"
#include "device/device.h"
#include "modules/modules.h"
#include "probe/probe.h"
#include "output/output.h"

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
		 n->discovery ? "" : eng_node_label(n));
	ap_log_progress(line);
}

void eng_call_progress_clear(struct ap_engine *e)
{
	if (e->progress)
		ap_log_progress(NULL);
}

/*
 * Enumerate the devices @n owns (slow part; before step 2).  They are
 * registered as its children, put into the order and spawned at step 2
 * (call_ready()), unless the call was abandoned by then.
 */
static void collect_children(struct udev *udev, struct ap_node *n)
{
	struct ap_engine *e = n->e;
	uint64_t t0;
	int r;

	/* From here on a new device below @n is a hotplug (see hotplug_one(), engine-hotplug.c). */
	pthread_mutex_lock(&e->lock);
	n->state = NODE_COLLECTED;
	if (!n->abandoned) {
		n->phase = "enumerating its devices";
		n->t_progress = ap_now_ns();
	}
	pthread_mutex_unlock(&e->lock);

	t0 = ap_now_ns();
	r = ap_enumerate(udev, n->discovery ? NULL : n->syspath, e->cfg.all_modules,
			 e->cfg.include_loop, &n->found);
	if (!n->discovery)
		ap_trace_phase(n->call, "enumerate", t0, ap_now_ns());
	if (r < 0) {
		log_dev_error(eng_node_label(n), "cannot enumerate devices: %s", strerror(-r));
		eng_node_fail(n, r, "enumeration failed");
		return;
	}
	if (n->driver && strcmp(n->driver, "nvme") == 0) {
		ap_enumerate_nvme_heads(udev, n->syspath, &n->found);
		ap_found_list_sort(&n->found);
	}
}

/*
 * Step 2: the call's work is done.  Decided under the engine lock, against
 * abandon_locked() (engine-settle.c): an abandoned call stops here; a stop
 * request seals the node unpublished; otherwise its children are
 * registered and put into the order right after it, and it is ready to
 * publish at its turn.  Then the children are described and spawned
 * (whatever their place in the order).
 */
static void call_ready(struct udev *udev, struct ap_node *n)
{
	struct ap_engine *e = n->e;
	struct ap_node *after = n;
	size_t i;

	eng_root_first_sort(e, udev, n);
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
		eng_order_seal_locked(e, n);
		pthread_mutex_unlock(&e->lock);
		ap_found_list_free(&n->found);
		return;
	}
	for (i = 0; n->children && i < n->found.n; i++) {
		struct ap_node *c = eng_node_register_locked(e, n->found.v[i].syspath,
							 n->found.v[i].kind, n);

		if (!c) {
			/* known: keep the order a function of the tree, not of timing */
			c = eng_node_find_locked(e, n->found.v[i].syspath);
			if (c && c->parent && c->parent != n && !c->hotplug &&
			    eng_order_before_locked(n, c->parent))
				after = eng_order_adopt_locked(e, n, after, c);
			continue;
		}
		n->children[n->n_children++] = c;
		eng_order_insert_locked(e, after, c);
		after = c;
	}
	n->sync_result = 1;
	n->ready = true;
	pthread_mutex_unlock(&e->lock);
	ap_found_list_free(&n->found);

	for (i = 0; i < n->n_children; i++) {
		struct udev_device *d;

		if (eng_node_describe_scsi(n->children[i]))
			continue;
		d = ap_udev_device_new(udev, n->children[i]->syspath);

		if (d) {
			eng_node_describe(n->children[i], d);
			udev_device_unref(d);
		}
	}
	eng_order_spawn_children(e, n);
}

static void load_modules(struct ap_node *n, const char *who)
{
	struct ap_engine *e = n->e;
	uint64_t t0;

	if (!e->modules_on || !n->modalias || !*n->modalias)
		return;
	eng_node_step(n, "loading its driver");
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
	unsigned int timeout = n->e->cfg.device_timeout_ms;
	uint64_t t0;
	bool root = eng_root_controller_node(n->e, n);

	/*
	 * Root first in a fastboot run (engine-root.c, "The root's controller
	 * probes first"): the root's controller's driver goes in first, the
	 * others' once it has probed, and all of them with async_probe
	 * (modules.c, "The root's controller").
	 */
	if (!root)
		eng_root_controller_wait(n);
	ap_modules_set_async_own(eng_root_first_async(n->e));
	load_modules(n, n->sysname);
	ap_modules_set_async_own(false);

	if (!n->e->cfg.dry_run) {
		t0 = ap_now_ns();
		/*
		 * The insertion returned before the driver probed (async_probe):
		 * wait for its probe, in the step "loading its driver", then for
		 * what the driver enumerates after it (see "Waiting for a
		 * driver").  A driver may also decline a device.
		 */
		if (n->driver || any_module_ok(n)) {
			int r = eng_wait_probe_returned(n, udev, AP_BIND_GRACE_MS);

			eng_root_controller_probed(n->e, n);        /* the others' drivers may go in */
			if (r < 0)
				return;         /* given up: its devices are not touched */
			if (r == 0)
				log_dev_info(n->sysname, "no driver bound after %u ms",
					     AP_BIND_GRACE_MS);
			else
				eng_wait_enumerated(n, udev);
		}
		eng_node_step(n, "waiting for its devices");
		eng_node_read_driver(n);
		if (n->driver && strcmp(n->driver, "nvme") == 0) {
			/* namespaces are scanned from a workqueue once the controller is live */
			if (ap_monitor_wait_below(n->e->mon, w.syspath, eng_wait_pred_nvme_ready, &w,
						  timeout) < 0)
				log_dev_warning(n->sysname,
						"NVMe controller not live with a namespace after %u ms",
						timeout);
		} else if (n->driver && (strcmp(n->driver, "usb-storage") == 0 ||
					 strcmp(n->driver, "uas") == 0)) {
			/* usb-storage scans from delayed work, after init_module returned */
			w.subsystem = "scsi";
			w.devtype = "scsi_device";
			if (ap_monitor_wait_below(n->e->mon, w.syspath, eng_wait_pred_has_child, &w,
						  timeout) < 0)
				log_dev_warning(n->sysname, "no SCSI device after %u ms", timeout);
		}
		ap_trace_phase(n->call, "wait", t0, ap_now_ns());
	}
	eng_wait_controller_probed(n);
	if (n->e->modules_on)
		ap_modules_note_unbound(n->e->mods, n->modalias, n->sysname, n->syspath, n->driver,
					&n->loads, &n->n_loads);
	eng_root_controller_probed(n->e, n);        /* no driver to wait for, or dry run */
	log_info("controller %s%s%s%s", n->sysname, n->driver ? " [" : "",
		 n->driver ? n->driver : "", n->driver ? "]" : "");
	collect_children(udev, n);
}

static void run_scsi(struct ap_node *n, struct udev *udev)
{
	struct wait_ctx w = { .udev = udev, .syspath = n->syspath, .subsystem = "block",
			      .devtype = "disk" };
	char type[16];
	unsigned long t = ~0UL;
	uint64_t t0;

	/*
	 * Root first: the root's own SCSI device does not wait for the other
	 * controllers' drivers (the LSI's bus settle, NVMe's reset), only its
	 * own controller's ports, which have probed since the device exists.
	 * The price, the reason every other SCSI device waits (engine-wait.c):
	 * sd's asynchronous probe of a disk that hangs on an earlier controller
	 * can now start before a later libata controller probes its ports, which
	 * then wait for it; those disks are abandoned, the root is not.
	 */
	if (!eng_root_chain_node(n->e, udev, n))
		eng_wait_controllers_probed(n);
	else
		log_dev_debug(eng_node_label(n),
			      "on the root's chain, not waiting for the other controllers' drivers");
	load_modules(n, n->sysname);
	if (ap_read_attr(n->syspath, "type", type, sizeof(type)) && *type)
		t = strtoul(type, NULL, 10);
	/*
	 * disk, optical, RBC: a block device follows, sd_mod probes
	 * asynchronously.  Its block device is in sysfs before the probe
	 * has read the partition table; only the probe's return ("bind")
	 * says the disk is ready to be opened (see "Waiting for a driver").
	 */
	if (!n->e->cfg.dry_run && (t == 0 || t == 5 || t == 7 || t == 0xe) &&
	    (n->driver || any_module_ok(n))) {
		eng_node_step(n, "waiting for its block device");
		t0 = ap_now_ns();
		/* sd's probes are queued: one may start late on a loaded machine */
		int r = eng_wait_probe_returned(n, udev, n->e->cfg.device_timeout_ms);

		if (r < 0)
			return;         /* given up while sd's probe still ran */
		/* no driver took it within the timeout: look once, do not wait again */
		if (ap_monitor_wait_below(n->e->mon, w.syspath, eng_wait_pred_has_child, &w,
					  r > 0 ? n->e->cfg.device_timeout_ms : 0) < 0) {
			log_dev_warning(n->sysname, "no block device after %u ms",
					n->e->cfg.device_timeout_ms);
			eng_node_fail(n, -ETIMEDOUT, "no block device");
		}
		ap_trace_phase(n->call, "wait", t0, ap_now_ns());
	}
	eng_node_read_driver(n);
	collect_children(udev, n);
}

static void run_block(struct ap_node *n, struct udev *udev)
{
	struct ap_engine *e = n->e;
	struct udev_device *d;
	uint64_t t0;
	int r;

	eng_node_step(n, "probing");
	t0 = ap_now_ns();
	if (n->devnode) {
		n->probe_r = ap_probe_device(n->devnode, &n->fs);
		if (n->probe_r < 0) {
			log_dev_warning(n->devname, "cannot probe %s: %s", n->devnode,
					strerror(-n->probe_r));
			eng_node_fail(n, n->probe_r, "probe failed");
		}
	} else {
		eng_node_fail(n, -ENODEV, "no device node");
	}
	ap_trace_phase(n->call, "probe", t0, ap_now_ns());

	d = ap_udev_device_new(udev, n->syspath);
	if (d && e->links) {
		/* Names are pure computation (and SG_IO inquiries): before step 2. */
		eng_node_step(n, "computing its names");
		t0 = ap_now_ns();
		r = ap_names_for_device(d, &n->fs, &n->names);
		if (r < 0)
			log_dev_warning(n->devname, "cannot compute link names: %s", strerror(-r));
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

void eng_node_run(void *data, async_cookie_t cookie)
{
	struct ap_node *n = data;
	struct ap_engine *e = n->e;
	struct udev *udev;
	char label[300];
	uint64_t t0;
	bool skip;

	n->t_start = ap_now_ns();
	pthread_mutex_lock(&e->lock);
	n->call = cookie;
	n->state = NODE_RUNNING;
	n->phase = "starting";
	n->t_progress = n->t_start;
	skip = n->stopped = e->stopping;
	if (skip)
		eng_order_seal_locked(e, n);
	pthread_mutex_unlock(&e->lock);
	if (skip)
		goto done;

	snprintf(label, sizeof(label), "%s", eng_node_label(n));
	ap_trace_label(cookie, n->discovery ? "discover" : ap_kind_to_string(n->kind), label);
	progress_update(e, n);

	udev = udev_new();
	if (!udev) {
		eng_node_fail(n, -ENOMEM, "out of memory");
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
		t0 = ap_now_ns();
		call_ready(udev, n);
		if (!n->discovery && n->kind != AP_KIND_PARTITION)
			ap_trace_phase(n->call, "children", t0, ap_now_ns());
		udev_unref(udev);
	}
	eng_root_controller_probed(e, n);   /* whatever became of it: nobody waits longer */

	pthread_mutex_lock(&e->lock);
	if (n->abandoned) {
		/* counted as done when it was abandoned; touch nothing shared */
		if (n->stopped)
			log_dev_debug(eng_node_label(n),
				      "the call stopped returned after %.1f s; its results are dropped",
				      ap_ms_between(n->t_start, ap_now_ns()) / 1000.0);
		else
			log_dev_notice(eng_node_label(n),
				       "the abandoned call returned after %.1f s; its results are dropped",
				       ap_ms_between(n->t_start, ap_now_ns()) / 1000.0);
		n->abandoned_returned = true;
		e->abandoned_running--;
		pthread_cond_broadcast(&e->cond);
		pthread_mutex_unlock(&e->lock);
		return;
	}
	pthread_mutex_unlock(&e->lock);

done:
	/* its own turn may have come, or it was the one the frontier waited for */
	eng_order_pump(e, n);
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
