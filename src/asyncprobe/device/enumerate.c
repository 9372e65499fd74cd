/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Discovery: what the engine cares about among the devices libudev knows,
 * in which order, and a kernel-uevent monitor to wait on.  The whole
 * system is listed once (the discovery call) where libudev would list it
 * (enumerate_listed()); a device's children and what the waits count are
 * read from sysfs directly (subtree_walk()), a device's owner by climbing
 * its path (ap_owner_path()).  What a subsystem link and a name decide
 * (a SCSI device, a host, a class device of no interest) is decided so
 * (path_may_matter()); the rest is classified with libudev.  A libudev
 * device resolves its whole path component by component when it is made:
 * under TCG that made up most of a scsi_debug disk's cost.
 *
 * Every device is classified once (ap_classify()); a device's "owner" is
 * its nearest ancestor that is itself of interest.  That relation alone
 * builds the tree the engine walks: controllers own SCSI devices, sub-
 * controllers (virtio below virtio-pci) and disks; SCSI devices own disks;
 * disks own partitions.  Devices with no owner (loop disks, scsi_debug,
 * NVMe multipath heads) hang off the discovery call itself.  An NVMe
 * controller also claims the multipath heads it has a path to
 * (ap_enumerate_nvme_heads()); ap_count_children(), ap_has_child() and
 * ap_nvme_ctrl_ready() are what the engine's waits test.
 *
 * libudev objects are not shared between threads (libudev(3): an object
 * must be used from the thread that allocated it), so this file hands out
 * plain strings and every caller brings its own struct udev.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <libudev.h>

#include "base/base.h"
#include "device/device.h"

#include "internal.h"

static int found_compare(const void *x, const void *y)
{
	const struct ap_found *a = x, *b = y;
	int r;

	/* Partitions of one disk: by the kernel's partition number. */
	if (a->kind == AP_KIND_PARTITION && b->kind == AP_KIND_PARTITION &&
	    a->partnum != b->partnum)
		return a->partnum < b->partnum ? -1 : 1;
	r = ap_devpath_compare(a->devpath, b->devpath);
	if (r)
		return r;
	return strcmp(a->syspath, b->syspath);
}

void ap_found_list_sort(struct ap_found_list *l)
{
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(l->v[0]), found_compare);
}

void ap_found_list_free(struct ap_found_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].syspath);
		free(l->v[i].devpath);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int found_add_path(struct ap_found_list *l, char *syspath, char *devpath,
			  enum ap_kind kind, unsigned int partnum)
{
	struct ap_found *f;

	if (!syspath || !devpath) {
		free(syspath);
		free(devpath);
		return -ENOMEM;
	}
	if (l->n == l->allocated) {
		size_t na = l->allocated ? l->allocated * 2 : 16;
		struct ap_found *v = realloc(l->v, na * sizeof(*v));

		if (!v) {
			free(syspath);
			free(devpath);
			return -ENOMEM;
		}
		l->v = v;
		l->allocated = na;
	}
	f = &l->v[l->n++];
	memset(f, 0, sizeof(*f));
	f->syspath = syspath;
	f->devpath = devpath;
	f->kind = kind;
	f->partnum = partnum;
	return 0;
}

/*
 * The devices a disk owns are its partitions: the directories below its
 * syspath that have a "partition" attribute (the kernel's layout, the same
 * under umockdev).  Read here directly: a libudev enumeration of the disk's
 * subtree builds, reads and classifies every device found and its parent,
 * about 850,000 instructions per disk against some 30,000 (callgrind).
 */
static int enumerate_partitions(const char *syspath, const char *devpath,
				struct ap_found_list *ret)
{
	struct ap_found_list l = {};
	struct dirent *de;
	DIR *dir;
	int r = 0;

