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
#include <fcntl.h>
#include <fnmatch.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <libudev.h>

#include "asyncprobe.h"
#include "coldplug.h"

const char *ap_kind_to_string(enum ap_kind k)
{
	static const char *const names[_AP_KIND_MAX] = {
		[AP_KIND_NONE] = "none",
		[AP_KIND_CONTROLLER] = "controller",
		[AP_KIND_SCSI] = "scsi",
		[AP_KIND_DISK] = "disk",
		[AP_KIND_PARTITION] = "partition",
	};

	return k >= 0 && k < _AP_KIND_MAX ? names[k] : "?";
}

struct udev_device *ap_udev_device_new(struct udev *udev, const char *syspath)
{
	char uevent[PATH_MAX];
	struct udev_device *d;
	int i;

	for (i = 0;; i++) {
		d = udev_device_new_from_syspath(udev, syspath);
		if (d || i == 2 || errno != ENODEV ||
		    snprintf(uevent, sizeof(uevent), "%s/uevent", syspath) >= (int)sizeof(uevent) ||
		    access(uevent, F_OK) < 0)
			return d;
		log_debug("%s: libudev could not make a device of it (%m) although its uevent file "
			  "is there; again", syspath);
	}
}

static unsigned long sysattr_ulong(struct udev_device *dev, const char *attr, int base,
				   unsigned long dflt)
{
	const char *v = udev_device_get_sysattr_value(dev, attr);
	char *end;
	unsigned long r;

	if (!v)
		return dflt;
	errno = 0;
	r = strtoul(v, &end, base);
	if (errno || end == v)
		return dflt;
	return r;
}

/* udev 252's list, in its order ("loop*" as well: --include-loop decides) */
const char *const ap_storage_names[] = {
	"loop*", "mmcblk*[0-9]", "msblk*[0-9]", "mspblk*[0-9]", "nvme*", "sd*", "sr*",
	"vd*", "xvd*", "bcache*", "cciss*", "dasd*", "ubd*", "ubi*", "scm*", "pmem*",
	"nbd*", "zd*", NULL
};

bool ap_storage_name(const char *sysname)
{
	size_t i;

	for (i = 0; ap_storage_names[i]; i++)
		if (fnmatch(ap_storage_names[i], sysname, 0) == 0)
			return true;
	return false;
}

static enum ap_kind classify_block(struct udev_device *dev, bool include_loop)
{
	const char *devtype = udev_device_get_devtype(dev);
	const char *name = udev_device_get_sysname(dev);

	/*
	 * What udev's persistent-storage rules leave alone gets no link from
	 * asyncprobe either: floppies (an I/O error on an empty drive), RAM
	 * disks, device-mapper and md devices (their own rules name them),
	 * eMMC RPMB partitions, ...
	 */
	if (!name || !ap_storage_name(name))
		return AP_KIND_NONE;
	if (ap_streq_ptr(devtype, "partition"))
		return AP_KIND_PARTITION;
	if (!ap_streq_ptr(devtype, "disk"))
		return AP_KIND_NONE;
	if (ap_startswith(name, "loop") && !include_loop)
		return AP_KIND_NONE;
	/* NVMe multipath path devices: hidden, no node; the head is the disk. */
	if (sysattr_ulong(dev, "hidden", 10, 0) == 1)
		return AP_KIND_NONE;
	/*
	 * Empty drives (card readers, CD drives without a medium, unbound
	 * loop devices) report size 0: nothing to probe.
	 */
	if (sysattr_ulong(dev, "size", 10, 0) == 0)
		return AP_KIND_NONE;
	return AP_KIND_DISK;
}

/*
 * "H:C:T:L", the name the SCSI midlayer gives every SCSI device (its hosts
 * are "hostN", its targets "targetH:C:T"), @n bytes at @s.
 */
