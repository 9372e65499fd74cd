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
 * Why one file of about 1300 lines: ata_id, scsi_id, usb_id and path_id
 * share the sysfs readers, the SG_IO plumbing and the cleanup helpers
 * below, and ap_identity_for_disk() decides between them per disk; the
 * byte-level parsers (ATA words, VPD pages) are exported and tested on
 * their own (tests/naming, tests/fuzz).  path_id is the natural next file
 * to split off once those helpers have a home of their own.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <ctype.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/hdreg.h>
#include <scsi/sg.h>

#include <libudev.h>

#include "asyncprobe.h"
#include "identity.h"
#include "udev-string.h"

static void closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

static void udev_device_unrefp(struct udev_device **d)
{
	if (*d)
		udev_device_unref(*d);
}
#define _cleanup_udev_device_ _cleanup_(udev_device_unrefp)

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
static char *clean_id_string(const char *s, size_t len)
{
	char *out;

	out = malloc(len + 1);
	if (!out)
		return NULL;
	ap_udev_replace_whitespace(s, out, len);
	ap_udev_replace_chars(out, NULL);
	return out;
}

/* ------------------------------------------------------------- ATA */

static int ata_serial_join(const char *model, const char *serial, char **ret)
{
	char *s;

	if (serial[0] != '\0') {
		if (asprintf(&s, "%s_%s", model, serial) < 0)
			return -ENOMEM;
	} else {
		s = strdup(model);
		if (!s)
			return -ENOMEM;
	}
	*ret = s;
	return 0;
}

int ap_ata_identity_from_strings(const char *model40, const char *serial20, char **ret_serial)
{
	_cleanup_free_ char *model = NULL, *serial = NULL;

	model = clean_id_string(model40, 40);
	serial = clean_id_string(serial20, 20);
	if (!model || !serial)
		return -ENOMEM;
	if (model[0] == '\0' && serial[0] == '\0')
		return -ENODATA;
	return ata_serial_join(model, serial, ret_serial);
}

/* IDENTIFY strings: two characters per word, the high byte first */
static void ata_words_string(const uint16_t *w, unsigned first, char *dest, size_t len)
{
	for (size_t i = 0; i < len / 2; i++) {
		dest[2 * i] = (char)(w[first + i] >> 8);
		dest[2 * i + 1] = (char)(w[first + i] & 0xff);
	}
	dest[len] = '\0';
}

int ap_ata_identity_from_words(const uint16_t words[256], char **ret_serial, char **ret_wwn)
{
	char model[41], serial[21];
	char *wwn = NULL;
	int r;

	ata_words_string(words, 27, model, 40);
	ata_words_string(words, 10, serial, 20);
	r = ap_ata_identity_from_strings(model, serial, ret_serial);
	if (r < 0)
		return r;
	/* words 108-111: an NAA 5 (IEEE registered) WWN, nothing else */
	if (ret_wwn) {
		if ((words[108] & 0xf000) == 0x5000) {
			uint64_t v = ((uint64_t)words[108] << 48) | ((uint64_t)words[109] << 32) |
				     ((uint64_t)words[110] << 16) | words[111];
			if (asprintf(&wwn, "0x%" PRIx64, v) < 0) {
				free(*ret_serial);
				*ret_serial = NULL;
				return -ENOMEM;
			}
		}
		*ret_wwn = wwn;
	}
	return 0;
}

int ap_ata_parse_sysfs_id(const char *text, uint16_t words[256])
{
	const char *p = text;
	unsigned n = 0;

	while (n < 256) {
		char *end;
		unsigned long v;

		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		errno = 0;
		v = strtoul(p, &end, 16);
		if (end == p || errno || v > 0xffff)
			return -EINVAL;
		words[n++] = (uint16_t)v;
		p = end;
	}
	return n == 256 ? 0 : -EINVAL;
}

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

