/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Uevents seen by the monitor during a run: "bind" records for the waits
 * (engine-wait.c), and devices that appear later (engine.c, "Devices that
 * appear later"): kept until the coldplug tree is complete, then put at
 * the end of the order; nothing below an abandoned call is looked at.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "device/device.h"
#include "modules/modules.h"
#include "probe/probe.h"
#include "output/output.h"

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
	struct udev_device *d;
	struct ap_node *parent = NULL, *n = NULL;
	enum ap_kind kind;
	char *owner = NULL;
	bool known;

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
		       eng_node_label(parent));
	/*
	 * At coldplug's end the backlog holds every device added meanwhile,
	 * nearly all of them found by their parents' calls already, or of no
	 * interest by their subsystem: neither needs a libudev device.
	 */
	known = !parent && eng_node_find_locked(e, syspath);
	pthread_mutex_unlock(&e->lock);
	if (parent || known || !ap_path_may_matter(syspath, e->cfg.all_modules))
		return;
	udev = udev_new();
	if (!udev)
		return;
	d = ap_udev_device_new(udev, syspath);
	if (!d)
		goto out;
	kind = ap_classify(d, e->cfg.all_modules, e->cfg.include_loop);
	if (kind == AP_KIND_NONE)
		goto out;
	owner = ap_owner_path(udev, udev_device_get_syspath(d), e->cfg.all_modules,
			      e->cfg.include_loop);

	pthread_mutex_lock(&e->lock);
	if (owner) {
		parent = eng_node_find_locked(e, owner);
		/* a parent that has not enumerated yet will find it itself */
		if (parent && parent->state < NODE_COLLECTED && !parent->abandoned) {
			pthread_mutex_unlock(&e->lock);
			goto out;
		}
		if (parent && parent->abandoned) {
			pthread_mutex_unlock(&e->lock);
			log_dev_notice(syspath, "ignored, it belongs to the abandoned call of %s",
				       eng_node_label(parent));
			goto out;
		}
	}
	if (kind == AP_KIND_PARTITION && !parent) {
		/* a partition of a disk we do not handle */
		pthread_mutex_unlock(&e->lock);
		goto out;
	}
	n = eng_node_register_locked(e, syspath, kind, parent);
	if (n) {
		n->hotplug = true;
		eng_order_insert_locked(e, NULL, n);        /* at the end: its number depends on timing */
	}
	pthread_mutex_unlock(&e->lock);
	if (n) {
		eng_node_describe(n, d);
		log_info("hotplug: %s %s", ap_kind_to_string(kind), eng_node_label(n));
		eng_order_spawn(e, n);
	}
out:
	free(owner);
	if (d)
		udev_device_unref(d);
	udev_unref(udev);
}

void eng_hotplug_on_uevent(const char *action, const char *syspath, void *userdata)
{
	struct ap_engine *e = userdata;
	char **v;

	if (strcmp(action, "bind") == 0) {
		eng_wait_bound_add(e, syspath);
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
void eng_hotplug_coldplug_complete(struct ap_engine *e)
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
