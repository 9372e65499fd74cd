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
 * ata_id/scsi_id/usb_id strings (identity.c), $attr{} values
 * (ap_udev_attr_clean), and blkid values through blkid_encode_string(),
 * the very libblkid function udev's blkid builtin calls.
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

#include "asyncprobe.h"
#include "names.h"
#include "utf8.h"

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

/* --------------------------------------------------- string cleaning */

int ap_utf8_encoded_valid_unichar(const char *str)
{
	uint32_t cp;
	size_t len = ap_utf8_decode(str, &cp);

	/* udev also refuses the non-characters */
	if (!len || ap_unichar_is_noncharacter(cp))
		return -EINVAL;
	return (int)len;
}

size_t ap_udev_replace_whitespace(const char *str, char *to, size_t len)
{
	bool is_space = false;
	size_t i, j;

	/* udev skips only these four as leading whitespace */
	i = strspn(str, " \t\n\r");
	for (j = 0; j < len && i < len && str[i] != '\0'; i++) {
		if (isspace((unsigned char)str[i])) {
			is_space = true;
			continue;
		}
		if (is_space) {
			if (j + 1 >= len)
				break;
			to[j++] = '_';
			is_space = false;
		}
		to[j++] = str[i];
	}
	to[j] = '\0';
	return j;
}

static bool allowed_char(char c, const char *allow)
{
	if ((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))
		return true;
	if (c != '\0' && strchr("#+-.:=@_", c))
		return true;
	return allow && c != '\0' && strchr(allow, c);
}

size_t ap_udev_replace_chars(char *str, const char *allow)
{
	size_t i = 0, replaced = 0;

	while (str[i] != '\0') {
		int len;

		if (allowed_char(str[i], allow)) {
			i++;
			continue;
		}
		/* "\x" is kept: it is how encoded values spell a byte */
		if (str[i] == '\\' && str[i + 1] == 'x') {
			i += 2;
			continue;
		}
		len = ap_utf8_encoded_valid_unichar(str + i);
		if (len > 1) {
			i += (size_t)len;
			continue;
		}
		if (isspace((unsigned char)str[i]) && allow && strchr(allow, ' ')) {
			str[i] = ' ';
			i++;
			replaced++;
			continue;
		}
		str[i] = '_';
		i++;
		replaced++;
	}
	return replaced;
}

char *ap_udev_attr_clean(const char *value)
{
	char *s;
	size_t n;

	/* udev copies into a UDEV_NAME_SIZE (512) buffer first */
	n = strnlen(value, 511);
	s = strndup(value, n);
	if (!s)
		return NULL;
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	ap_udev_replace_chars(s, "/ $%?,");
	return s;
}

char *ap_blkid_encode(const char *raw, bool after_safe)
{
	char s[257];

	memset(s, 0, sizeof(s));
	if (after_safe)
		blkid_safe_string(raw, s, 256);
	/* the return value is ignored by udev as well: see the header */
	(void)blkid_encode_string(raw, s, 256);
	s[256] = '\0';
	return strdup(s);
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

void ap_names_cache_flush(void)
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

static char *dupn(const char *s, int *err)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*err = -ENOMEM;
	return d;
}

static int identity_copy(const struct ap_identity *a, struct ap_identity *b)
{
	int err = 0;

	memset(b, 0, sizeof(*b));
	b->bus = dupn(a->bus, &err);
	b->serial = dupn(a->serial, &err);
	b->wwn = dupn(a->wwn, &err);
	b->usb_serial = dupn(a->usb_serial, &err);
	b->nvme_wwid = dupn(a->nvme_wwid, &err);
	b->nvme_model = dupn(a->nvme_model, &err);
	b->nvme_serial = dupn(a->nvme_serial, &err);
	b->nvme_nsid = dupn(a->nvme_nsid, &err);
	b->virtio_serial = dupn(a->virtio_serial, &err);
	b->mmc_name = dupn(a->mmc_name, &err);
	b->mmc_serial = dupn(a->mmc_serial, &err);
	b->path = dupn(a->path, &err);
	b->path_ata_compat = dupn(a->path_ata_compat, &err);
	b->diskseq = dupn(a->diskseq, &err);
	b->source = a->source;
	if (err)
		ap_identity_clear(b);
	return err;
}