bool ap_is_hctl(const char *s, size_t n)
{
	unsigned int colons = 0;
	bool digit = false;
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] >= '0' && s[i] <= '9') {
			digit = true;
		} else if (s[i] == ':' && digit) {
			colons++;
			digit = false;
		} else {
			return false;
		}
	}
	return colons == 3 && digit;
}

/*
 * A device's modalias: its "modalias" attribute, else the MODALIAS of its
 * uevent file (umockdev's recordings may hold only that).  The attribute
 * comes first because showing the uevent file takes the device's lock
 * (uevent_show(), drivers/base/core.c), which a driver's probe holds
 * for as long as it runs: sd's of a disk that never answers, forever.
 */
const char *ap_device_modalias(struct udev_device *dev)
{
	const char *m = udev_device_get_sysattr_value(dev, "modalias");

	return m && *m ? m : udev_device_get_property_value(dev, "MODALIAS");
}

/*
 * Classified by sysfs names, links and attributes wherever they tell, not
 * by the uevent file's DEVTYPE and MODALIAS (see ap_device_modalias()):
 * a SCSI device by its name, so that neither classifying a disk's SCSI
 * device nor climbing to it from below waits for its upper driver's probe.
 */
enum ap_kind ap_classify(struct udev_device *dev, bool all_modules, bool include_loop)
{
	const char *subsystem = udev_device_get_subsystem(dev);
	const char *sysname, *devtype, *modalias = NULL;

	if (!subsystem)
		return AP_KIND_NONE;
	if (strcmp(subsystem, "block") == 0)
		return classify_block(dev, include_loop);

	if (strcmp(subsystem, "scsi") == 0) {
		sysname = udev_device_get_sysname(dev);
		return sysname && ap_is_hctl(sysname, strlen(sysname)) ? AP_KIND_SCSI : AP_KIND_NONE;
	}

	if (all_modules) {
		modalias = ap_device_modalias(dev);
		if (modalias && *modalias)
			return AP_KIND_CONTROLLER;
	}

	if (strcmp(subsystem, "pci") == 0) {
		unsigned long class = sysattr_ulong(dev, "class", 16, 0);

		/* 01xxxx mass storage (IDE, SATA, SAS, RAID, NVMe, virtio-blk/scsi); 0805 SD host */
		if ((class >> 16) == 0x01 || (class >> 8) == 0x0805)
			return AP_KIND_CONTROLLER;
		return AP_KIND_NONE;
	}
	if (strcmp(subsystem, "virtio") == 0) {
		modalias = modalias ? modalias : ap_device_modalias(dev);
		/* device id 2 is block, 8 is SCSI host */
		if (ap_startswith(modalias, "virtio:d00000002v") || ap_startswith(modalias, "virtio:d00000008v"))
			return AP_KIND_CONTROLLER;
		return AP_KIND_NONE;
	}
	if (strcmp(subsystem, "usb") == 0) {
		devtype = udev_device_get_devtype(dev);
		if (ap_streq_ptr(devtype, "usb_interface") &&
		    sysattr_ulong(dev, "bInterfaceClass", 16, 0) == 0x08)
			return AP_KIND_CONTROLLER;
		return AP_KIND_NONE;
	}
	if (strcmp(subsystem, "mmc") == 0) {
		modalias = modalias ? modalias : ap_device_modalias(dev);
		return ap_streq_ptr(modalias, "mmc:block") ? AP_KIND_CONTROLLER : AP_KIND_NONE;
	}
	return AP_KIND_NONE;
}

/*
 * Whether a modalias names a storage device: PCI class 01 (mass storage)
 * or 0805 (SD host), virtio block or SCSI, a USB interface of class 08,
 * an MMC card.  Used to tell "no driver for this disk controller" from the
 * many devices nobody needs a driver for.
 */
