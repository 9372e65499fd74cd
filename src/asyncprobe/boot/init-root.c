/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The root file system: waiting for the root device (root=, rootwait,
 * rootdelay=, asyncprobe.root_timeout=; root=MAJOR:MINOR through libudev,
 * a fresh run now and then while rootwait waits for a late disk), and
 * mounting it: rootfstype=, else the type probe.c finds, else every block
 * file system the kernel has; rootflags=, ro/rw; the file system's driver
 * and character sets loaded first.  Theory of operation: init.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <libudev.h>

#include "base/base.h"
#include "device/device.h"
#include "modules/modules.h"
#include "probe/probe.h"
#include "internal.h"
#include "engine/engine.h"

#define RESCAN_INTERVAL_MS 5000U

/* ------------------------------------------------------ waiting for it */

/* For root=MAJOR:MINOR: the device node, once the kernel has the device. */
static char *devnum_node(unsigned int ma, unsigned int mi)
{
	struct udev *udev = udev_new();
	struct udev_device *d;
	char *ret = NULL;

	if (!udev)
		return NULL;
	d = udev_device_new_from_devnum(udev, 'b', makedev(ma, mi));
	if (d) {
		const char *node = udev_device_get_devnode(d);

		if (node && access(node, F_OK) == 0)
			ret = strdup(node);
		udev_device_unref(d);
	}
	udev_unref(udev);
	return ret;
}

/*
 * Wait until the root device exists.  @timeout_ms UINT32_MAX = forever.
 * With @rescan (PID 1 with rootwait), a run that ended without the root is
 * followed by another one every RESCAN_INTERVAL_MS, for disks that come late.
 * Returns 0 and the device node, -ETIMEDOUT, -ENOENT or -EINTR.
 */
int ap_init_wait_root(const struct ap_config *cfg, struct ap_init_engine **e,
		      const struct ap_bootparams *bp, const char *relpath, unsigned int timeout_ms,
		      bool rescan, char **ret_node)
{
	uint64_t t0 = ap_now_ns(), last_run = t0;
	bool done = false;

	for (;;) {
		unsigned int slice = 250, waited = ap_ms_since(t0);
		int r;

		if (ap_stop_signal())
			return -EINTR;
		if (bp->root_spec.kind == AP_ROOT_DEVNUM) {
			*ret_node = devnum_node(bp->root_spec.major, bp->root_spec.minor);
			if (*ret_node)
				return 0;
		}
		if (timeout_ms != UINT32_MAX && waited >= timeout_ms)
			return -ETIMEDOUT;
		if (timeout_ms != UINT32_MAX && timeout_ms - waited < slice)
			slice = timeout_ms - waited ? timeout_ms - waited : 1;

		if (done) {
			char path[PATH_MAX];

			/* The run is over: only the kernel's own nodes can still appear. */
			snprintf(path, sizeof(path), "%s/%s", cfg->dev_dir, relpath);
			if (access(path, F_OK) == 0)
				r = 0;
			else if (timeout_ms != UINT32_MAX || bp->rootwait)
				r = -ETIMEDOUT;
			else
				return -ENOENT;
			if (r < 0) {
				ap_stop_sleep_ms(slice);
				if (rescan && ap_ms_since(last_run) >= RESCAN_INTERVAL_MS) {
					struct ap_init_engine *n = NULL;

					log_notice("root device %s not there yet; probing again", relpath);
					ap_init_engine_finish(*e);
					ap_init_engine_free(*e);
					*e = NULL;
					if (ap_init_engine_start(cfg, getpid() == 1, &n) == 0) {
						*e = n;
						done = false;
					}
					last_run = ap_now_ns();
					if (!*e)
						return -ENOENT;
				}
				continue;
			}
		} else {
			r = ap_init_engine_wait_path(*e, relpath, slice);
		}
		if (r == 0) {
			if (asprintf(ret_node, "%s/%s", cfg->dev_dir, relpath) < 0)
				return -ENOMEM;
			return 0;
		}
		if (r == -ENOENT) {
			done = true;
			/* Without rootwait, a finished run and no root is the end. */
			if (!bp->rootwait)
				return -ENOENT;
			continue;
		}
		if (r != -ETIMEDOUT)
			return r;
	}
}

unsigned int ap_init_root_timeout(const struct ap_bootparams *bp)
{
	if (bp->rootwait)
		return bp->rootwait_ms ? bp->rootwait_ms : UINT32_MAX;
	return bp->root_timeout_ms ? bp->root_timeout_ms : UINT32_MAX;
}

