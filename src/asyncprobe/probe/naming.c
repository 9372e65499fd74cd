/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * udev-compatible /dev/disk link names.
 *
 * The names are the ones systemd-udevd 252 with Debian 12's
 * 60-persistent-storage.rules would create; shared/docs/udev-naming.md
 * has the rules.  The code follows the rules file line by line, and each
 * SYMLINK+= goes through the same three steps udev applies to it:
 *
 *   1. every substituted value gets the whitespace step,
 *   2. the whole string gets the replace step with "/ " also allowed
 *      ("/" only once a rule set OPTIONS="string_escape=replace", as the
 *      NVMe lines do: that option stays on for the rest of the event),
 *   3. the result is split on spaces.
 *
 * Values themselves arrive cleaned the way their source cleans them:
 * ata_id/scsi_id/usb_id strings (identity.c, from its cache), $attr{}
 * values (ap_udev_attr_clean), and blkid values through
 * blkid_encode_string(), the very libblkid function udev's blkid builtin
 * calls; the steps and the cleaning live in udev-string.c.  This file
 * also has the name lists, ap_fsinfo_clear() and ap_link_name_valid().
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <sys/sysmacros.h>

#include <blkid.h>
#include <libudev.h>

#include "base/base.h"
#include "probe/probe.h"

#define UDEV_PATH_SIZE 1024

/* ------------------------------------------------------------ lists */

void ap_fsinfo_clear(struct ap_fsinfo *fs)
{
	if (!fs)
		return;
	free(fs->type);
	free(fs->usage);
	free(fs->uuid);
	free(fs->uuid_sub);
	free(fs->label);
	free(fs->version);
	free(fs->pttype);
	free(fs->ptuuid);
	free(fs->part_entry_scheme);
	free(fs->part_entry_uuid);
	free(fs->part_entry_name);
	free(fs->part_entry_type);
	memset(fs, 0, sizeof(*fs));
}

int ap_namelist_add(struct ap_namelist *l, const char *name)
{
	char *s;

	/* a name udev makes twice is one link */
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->names[i], name) == 0)
			return 0;
	if (l->n == l->allocated) {
		size_t na = l->allocated ? l->allocated * 2 : 16;
		char **nn = realloc(l->names, na * sizeof(*nn));

		if (!nn)
			return -ENOMEM;
		l->names = nn;
		l->allocated = na;
	}
	s = strdup(name);
	if (!s)
		return -ENOMEM;
	l->names[l->n++] = s;
	return 0;
}

void ap_namelist_free(struct ap_namelist *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	memset(l, 0, sizeof(*l));
}

/* --------------------------------------------------------- validity */

static const char *const link_dirs[] = {
	"disk/by-id/", "disk/by-path/", "disk/by-uuid/", "disk/by-label/",
	"disk/by-partuuid/", "disk/by-partlabel/", "disk/by-diskseq/",
};

bool ap_link_name_valid(const char *name)
{
	const char *p = NULL;

	if (!name)
		return false;
	for (size_t i = 0; i < sizeof(link_dirs) / sizeof(link_dirs[0]); i++)
		if (strncmp(name, link_dirs[i], strlen(link_dirs[i])) == 0) {
			p = name + strlen(link_dirs[i]);
			break;
		}
	if (!p || strlen(name) >= PATH_MAX)
		return false;
	/* each remaining component: non-empty, not . or .., short, printable */
	for (;;) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (n == 0 || n > NAME_MAX)
			return false;
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
				return false;
		if (!e)
			return true;
		p = e + 1;
	}
}

/* ------------------------------------------------------- SYMLINK+= */

enum esc { ESC_UNSET, ESC_REPLACE };

struct rule_ctx {
	struct ap_namelist *l;
	enum esc esc;
	int error;
};

/*
 * SYMLINK+="<prefix>$value<suffix>": @prefix and @suffix are rule text,
 * @value a substituted value (whitespace step).  @value NULL: nothing.
 */
static void symlink_add(struct rule_ctx *c, const char *prefix, const char *value, const char *suffix)
{
	_cleanup_free_ char *v = NULL;
	char buf[UDEV_PATH_SIZE];
	char *p;
	int n;

	if (c->error || !value || !value[0])
		return;
	v = strdup(value);
	if (!v) {
		c->error = -ENOMEM;
		return;
	}
	ap_udev_replace_whitespace(v, v, strlen(v));
	n = snprintf(buf, sizeof(buf), "%s%s%s", prefix, v, suffix ? suffix : "");
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		/* udev refuses a truncated link path */
		log_debug("link name for %s%s too long, dropped", prefix, suffix ? suffix : "");
		return;
	}
	ap_udev_replace_chars(buf, c->esc == ESC_REPLACE ? "/" : "/ ");

	p = buf;
	while (*p && strchr(" \t\n\r", *p))
		p++;
	while (*p) {
		char *next = strchr(p, ' ');

		if (next) {
			*next++ = '\0';
			while (*next && strchr(" \t\n\r", *next))
				next++;
		}
		/* "/dev/" + name must fit udev's path buffer */
		if (strlen(p) + 5 < UDEV_PATH_SIZE) {
			int r = ap_namelist_add(c->l, p);

			if (r < 0) {
				c->error = r;
				return;
			}
		}
		if (!next)
			break;
		p = next;
	}
}

