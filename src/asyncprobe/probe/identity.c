/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Identity data behind the by-id and by-path names of a whole disk: what
 * udev's ata_id, scsi_id, usb_id and path_id helpers and the NVMe/virtio
 * lines of 60-persistent-storage.rules (systemd 252) would compute.
 *
 * Sources, best first:
 *   ATA     IDENTIFY through SG_IO ATA PASS-THROUGH (16), then
 *           HDIO_GET_IDENTITY, both on the device node; where the node
 *           cannot be opened (tests, --dev-dir, no node yet) the IDENTIFY
 *           words libata exports in /sys/class/ata_device/devX.Y/id, then
 *           the T10 designator libata's SAT puts in vpd_pg83.
 *   SCSI    vpd_pg83 (page 0x83), else vpd_pg80, read from sysfs: the kernel
 *           lists a page there only when page 0x00 announced it, which is
 *           scsi_id's own rule.
 *   NVMe    sysfs attributes of the namespace and its controller.
 *
 * Everything here reads sysfs through libudev, except the binary VPD pages
 * (libudev's sysattr reader is for text) and path_id's host rebasing, which
 * lists the hostN entries of one directory exactly as udev does.
 *
 * A disk's identity is computed once and cached by device number, syspath
 * and diskseq (ap_identity_get()), so its partitions reuse it; strings are
 * cleaned with udev-string.c, as the helpers clean them.
 *
 * The files: identity.c (this one) reads sysfs and SG_IO, decides per
 * disk between ata_id, scsi_id and usb_id (ap_identity_for_disk()) and
 * keeps the cache; identity-data.c has the byte-level parsers (ATA words,
 * VPD pages), tested on their own (tests/naming, tests/fuzz); path-id.c
 * forms by-path names.  The sysfs readers they share are in internal.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <linux/hdreg.h>
#include <scsi/sg.h>


#include "base/base.h"
#include "probe/probe.h"

#include "internal.h"


void ap_identity_clear(struct ap_identity *id)
{
	if (!id)
		return;
	free(id->bus);
	free(id->serial);
	free(id->wwn);
	free(id->usb_serial);
	free(id->nvme_wwid);
	free(id->nvme_model);
	free(id->nvme_serial);
	free(id->nvme_nsid);
	free(id->virtio_serial);
	free(id->mmc_name);
	free(id->mmc_serial);
	free(id->path);
	free(id->path_ata_compat);
	free(id->diskseq);
	memset(id, 0, sizeof(*id));
}

/* whitespace step then replace step, as the id helpers clean a string */
char *probe_clean_id_string(const char *s, size_t len)
{
	char *out;

	out = malloc(len + 1);
	if (!out)
		return NULL;
	ap_udev_replace_whitespace(s, out, len);
	ap_udev_replace_chars(out, NULL);
	return out;
}

/* --------------------------------------------------- sysfs helpers */

/* Read a binary sysfs attribute of @dev into a malloc()ed buffer. */
int probe_read_binary_attr(struct udev_device *dev, const char *attr, uint8_t **ret, size_t *ret_len)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -1;
	uint8_t *buf;
	size_t n = 0, cap = 4096;
	ssize_t k;

	if (asprintf(&path, "%s/%s", udev_device_get_syspath(dev), attr) < 0)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	while ((k = read(fd, buf + n, cap - n)) > 0) {
		n += (size_t)k;
		if (n == cap) {
			uint8_t *nb;

			if (cap >= 65536)
				break;
			nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
	}
	if (k < 0) {
		int e = -errno;
		free(buf);
		return e;
	}
	*ret = buf;
	*ret_len = n;
	return 0;
}

/* An attribute with trailing whitespace removed, NULL if absent or empty. */
const char *probe_attr_nonempty(struct udev_device *dev, const char *attr, char *buf, size_t size)
{
	const char *v = udev_device_get_sysattr_value(dev, attr);
	size_t n;

	if (!v)
		return NULL;
	n = strlen(v);
	while (n > 0 && isspace((unsigned char)v[n - 1]))
		n--;
	if (n == 0)
		return NULL;
	if (n >= size)
		n = size - 1;
	memcpy(buf, v, n);
	buf[n] = '\0';
	return buf;
}

/*
 * ATTRS{attr}=="?*" then $attr{attr}: the first of @dev and its parents
 * whose attribute is non-empty after trailing whitespace; the raw value.
 */
const char *probe_attrs_lookup(struct udev_device *dev, const char *attr)
{
	char tmp[8];

	for (struct udev_device *d = dev; d; d = udev_device_get_parent(d)) {
		const char *v = udev_device_get_sysattr_value(d, attr);

		if (v && probe_attr_nonempty(d, attr, tmp, sizeof(tmp)))
			return v;
	}
	return NULL;
}

/* ----------------------------------------------------------- by-id */

/*
 * IDENTIFY (PACKET) DEVICE through ATA PASS-THROUGH (16): PIO data-in, one
 * block, the length in the sector count.  0 or -errno.
 */
static int ata_identify_sgio(int fd, uint8_t command, uint16_t words[256])
{
	uint8_t cdb[16] = {
		0x85,       /* ATA PASS-THROUGH (16) */
		4 << 1,     /* protocol 4: PIO data-in */
		0x0e,       /* t_dir from device, byt_blok, t_length = sector count */
		0, 0, 0, 1, /* features, sector count = 1 */
		0, 0, 0, 0, 0, 0,
		0,          /* device */
		command,    /* 0xec IDENTIFY DEVICE, 0xa1 IDENTIFY PACKET DEVICE */
		0,
	};
	uint8_t buf[512], sense[32];
	struct sg_io_hdr io = {
		.interface_id = 'S',
		.dxfer_direction = SG_DXFER_FROM_DEV,
		.cmd_len = sizeof(cdb),
		.mx_sb_len = sizeof(sense),
		.dxfer_len = sizeof(buf),
		.dxferp = buf,
		.cmdp = cdb,
		.sbp = sense,
		.timeout = 3000,
	};

	memset(buf, 0, sizeof(buf));
	if (ioctl(fd, SG_IO, &io) < 0)
		return -errno;
	if (io.status != 0 || io.host_status != 0 || (io.driver_status & ~0x08) != 0)
		return -EIO;
	if (io.sb_len_wr > 0) {
		/* descriptor sense with an ATA status return: error bit set? */
		if ((sense[0] & 0x7f) == 0x72 && sense[8] == 0x09 && (sense[8 + 13] & 0x01))
			return -EIO;
	}
	for (unsigned i = 0; i < 256; i++)
		words[i] = (uint16_t)(buf[2 * i] | (buf[2 * i + 1] << 8));
	/* an all-zero answer is no answer */
	for (unsigned i = 0; i < 256; i++)
		if (words[i])
			return 0;
	return -EIO;
}

static int ata_identity(struct udev_device *disk, struct udev_device *scsidev, bool node_only,
			bool packet, struct ap_identity *id)
{
	const char *node = udev_device_get_devnode(disk);
	uint16_t words[256];
	int r;

	/* 1. the device node: SG_IO, then HDIO_GET_IDENTITY */
	if (node) {
		_cleanup_close_ int fd = open(node, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		struct stat st;

		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISBLK(st.st_mode) &&
		    st.st_rdev == udev_device_get_devnum(disk)) {
			if (ata_identify_sgio(fd, packet ? 0xa1 : 0xec, words) == 0) {
				id->source = "SG_IO";
				return ap_ata_identity_from_words(words, &id->serial, &id->wwn);
			} else if (!packet) {
				struct hd_driveid hd;

				if (ioctl(fd, HDIO_GET_IDENTITY, &hd) == 0) {
					char model[41], serial[21];

					memcpy(model, hd.model, 40);
					model[40] = '\0';
					memcpy(serial, hd.serial_no, 20);
					serial[20] = '\0';
					id->source = "HDIO_GET_IDENTITY";
					return ap_ata_identity_from_strings(model, serial, &id->serial);
				}
			}
		}
	}

	/* 2. libata's copy of the IDENTIFY words */
	if (scsidev && !node_only) {
		struct udev_device *hostdev, *ata;
		unsigned host, bus, target, lun, print_id;

		hostdev = udev_device_get_parent_with_subsystem_devtype(scsidev, "scsi", "scsi_host");
		ata = hostdev ? udev_device_get_parent(hostdev) : NULL;
		if (ata && sscanf(udev_device_get_sysname(ata), "ata%u", &print_id) == 1 &&
		    sscanf(udev_device_get_sysname(scsidev), "%u:%u:%u:%u", &host, &bus, &target, &lun) == 4) {
			_cleanup_free_ char *p = NULL;
			_cleanup_udev_device_ struct udev_device *adev = NULL;

			if (bus == 0)
				r = asprintf(&p, "%s/link%u/dev%u.%u/ata_device/dev%u.%u",
					     udev_device_get_syspath(ata), print_id, print_id, target,
					     print_id, target);
			else
				r = asprintf(&p, "%s/link%u.%u/dev%u.%u.0/ata_device/dev%u.%u.0",
					     udev_device_get_syspath(ata), print_id, bus, print_id, bus,
					     print_id, bus);
			if (r < 0)
				return -ENOMEM;
			adev = udev_device_new_from_syspath(udev_device_get_udev(disk), p);
			if (adev) {
				const char *text = udev_device_get_sysattr_value(adev, "id");

				if (text && ap_ata_parse_sysfs_id(text, words) == 0) {
					r = ap_ata_identity_from_words(words, &id->serial, &id->wwn);
					if (r != -ENODATA) {
						id->source = "sysfs ata_device id";
						return r;
					}
				}
			}
		}

		/* 3. the SAT translation in vpd_pg83 (not for ATAPI: libata passes INQUIRY through) */
		_cleanup_free_ uint8_t *pg = NULL;
		size_t len;

		if (!packet && probe_read_binary_attr(scsidev, "vpd_pg83", &pg, &len) == 0) {
			r = ap_ata_identity_from_pg83(pg, len, &id->serial, &id->wwn);
			if (r != -ENODATA) {
				id->source = "vpd_pg83 T10";
				return r;
			}
		}
	}
	return -ENODATA;
}

/* INQUIRY with EVPD for @page, scsi_id's 254-byte buffer.  Length read, or -errno. */
static int scsi_inquiry_vpd(int fd, uint8_t page, uint8_t *buf, size_t size)
{
	uint8_t cdb[6] = { 0x12, 0x01, page, 0, (uint8_t)size, 0 };
	uint8_t sense[32];
	struct sg_io_hdr io = {
		.interface_id = 'S',
		.dxfer_direction = SG_DXFER_FROM_DEV,
		.cmd_len = sizeof(cdb),
		.mx_sb_len = sizeof(sense),
		.dxfer_len = (unsigned)size,
		.dxferp = buf,
		.cmdp = cdb,
		.sbp = sense,
		.timeout = 3000,
	};

	memset(buf, 0, size);
	if (ioctl(fd, SG_IO, &io) < 0)
		return -errno;
	if (io.status != 0 || io.host_status != 0 || (io.driver_status & ~0x08) != 0)
		return -EIO;
	if (buf[1] != page)
		return -EIO;
	return (int)(size - (size_t)io.resid);
}

/*
 * Where the kernel did not read the VPD pages (sysfs has neither), ask the
 * device as scsi_id does: page 0x00 for the list, then 0x83, then 0x80.
 */
static int scsi_identity_sgio(struct udev_device *disk, const char *vendor, const char *model,
			      struct ap_identity *id)
{
	const char *node = udev_device_get_devnode(disk);
	uint8_t p0[254], pg[254];
	_cleanup_close_ int fd = -1;
	struct stat st;
	int n0, n, r;

	if (!node)
		return -ENODATA;
	fd = open(node, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != udev_device_get_devnum(disk))
		return -ENODATA;
	n0 = scsi_inquiry_vpd(fd, 0x00, p0, sizeof(p0));
	if (n0 < 4)
		return -ENODATA;
	for (int want = 0; want < 2; want++) {
		uint8_t page = want == 0 ? 0x83 : 0x80;
		bool listed = false;

		for (int i = 4; i < n0 && i <= p0[3] + 3; i++)
			if (p0[i] == page)
				listed = true;
		if (!listed)
			continue;
		n = scsi_inquiry_vpd(fd, page, pg, sizeof(pg));
		if (n < 4)
			continue;
		if (page == 0x83)
			r = ap_scsi_id_from_pg83(pg, (size_t)n, vendor, model, &id->serial, &id->wwn);
		else
			r = ap_scsi_id_from_pg80(pg, (size_t)n, vendor, model, &id->serial);
		if (r != -ENODATA)
			return r;
	}
	return -ENODATA;
}

static int scsi_identity(struct udev_device *disk, struct udev_device *scsidev, struct ap_identity *id)
{
	_cleanup_free_ uint8_t *pg = NULL;
	const char *vendor = udev_device_get_sysattr_value(scsidev, "vendor");
	const char *model = udev_device_get_sysattr_value(scsidev, "model");
	bool have83, have80;
	size_t len;
	int r;

	have83 = probe_read_binary_attr(scsidev, "vpd_pg83", &pg, &len) == 0;
	if (have83) {
		/* scsi_id reads at most 254 bytes of the page */
		if (len > 254)
			len = 254;
		r = ap_scsi_id_from_pg83(pg, len, vendor, model, &id->serial, &id->wwn);
		if (r != -ENODATA)
			return r;
		free(pg);
		pg = NULL;
	}
	have80 = probe_read_binary_attr(scsidev, "vpd_pg80", &pg, &len) == 0;
	if (have80) {
		if (len > 254)
			len = 254;
		r = ap_scsi_id_from_pg80(pg, len, vendor, model, &id->serial);
		if (r != -ENODATA)
			return r;
	}
	if (!have83 && !have80)
		return scsi_identity_sgio(disk, vendor, model, id);
	return -ENODATA;
}

/* usb_id: ID_USB_SERIAL = vendor_model[_serial][-target:lun] */
static int usb_identity(struct udev_device *disk, struct udev_device *scsidev, struct ap_identity *id)
{
	struct udev_device *intf, *usbdev;
	const char *if_class, *if_subclass, *v;
	_cleanup_free_ char *vendor = NULL, *model = NULL, *serial = NULL;
	char instance[32] = "";
	int protocol = 0;
	char *s;

	intf = udev_device_get_parent_with_subsystem_devtype(disk, "usb", "usb_interface");
	if (!intf)
		return -ENODATA;
	usbdev = udev_device_get_parent_with_subsystem_devtype(intf, "usb", "usb_device");
	if (!usbdev)
		return -ENODATA;
	if_class = udev_device_get_sysattr_value(intf, "bInterfaceClass");
	if (!if_class)
		return -ENODATA;
	if (strtoul(if_class, NULL, 16) == 8) {
		if_subclass = udev_device_get_sysattr_value(intf, "bInterfaceSubClass");
		if (if_subclass)
			protocol = (int)strtoul(if_subclass, NULL, 16);
	}
	if ((protocol == 6 || protocol == 2) && scsidev) {
		/* usb_id reads vendor, model, type, rev in turn and stops at a missing one */
		unsigned host, bus, target, lun;

		if (sscanf(udev_device_get_sysname(scsidev), "%u:%u:%u:%u", &host, &bus, &target, &lun) == 4 &&
		    (v = udev_device_get_sysattr_value(scsidev, "vendor"))) {
			if (!(vendor = probe_clean_id_string(v, strlen(v))))
				return -ENOMEM;
			if ((v = udev_device_get_sysattr_value(scsidev, "model"))) {
				if (!(model = probe_clean_id_string(v, strlen(v))))
					return -ENOMEM;
				if (udev_device_get_sysattr_value(scsidev, "type") &&
				    udev_device_get_sysattr_value(scsidev, "rev"))
					snprintf(instance, sizeof(instance), "%u:%u", target, lun);
			}
		}
	}
	/* without idVendor and idProduct usb_id gives up */
	if (!udev_device_get_sysattr_value(usbdev, "idVendor") ||
	    !udev_device_get_sysattr_value(usbdev, "idProduct"))
		return -ENODATA;
	if (!vendor || !vendor[0]) {
		free(vendor);
		v = udev_device_get_sysattr_value(usbdev, "manufacturer");
		if (!v)
			v = udev_device_get_sysattr_value(usbdev, "idVendor");
		vendor = probe_clean_id_string(v, strlen(v));
		if (!vendor)
			return -ENOMEM;
	}
	if (!model || !model[0]) {
		free(model);
		v = udev_device_get_sysattr_value(usbdev, "product");
		if (!v)
			v = udev_device_get_sysattr_value(usbdev, "idProduct");
		model = probe_clean_id_string(v, strlen(v));
		if (!model)
			return -ENOMEM;
	}
	v = udev_device_get_sysattr_value(usbdev, "serial");
	if (v) {
		for (const unsigned char *p = (const unsigned char *)v; *p; p++)
			if (*p < 0x20 || *p > 0x7f || *p == ',') {
				v = NULL;
				break;
			}
	}
	if (v && !(serial = probe_clean_id_string(v, strlen(v))))
		return -ENOMEM;

	if (asprintf(&s, "%s_%s%s%s%s%s", vendor, model, serial && serial[0] ? "_" : "",
		     serial && serial[0] ? serial : "", instance[0] ? "-" : "", instance) < 0)
		return -ENOMEM;
	id->usb_serial = s;
	if (!id->serial) {
		id->serial = strdup(s);
		id->bus = strdup("usb");
		if (!id->serial || !id->bus)
			return -ENOMEM;
	}
	return 0;
}

static int dup_clean_attr(const char *v, char **ret)
{
	if (!v)
		return 0;
	*ret = ap_udev_attr_clean(v);
	return *ret ? 0 : -ENOMEM;
}

int ap_identity_for_disk(struct udev_device *disk, struct ap_identity *id)
{
	const char *sysname = udev_device_get_sysname(disk);
	const char *devpath = udev_device_get_devpath(disk);
	char buf[64];
	int r;

	memset(id, 0, sizeof(*id));

	if (ap_startswith(sysname, "nvme")) {
		if ((r = dup_clean_attr(probe_attr_nonempty(disk, "wwid", buf, sizeof(buf)) ?
					udev_device_get_sysattr_value(disk, "wwid") : NULL,
					&id->nvme_wwid)) < 0 ||
		    (r = dup_clean_attr(probe_attrs_lookup(disk, "serial"), &id->nvme_serial)) < 0 ||
		    (r = dup_clean_attr(probe_attrs_lookup(disk, "model"), &id->nvme_model)) < 0 ||
		    (r = dup_clean_attr(probe_attrs_lookup(disk, "nsid"), &id->nvme_nsid)) < 0)
			goto fail;
	} else if (ap_startswith(sysname, "vd")) {
		if ((r = dup_clean_attr(probe_attrs_lookup(disk, "serial"), &id->virtio_serial)) < 0)
			goto fail;
	} else if (ap_startswith(sysname, "sd") || ap_startswith(sysname, "sr")) {
		struct udev_device *scsidev = udev_device_get_parent_with_subsystem_devtype(disk, "scsi", "scsi_device");
		bool usb = udev_device_get_parent_with_subsystem_devtype(disk, "usb", "usb_interface") != NULL;
		const char *vendor = scsidev ? probe_attr_nonempty(scsidev, "vendor", buf, sizeof(buf)) : NULL;

		bool atapi = false;

		if (scsidev && ap_startswith(sysname, "sr")) {
			const char *type = udev_device_get_sysattr_value(scsidev, "type");
			const char *level = udev_device_get_sysattr_value(scsidev, "scsi_level");

			/* ATTRS{type}=="5", ATTRS{scsi_level}=="[6-9]*": ata_id with IDENTIFY PACKET */
			atapi = type && strtoul(type, NULL, 10) == 5 && level && level[0] >= '6' && level[0] <= '9';
		}
		if (ap_streq_ptr(vendor, "ATA") || atapi) {
			/* ata_id sees peripheral type 5 on an sr: IDENTIFY PACKET DEVICE */
			r = ata_identity(disk, scsidev, false, ap_startswith(sysname, "sr"), id);
			if (r == -ENOMEM)
				goto fail;
			if (r == 0 && !(id->bus = strdup("ata"))) {
				r = -ENOMEM;
				goto fail;
			}
		}
		/* a SATA disk in a fixed USB enclosure: ata_id through the bridge */
		if (!id->serial && usb && ap_startswith(sysname, "sd") &&
		    ap_streq_ptr(probe_attr_nonempty(disk, "removable", buf, sizeof(buf)), "0")) {
			r = ata_identity(disk, scsidev, true, false, id);
			if (r == -ENOMEM)
				goto fail;
			if (r == 0 && !(id->bus = strdup("ata"))) {
				r = -ENOMEM;
				goto fail;
			}
		}
		if (usb) {
			r = usb_identity(disk, scsidev, id);
			if (r == -ENOMEM)
				goto fail;
		}
		if (!id->serial && scsidev) {
			r = scsi_identity(disk, scsidev, id);
			if (r == -ENOMEM)
				goto fail;
			if (r == 0 && !(id->bus = strdup("scsi"))) {
				r = -ENOMEM;
				goto fail;
			}
		}
	} else if (ap_startswith(sysname, "mmcblk")) {
		struct udev_device *card = udev_device_get_parent_with_subsystem_devtype(disk, "mmc", NULL);

		if (card) {
			if ((r = dup_clean_attr(probe_attr_nonempty(card, "serial", buf, sizeof(buf)) ?
						udev_device_get_sysattr_value(card, "serial") : NULL,
						&id->mmc_serial)) < 0 ||
			    (r = dup_clean_attr(probe_attr_nonempty(card, "name", buf, sizeof(buf)) ?
						udev_device_get_sysattr_value(card, "name") : NULL,
						&id->mmc_name)) < 0)
				goto fail;
		}
	}

	/* DEVPATH not under a virtual directory, or SUBSYSTEMS=="nvme-subsystem" */
	if (devpath && (!strstr(devpath, "/virtual/") ||
			udev_device_get_parent_with_subsystem_devtype(disk, "nvme-subsystem", NULL))) {
		r = ap_path_id(disk, &id->path, &id->path_ata_compat);
		if (r < 0)
			goto fail;
	}

	if (probe_attr_nonempty(disk, "diskseq", buf, sizeof(buf)) && !(id->diskseq = strdup(buf))) {
		r = -ENOMEM;
		goto fail;
	}
	return 0;
fail:
	ap_identity_clear(id);
	return r;
}

/* ------------------------------------------------------------ cache */

struct ident_entry {
	dev_t devnum;
	char *syspath;
	char *diskseq;          /* a new medium at the same devnum has a new diskseq */
	struct ap_identity id;
	struct ident_entry *next;
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ident_entry *cache_head; /* cache_lock */

void ap_identity_cache_flush(void)
{
	pthread_mutex_lock(&cache_lock);
	while (cache_head) {
		struct ident_entry *e = cache_head;

		cache_head = e->next;
		ap_identity_clear(&e->id);
		free(e->syspath);
		free(e->diskseq);
		free(e);
	}
	pthread_mutex_unlock(&cache_lock);
}

static int identity_copy(const struct ap_identity *a, struct ap_identity *b)
{
	int err = 0;

	memset(b, 0, sizeof(*b));
	b->bus = ap_strdup_or_null(a->bus, &err);
	b->serial = ap_strdup_or_null(a->serial, &err);
	b->wwn = ap_strdup_or_null(a->wwn, &err);
	b->usb_serial = ap_strdup_or_null(a->usb_serial, &err);
	b->nvme_wwid = ap_strdup_or_null(a->nvme_wwid, &err);
	b->nvme_model = ap_strdup_or_null(a->nvme_model, &err);
	b->nvme_serial = ap_strdup_or_null(a->nvme_serial, &err);
	b->nvme_nsid = ap_strdup_or_null(a->nvme_nsid, &err);
	b->virtio_serial = ap_strdup_or_null(a->virtio_serial, &err);
	b->mmc_name = ap_strdup_or_null(a->mmc_name, &err);
	b->mmc_serial = ap_strdup_or_null(a->mmc_serial, &err);
	b->path = ap_strdup_or_null(a->path, &err);
	b->path_ata_compat = ap_strdup_or_null(a->path_ata_compat, &err);
	b->diskseq = ap_strdup_or_null(a->diskseq, &err);
	b->source = a->source;
	if (err)
		ap_identity_clear(b);
	return err;
}

int ap_identity_get(struct udev_device *disk, struct ap_identity *ret)
{
	dev_t devnum = udev_device_get_devnum(disk);
	const char *syspath = udev_device_get_syspath(disk);
	const char *seq = udev_device_get_sysattr_value(disk, "diskseq");
	struct ident_entry *e;
	struct ap_identity id;
	int r;

	if (!seq)
		seq = "";
	pthread_mutex_lock(&cache_lock);
	for (e = cache_head; e; e = e->next)
		if (e->devnum == devnum && strcmp(e->syspath, syspath) == 0 &&
		    strcmp(e->diskseq, seq) == 0) {
			r = identity_copy(&e->id, ret);
			pthread_mutex_unlock(&cache_lock);
			return r;
		}
	pthread_mutex_unlock(&cache_lock);

	r = ap_identity_for_disk(disk, &id);
	if (r < 0)
		return r;
	r = identity_copy(&id, ret);
	if (r < 0) {
		ap_identity_clear(&id);
		return r;
	}
	e = calloc(1, sizeof(*e));
	if (!e || !(e->syspath = strdup(syspath)) || !(e->diskseq = strdup(seq))) {
		/* no cache entry: fine, only slower */
		if (e)
			free(e->syspath);
		free(e);
		ap_identity_clear(&id);
		return 0;
	}
	e->devnum = devnum;
	e->id = id;
	pthread_mutex_lock(&cache_lock);
	e->next = cache_head;
	cache_head = e;
	pthread_mutex_unlock(&cache_lock);
	return 0;
}