/* Model and serial from the T10 vendor designator "ATA     " + model + serial. */
int ap_ata_identity_from_pg83(const uint8_t *pg, size_t len, char **ret_serial, char **ret_wwn)
{
	size_t total, j;
	char *wwn = NULL, *serial = NULL;

	if (len < 4 || pg[1] != 0x83)
		return -ENODATA;
	total = ((size_t)pg[2] << 8 | pg[3]) + 4;
	if (total > len)
		total = len;
	for (j = 4; j + 4 <= total; j += 4 + (size_t)pg[j + 3]) {
		const uint8_t *d = pg + j;
		size_t dlen = d[3];

		if (j + 4 + dlen > total)
			break;
		if ((d[1] & 0x30) != 0)  /* not the logical unit */
			continue;
		if ((d[1] & 0x0f) == 1 && dlen >= 8 + 40 + 20 && !serial &&
		    memcmp(d + 4, "ATA     ", 8) == 0) {
			char model[41], ser[21];
			int r;

			memcpy(model, d + 12, 40);
			model[40] = '\0';
			memcpy(ser, d + 52, 20);
			ser[20] = '\0';
			r = ap_ata_identity_from_strings(model, ser, &serial);
			if (r < 0 && r != -ENODATA) {
				free(wwn);
				return r;
			}
		} else if ((d[1] & 0x0f) == 3 && (d[0] & 0x0f) == 1 && dlen == 8 &&
			   (d[4] >> 4) == 5 && !wwn) {
			/* libata's NAA designator is IDENTIFY words 108-111 */
			if (asprintf(&wwn, "0x%02x%02x%02x%02x%02x%02x%02x%02x", d[4], d[5], d[6],
				     d[7], d[8], d[9], d[10], d[11]) < 0) {
				free(serial);
				return -ENOMEM;
			}
		}
	}
	if (!serial) {
		free(wwn);
		return -ENODATA;
	}
	*ret_serial = serial;
	if (ret_wwn)
		*ret_wwn = wwn;
	else
		free(wwn);
	return 0;
}

/* ------------------------------------------------------------- SCSI */

enum {
	ID_VENDOR_SPECIFIC = 0,
	ID_T10_VENDOR = 1,
	ID_EUI_64 = 2,
	ID_NAA = 3,
};
enum { CS_BINARY = 1, CS_ASCII = 2 };
enum { NAA_DONT_CARE = 0xff, NAA_IEEE_REG = 5, NAA_IEEE_REG_EXT = 6 };

/* scsi_id's preference order */
static const struct {
	uint8_t type, naa, codeset;
} id_search[] = {
	{ ID_NAA, NAA_IEEE_REG_EXT, CS_BINARY },
	{ ID_NAA, NAA_IEEE_REG_EXT, CS_ASCII },
	{ ID_NAA, NAA_IEEE_REG, CS_BINARY },
	{ ID_NAA, NAA_IEEE_REG, CS_ASCII },
	{ ID_NAA, NAA_DONT_CARE, CS_BINARY },
	{ ID_NAA, NAA_DONT_CARE, CS_ASCII },
	{ ID_EUI_64, NAA_DONT_CARE, CS_BINARY },
	{ ID_EUI_64, NAA_DONT_CARE, CS_ASCII },
	{ ID_T10_VENDOR, NAA_DONT_CARE, CS_BINARY },
	{ ID_T10_VENDOR, NAA_DONT_CARE, CS_ASCII },
	{ ID_VENDOR_SPECIFIC, NAA_DONT_CARE, CS_BINARY },
	{ ID_VENDOR_SPECIFIC, NAA_DONT_CARE, CS_ASCII },
};

static const char hexdig[] = "0123456789abcdef";

/* vendor(8) + model(16), padded with spaces as the INQUIRY data is */
static void vendor_model(char *out, const char *vendor, const char *model)
{
	snprintf(out, 25, "%-8.8s%-16.16s", vendor ? vendor : "", model ? model : "");
}

/* ID_SERIAL from scsi_id's raw serial: whitespace step, replace step */
static int scsi_finish(const char *raw, char **ret_serial)
{
	char *s = clean_id_string(raw, strlen(raw));

	if (!s)
		return -ENOMEM;
	if (s[0] == '\0') {
		free(s);
		return -ENODATA;
	}
	*ret_serial = s;
	return 0;
}