bool ap_modalias_is_storage(const char *modalias)
{
	const char *p;

	if (!modalias)
		return false;
	if (ap_startswith(modalias, "pci:")) {
		p = strstr(modalias, "bc");
		if (!p)
			return false;
		return strncasecmp(p, "bc01", 4) == 0 || strncasecmp(p, "bc08sc05", 8) == 0;
	}
	if (ap_startswith(modalias, "virtio:"))
		return ap_startswith(modalias, "virtio:d00000002v") ||
		       ap_startswith(modalias, "virtio:d00000008v");
	if (ap_startswith(modalias, "usb:")) {
		p = strstr(modalias, "ic");
		return p && strncasecmp(p, "ic08", 4) == 0;
	}
	return strcmp(modalias, "mmc:block") == 0;
}

/* ------------------------------------------------------------- ordering */

/* "dddd:bb:dd.f": a PCI address, fixed-width lower-case hex. */
static bool is_pci_address(const char *s, size_t n)
{
	static const char pattern[] = "hhhh:hh:hh.h";
	size_t i;

	if (n != sizeof(pattern) - 1)
		return false;
	for (i = 0; i < n; i++) {
		if (pattern[i] == 'h') {
			if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
				return false;
		} else if (s[i] != pattern[i]) {
			return false;
		}
	}
	return true;
}

/* Natural order within one path component: digit runs compare as numbers. */
static int natural_compare(const char *a, size_t na, const char *b, size_t nb)
{
	size_t i = 0, j = 0;

	while (i < na && j < nb) {
		bool da = a[i] >= '0' && a[i] <= '9', db = b[j] >= '0' && b[j] <= '9';

		if (da && db) {
			size_t si, sj, li, lj;

			while (i < na && a[i] == '0' && i + 1 < na && a[i + 1] >= '0' && a[i + 1] <= '9')
				i++;
			while (j < nb && b[j] == '0' && j + 1 < nb && b[j + 1] >= '0' && b[j + 1] <= '9')
				j++;
			for (si = i; i < na && a[i] >= '0' && a[i] <= '9'; i++)
				;
			for (sj = j; j < nb && b[j] >= '0' && b[j] <= '9'; j++)
				;
			li = i - si;
			lj = j - sj;
			if (li != lj)
				return li < lj ? -1 : 1;
			if (memcmp(a + si, b + sj, li) != 0)
				return memcmp(a + si, b + sj, li) < 0 ? -1 : 1;
			continue;
		}
		if (a[i] != b[j])
			return (unsigned char)a[i] < (unsigned char)b[j] ? -1 : 1;
		i++;
		j++;
	}
	if (i < na)
		return 1;
	if (j < nb)
		return -1;
	return 0;
}

int ap_devpath_compare(const char *a, const char *b)
{
	while (*a && *b) {
		size_t na = strcspn(a, "/"), nb = strcspn(b, "/");
		int r;

		if (is_pci_address(a, na) && is_pci_address(b, nb))
			r = memcmp(a, b, na);
		else
			r = natural_compare(a, na, b, nb);
		if (r)
			return r < 0 ? -1 : 1;
		a += na;
		b += nb;
		/* both at '/' or at the end */
		if (*a != *b)
			return *a ? 1 : -1;
		if (*a) {
			a++;
			b++;
		}
	}
	if (*a)
		return 1;
	if (*b)
		return -1;
	return 0;
}

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
		f->partnum = (unsigned int)sysattr_ulong(dev, "partition", 10, 0);
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
 * With SUBTREE_STOP_SCSI nothing below a SCSI device (an "H:C:T:L"
 * directory) is looked at: the device is reported, its disk and its
 * scsi_disk, bsg and scsi_generic nodes are its own business, and a
 * controller's enumeration never touches a device whose upper driver is
 * still probing.  With SUBTREE_STOP_BLOCK a block device is reported and
 * not descended: its partitions are the disk's (enumerate_partitions()).
 */
enum {
	SUBTREE_STOP_SCSI = 1 << 0,
	SUBTREE_STOP_BLOCK = 1 << 1,
};

#define SUBTREE_MAX_DEPTH 32

