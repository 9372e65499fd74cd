/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Waiting for a driver (see the comment of that name below): the "bind"
 * records of the run, a driver's probe having returned, libata's ports
 * having classified their devices, and every controller's driver having
 * probed before a SCSI device loads its own (not the root's: see
 * run_scsi()).  Each wait is bounded by
 * --device-timeout or by the hang rule (engine-settle.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>

#include "internal.h"
#include "device/device.h"
#include "modules/modules.h"
#include "probe/probe.h"
#include "output/output.h"

bool eng_wait_pred_has_child(void *data)
{
	struct wait_ctx *w = data;

	return ap_has_child(w->udev, w->syspath, w->subsystem, w->devtype);
}

/* NVMe: the controller's class device is live and has a namespace. */
bool eng_wait_pred_nvme_ready(void *data)
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
 *    from the start of the run (eng_wait_bound_add()); a device whose driver's
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

/* Open-addressing set of syspaths (FNV-1a, eng_node_path_hash()), engine lock. */
void eng_wait_bound_add(struct ap_engine *e, const char *syspath)
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
				size_t j = eng_node_path_hash(old[i]) & (ns - 1);

				while (v[j])
					j = (j + 1) & (ns - 1);
				v[j] = old[i];
			}
		free(old);
		e->bound = v;
		e->bound_size = ns;
	}
	mask = e->bound_size - 1;
	for (i = eng_node_path_hash(syspath) & mask; e->bound[i]; i = (i + 1) & mask)
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
		for (i = eng_node_path_hash(syspath) & mask; e->bound[i] && !found; i = (i + 1) & mask)
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

static bool node_given_up(struct ap_node *n)
{
	bool r;

	pthread_mutex_lock(&n->e->lock);
	r = n->abandoned || n->e->stopping;
	pthread_mutex_unlock(&n->e->lock);
	return r || engine_stop_signal(n->e);
}

/*
 * Wait until the driver's probe of @n's device has returned (see "Waiting
 * for a driver").  Returns 1 when it has (or the device was bound before
 * this run), 0 when no driver took the device within @grace ms,
 * -1 when the call was given up (abandoned, stop request) while the probe
 * still ran.  A probe that outlasts --device-timeout is logged once and
 * waited for further: the hang rule decides, in the caller's step.
 */
int eng_wait_probe_returned(struct ap_node *n, struct udev *udev, unsigned int grace)
{
	struct probe_wait p = { .e = n->e, .syspath = n->syspath };
	unsigned int timeout = n->e->cfg.device_timeout_ms;
	uint64_t t0 = ap_now_ns();
	bool warned = false;

	for (;;) {
		char mod[256] = "", drv[256];
		bool attached;
		double ms;

		if (ap_monitor_wait_below(n->e->mon, p.syspath, pred_probe_returned, &p,
					  n->e->mon ? 250 : 0) == 0)
			return 1;
		attached = ap_link_name(n->syspath, "driver", drv, sizeof(drv));
		ms = ap_ms_between(t0, ap_now_ns());
		if (!attached) {
			if (ms >= grace || ms >= timeout)
				return 0;
			if (!n->e->mon)
				usleep(20000);
			continue;
		}
		/* its driver's module ("sd_mod"), or "" when none is named */
		ap_link_name(n->syspath, "driver/module", mod, sizeof(mod));
		/* bound before this run, or no uevents to tell: the old rule */
		if (!n->e->mon || !ap_modules_touched(n->e->mods, mod))
			return 1;
		if (!warned && ms >= timeout) {
			log_dev_warning(eng_node_label(n),
					"its driver's probe has not returned after %u ms", timeout);
			warned = true;
		}
		if (node_given_up(n))
			return -1;
	}
}

/*
 * libata's ports, read from sysfs directly.  A controller's subtree holds
 * every port's links, device positions, SCSI host, targets and disks with
 * their queues and partitions: hundreds of directories, which libudev's
 * enumeration of the controller's children walked and turned into devices
 * on every look (0.3-0.5 s under TCG for ICH9's six ports, more than the
 * ports took to probe).  What the wait needs are a few plain attributes at
 * known places, below the controller's "ataN" directories:
 *
 *   ataN/linkL/devL.D/ata_device/devL.D/{pio_mode,class}   each position
 *   ataN/linkL/ata_link/linkL/sata_spd                      SATA links
 *   ataN/hostH/scsi_host/hostH/state                        the port's host
 *   ataN/hostH/targetH:C:T/H:C:T:L                          its SCSI devices
 *
 * (a port multiplier's links are linkL.P beside linkL).  No attribute read
 * here takes a device lock (uevent would), so a disk being probed cannot
 * hold the wait.
 */
struct ata_count {
	int unknown, present, scsi;
	char *report;           /* NULL, or where to list what each device showed */
	size_t report_size;
};

/* snprintf() into @buf; false when it did not fit. */
static bool __attribute__((format(printf, 3, 4))) pathf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < size;
}


/* Does @s begin with @prefix followed by a digit? */
static bool named(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncmp(s, prefix, n) == 0 && s[n] >= '0' && s[n] <= '9';
}