/* ------------------------------------------------------------ names */

/* KERNEL=="loop*|mmcblk*[0-9]|...": the devices the rules file handles */
static bool handled_kernel_name(const char *n)
{
	static const char *const plain[] = {
		"loop", "nvme", "sd", "sr", "vd", "xvd", "bcache", "cciss", "dasd",
		"ubd", "ubi", "scm", "pmem", "nbd", "zd",
	};
	static const char *const digit_end[] = { "mmcblk", "msblk", "mspblk" };
	size_t len = strlen(n);

	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		if (ap_startswith(n, plain[i]))
			return true;
	for (size_t i = 0; i < sizeof(digit_end) / sizeof(digit_end[0]); i++)
		if (ap_startswith(n, digit_end[i]) && len > 0 && isdigit((unsigned char)n[len - 1]))
			return true;
	return false;
}

/* %n: the trailing number of the kernel name */
static const char *sysnum(const char *sysname)
{
	const char *p = sysname + strlen(sysname);

	while (p > sysname && isdigit((unsigned char)p[-1]))
		p--;
	return *p ? p : NULL;
}

/* KERNEL=="mmcblk[0-9]" / "mmcblk[0-9]p[0-9]*" */
static bool mmc_name_ok(const char *n, bool partition)
{
	if (!ap_startswith(n, "mmcblk") || !isdigit((unsigned char)n[6]))
		return false;
	if (!partition)
		return n[7] == '\0';
	return n[7] == 'p' && isdigit((unsigned char)n[8]);
}

/* KERNEL=="mmcblk[0-9]boot[0-9]" */
static bool mmc_boot_name(const char *n)
{
	return ap_startswith(n, "mmcblk") && isdigit((unsigned char)n[6]) && ap_startswith(n + 7, "boot") &&
	       isdigit((unsigned char)n[11]) && n[12] == '\0';
}

/* glob "nvme*[0-9]n*[0-9]" on a disk: nvme<digits...>n<...><digit> */
static bool nvme_ns_name(const char *n)
{
	const char *p;
	size_t len = strlen(n);

	if (!ap_startswith(n, "nvme") || len < 7 || !isdigit((unsigned char)n[len - 1]))
		return false;
	for (p = n + 5; *p; p++)
		if (*p == 'n' && isdigit((unsigned char)p[-1]) && p[1])
			return true;
	return false;
}

static bool usage_links(const char *usage)
{
	return usage && (strcmp(usage, "filesystem") == 0 || strcmp(usage, "other") == 0 ||
			 strcmp(usage, "crypto") == 0);
}

/* SYMLINK+= of a value that needs "%s_%s[_%s]" first; out of memory sets c->error. */
static char *join_or_fail(struct rule_ctx *c, const char *a, const char *b, const char *d)
{
	char *s = NULL;

	if ((d ? asprintf(&s, "%s_%s_%s", a, b, d) : asprintf(&s, "%s_%s", a, b)) < 0) {
		c->error = -ENOMEM;
		return NULL;
	}
	return s;
}

/* The NVMe lines: by-id/nvme-<wwid>, nvme-<model>_<serial>[_<nsid>]. */
static void names_nvme(struct rule_ctx *c, const struct ap_identity *id, const char *suffix)
{
	_cleanup_free_ char *s = NULL, *ns = NULL;

	symlink_add(c, "disk/by-id/nvme-", id->nvme_wwid, suffix);
	if (!id->nvme_model || !id->nvme_serial)
		return;
	/* string_escape=replace: ENV{ID_SERIAL} gets the replace step */
	c->esc = ESC_REPLACE;
	s = join_or_fail(c, id->nvme_model, id->nvme_serial, NULL);
	if (!s)
		return;
	ap_udev_replace_chars(s, NULL);
	symlink_add(c, "disk/by-id/nvme-", s, suffix);
	if (!id->nvme_nsid)
		return;
	ns = join_or_fail(c, id->nvme_model, id->nvme_serial, id->nvme_nsid);
	if (!ns)
		return;
	ap_udev_replace_chars(ns, NULL);
	symlink_add(c, "disk/by-id/nvme-", ns, suffix);
}

/* by-id: NVMe, virtio-blk, ATA/SCSI/USB, MMC, in the rules file's order. */
static void names_by_id(struct rule_ctx *c, const struct ap_identity *id, const char *sysname,
			const char *disk_sysname, bool part, const char *suffix)
{
	bool scsi_like = ap_startswith(sysname, "sd") || ap_startswith(sysname, "cciss") ||
			 (!part && ap_startswith(sysname, "sr"));

	if (ap_startswith(sysname, "nvme") && nvme_ns_name(part ? disk_sysname : sysname))
		names_nvme(c, id, suffix);
	if (ap_startswith(sysname, "vd"))
		symlink_add(c, "disk/by-id/virtio-", id->virtio_serial, suffix);
	if (scsi_like && id->bus && id->serial) {
		_cleanup_free_ char *prefix = NULL;

		if (asprintf(&prefix, "disk/by-id/%s-", id->bus) < 0) {
			c->error = -ENOMEM;
			return;
		}
		symlink_add(c, prefix, id->serial, suffix);
	}
	if (scsi_like)
		symlink_add(c, "disk/by-id/usb-", id->usb_serial, suffix);
	if (mmc_name_ok(sysname, part) && id->mmc_name && id->mmc_serial) {
		_cleanup_free_ char *s = join_or_fail(c, id->mmc_name, id->mmc_serial, NULL);

		symlink_add(c, "disk/by-id/mmc-", s, suffix);
	}
}