typedef int (*subtree_fn)(const char *syspath, void *arg);

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
			const char *const *subsystems, unsigned int flags, subtree_fn fn, void *arg)
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
static int subtree_foreach(const char *syspath, const char *const *subsystems,
			   unsigned int flags, subtree_fn fn, void *arg)
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

/*
 * @path's owner: its nearest proper ancestor of interest (coldplug.h).
 * Found by climbing the path rather than with libudev's parents, which
 * resolves each parent's whole path component by component before it
 * knows whether it is a device; a SCSI device has its target, its host
 * and its adapter to climb (under TCG that was the larger part of a
 * scsi_debug disk's enumeration).  An ancestor is a directory with a
 * "uevent" file, as for libudev; path_may_matter() rules out what its
 * subsystem link and name rule out, and the rest is classified with
 * libudev.
 */
char *ap_owner_path(struct udev *udev, const char *path, bool all_modules, bool include_loop)
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
	return NULL;
}

/*
 * True when @path lies below a SCSI device (an H:C:T:L component before
 * the last, below /sys/devices): the whole system's enumeration leaves
 * those to their SCSI device, as subtree_foreach() does below a device.
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
	bool all_modules, include_loop;
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
		 bool include_loop, struct ap_found_list *ret)
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
		r = subtree_foreach(parent_syspath, match, SUBTREE_STOP_SCSI | SUBTREE_STOP_BLOCK,
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

/* ------------------------------------------------ waits and NVMe heads */

struct count_ctx {
	struct udev *udev;
	const char *subsystem, *devtype;
	bool (*match)(struct udev_device *d, void *arg);
	void *arg;
	int n;
};

static int count_one(const char *path, void *arg)
{
	struct count_ctx *c = arg;
	struct udev_device *d;
	const char *t;

	if (!c->devtype && !c->match) {
		c->n++;
		return 0;
	}
	/*
	 * A SCSI device by its name, as ap_classify() does: its DEVTYPE is in
	 * the uevent file, which cannot be read while its upper driver probes.
	 */
	if (!c->match && strcmp(c->subsystem, "scsi") == 0 && strcmp(c->devtype, "scsi_device") == 0) {
		t = strrchr(path, '/');
		t = t ? t + 1 : path;
		c->n += ap_is_hctl(t, strlen(t));
		return 0;
	}
	/*
	 * A block device is a partition when it has a "partition" attribute
	 * (the kernel's part_type), else a disk: no uevent file to read.
	 */
	if (!c->match && strcmp(c->subsystem, "block") == 0 &&
	    (strcmp(c->devtype, "disk") == 0 || strcmp(c->devtype, "partition") == 0)) {
		char attr[PATH_MAX];
		bool part = snprintf(attr, sizeof(attr), "%s/partition", path) < (int)sizeof(attr) &&
			    access(attr, F_OK) == 0;

		c->n += part == (strcmp(c->devtype, "partition") == 0);
		return 0;
	}
	d = ap_udev_device_new(c->udev, path);
	if (!d)
		return 0;
	t = udev_device_get_devtype(d);
	if (!c->devtype || (t && strcmp(t, c->devtype) == 0))
		c->n += !c->match || c->match(d, c->arg);
	udev_device_unref(d);
	return 0;
}

/* The engine's waits look often: from sysfs, as subtree_walk() says why. */
int ap_count_children(struct udev *udev, const char *syspath, const char *subsystem,
		      const char *devtype, bool (*match)(struct udev_device *d, void *arg),
		      void *arg)
{
	const char *const subsystems[] = { subsystem, NULL };
	struct count_ctx c = { .udev = udev, .subsystem = subsystem, .devtype = devtype,
			       .match = match, .arg = arg };

	(void)subtree_foreach(syspath, subsystems, 0, count_one, &c);
	return c.n;
}

bool ap_has_child(struct udev *udev, const char *syspath, const char *subsystem,
		  const char *devtype)
{
	return ap_count_children(udev, syspath, subsystem, devtype, NULL, NULL) > 0;
}