/* The subdirectories of @dir whose names begin with @prefix and a digit. */
static size_t list_named(const char *dir, const char *prefix, char names[][NAME_MAX + 1],
			 size_t max)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while (n < max && (de = readdir(d)))
		if (named(de->d_name, prefix))
			snprintf(names[n++], NAME_MAX + 1, "%s", de->d_name);
	closedir(d);
	return n;
}

#define ATA_MAX_LINKS 16        /* a port's host link and up to 15 behind a multiplier */

typedef void (*ata_position_fn)(const char *port, const char *link, const char *dev, void *arg);

/* @fn for every device position ("linkN", "devN.M") of the port at @port. */
static void ata_each_position(const char *port, ata_position_fn fn, void *arg)
{
	char links[ATA_MAX_LINKS][NAME_MAX + 1], devs[2][NAME_MAX + 1], dir[PATH_MAX];
	size_t nl = list_named(port, "link", links, ATA_MAX_LINKS), nd, i, j;

	for (i = 0; i < nl; i++) {
		if (!pathf(dir, sizeof(dir), "%s/%s", port, links[i]))
			continue;
		nd = list_named(dir, "dev", devs, 2);
		for (j = 0; j < nd; j++)
			fn(port, links[i], devs[j], arg);
	}
}

/* The attribute @name of position @link/@dev's ata_device ("" when unreadable). */
static void read_dev_attr(const char *port, const char *link, const char *dev, const char *name,
			  char *buf, size_t size)
{
	char dir[PATH_MAX];

	buf[0] = '\0';
	if (pathf(dir, sizeof(dir), "%s/%s/%s/ata_device/%s", port, link, dev, dev))
		ap_read_attr(dir, name, buf, size);
}

/* First pass: has error handling begun at this position (its PIO mode set)? */
static void position_started(const char *port, const char *link, const char *dev, void *arg)
{
	bool *started = arg;
	char pio[32];

	read_dev_attr(port, link, dev, "pio_mode", pio, sizeof(pio));
	if (!pio[0] || strncmp(pio, "<n/a>", 5) == 0)
		*started = false;
}

struct ata_classify {
	struct ata_count *c;
	bool started, running;
};

/* Second pass, after the host's state: the link's speed, the position's class. */
static void position_classify(const char *port, const char *link, const char *dev, void *arg)
{
	struct ata_classify *k = arg;
	struct ata_count *c = k->c;
	char dir[PATH_MAX], cls[32], spd[32];

	spd[0] = '\0';
	if (pathf(dir, sizeof(dir), "%s/%s/ata_link/%s", port, link, link))
		ap_read_attr(dir, "sata_spd", spd, sizeof(spd));
	read_dev_attr(port, link, dev, "class", cls, sizeof(cls));
	/* PATA has no sata_spd: an empty position is probed once reset */
	if (strncmp(cls, "ata", 3) == 0 || strncmp(cls, "zac", 3) == 0)
		c->present++;
	else if (!cls[0] || !k->started || !k->running || (spd[0] && strcmp(spd, "<unknown>") != 0))
		c->unknown++;
	if (c->report) {
		size_t n = strlen(c->report);

		snprintf(c->report + n, c->report_size - n, " %s=%s/%s/%s%s", dev,
			 cls[0] ? cls : "?", k->started ? "set" : "<n/a>", spd[0] ? spd : "-",
			 k->running ? "" : "/in-eh");
	}
}

/*
 * One port, @port its directory.  The order of the reads matters: the
 * reset marks every position PIO0 when it begins, before the link comes
 * up and shows its speed, so for a moment a position with a device looks
 * probed and empty.  Error handling is still running then, and the port's
 * SCSI host says so: its state is "recovery" from the moment the port's
 * probe schedules error handling (ata_port_probe(), scsi_schedule_eh())
 * until it has reset, classified and configured every device.  So: every
 * position's "pio_mode" first (not "<n/a>": error handling has begun),
 * then the host's state ("running": it has ended, since it runs once
 * while the port probes), then "class" and "sata_spd", final by then, then
 * the SCSI devices the port added for what it classified.
 */
static void ata_port_count(const char *port, struct ata_count *c)
{
	char hosts[1][NAME_MAX + 1], dir[PATH_MAX], st[32], targets[8][NAME_MAX + 1];
	struct ata_classify k = { .c = c, .started = true };
	size_t nh, nt, i;

	ata_each_position(port, position_started, &k.started);
	nh = list_named(port, "host", hosts, 1);
	if (nh && pathf(dir, sizeof(dir), "%s/%s/scsi_host/%s", port, hosts[0], hosts[0])) {
		ap_read_attr(dir, "state", st, sizeof(st));
		k.running = strcmp(st, "running") == 0;
	}
	ata_each_position(port, position_classify, &k);
	if (!nh)
		return;
	if (!pathf(dir, sizeof(dir), "%s/%s", port, hosts[0]))
		return;
	nt = list_named(dir, "target", targets, 8);
	for (i = 0; i < nt; i++) {
		struct dirent *de;
		DIR *d;

		if (!pathf(dir, sizeof(dir), "%s/%s/%s", port, hosts[0], targets[i]))
			continue;
		d = opendir(dir);
		if (!d)
			continue;
		while ((de = readdir(d)))
			if (ap_is_hctl(de->d_name, strlen(de->d_name)))
				c->scsi++;
		closedir(d);
	}
}