int ap_scsi_id_from_pg83(const uint8_t *pg, size_t len, const char *vendor, const char *model,
			 char **ret_serial, char **ret_wwn)
{
	size_t total;

	if (len < 4 || pg[1] != 0x83)
		return -ENODATA;
	total = ((size_t)pg[2] << 8 | pg[3]) + 4;
	if (total > len)
		total = len;

	if (len > 6 && pg[6] != 0) {
		/* SCSI-2 style answer (old EMC Symmetrix): a bare binary WWN */
		char raw[2 + 2 * 255 + 1];
		size_t j = 0;

		raw[j++] = hexdig[ID_NAA];
		for (size_t i = 0; i < pg[3] && 4 + i < len; i++) {
			raw[j++] = hexdig[pg[4 + i] >> 4];
			raw[j++] = hexdig[pg[4 + i] & 0xf];
		}
		raw[j] = '\0';
		if (ret_wwn)
			*ret_wwn = NULL;
		return scsi_finish(raw, ret_serial);
	}

	for (size_t k = 0; k < sizeof(id_search) / sizeof(id_search[0]); k++) {
		for (size_t j = 4; j + 4 <= total; j += 4 + (size_t)pg[j + 3]) {
			const uint8_t *d = pg + j;
			size_t dlen = d[3];
			char raw[1 + 24 + 2 * 255 + 1];
			size_t n = 0, start;
			int r;

			if (j + 4 + dlen > total)
				break;
			if ((d[1] & 0x30) != 0)
				continue;  /* associated with a port, not the unit */
			if ((d[1] & 0x0f) != id_search[k].type)
				continue;
			if (id_search[k].naa != NAA_DONT_CARE && id_search[k].naa != (d[4] >> 4))
				continue;
			if ((d[0] & 0x0f) != id_search[k].codeset)
				continue;

			raw[n++] = hexdig[id_search[k].type];
			if (id_search[k].type == ID_VENDOR_SPECIFIC) {
				vendor_model(raw + n, vendor, model);
				n += strlen(raw + n);
			}
			start = n;
			for (size_t i = 0; i < dlen; i++) {
				if (id_search[k].codeset == CS_ASCII) {
					raw[n++] = (char)d[4 + i];
				} else {
					raw[n++] = hexdig[d[4 + i] >> 4];
					raw[n++] = hexdig[d[4 + i] & 0xf];
				}
			}
			raw[n] = '\0';

			r = scsi_finish(raw, ret_serial);
			if (r < 0)
				return r;
			if (ret_wwn) {
				*ret_wwn = NULL;
				if (id_search[k].type == ID_NAA) {
					/* ID_WWN is 16 digits; the rest (NAA 6) is the extension */
					char w[2 + 32 + 1];

					snprintf(w, sizeof(w), "0x%.32s", raw + start);
					*ret_wwn = strdup(w);
					if (!*ret_wwn) {
						free(*ret_serial);
						*ret_serial = NULL;
						return -ENOMEM;
					}
				}
			}
			return 0;
		}
	}
	return -ENODATA;
}

int ap_scsi_id_from_pg80(const uint8_t *pg, size_t len, const char *vendor, const char *model,
			 char **ret_serial)
{
	char raw[1 + 24 + 255 + 1];
	size_t n = 0, slen;

	if (len < 4 || pg[1] != 0x80)
		return -ENODATA;
	slen = pg[3];
	if (4 + slen > len)
		slen = len - 4;
	raw[n++] = 'S';
	vendor_model(raw + n, vendor, model);
	n += strlen(raw + n);
	for (size_t i = 0; i < slen; i++)
		raw[n++] = (char)pg[4 + i];
	raw[n] = '\0';
	/* a NUL inside the serial ends it, as in scsi_id's C strings */
	return scsi_finish(raw, ret_serial);
}

/* --------------------------------------------------- sysfs helpers */