struct nvme_ready_ctx {
	struct udev *udev;
	bool ready;
};

static int nvme_ready_one(const char *path, void *arg)
{
	struct nvme_ready_ctx *c = arg;
	char state[32];

	if (!ap_read_attr(path, "state", state, sizeof(state)) || strcmp(state, "live") != 0)
		return 0;
	c->ready = ap_has_child(c->udev, path, "block", "disk");
	return c->ready ? -1 : 0;       /* found: stop looking */
}

/* NVMe: the controller's class device is live and has a namespace. */
bool ap_nvme_ctrl_ready(struct udev *udev, const char *syspath)
{
	static const char *const nvme[] = { "nvme", NULL };
	struct nvme_ready_ctx c = { .udev = udev };

	(void)subtree_foreach(syspath, nvme, SUBTREE_STOP_BLOCK, nvme_ready_one, &c);
	return c.ready;
}

/*
 * NVMe native multipath: the namespace's disk (nvme0n1) lives below
 * /sys/devices/virtual/nvme-subsystem, and the controller holds only a
 * hidden path device (nvme0c0n1).  The head lists its paths in its
 * "multipath" directory, a relation libudev does not expose; look for it.
 */
void ap_enumerate_nvme_heads(struct udev *udev, const char *ctrl_syspath, struct ap_found_list *out)
{
	struct udev_enumerate *en = udev_enumerate_new(udev);
	struct udev_list_entry *item;

	if (!en)
		return;
	udev_enumerate_add_match_subsystem(en, "block");
	udev_enumerate_add_match_property(en, "DEVTYPE", "disk");
	if (udev_enumerate_scan_devices(en) < 0)
		goto out;
	udev_list_entry_foreach(item, udev_enumerate_get_list_entry(en)) {
		const char *head = udev_list_entry_get_name(item);
		struct udev_enumerate *pe;
		struct udev_device *ctrl;
		struct udev_list_entry *pi;

		if (!strstr(head, "/nvme-subsystem/"))
			continue;
		ctrl = ap_udev_device_new(udev, ctrl_syspath);
		pe = udev_enumerate_new(udev);
		if (!ctrl || !pe) {
			if (ctrl)
				udev_device_unref(ctrl);
			if (pe)
				udev_enumerate_unref(pe);
			continue;
		}
		udev_enumerate_add_match_parent(pe, ctrl);
		udev_enumerate_add_match_subsystem(pe, "block");
		if (udev_enumerate_scan_devices(pe) >= 0)
			udev_list_entry_foreach(pi, udev_enumerate_get_list_entry(pe)) {
				const char *p = udev_list_entry_get_name(pi), *base = strrchr(p, '/');
				char link[PATH_MAX];

				if (!base)
					continue;
				snprintf(link, sizeof(link), "%s/multipath/%s", head, base + 1);
				if (access(link, F_OK) == 0) {
					struct udev_device *hd = ap_udev_device_new(udev, head);

					if (hd && ap_classify(hd, false, false) == AP_KIND_DISK) {
						struct ap_found *v = realloc(out->v, (out->n + 1) * sizeof(*v));

						if (v) {
							out->v = v;
							memset(&v[out->n], 0, sizeof(v[0]));
							v[out->n].syspath = strdup(head);
							v[out->n].devpath = strdup(udev_device_get_devpath(hd));
							v[out->n].kind = AP_KIND_DISK;
							if (v[out->n].syspath && v[out->n].devpath)
								out->n++;
							out->allocated = out->n;
						}
					}
					if (hd)
						udev_device_unref(hd);
					break;
				}
			}
		udev_enumerate_unref(pe);
		udev_device_unref(ctrl);
	}
out:
	udev_enumerate_unref(en);
}

/* -------------------------------------------------------------- monitor */