char *ap_init_wait_failure(const struct ap_config *cfg, int r, const struct ap_bootparams *bp,
			   const char *relpath, unsigned int waited_ms)
{
	char *s = NULL;

	if (r == -ETIMEDOUT && bp->rootwait)
		r = asprintf(&s, "the root device %s/%s did not appear within %.1f s (rootwait=%u)",
			     cfg->dev_dir, relpath, waited_ms / 1000.0, bp->rootwait_ms / 1000U);
	else if (r == -ETIMEDOUT)
		r = asprintf(&s, "the root device %s/%s did not appear within %.1f s "
			     "(rootwait waits for ever, asyncprobe.root_timeout=SEC for longer)",
			     cfg->dev_dir, relpath, waited_ms / 1000.0);
	else if (r == -ENOENT)
		r = asprintf(&s, "the root device %s/%s is not there after probing every disk found "
			     "(%.1f s; rootwait keeps looking)", cfg->dev_dir, relpath,
			     waited_ms / 1000.0);
	else
		r = asprintf(&s, "waiting for the root device %s/%s: %s", cfg->dev_dir, relpath,
			     strerror(-r));
	return r < 0 ? NULL : s;
}


/* --------------------------------------------------------- mounting it */

struct fs_lookup {
	const char *type;
	bool found;
};

static void fs_lookup_match(const char *type, void *userdata)
{
	struct fs_lookup *l = userdata;

	if (strcmp(type, l->type) == 0)
		l->found = true;
}

static bool kernel_has_fs(const char *type)
{
	struct fs_lookup l = { .type = type };

	if (ap_init_filesystems(false, fs_lookup_match, &l) < 0)
		return true;    /* cannot tell: let mount() say */
	return l.found;
}