/* The identity of @disk, from the cache or computed (outside the lock). */
static int identity_get(struct udev_device *disk, struct ap_identity *ret)
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

	r = identity_get(disk, &id);
	if (r < 0)
		return r;

	/* NVMe */
	if (ap_startswith(sysname, "nvme") &&
	    ((!part && nvme_ns_name(sysname)) || (part && nvme_ns_name(udev_device_get_sysname(disk))))) {
		symlink_add(&c, "disk/by-id/nvme-", id.nvme_wwid, suffix);
		if (id.nvme_model && id.nvme_serial) {
			_cleanup_free_ char *s = NULL;

			/* string_escape=replace: ENV{ID_SERIAL} gets the replace step */
			c.esc = ESC_REPLACE;
			if (asprintf(&s, "%s_%s", id.nvme_model, id.nvme_serial) < 0) {
				r = -ENOMEM;
				goto out;
			}
			ap_udev_replace_chars(s, NULL);
			symlink_add(&c, "disk/by-id/nvme-", s, suffix);
			if (id.nvme_nsid) {
				free(s);
				if (asprintf(&s, "%s_%s_%s", id.nvme_model, id.nvme_serial, id.nvme_nsid) < 0) {
					r = -ENOMEM;
					goto out;
				}
				ap_udev_replace_chars(s, NULL);
				symlink_add(&c, "disk/by-id/nvme-", s, suffix);
			}
		}
	}

	/* virtio-blk */
	if (ap_startswith(sysname, "vd"))
		symlink_add(&c, "disk/by-id/virtio-", id.virtio_serial, suffix);

	/* ATA, SCSI, USB */
	if ((ap_startswith(sysname, "sd") || ap_startswith(sysname, "cciss") ||
	     (!part && ap_startswith(sysname, "sr"))) && id.bus && id.serial) {
		_cleanup_free_ char *prefix = NULL;

		if (asprintf(&prefix, "disk/by-id/%s-", id.bus) < 0) {
			r = -ENOMEM;
			goto out;
		}
		symlink_add(&c, prefix, id.serial, suffix);
	}
	if ((ap_startswith(sysname, "sd") || ap_startswith(sysname, "cciss") ||
	     (!part && ap_startswith(sysname, "sr"))))
		symlink_add(&c, "disk/by-id/usb-", id.usb_serial, suffix);

	/* MMC */
	if (mmc_name_ok(sysname, part) && id.mmc_name && id.mmc_serial) {
		_cleanup_free_ char *s = NULL;

		if (asprintf(&s, "%s_%s", id.mmc_name, id.mmc_serial) < 0) {
			r = -ENOMEM;
			goto out;
		}
		symlink_add(&c, "disk/by-id/mmc-", s, suffix);
	}

	/* by-path; mmcblkXbootY: <ID_PATH>-bootY */
	if (id.path && mmc_boot_name(sysname)) {
		char boot[32];

		snprintf(boot, sizeof(boot), "-boot%s", sysnum(sysname));
		symlink_add(&c, "disk/by-path/", id.path, boot);
	} else if (id.path) {
		symlink_add(&c, "disk/by-path/", id.path, suffix);
		symlink_add(&c, "disk/by-path/", id.path_ata_compat, suffix);
		if (ap_startswith(sysname, "vd") && ap_startswith(id.path, "pci-"))
			symlink_add(&c, "disk/by-path/virtio-", id.path, suffix);
	}

	/* by-uuid, by-label: filesystems only (not RAID or LVM members) */
	if (fs && !fs->ambivalent && usage_links(fs->usage)) {
		if (fs->uuid) {
			_cleanup_free_ char *e = ap_blkid_encode(fs->uuid, true);

			if (!e) {
				r = -ENOMEM;
				goto out;
			}
			symlink_add(&c, "disk/by-uuid/", e, NULL);
		}
		if (fs->label) {
			_cleanup_free_ char *e = ap_blkid_encode(fs->label, true);

			if (!e) {
				r = -ENOMEM;
				goto out;
			}
			symlink_add(&c, "disk/by-label/", e, NULL);
		}
	}

	/* wwn */
	symlink_add(&c, "disk/by-id/wwn-", id.wwn, suffix);

	/* by-partuuid, by-partlabel */
	if (fs && fs->part_entry_uuid)
		symlink_add(&c, "disk/by-partuuid/", fs->part_entry_uuid, NULL);
	if (fs && fs->part_entry_name && fs->part_entry_scheme &&
	    strcmp(fs->part_entry_scheme, "gpt") == 0) {
		_cleanup_free_ char *e = ap_blkid_encode(fs->part_entry_name, false);

		if (!e) {
			r = -ENOMEM;
			goto out;
		}
		symlink_add(&c, "disk/by-partlabel/", e, NULL);
	}

	/* by-diskseq: whole disks only in 252 */
	if (!part)
		symlink_add(&c, "disk/by-diskseq/", id.diskseq, NULL);

	r = c.error;
out:
	ap_identity_clear(&id);
	if (r < 0) {
		ap_namelist_free(&l);
		return r;
	}
	*ret = l;
	return 0;
}