/* Read a binary sysfs attribute of @dev into a malloc()ed buffer. */
static int read_binary_attr(struct udev_device *dev, const char *attr, uint8_t **ret, size_t *ret_len)
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
static const char *attr_nonempty(struct udev_device *dev, const char *attr, char *buf, size_t size)
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
static const char *attrs_lookup(struct udev_device *dev, const char *attr)
{
	char tmp[8];

	for (struct udev_device *d = dev; d; d = udev_device_get_parent(d)) {
		const char *v = udev_device_get_sysattr_value(d, attr);

		if (v && attr_nonempty(d, attr, tmp, sizeof(tmp)))
			return v;
	}
	return NULL;
}

/* ----------------------------------------------------------- path_id */

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
	port_no = attr_nonempty(port, "port_no", buf, sizeof(buf));
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
	id = attr_nonempty(parent, "ieee1394_id", buf, sizeof(buf));
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
			const char *nsid = attr_nonempty(dev, "nsid", buf, sizeof(buf));

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

/* ----------------------------------------------------------- by-id */

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

		if (!packet && read_binary_attr(scsidev, "vpd_pg83", &pg, &len) == 0) {
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

	have83 = read_binary_attr(scsidev, "vpd_pg83", &pg, &len) == 0;
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
	have80 = read_binary_attr(scsidev, "vpd_pg80", &pg, &len) == 0;
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
			if (!(vendor = clean_id_string(v, strlen(v))))
				return -ENOMEM;
			if ((v = udev_device_get_sysattr_value(scsidev, "model"))) {
				if (!(model = clean_id_string(v, strlen(v))))
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
		vendor = clean_id_string(v, strlen(v));
		if (!vendor)
			return -ENOMEM;
	}
	if (!model || !model[0]) {
		free(model);
		v = udev_device_get_sysattr_value(usbdev, "product");
		if (!v)
			v = udev_device_get_sysattr_value(usbdev, "idProduct");
		model = clean_id_string(v, strlen(v));
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
	if (v && !(serial = clean_id_string(v, strlen(v))))
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
		if ((r = dup_clean_attr(attr_nonempty(disk, "wwid", buf, sizeof(buf)) ?
					udev_device_get_sysattr_value(disk, "wwid") : NULL,
					&id->nvme_wwid)) < 0 ||
		    (r = dup_clean_attr(attrs_lookup(disk, "serial"), &id->nvme_serial)) < 0 ||
		    (r = dup_clean_attr(attrs_lookup(disk, "model"), &id->nvme_model)) < 0 ||
		    (r = dup_clean_attr(attrs_lookup(disk, "nsid"), &id->nvme_nsid)) < 0)
			goto fail;
	} else if (ap_startswith(sysname, "vd")) {
		if ((r = dup_clean_attr(attrs_lookup(disk, "serial"), &id->virtio_serial)) < 0)
			goto fail;
	} else if (ap_startswith(sysname, "sd") || ap_startswith(sysname, "sr")) {
		struct udev_device *scsidev = udev_device_get_parent_with_subsystem_devtype(disk, "scsi", "scsi_device");
		bool usb = udev_device_get_parent_with_subsystem_devtype(disk, "usb", "usb_interface") != NULL;
		const char *vendor = scsidev ? attr_nonempty(scsidev, "vendor", buf, sizeof(buf)) : NULL;

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
		    ap_streq_ptr(attr_nonempty(disk, "removable", buf, sizeof(buf)), "0")) {
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
			if ((r = dup_clean_attr(attr_nonempty(card, "serial", buf, sizeof(buf)) ?
						udev_device_get_sysattr_value(card, "serial") : NULL,
						&id->mmc_serial)) < 0 ||
			    (r = dup_clean_attr(attr_nonempty(card, "name", buf, sizeof(buf)) ?
						udev_device_get_sysattr_value(card, "name") : NULL,
						&id->mmc_name)) < 0)
				goto fail;
		}
	}

	/* DEVPATH not under a virtual directory, or SUBSYSTEMS=="nvme-subsystem" */
	if (devpath && (!strstr(devpath, "/virtual/") ||
			udev_device_get_parent_with_subsystem_devtype(disk, "nvme-subsystem", NULL))) {
		r = path_id(disk, &id->path, &id->path_ata_compat);
		if (r < 0)
			goto fail;
	}

	if (attr_nonempty(disk, "diskseq", buf, sizeof(buf)) && !(id->diskseq = strdup(buf))) {
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
