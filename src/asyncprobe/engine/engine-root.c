/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Root first (engine.c, "Root first"): reading the root's by-path name
 * (asyncprobe.root_path=, --root-path, the image's record) and moving the
 * root's controller, device, disk and partition to the front of their
 * siblings before a node's children go into the order.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>

#include "internal.h"
#include "device/device.h"
#include "modules/modules.h"
#include "probe/probe.h"
#include "output/output.h"

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
 * Root first: the root device's /dev/disk/by-path name in the
 * configuration (asyncprobe.root_path= on the kernel command line, else
 * --root-path, else in the initramfs what asyncprobe-mkinitramfs recorded:
 * ap_config_apply_kernel(), init-bootparams.c).  The PCI address in it
 * (udev's by-path names hold the storage controller's, the closest PCI
 * device) picks the controllers that come first in the order; "none" or
 * nothing: none.
 */
void eng_root_first_setup(struct ap_engine *e)
{
	const char *name = e->cfg.root_path, *p;
	const char *src = e->cfg.root_path_source ? e->cfg.root_path_source : "--root-path";

	e->root_ctl_probed = true;      /* nothing to wait for, unless set below */
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
	e->root_ctl_probed = !(e->parallel && e->root_pci[0]);
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
	struct udev_device *d = ap_udev_device_new(udev, f->syspath), *of = d;
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

bool eng_root_chain_node(struct ap_engine *e, struct udev *udev, const struct ap_node *n)
{
	struct ap_found f = { .syspath = n->syspath, .kind = n->kind };

	return e->root_pci[0] && on_root_controller(e, n->syspath) && on_root_chain(e, udev, &f);
}

/*
 * Is @n the root's controller (or a controller below it: its virtio
 * device), in a fastboot run?  Its own driver is then inserted with
 * async_probe (modules.c, run_controller()): its insertion does not wait
 * for every other driver's asynchronous work, only its own probe does.
 */
bool eng_root_controller_node(const struct ap_engine *e, const struct ap_node *n)
{
	return eng_root_first_async(e) && n->syspath && on_root_controller(e, n->syspath);
}

/*
 * A fastboot run with a root path: every controller's own driver goes in
 * with async_probe.  The root's, so that its insertion does not wait for
 * every other driver's asynchronous work; the others', because the root's
 * SCSI device may have loaded sd_mod before they scan their buses, and sd's
 * asynchronous probe of a disk that hangs would then hold their insertion
 * (the barrier at its end) with their healthy disks.  The engine waits for
 * each probe and what it enumerates itself (engine-wait.c).
 */
bool eng_root_first_async(const struct ap_engine *e)
{
	return e->parallel && e->root_pci[0];
}

/*
 * The root's controller probes first.  libata scans each port's devices
 * only after every asynchronous call scheduled before the port's probe
 * has ended (async_synchronize_cookie() in async_port_probe(), to keep
 * the device order), and the kernel has one such domain: an NVMe
 * controller's reset and namespace scan (nvme_async_probe()), or any
 * other driver's asynchronous work scheduled by an insertion beside the
 * root's, would hold the root's disk for as long.  So in a fastboot run
 * with a root path, every other controller's driver goes in once the root's
 * controller (the PCI device at the root's address) has been probed by
 * its driver: its ports then have their places in that domain, before
 * anything the other drivers schedule.  Only the insertion waits, for the
 * root controller's probe (its "bind", not its disks), bounded by
 * --device-timeout; a root path naming no controller releases them at
 * once (eng_root_first_sort()).  (The hold was not measured apart from the
 * insertions with async_probe it came with: see docs/performance.md.)
 */
static bool is_root_pci_node(const struct ap_engine *e, const struct ap_node *n)
{
	const char *b;

	if (!e->root_pci[0] || !n || !n->syspath)
		return false;
	b = strrchr(n->syspath, '/');
	return b && strcmp(b + 1, e->root_pci) == 0;
}

/* @n's driver has probed it, or its call ended or gave up; NULL: none is coming. */
void eng_root_controller_probed(struct ap_engine *e, const struct ap_node *n)
{
	if (n && !is_root_pci_node(e, n))
		return;
	pthread_mutex_lock(&e->lock);
	if (!e->root_ctl_probed) {
		e->root_ctl_probed = true;
		pthread_cond_broadcast(&e->cond);
	}
	pthread_mutex_unlock(&e->lock);
}

/* Before a controller that is not the root's inserts its driver. */
void eng_root_controller_wait(struct ap_node *n)
{
	struct ap_engine *e = n->e;
	uint64_t t0 = ap_now_ns(), end = t0 + (uint64_t)e->cfg.device_timeout_ms * 1000000ULL;
	struct timespec ts;
	bool probed;

	if (!e->parallel || !e->root_pci[0] || eng_root_controller_node(e, n))
		return;
	pthread_mutex_lock(&e->lock);
	probed = e->root_ctl_probed;
	pthread_mutex_unlock(&e->lock);
	if (probed)
		return;
	eng_node_step(n, "waiting for the root's controller to probe");
	ts.tv_sec = (time_t)(end / 1000000000ULL);
	ts.tv_nsec = (long)(end % 1000000000ULL);
	pthread_mutex_lock(&e->lock);
	while (!e->root_ctl_probed && !e->stopping && !n->abandoned)
		if (pthread_cond_timedwait(&e->cond, &e->lock, &ts) == ETIMEDOUT)
			break;
	probed = e->root_ctl_probed;
	pthread_mutex_unlock(&e->lock);
	if (!probed)
		log_dev_warning(n->sysname,
				"the root's controller %s did not probe within %u ms; loading this "
				"driver anyway", e->root_pci, e->cfg.device_timeout_ms);
	ap_trace_phase(n->call, "wait", t0, ap_now_ns());
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
void eng_root_first_sort(struct ap_engine *e, struct udev *udev, struct ap_node *n)
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
			eng_root_controller_probed(e, NULL);        /* no root's controller to wait for */
		if (n->discovery)
			log_notice("root path %s: no controller at %s (a disk moved, or another machine's "
				   "image): the order is unchanged", e->root_path, e->root_pci);
		return;
	}
	if (!n->discovery)
		for (i = 0; i < l->n; i++)
			if (first[i])
				log_dev_debug(eng_node_label(n),
					      "%s is on the root's chain (%s), it comes first",
					      l->v[i].syspath, e->root_path);
	stable_front(l, first);
}