/* The ports of the libata controller @syspath: how many; counts in @c. */
static int ata_ports_count(const char *syspath, struct ata_count *c)
{
	char port[PATH_MAX];
	struct dirent *de;
	int n = 0;
	DIR *d = opendir(syspath);

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (!named(de->d_name, "ata") || de->d_name[3 + strspn(de->d_name + 3, "0123456789")])
			continue;
		n++;
		if (c && pathf(port, sizeof(port), "%s/%s", syspath, de->d_name))
			ata_port_count(port, c);
	}
	closedir(d);
	return n;
}

/*
 * libata: every port has classified its devices and added their SCSI
 * devices.  With the driver's probe synchronous the insertion's own
 * barrier ended after all of that, and this was true at once; with
 * async_probe (the root's controller, modules.c) it is what the call
 * waits for.
 */
static bool pred_ata_ports_done(void *data)
{
	struct wait_ctx *w = data;
	struct ata_count c = { 0 };

	ata_ports_count(w->syspath, &c);
	return c.unknown == 0 && c.scsi >= c.present;
}

/*
 * After the controller's probe returned: wait for what its driver does
 * after that (see "Waiting for a driver").  Bounded by --device-timeout.
 */
void eng_wait_enumerated(struct ap_node *n, struct udev *udev)
{
	struct wait_ctx w = { .udev = udev, .syspath = n->syspath, .subsystem = "scsi",
			      .devtype = "scsi_device" };
	unsigned int timeout = n->e->cfg.device_timeout_ms;
	uint64_t t0 = ap_now_ns();

	if (ata_ports_count(n->syspath, NULL) > 0) {
		uint64_t end = t0 + (uint64_t)timeout * 1000000ULL;
		int r;

		/*
		 * No uevent marks the end of an empty port's error handling
		 * (nor a class or a mode being set), so look again every
		 * AP_ATA_RECHECK_MS as well as on every uevent below it.
		 */
		while ((r = ap_monitor_wait_below(n->e->mon, w.syspath, pred_ata_ports_done, &w,
						  AP_ATA_RECHECK_MS)) < 0 && ap_now_ns() < end &&
		       !node_given_up(n))
			;
		if (r < 0) {
			char report[1024] = "";
			struct ata_count c = { .report = report, .report_size = sizeof(report) };

			ata_ports_count(n->syspath, &c);
			log_dev_warning(n->sysname,
					"ATA ports not all probed after %u ms (class/pio/link speed/host:%s)",
					timeout, report);
		} else
			log_dev_info(n->sysname, "ATA ports probed after %.0f ms",
				     ap_ms_between(t0, ap_now_ns()));
	} else if (ap_count_children(udev, n->syspath, "scsi_host", NULL, NULL, NULL) > 0 &&
		   !ap_modules_scsi_scan_sync()) {
		/* the insertion's own barrier covered the scan (see above) */
		log_dev_debug(n->sysname, "scsi_mod scans asynchronously (scan= set by the user?)");
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

void eng_wait_controllers_probed(struct ap_node *n)
{
	struct ap_engine *e = n->e;
	uint64_t t0, limit;

	if (!e->parallel || !e->modules_on || !n->modalias || e->cfg.dry_run)
		return;
	/*
	 * Not bounded by --device-timeout: each controller call is bounded by
	 * its own waits and by the hang rule, which abandons it (and so ends
	 * this wait) when one step does not return.  The step is renewed
	 * while waiting, so this call is not taken for hung meanwhile; the
	 * last bound is only a backstop.
	 */
	t0 = ap_now_ns();
	limit = 4 * ((uint64_t)e->cfg.device_timeout_ms + AP_HANG_SLACK_MS) * 1000000ULL;
	for (;;) {
		bool stop;

		eng_node_step(n, "waiting for the controllers' drivers");
		if (ap_monitor_wait(e->mon, pred_controllers_probed, e, AP_HANG_SLACK_MS / 2) == 0)
			break;
		pthread_mutex_lock(&e->lock);
		stop = e->stopping || n->abandoned;
		pthread_mutex_unlock(&e->lock);
		if (stop)
			break;
		if (ap_now_ns() - t0 > limit) {
			log_dev_info(eng_node_label(n),
				     "controllers' drivers still probing after %.0f ms, loading its own",
				     ap_ms_between(t0, ap_now_ns()));
			break;
		}
	}
	ap_trace_phase(n->call, "wait", t0, ap_now_ns());
}

/* A controller call is past its driver's probe: SCSI device calls may load theirs. */
void eng_wait_controller_probed(struct ap_node *n)
{
	pthread_mutex_lock(&n->e->lock);
	n->probed = true;
	pthread_mutex_unlock(&n->e->lock);
	ap_monitor_kick(n->e->mon);
}