/*
 * One thread in ap_monitor_wait_below(): woken by the uevents of its
 * device and the devices below it (all of them when @prefix is NULL) and
 * by every kick, each with its own condition variable.  With one
 * condition for all, every uevent woke every waiter to look at sysfs
 * again: with 256 disks, each of every disk's uevents (several per disk)
 * woke every SCSI device call waiting for its own disk, up to 16 at once.
 */
struct ap_waiter {
	const char *prefix;
	size_t len;
	bool fired;             /* monitor lock */
	pthread_cond_t cond;
	struct ap_waiter *next;
};

struct ap_monitor {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;    /* ready */
	struct ap_waiter *waiters;      /* lock */
	bool ready;             /* lock */
	int error;              /* monitor could not be set up (lock) */
	int stop_fd;            /* eventfd */
	bool stopped;           /* thread joined (owner's thread only) */
	ap_monitor_func_t *fn;
	void *userdata;
};

/* Is @path @w's device or below it? */
static bool waiter_wants(const struct ap_waiter *w, const char *path)
{
	return !w->prefix || !path ||
	       (strncmp(path, w->prefix, w->len) == 0 && (path[w->len] == '\0' || path[w->len] == '/'));
}

/* Wake the waiters a uevent at @path concerns (NULL: all of them). */
static void monitor_fire(struct ap_monitor *m, const char *path)
{
	struct ap_waiter *w;

	pthread_mutex_lock(&m->lock);
	for (w = m->waiters; w; w = w->next)
		if (waiter_wants(w, path)) {
			w->fired = true;
			pthread_cond_signal(&w->cond);
		}
	pthread_mutex_unlock(&m->lock);
}

static void *monitor_thread(void *arg)
{
	struct ap_monitor *m = arg;
	struct udev *udev;
	struct udev_monitor *mon = NULL;
	int fd = -1, r = 0;

	/* Allocated here: libudev objects stay in the thread that made them. */
	udev = udev_new();
	if (udev)
		mon = udev_monitor_new_from_netlink(udev, "kernel");
	if (!mon) {
		r = -errno ?: -ENOMEM;
	} else {
		/* a burst of coldplug uevents must not overflow the socket */
		(void)udev_monitor_set_receive_buffer_size(mon, 64 * 1024 * 1024);
		r = udev_monitor_enable_receiving(mon);
		if (r >= 0)
			fd = udev_monitor_get_fd(mon);
	}

	pthread_mutex_lock(&m->lock);
	m->ready = true;
	m->error = r < 0 ? r : 0;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
	if (r < 0)
		goto out;

	for (;;) {
		struct pollfd p[2] = {
			{ .fd = fd, .events = POLLIN },
			{ .fd = m->stop_fd, .events = POLLIN },
		};
		struct udev_device *dev;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			log_error("uevent monitor: poll: %m");
			break;
		}
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		dev = udev_monitor_receive_device(mon);
		if (dev) {
			const char *action = udev_device_get_action(dev);
			const char *syspath = udev_device_get_syspath(dev);

			log_debug("uevent: %s %s", action ?: "?", syspath ?: "?");
			if (m->fn && action && syspath)
				m->fn(action, syspath, m->userdata);
			monitor_fire(m, syspath);
			udev_device_unref(dev);
		} else {
			monitor_fire(m, NULL);
		}
	}
out:
	if (mon)
		udev_monitor_unref(mon);
	if (udev)
		udev_unref(udev);
	return NULL;
}

