/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * path_id: the by-path name of a device, as udev's path_id builtin
 * (systemd 252) forms it, from the device's chain of parents: PCI, SCSI
 * (ATA, SAS, iSCSI and the default H:C:T:L form), USB, virtio, NVMe.  The
 * hostN rebasing lists the host entries of one directory exactly as udev
 * does.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <dirent.h>
#include <errno.h>
#include <string.h>



#include "base/base.h"
#include "probe/probe.h"

#include "internal.h"

struct pathbuf {
	char *s;
	int error;
};

static void path_prepend(struct pathbuf *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void path_prepend(struct pathbuf *p, const char *fmt, ...)
{
	_cleanup_free_ char *elem = NULL;
	char *n;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&elem, fmt, ap);
	va_end(ap);
	if (r < 0) {
		p->error = -ENOMEM;
		return;
	}
	if (p->s) {
		if (asprintf(&n, "%s-%s", elem, p->s) < 0) {
			p->error = -ENOMEM;
			return;
		}
		free(p->s);
		p->s = n;
	} else {
		p->s = TAKE_PTR(elem);
	}
}

/* the topmost of the consecutive ancestors in @subsys, starting at @dev */
static struct udev_device *skip_subsystem(struct udev_device *dev, const char *subsys)
{
	struct udev_device *last = dev;

	for (struct udev_device *d = dev; d; d = udev_device_get_parent(d)) {
		if (!ap_streq_ptr(udev_device_get_subsystem(d), subsys))
			break;
		last = d;
	}
	return last;
}

static struct udev_device *handle_scsi_ata(struct udev_device *parent, struct pathbuf *path,
					   struct pathbuf *compat)
{
	struct udev_device *hostdev, *ata;
	_cleanup_udev_device_ struct udev_device *port = NULL;
	unsigned host, bus, target, lun;
	const char *port_no;
	char buf[32];

	if (sscanf(udev_device_get_sysname(parent), "%u:%u:%u:%u", &host, &bus, &target, &lun) != 4)
		return NULL;
	hostdev = udev_device_get_parent_with_subsystem_devtype(parent, "scsi", "scsi_host");
	if (!hostdev)
		return NULL;
	ata = udev_device_get_parent(hostdev);
	if (!ata)
		return NULL;
	port = udev_device_new_from_subsystem_sysname(udev_device_get_udev(parent), "ata_port",
						      udev_device_get_sysname(ata));
	if (!port)
		return NULL;
	port_no = probe_attr_nonempty(port, "port_no", buf, sizeof(buf));
	if (!port_no)
		return NULL;
	if (bus != 0)
		/* behind a port multiplier */
		path_prepend(path, "ata-%s.%u.0", port_no, bus);
	else
		/* master and slave differ by target */
		path_prepend(path, "ata-%s.%u", port_no, target);
	path_prepend(compat, "ata-%s", port_no);
	return parent;
}

static struct udev_device *handle_scsi_default(struct udev_device *parent, struct pathbuf *path)
{
	struct udev_device *hostdev;
	int host, bus, target, lun, basenum = -1;
	_cleanup_free_ char *base = NULL;
	char *slash;
	DIR *dir;
	struct dirent *de;

	hostdev = udev_device_get_parent_with_subsystem_devtype(parent, "scsi", "scsi_host");
	if (!hostdev)
		return NULL;
	if (sscanf(udev_device_get_sysname(parent), "%d:%d:%d:%d", &host, &bus, &target, &lun) != 4)
		return NULL;

	/*
	 * Rebase the host number on the lowest hostN beside this host, so the
	 * name does not depend on how many other HBAs were probed first.
	 * udev reads this one directory; so do we.
	 */
	base = strdup(udev_device_get_syspath(hostdev));
	if (!base)
		return NULL;
	slash = strrchr(base, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	dir = opendir(base);
	if (!dir)
		return NULL;
	while ((de = readdir(dir))) {
		char *rest;
		unsigned long i;

		if (de->d_name[0] == '.')
			continue;
		if (de->d_type != DT_DIR && de->d_type != DT_LNK)
			continue;
		if (!ap_startswith(de->d_name, "host"))
			continue;
		i = strtoul(de->d_name + 4, &rest, 10);
		if (rest[0] != '\0' || rest == de->d_name + 4)
			continue;
		if (basenum == -1 || (int)i < basenum)
			basenum = (int)i;
	}
	closedir(dir);
	if (basenum == -1)
		return hostdev;
	host -= basenum;
	path_prepend(path, "scsi-%u:%u:%u:%u", host, bus, target, lun);
	return hostdev;
}

static struct udev_device *handle_scsi(struct udev_device *parent, struct pathbuf *path,
				       struct pathbuf *compat, bool *supported_parent)
{
	const char *name, *id;
	char buf[64];

	if (!ap_streq_ptr(udev_device_get_devtype(parent), "scsi_device"))
		return parent;
	id = probe_attr_nonempty(parent, "ieee1394_id", buf, sizeof(buf));
	if (id) {
		path_prepend(path, "ieee1394-0x%s", id);
		*supported_parent = true;
		return skip_subsystem(parent, "scsi");
	}
	name = udev_device_get_syspath(parent);
	/*
	 * FC, SAS, iSCSI and Hyper-V transports are not implemented: no
	 * by-path link rather than a wrong one.
	 */
	if (strstr(name, "/rport-") || strstr(name, "/end_device-") || strstr(name, "/session") ||
	    strstr(name, "/vmbus_") || strstr(name, "/VMBUS")) {
		path->error = -EOPNOTSUPP;
		return NULL;
	}
	if (strstr(name, "/ata"))
		return handle_scsi_ata(parent, path, compat);
	return handle_scsi_default(parent, path);
}

static struct udev_device *handle_usb(struct udev_device *parent, struct pathbuf *path)
{
	const char *devtype = udev_device_get_devtype(parent), *port;