	dir = opendir(syspath);
	if (!dir)
		return errno == ENOENT ? 0 : -errno;    /* gone meanwhile: nothing below */
	while ((de = readdir(dir))) {
		char *child, *child_devpath, buf[32];
		unsigned long num;
		char *end;
		FILE *f;
		size_t n;

		if (de->d_name[0] == '.' || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		if (asprintf(&child, "%s/%s/partition", syspath, de->d_name) < 0) {
			r = -ENOMEM;
			break;
		}
		f = fopen(child, "re");
		if (!f) {
			free(child);
			continue;   /* not a partition (queue, holders, power...) */
		}
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		errno = 0;
		num = strtoul(buf, &end, 10);
		if (errno || end == buf)
			num = 0;
		child[strlen(child) - strlen("/partition")] = '\0';
		if (asprintf(&child_devpath, "%s/%s", devpath, de->d_name) < 0)
			child_devpath = NULL;
		r = found_add_path(&l, child, child_devpath, AP_KIND_PARTITION, (unsigned int)num);
		if (r < 0)
			break;
	}
	closedir(dir);
	if (r < 0) {
		ap_found_list_free(&l);
		return r;
	}
	ap_found_list_sort(&l);
	*ret = l;
	return 0;
}

static int found_add(struct ap_found_list *l, struct udev_device *dev, enum ap_kind kind)
{
	struct ap_found *f;

	if (l->n == l->allocated) {
		size_t na = l->allocated ? l->allocated * 2 : 16;
		struct ap_found *v = realloc(l->v, na * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->allocated = na;
	}
	f = &l->v[l->n];
	memset(f, 0, sizeof(*f));
	f->syspath = strdup(udev_device_get_syspath(dev));
	f->devpath = strdup(udev_device_get_devpath(dev));
	if (!f->syspath || !f->devpath) {
		free(f->syspath);
		free(f->devpath);
		return -ENOMEM;
	}
	f->kind = kind;
	if (kind == AP_KIND_PARTITION)
		f->partnum = (unsigned int)dev_sysattr_ulong(dev, "partition", 10, 0);
	l->n++;
	return 0;
}

/*
 * The devices below a device, read from sysfs directly.  libudev's
 * enumeration of a subtree (udev_enumerate_add_match_parent()) resolves
 * every directory below it, symbolic links component by component, before
 * it knows whether the directory is a device at all: the power/ and queue/
 * directories, a disk's mq/ tree, and everything below each SCSI device.
 * Under TCG a SCSI device's enumeration took 24 ms that way, 6 ms this
 * way, and an AHCI controller's, on the root's way, up to 0.3 s (the
 * calls' "enumerate" phase in a trace).  The kernel's layout is
 * simpler than that: a device is a directory with a "uevent" file, its
 * subsystem is the last component of its "subsystem" link, and the links
 * among the entries (driver, subsystem, holders...) are never descended.
 *
 * With SUBTREE_STOP_SCSI (internal.h) nothing below a SCSI device (an "H:C:T:L"
 * directory) is looked at: the device is reported, its disk and its
 * scsi_disk, bsg and scsi_generic nodes are its own business, and a
 * controller's enumeration never touches a device whose upper driver is
 * still probing.  With SUBTREE_STOP_BLOCK a block device is reported and
 * not descended: its partitions are the disk's (enumerate_partitions()).
 */
#define SUBTREE_MAX_DEPTH 32

static bool in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

/*
 * Whether @dir (a buffer of PATH_MAX holding @len characters, restored on
 * return) is a device: a directory with a "uevent" file, as for libudev.
 */
static bool is_device_at(char *dir, size_t len)
{
	bool device;

	if (len + sizeof("/uevent") > PATH_MAX)
		return false;
	strcpy(dir + len, "/uevent");
	device = access(dir, F_OK) == 0;
	dir[len] = '\0';
	return device;
}

/*
 * The subsystem of the device at @dir (a buffer as for is_device_at())
 * into @buf: the last component of its "subsystem" link, read in place
 * (ap_link_name() reads it for a caller without such a buffer); NULL when
 * it has none.
 */
static const char *subsystem_of(char *dir, size_t len, char *buf, size_t size)
{
	const char *s = NULL;
	ssize_t k = -1;

	if (len + sizeof("/subsystem") <= PATH_MAX) {
		strcpy(dir + len, "/subsystem");
		k = readlink(dir, buf, size);
		dir[len] = '\0';
	}
	if (k > 0 && (size_t)k < size) {
		buf[k] = '\0';
		s = strrchr(buf, '/');
		s = s ? s + 1 : buf;
	}
	return s;
}

/* @path (a buffer of PATH_MAX, @len used) is a directory below the top */
static int subtree_walk(char *path, size_t len, unsigned int depth,
			const char *const *subsystems, unsigned int flags, dev_subtree_fn fn, void *arg)
{
	struct dirent *de;
	DIR *dir;
	int r = 0;

	dir = opendir(path);
	if (!dir)
		return 0;       /* gone meanwhile, or not a directory: nothing below */
	while (r >= 0 && (de = readdir(dir))) {
		char link[256];         /* "../../../bus/pci": the frames stay small */
		const char *subsystem = NULL;
		size_t n = strlen(de->d_name);
		bool device, descend = depth < SUBTREE_MAX_DEPTH;

		if (de->d_name[0] == '.' || strcmp(de->d_name, "power") == 0 ||
		    (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		if (len + 1 + n + sizeof("/subsystem") > PATH_MAX)
			continue;
		path[len] = '/';
		memcpy(path + len + 1, de->d_name, n + 1);
		device = is_device_at(path, len + 1 + n);
		if (device)
			subsystem = subsystem_of(path, len + 1 + n, link, sizeof(link));
		if (device && (!subsystems || (subsystem && in_list(subsystem, subsystems))))
			r = fn(path, arg);
		if ((flags & SUBTREE_STOP_SCSI) && ap_is_hctl(de->d_name, n))
			descend = false;
		if ((flags & SUBTREE_STOP_BLOCK) && subsystem && strcmp(subsystem, "block") == 0)
			descend = false;
		if (r >= 0 && descend)
			r = subtree_walk(path, len + 1 + n, depth + 1, subsystems, flags, fn, arg);
		path[len] = '\0';
	}
	closedir(dir);
	return r;
}

/*
 * Call @fn for every device below @syspath (not @syspath itself) whose
 * subsystem is in @subsystems (any device when NULL), stopping as @flags
 * says; a negative return of @fn ends the walk and is returned.
 */
int dev_subtree_foreach(const char *syspath, const char *const *subsystems,
			unsigned int flags, dev_subtree_fn fn, void *arg)
{
	char path[PATH_MAX];
	size_t len = strlen(syspath);

	if (len >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, syspath, len + 1);
	return subtree_walk(path, len, 0, subsystems, flags, fn, arg);
}

/*
 * Whether the device at @syspath, in @subsystem (NULL: it has no
 * "subsystem" link), can be of any kind but AP_KIND_NONE, judged by the
 * subsystem and the name alone, as ap_classify() would judge them: without
 * a subsystem it is nobody; in "scsi" its name decides (*scsi_device: an
 * "H:C:T:L", so a SCSI device for sure; a host or a target is nobody);
 * else only the subsystems ap_classify() looks at can matter (any, with
 * all_modules).
 */
static bool path_may_matter(const char *syspath, const char *subsystem, bool all_modules,
			    bool *scsi_device)
{
	static const char *const others[] = { "block", "pci", "virtio", "usb", "mmc", NULL };
	const char *name = strrchr(syspath, '/');

	*scsi_device = false;
	if (!subsystem || !name)
		return false;
	if (strcmp(subsystem, "scsi") == 0) {
		*scsi_device = ap_is_hctl(name + 1, strlen(name + 1));
		return *scsi_device;
	}
	return all_modules || in_list(subsystem, others);
}

/* Whether @syspath is a device (is_device_at()). */
static bool device_exists(const char *syspath)
{
	char dir[PATH_MAX];
	size_t len = strlen(syspath);

	if (len >= sizeof(dir))
		return false;
	memcpy(dir, syspath, len + 1);
	return is_device_at(dir, len);
}

/* Whether the device at @syspath is in @subsystem, by its link. */
static bool subsystem_is(const char *syspath, const char *subsystem)
{
	char link[256];

	return ap_link_name(syspath, "subsystem", link, sizeof(link)) &&
	       strcmp(link, subsystem) == 0;
}

/* path_may_matter() for @syspath, its subsystem read from the link. */
static bool path_may_matter_at(const char *syspath, bool all_modules, bool *scsi_device)
{
	char link[256];

	return path_may_matter(syspath,
			       ap_link_name(syspath, "subsystem", link, sizeof(link)) ? link : NULL,
			       all_modules, scsi_device);
}

bool ap_path_may_matter(const char *syspath, bool all_modules)
{
	bool scsi_device;

	return path_may_matter_at(syspath, all_modules, &scsi_device);
}

static int link_target(const char *dir, const char *link, char *out, size_t size);

/*
 * The owner of the NVMe multipath head @head: of the controllers that have
 * a path to it, the first in devpath order.  Decided from sysfs alone, so
 * the head goes with the same controller however the controllers' calls
 * are timed (a later controller that is live first would otherwise list it
 * first; and the discovery call, finding the head already there, would
 * take it for a disk without an owner).  The head's "multipath" directory
 * names its path devices (nvme0c0n1), each a link to the path device and
 * listed in /sys/class/block; a path device's owner is its controller.
 * The controllers are judged without all_modules: a storage controller is
 * one either way.
 */
static char *nvme_head_owner(struct udev *udev, const char *head)
{
	char dir[PATH_MAX], entry[PATH_MAX], link[PATH_MAX], path[PATH_MAX];
	char *best = NULL;
	struct dirent *de;
	DIR *d;

	if (snprintf(dir, sizeof(dir), "%s/multipath", head) >= (int)sizeof(dir))
		return NULL;
	d = opendir(dir);
	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		const char *base = dir;
		char *owner;
		ssize_t k;

		if (de->d_name[0] == '.' ||
		    snprintf(entry, sizeof(entry), "%s/%s", dir, de->d_name) >= (int)sizeof(entry))
			continue;
		k = readlink(entry, link, sizeof(link) - 1);
		if (k <= 0) {
			/* not a link (a recorded tree): where the class lists the path device */
			base = "/sys/class/block";
			if (snprintf(entry, sizeof(entry), "%s/%s", base, de->d_name) >=
			    (int)sizeof(entry))
				continue;
			k = readlink(entry, link, sizeof(link) - 1);
			if (k <= 0)
				continue;
		}
		link[k] = '\0';
		if (link_target(base, link, path, sizeof(path)) < 0 ||
		    strstr(path, "/nvme-subsystem/"))
			continue;
		owner = ap_owner_path(udev, path, false, NULL);
		if (owner && (!best || ap_devpath_compare(owner, best) < 0)) {
			free(best);
			best = owner;
		} else {
			free(owner);
		}
	}
	closedir(d);
	return best;
}

/*
 * @path's owner: its nearest proper ancestor of interest (device.h).
 * Found by climbing the path rather than with libudev's parents, which
 * resolves each parent's whole path component by component before it
 * knows whether it is a device; a SCSI device has its target, its host
 * and its adapter to climb (under TCG that was the larger part of a
 * scsi_debug disk's enumeration).  An ancestor is a directory with a
 * "uevent" file, as for libudev; path_may_matter() rules out what its
 * subsystem link and name rule out, and the rest is classified with
 * libudev.
 */
char *ap_owner_path(struct udev *udev, const char *path, bool all_modules,
		    const char *include_loop)
{
	char p[PATH_MAX];
	size_t len = strlen(path);
	char *slash;

	if (len >= sizeof(p) || !ap_startswith(path, "/sys/"))
		return NULL;
	memcpy(p, path, len + 1);
	while ((slash = strrchr(p, '/')) && slash > p + strlen("/sys")) {
		struct udev_device *d;
		enum ap_kind kind;
		char link[256];
		bool scsi_device;

		*slash = '\0';
		len = (size_t)(slash - p);
		if (len + sizeof("/subsystem") > sizeof(p) || !is_device_at(p, len) ||
		    !path_may_matter(p, subsystem_of(p, len, link, sizeof(link)), all_modules,
				     &scsi_device))
			continue;
		if (scsi_device)
			return strdup(p);
		d = ap_udev_device_new(udev, p);
		kind = d ? ap_classify(d, all_modules, include_loop) : AP_KIND_NONE;
		udev_device_unref(d);
		if (kind != AP_KIND_NONE)
			return strdup(p);
	}
	/* an NVMe multipath head: nothing above it, its controllers own it */
	if (strstr(path, "/devices/virtual/nvme-subsystem/"))
		return nvme_head_owner(udev, path);
	return NULL;
}

/*
 * True when @path lies below a SCSI device (an H:C:T:L component before
 * the last, below /sys/devices): the whole system's enumeration leaves
 * those to their SCSI device, as dev_subtree_foreach() does below a device.
 */
static bool below_scsi_device(const char *path)
{
	const char *p, *slash;

	p = strstr(path, "/devices/");
	if (!p)
		return false;
	p += strlen("/devices/");
	while ((slash = strchr(p, '/'))) {
		if (ap_is_hctl(p, (size_t)(slash - p)))
			return true;
		p = slash + 1;
	}
	return false;
}

struct enumerate_ctx {
	struct udev *udev;
	const char *parent_syspath;
	bool all_modules;
	const char *include_loop;
	struct ap_found_list ctrl, rest;
};

/* One device found below the parent (or in the whole system): is it ours? */
static int enumerate_one(const char *path, void *arg)
{
	struct enumerate_ctx *c = arg;
	struct ap_found_list *to = NULL;
	struct udev_device *dev = NULL;
	enum ap_kind kind = AP_KIND_SCSI;
	char *owner = NULL;
	bool scsi_device;
	int r = 0;

	if (!path_may_matter_at(path, c->all_modules, &scsi_device))
		return 0;
	/* a SCSI device needs no libudev device: its name says what it is */
	if (!scsi_device || !ap_startswith(path, "/sys/")) {
		dev = ap_udev_device_new(c->udev, path);
		if (!dev)
			return 0;       /* gone meanwhile */
		kind = ap_classify(dev, c->all_modules, c->include_loop);
		path = udev_device_get_syspath(dev);
	}
	/*
	 * A partition's owner is its disk, and disks list their own
	 * (enumerate_partitions()): here it is nobody's business, so its
	 * parents need not be read and classified.
	 */
	if (kind == AP_KIND_NONE || kind == AP_KIND_PARTITION) {
		to = NULL;
	} else if (!c->parent_syspath && kind == AP_KIND_CONTROLLER) {
		to = &c->ctrl;
	} else {
		owner = ap_owner_path(c->udev, path, c->all_modules, c->include_loop);
		if (c->parent_syspath)
			to = owner && strcmp(owner, c->parent_syspath) == 0 ? &c->rest : NULL;
		else if (!owner && (kind == AP_KIND_DISK || kind == AP_KIND_SCSI))
			to = &c->rest;
	}
	if (to && dev)
		r = found_add(to, dev, kind);
	else if (to)
		r = found_add_path(to, strdup(path), strdup(path + strlen("/sys")), kind, 0);
	free(owner);
	if (dev)
		udev_device_unref(dev);
	return r;
}

/*
 * The whole system (the discovery call) with --all-modules, with libudev:
 * one enumeration of every subsystem, once per run.
 */
static int enumerate_system(struct enumerate_ctx *c, const char *const *subsystems)
{
	struct udev_enumerate *en = udev_enumerate_new(c->udev);
	struct udev_list_entry *item;
	int r = 0;

	if (!en)
		return -ENOMEM;
	for (; subsystems && *subsystems && r >= 0; subsystems++)
		r = udev_enumerate_add_match_subsystem(en, *subsystems);
	if (r >= 0)
		r = udev_enumerate_scan_devices(en);
	if (r >= 0)
		udev_list_entry_foreach(item, udev_enumerate_get_list_entry(en)) {
			const char *path = udev_list_entry_get_name(item);

			if (below_scsi_device(path))
				continue;       /* the SCSI device's business, see subtree_walk() */
			r = enumerate_one(path, c);
			if (r < 0)
				break;
		}
	udev_enumerate_unref(en);
	return r;
}

/*
 * @dir/@link made one path, its ".." resolved by name: a link below
 * /sys/bus or /sys/class points along real directories, so the name is
 * the path.  Returns 0, or -1 when it does not fit or leaves /sys.
 */
static int link_target(const char *dir, const char *link, char *out, size_t size)
{
	const char *p = link;
	size_t len;

	if (link[0] == '/') {
		len = strlen(link);
		if (len >= size)
			return -1;
		memcpy(out, link, len + 1);
		return ap_startswith(out, "/sys/") ? 0 : -1;
	}
	len = strlen(dir);
	if (len >= size)
		return -1;
	memcpy(out, dir, len + 1);
	while (*p) {
		const char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);

		if (n == 2 && p[0] == '.' && p[1] == '.') {
			char *slash = strrchr(out, '/');

			if (!slash || slash == out)
				return -1;
			*slash = '\0';
			len = (size_t)(slash - out);
		} else if (n > 0 && !(n == 1 && p[0] == '.')) {
			if (len + 1 + n >= size)
				return -1;
			out[len] = '/';
			memcpy(out + len + 1, p, n);
			len += 1 + n;
			out[len] = '\0';
		}
		p = *end ? end + 1 : end;
	}
	return ap_startswith(out, "/sys/") ? 0 : -1;
}

/*
 * The whole system (the discovery call): the devices of @subsystems,
 * listed where libudev's enumeration lists them (/sys/bus/NAME/devices
 * and /sys/class/NAME), once per run.  Not with libudev: its enumeration
 * makes a device of every entry, resolving its path component by
 * component, before enumerate_one() looks at it - a scsi_debug host's
 * host, every target and every SCSI device, 3 of them per disk.
 */
static int enumerate_listed(struct enumerate_ctx *c, const char *const *subsystems)
{
	int r = 0;

	for (; *subsystems && r >= 0; subsystems++) {
		for (int w = 0; w < 2 && r >= 0; w++) {
			char dir[PATH_MAX], entry[PATH_MAX], link[PATH_MAX], path[PATH_MAX];
			struct dirent *de;
			DIR *d;

			if (w == 0)
				snprintf(dir, sizeof(dir), "/sys/bus/%s/devices", *subsystems);
			else
				snprintf(dir, sizeof(dir), "/sys/class/%s", *subsystems);
			d = opendir(dir);
			if (!d)
				continue;
			while (r >= 0 && (de = readdir(d))) {
				ssize_t k;

				if (de->d_name[0] == '.' ||
				    snprintf(entry, sizeof(entry), "%s/%s", dir, de->d_name) >=
				    (int)sizeof(entry))
					continue;
				k = readlink(entry, link, sizeof(link) - 1);
				if (k <= 0)
					continue;
				link[k] = '\0';
				if (link_target(dir, link, path, sizeof(path)) < 0 ||
				    below_scsi_device(path))
					continue;
				r = enumerate_one(path, c);
			}
			closedir(d);
		}
	}
	return r;
}

int ap_enumerate(struct udev *udev, const char *parent_syspath, bool all_modules,
		 const char *include_loop, struct ap_found_list *ret)
{
	static const char *const subsystems[] = { "pci", "virtio", "usb", "scsi", "block", "mmc", NULL };
	const char *const *match = all_modules ? NULL : subsystems;
	struct enumerate_ctx c = { .udev = udev, .parent_syspath = parent_syspath,
				   .all_modules = all_modules, .include_loop = include_loop };
	size_t i;
	int r;

	if (parent_syspath && subsystem_is(parent_syspath, "block")) {
		struct udev_device *parent = ap_udev_device_new(udev, parent_syspath);

		if (!parent)
			return -errno ?: -ENODEV;
		if (ap_classify(parent, all_modules, include_loop) == AP_KIND_DISK)
			r = enumerate_partitions(parent_syspath, udev_device_get_devpath(parent), ret);
		else
			r = 1;
		udev_device_unref(parent);
		if (r <= 0)
			return r;
	} else if (parent_syspath && !device_exists(parent_syspath)) {
		return -ENODEV;         /* gone, as libudev would say */
	}
	if (parent_syspath) {
		r = dev_subtree_foreach(parent_syspath, match, SUBTREE_STOP_SCSI | SUBTREE_STOP_BLOCK,
				    enumerate_one, &c);
	} else if (match) {
		r = enumerate_listed(&c, match);
	} else {
		r = enumerate_system(&c, match);
	}
	if (r < 0)
		goto out;

	/* Controllers first (topological), then the devices without one. */
	ap_found_list_sort(&c.ctrl);
	ap_found_list_sort(&c.rest);
	for (i = 0; i < c.rest.n; i++) {
		if (c.ctrl.n == c.ctrl.allocated) {
			size_t na = c.ctrl.allocated ? c.ctrl.allocated * 2 : 16;
			struct ap_found *v = realloc(c.ctrl.v, na * sizeof(*v));

			if (!v) {
				r = -ENOMEM;
				goto out;
			}
			c.ctrl.v = v;
			c.ctrl.allocated = na;
		}
		c.ctrl.v[c.ctrl.n++] = c.rest.v[i];
	}
	free(c.rest.v);
	c.rest = (struct ap_found_list){};
	*ret = c.ctrl;
	c.ctrl = (struct ap_found_list){};
	r = 0;
out:
	ap_found_list_free(&c.ctrl);
	ap_found_list_free(&c.rest);
	return r;
}