int ap_monitor_start(struct ap_monitor **ret, ap_monitor_func_t *fn, void *userdata)
{
	struct ap_monitor *m;
	pthread_condattr_t ca;
	sigset_t stop, old;
	int r;

	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->fn = fn;
	m->userdata = userdata;
	pthread_mutex_init(&m->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->cond, &ca);
	pthread_condattr_destroy(&ca);
	m->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (m->stop_fd < 0) {
		r = -errno;
		goto fail;
	}
	/*
	 * SIGINT and SIGTERM blocked in the thread, as in libasync's workers:
	 * the stop handler (stop.c) then runs on the main thread, never on one
	 * about to be joined.
	 */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop, &old);
	r = -pthread_create(&m->thread, NULL, monitor_thread, m);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0)
		goto fail;

	pthread_mutex_lock(&m->lock);
	while (!m->ready)
		pthread_cond_wait(&m->cond, &m->lock);
	r = m->error;
	pthread_mutex_unlock(&m->lock);
	if (r < 0) {
		pthread_join(m->thread, NULL);
		goto fail;
	}
	*ret = m;
	return 0;
fail:
	if (m->stop_fd >= 0)
		close(m->stop_fd);
	pthread_cond_destroy(&m->cond);
	pthread_mutex_destroy(&m->lock);
	free(m);
	return r;
}

void ap_monitor_stop(struct ap_monitor *m)
{
	uint64_t one = 1;

	if (!m || m->stopped)
		return;
	if (write(m->stop_fd, &one, sizeof(one)) < 0)
		log_error("uevent monitor: cannot stop: %m");
	pthread_join(m->thread, NULL);
	m->stopped = true;
}

void ap_monitor_free(struct ap_monitor *m)
{
	if (!m)
		return;
	ap_monitor_stop(m);
	close(m->stop_fd);
	pthread_cond_destroy(&m->cond);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

void ap_monitor_kick(struct ap_monitor *m)
{
	if (m)
		monitor_fire(m, NULL);
}

static void timespec_add_ms(struct timespec *ts, unsigned int ms)
{
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* Without a monitor (no netlink access) the predicate is re-checked at this interval. */
#define AP_FALLBACK_RECHECK_MS 20

int ap_monitor_wait_below(struct ap_monitor *m, const char *syspath,
			  bool (*pred)(void *data), void *data, unsigned int timeout_ms)
{
	struct ap_waiter w = { .prefix = syspath, .len = syspath ? strlen(syspath) : 0 };
	struct ap_waiter **pp;
	struct timespec deadline, now, step;
	pthread_condattr_t ca;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	timespec_add_ms(&deadline, timeout_ms);

	if (!m) {
		for (;;) {
			if (pred(data))
				return 0;
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec > deadline.tv_sec ||
			    (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec))
				return -ETIMEDOUT;
			step = now;
			timespec_add_ms(&step, AP_FALLBACK_RECHECK_MS);
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME,
					(step.tv_sec < deadline.tv_sec ||
					 (step.tv_sec == deadline.tv_sec && step.tv_nsec < deadline.tv_nsec))
					? &step : &deadline, NULL);
		}
	}

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w.cond, &ca);
	pthread_condattr_destroy(&ca);
	/* listed before the first look: no uevent after it is missed */
	pthread_mutex_lock(&m->lock);
	w.next = m->waiters;
	m->waiters = &w;
	pthread_mutex_unlock(&m->lock);

	for (;;) {
		bool timed_out = false;

		if (pred(data)) {
			r = 0;
			break;
		}
		pthread_mutex_lock(&m->lock);
		while (!w.fired && !timed_out)
			timed_out = pthread_cond_timedwait(&w.cond, &m->lock, &deadline) == ETIMEDOUT;
		w.fired = false;
		pthread_mutex_unlock(&m->lock);
		if (timed_out) {
			r = pred(data) ? 0 : -ETIMEDOUT;
			break;
		}
	}

	pthread_mutex_lock(&m->lock);
	for (pp = &m->waiters; *pp; pp = &(*pp)->next)
		if (*pp == &w) {
			*pp = w.next;
			break;
		}
	pthread_mutex_unlock(&m->lock);
	pthread_cond_destroy(&w.cond);
	return r;
}

int ap_monitor_wait(struct ap_monitor *m, bool (*pred)(void *data), void *data,
		    unsigned int timeout_ms)
{
	return ap_monitor_wait_below(m, NULL, pred, data, timeout_ms);
}