	if (!devtype || (strcmp(devtype, "usb_interface") != 0 && strcmp(devtype, "usb_device") != 0))
		return parent;
	port = strchr(udev_device_get_sysname(parent), '-');
	if (!port)
		return parent;
	port++;
	parent = skip_subsystem(parent, "usb");
	path_prepend(path, "usb-0:%s", port);
	return parent;
}

/*
 * With native NVMe multipath (Debian 12's default) a namespace lives at
 * /sys/devices/virtual/nvme-subsystem/nvme-subsysN/nvmeXnY; its path is
 * that of controller nvmeX, unless that one is virtual too (NVMe-oF).
 */
static struct udev_device *nvme_real_parent(struct udev_device *dev, struct udev_device **ret_ref)
{
	const char *sysname = udev_device_get_sysname(dev), *devpath;
	char ctrl[64];
	size_t n;

	if (!ap_startswith(sysname, "nvme"))
		return NULL;
	n = 4 + strspn(sysname + 4, "0123456789");
	if (n >= sizeof(ctrl))
		return NULL;
	memcpy(ctrl, sysname, n);
	ctrl[n] = '\0';
	*ret_ref = udev_device_new_from_subsystem_sysname(udev_device_get_udev(dev), "nvme", ctrl);
	if (!*ret_ref)
		return NULL;
	devpath = udev_device_get_devpath(*ret_ref);
	if (!devpath || ap_startswith(devpath, "/devices/virtual/"))
		return NULL;
	return *ret_ref;
}

/* path_id: ID_PATH and ID_PATH_ATA_COMPAT of a whole disk, or nothing. */
static int path_id(struct udev_device *dev, char **ret_path, char **ret_compat)
{
	struct pathbuf path = { 0 }, compat = { 0 };
	bool supported_transport = false, supported_parent = false;
	struct udev_device *parent = dev;
	_cleanup_udev_device_ struct udev_device *other_branch = NULL;

	*ret_path = *ret_compat = NULL;
	while (parent) {
		const char *subsys = udev_device_get_subsystem(parent);
		const char *sysname = udev_device_get_sysname(parent);

		if (!subsys || !sysname) {
			;
		} else if (strcmp(subsys, "scsi") == 0) {
			parent = handle_scsi(parent, &path, &compat, &supported_parent);
			supported_transport = true;
		} else if (strcmp(subsys, "usb") == 0) {
			parent = handle_usb(parent, &path);
			supported_transport = true;
		} else if (strcmp(subsys, "pci") == 0) {
			path_prepend(&path, "pci-%s", sysname);
			if (compat.s)
				path_prepend(&compat, "pci-%s", sysname);
			parent = skip_subsystem(parent, "pci");
			supported_parent = true;
		} else if (strcmp(subsys, "platform") == 0) {
			path_prepend(&path, "platform-%s", sysname);
			if (compat.s)
				path_prepend(&compat, "platform-%s", sysname);
			parent = skip_subsystem(parent, "platform");
			supported_transport = true;
			supported_parent = true;
		} else if (strcmp(subsys, "acpi") == 0) {
			path_prepend(&path, "acpi-%s", sysname);
			if (compat.s)
				path_prepend(&compat, "acpi-%s", sysname);
			parent = skip_subsystem(parent, "acpi");
			supported_parent = true;
		} else if (strcmp(subsys, "xen") == 0) {
			path_prepend(&path, "xen-%s", sysname);
			parent = skip_subsystem(parent, "xen");
			supported_parent = true;
		} else if (strcmp(subsys, "virtio") == 0) {
			parent = skip_subsystem(parent, "virtio");
			supported_transport = true;
		} else if (strcmp(subsys, "nvme") == 0 || strcmp(subsys, "nvme-subsystem") == 0) {
			char buf[32];
			const char *nsid = probe_attr_nonempty(dev, "nsid", buf, sizeof(buf));

			if (nsid) {
				path_prepend(&path, "nvme-%s", nsid);
				if (compat.s)
					path_prepend(&compat, "nvme-%s", nsid);
				if (strcmp(subsys, "nvme-subsystem") == 0) {
					/* native multipath: continue from the real controller */
					parent = nvme_real_parent(dev, &other_branch);
					if (!parent)
						path.error = -ENXIO;
				}
				supported_parent = true;
				supported_transport = true;
			}
		}
		if (path.error || compat.error || !parent)
			break;
		parent = udev_device_get_parent(parent);
	}

	if (path.error == -ENOMEM || compat.error == -ENOMEM) {
		free(path.s);
		free(compat.s);
		return -ENOMEM;
	}
	if (path.error || !path.s || !supported_parent || !supported_transport) {
		free(path.s);
		free(compat.s);
		return 0;
	}
	*ret_path = path.s;
	*ret_compat = compat.s;
	return 0;
}

int ap_path_id(struct udev_device *dev, char **ret_path, char **ret_compat)
{
	return path_id(dev, ret_path, ret_compat);
}
