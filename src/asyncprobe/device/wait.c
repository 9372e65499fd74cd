/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the engine's waits count: a device's children of a subsystem,
 * whether an NVMe controller is ready, and the NVMe multipath heads a
 * controller has a path to.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <dirent.h>
#include <string.h>
#include <unistd.h>

#include <libudev.h>

#include "base/base.h"
#include "device/device.h"

#include "internal.h"

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

	(void)dev_subtree_foreach(syspath, subsystems, 0, count_one, &c);
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

	(void)dev_subtree_foreach(syspath, nvme, SUBTREE_STOP_BLOCK, nvme_ready_one, &c);
	return c.ready;
}

/*
 * NVMe native multipath: the namespace's disk (nvme0n1) lives below
 * /sys/devices/virtual/nvme-subsystem, and the controller holds only a
 * hidden path device (nvme0c0n1).  The head lists its paths in its
 * "multipath" directory, a relation libudev does not expose; the head's
 * owner (ap_owner_path()) is the first controller in devpath order with a
 * path to it, and only that controller lists it.
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
		struct udev_device *hd;
		struct ap_found *v;
		char *owner;

		if (!strstr(head, "/nvme-subsystem/"))
			continue;
		owner = ap_owner_path(udev, head, false, NULL);
		if (!owner || strcmp(owner, ctrl_syspath) != 0) {
			free(owner);
			continue;
		}
		free(owner);
		hd = ap_udev_device_new(udev, head);
		if (!hd)
			continue;
		if (ap_classify(hd, false, NULL) == AP_KIND_DISK) {
			v = realloc(out->v, (out->n + 1) * sizeof(*v));
			if (v) {
				out->v = v;
				memset(&v[out->n], 0, sizeof(v[0]));
				v[out->n].syspath = strdup(head);
				v[out->n].devpath = strdup(udev_device_get_devpath(hd));
				v[out->n].kind = AP_KIND_DISK;
				if (v[out->n].syspath && v[out->n].devpath)
					out->n++;
				else {
					free(v[out->n].syspath);
					free(v[out->n].devpath);
				}
				out->allocated = out->n;
			}
		}
		udev_device_unref(hd);
	}
out:
	udev_enumerate_unref(en);
}