/* by-path; mmcblkXbootY: <ID_PATH>-bootY */
static void names_by_path(struct rule_ctx *c, const struct ap_identity *id, const char *sysname,
			  const char *suffix)
{
	if (id->path && mmc_boot_name(sysname)) {
		char boot[32];

		snprintf(boot, sizeof(boot), "-boot%s", sysnum(sysname));
		symlink_add(c, "disk/by-path/", id->path, boot);
	} else if (id->path) {
		symlink_add(c, "disk/by-path/", id->path, suffix);
		symlink_add(c, "disk/by-path/", id->path_ata_compat, suffix);
		if (ap_startswith(sysname, "vd") && ap_startswith(id->path, "pci-"))
			symlink_add(c, "disk/by-path/virtio-", id->path, suffix);
	}
}

/* A blkid value through blkid_encode_string(), then SYMLINK+=. */
static void symlink_add_encoded(struct rule_ctx *c, const char *prefix, const char *raw,
				bool after_safe)
{
	_cleanup_free_ char *e = NULL;

	if (c->error)
		return;
	e = ap_blkid_encode(raw, after_safe);
	if (!e) {
		c->error = -ENOMEM;
		return;
	}
	symlink_add(c, prefix, e, NULL);
}

/* by-uuid, by-label: filesystems only (not RAID or LVM members) */
static void names_fs(struct rule_ctx *c, const struct ap_fsinfo *fs)
{
	if (!fs || fs->ambivalent || !usage_links(fs->usage))
		return;
	if (fs->uuid)
		symlink_add_encoded(c, "disk/by-uuid/", fs->uuid, true);
	if (fs->label)
		symlink_add_encoded(c, "disk/by-label/", fs->label, true);
}

/* by-partuuid, by-partlabel */
static void names_partition(struct rule_ctx *c, const struct ap_fsinfo *fs)
{
	if (!fs)
		return;
	if (fs->part_entry_uuid)
		symlink_add(c, "disk/by-partuuid/", fs->part_entry_uuid, NULL);
	if (fs->part_entry_name && fs->part_entry_scheme && strcmp(fs->part_entry_scheme, "gpt") == 0)
		symlink_add_encoded(c, "disk/by-partlabel/", fs->part_entry_name, false);
}

int ap_names_for_device(struct udev_device *dev, const struct ap_fsinfo *fs,
			struct ap_namelist *ret)
{
	struct ap_namelist l = { 0 };
	struct rule_ctx c = { .l = &l, .esc = ESC_UNSET };
	struct ap_identity id = { 0 };
	struct udev_device *disk;
	const char *sysname, *devtype, *subsys, *n = NULL;
	char suffix[32] = "";
	bool part;
	int r;

	memset(ret, 0, sizeof(*ret));
	subsys = udev_device_get_subsystem(dev);
	sysname = udev_device_get_sysname(dev);
	devtype = udev_device_get_devtype(dev);
	if (!subsys || strcmp(subsys, "block") != 0 || !sysname || !devtype)
		return 0;
	if (!handled_kernel_name(sysname))
		return 0;
	part = strcmp(devtype, "partition") == 0;
	if (!part && strcmp(devtype, "disk") != 0)
		return 0;
	/* TEST=="whole_disk": a partition spanning its disk gets nothing */
	if (part && udev_device_get_sysattr_value(dev, "whole_disk"))
		return 0;

	if (part) {
		disk = udev_device_get_parent_with_subsystem_devtype(dev, "block", "disk");
		n = sysnum(sysname);
		if (!disk || !n)
			return 0;
		snprintf(suffix, sizeof(suffix), "-part%s", n);
	} else {
		disk = dev;
	}

	r = ap_identity_get(disk, &id);
	if (r < 0)
		return r;

	/* in the order of 60-persistent-storage.rules */
	names_by_id(&c, &id, sysname, udev_device_get_sysname(disk), part, suffix);
	names_by_path(&c, &id, sysname, suffix);
	names_fs(&c, fs);
	symlink_add(&c, "disk/by-id/wwn-", id.wwn, suffix);
	names_partition(&c, fs);
	/* by-diskseq: whole disks only in 252 */
	if (!part)
		symlink_add(&c, "disk/by-diskseq/", id.diskseq, NULL);

	r = c.error;
	ap_identity_clear(&id);
	if (r < 0) {
		ap_namelist_free(&l);
		return r;
	}
	*ret = l;
	return 0;
}