/* The value of @key in mount data "a=1,b=2", copied into @buf. */
static bool data_get(const char *data, const char *key, char *buf, size_t size)
{
	size_t klen = strlen(key);
	const char *p = data;

	while (p && *p) {
		size_t len = strcspn(p, ",");

		if (len > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
			snprintf(buf, size, "%.*s", (int)(len - klen - 1), p + klen + 1);
			return true;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return false;
}


/*
 * Before mounting @type: its driver (alias fs-TYPE) when the kernel does
 * not have it yet, and for the FAT family the character sets it asks for.
 * The kernel would ask /sbin/modprobe itself; an initramfs has none.
 */
static void load_fs_modules(const struct ap_config *cfg, const char *type, const char *data)
{
	static const char *const fat_nls[] = { "nls_cp437", "nls_ascii", "nls_utf8", "nls_iso8859-1" };
	bool fat = strcmp(type, "vfat") == 0 || strcmp(type, "msdos") == 0 ||
		   strcmp(type, "exfat") == 0;
	char what[160], val[64], name[96];
	size_t i;

	if (kernel_has_fs(type) && !fat)
		return;
	snprintf(what, sizeof(what), "file system %s", type);
	if (!kernel_has_fs(type)) {
		snprintf(name, sizeof(name), "fs-%s", type);
		ap_init_load_module(cfg, name, what, false, false);
	}
	if (fat) {
		for (i = 0; i < sizeof(fat_nls) / sizeof(fat_nls[0]); i++)
			ap_init_load_module(cfg, fat_nls[i], what, true, false);
		if (data_get(data, "codepage", val, sizeof(val))) {
			snprintf(name, sizeof(name), "nls_cp%s", val);
			ap_init_load_module(cfg, name, what, false, false);
		}
		if (data_get(data, "iocharset", val, sizeof(val))) {
			snprintf(name, sizeof(name), "nls_%s", val);
			ap_init_load_module(cfg, name, what, false, false);
		}
	}
}


/* File system types to try, in order. */
/*
 * The root's file system driver, inserted while its disk is still being
 * probed: the type comes from the first word of rootfstype=, else from
 * the image (asyncprobe-mkinitramfs records the type of the root it was
 * made for in /etc/asyncprobe/root-fstype).  Under QEMU TCG ext4 and its
 * dependencies take 200-300 ms to insert, time the mount no longer spends
 * after the root appears.  Nothing here touches a device, and the
 * insertion asks for async_probe where the kernel takes it, so no other
 * driver's probe holds it.  A wrong guess costs one insertion: the mount
 * still tries what rootfstype= and blkid say.
 */
#define AP_ROOT_FSTYPE_FILE "/etc/asyncprobe/root-fstype"

void ap_init_preload_root_fs(const struct ap_config *cfg, const struct ap_bootparams *bp)
{
	char type[64] = "", what[128];
	const char *source = "rootfstype=";
	_cleanup_free_ char *data = NULL;
	unsigned long flags = 0;
	FILE *f;

	if (bp->rootfstype && *bp->rootfstype) {
		snprintf(type, sizeof(type), "%.*s", (int)strcspn(bp->rootfstype, ","), bp->rootfstype);
	} else if ((f = fopen(AP_ROOT_FSTYPE_FILE, "re"))) {
		if (fgets(type, sizeof(type), f))
			type[strcspn(type, " \t\r\n")] = '\0';
		fclose(f);
		source = AP_ROOT_FSTYPE_FILE;
	}
	if (!*type || kernel_has_fs(type))
		return;
	if (ap_init_mount_options(bp->rootflags, &flags, &data) < 0)
		return;
	snprintf(what, sizeof(what), "the root's file system %s (%s)", type, source);
	log_notice("loading %s before the root appears", what);
	load_fs_modules(cfg, type, data);
}

struct fstypes {
	char *v[48];
	size_t n;
};

static void fstypes_add(struct fstypes *t, const char *type, size_t len)
{
	size_t i;

	if (len == 0 || t->n >= sizeof(t->v) / sizeof(t->v[0]))
		return;
	for (i = 0; i < t->n; i++)
		if (strlen(t->v[i]) == len && strncmp(t->v[i], type, len) == 0)
			return;
	t->v[t->n] = strndup(type, len);
	if (t->v[t->n])
		t->n++;
}

static void fstypes_add_all(const char *type, void *userdata)
{
	fstypes_add(userdata, type, strlen(type));
}

static void fstypes_clear(struct fstypes *t)
{
	while (t->n)
		free(t->v[--t->n]);
}

/* rootfstype=, else what blkid saw, else every block file system the kernel has. */
static void root_fstypes(const struct ap_bootparams *bp, const char *devnode, struct fstypes *t)
{
	_cleanup_free_ char *probed = NULL;

	if (bp->rootfstype && *bp->rootfstype) {
		const char *s = bp->rootfstype;

		while (*s) {
			size_t len = strcspn(s, ",");

			fstypes_add(t, s, len);
			s += len;
			if (*s == ',')
				s++;
		}
		return;
	}
	probed = ap_probe_fstype(devnode);
	if (probed) {
		fstypes_add(t, probed, strlen(probed));
		return;
	}
	log_notice("blkid finds no file system on %s; trying every type the kernel knows", devnode);
	ap_init_filesystems(true, fstypes_add_all, t);
}

/*
 * Mount @devnode on @target as root= and friends say.  On failure *why
 * (malloc'ed) tells what was tried.
 */
int ap_init_mount_root(const struct ap_config *cfg, const struct ap_bootparams *bp,
		       const char *devnode, const char *target, char **ret_fstype, char **why)
{
	struct fstypes types = { .n = 0 };
	_cleanup_free_ char *data = NULL;
	char tried[1024] = "";
	unsigned long flags = MS_SILENT;
	int r = -ENOENT;
	size_t i;

	if (!bp->read_write)
		flags |= MS_RDONLY;
	if (ap_init_mount_options(bp->rootflags, &flags, &data) < 0)
		return -ENOMEM;
	if (mkdir(target, 0755) < 0 && errno != EEXIST) {
		r = -errno;
		if (asprintf(why, "cannot create %s: %s", target, strerror(-r)) < 0)
			*why = NULL;
		return r;
	}
	root_fstypes(bp, devnode, &types);
	for (i = 0; i < types.n; i++) {
		const char *type = types.v[i];
		size_t used = strlen(tried);

		load_fs_modules(cfg, type, data);
		if (mount(devnode, target, type, flags, data) == 0) {
			log_notice("mounted %s (%s, %s) on %s", devnode, type,
				   flags & MS_RDONLY ? "read-only" : "read-write", target);
			*ret_fstype = strdup(type);
			fstypes_clear(&types);
			return 0;
		}
		r = -errno;
		if ((r == -EACCES || r == -EROFS) && !(flags & MS_RDONLY)) {
			log_warning("%s cannot be mounted read-write (%s); mounting it read-only",
				    devnode, strerror(-r));
			if (mount(devnode, target, type, flags | MS_RDONLY, data) == 0) {
				*ret_fstype = strdup(type);
				fstypes_clear(&types);
				return 0;
			}
			r = -errno;
		}
		log_info("mount %s on %s as %s: %s", devnode, target, type, strerror(-r));
		snprintf(tried + used, sizeof(tried) - used, "%s%s: %s", used ? "; " : "", type,
			 strerror(-r));
	}
	if (types.n == 0)
		snprintf(tried, sizeof(tried), "no file system type to try (rootfstype= names none, "
			 "blkid found none, /proc/filesystems lists none)");
	if (bp->rootfstype && *bp->rootfstype) {
		_cleanup_free_ char *seen = ap_probe_fstype(devnode);
		size_t used = strlen(tried);

		snprintf(tried + used, sizeof(tried) - used, " (rootfstype=%s; blkid sees %s there)",
			 bp->rootfstype, seen ? seen : "no file system");
	}
	if (asprintf(why, "cannot mount %s%s%s: %s", devnode, data ? " with rootflags " : "",
		     data ? data : "", tried) < 0)
		*why = NULL;
	fstypes_clear(&types);
	return r;
}

/* -------------------------------------------------------- switch root */
