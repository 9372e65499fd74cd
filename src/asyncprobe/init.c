/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * asyncprobe as the initramfs's /init (PID 1), and as a unit of a systemd
 * initrd (--init outside PID 1).
 *
 * Theory of operation
 *
 * The point of running the probe in parallel is lost if PID 1 then waits
 * for all of it.  So /init waits for one thing only, the root device named
 * by root=: the engine runs, PID 1 sleeps in ap_engine_wait_path() on the
 * root's path below /dev, mounts the root file system at /newroot as soon
 * as the path exists, and only then waits for the rest of the run
 * (ap_engine_finish(), after which no worker thread is left, so exec is
 * safe).  The run's manifest, trace and plot go to /run/asyncprobe/, and
 * /run travels into the new root with /dev, /proc and /sys.
 *
 * Switching root is what switch_root(8) does, in this order: move the API
 * mounts below /newroot; chdir there; keep a descriptor on the old root;
 * move /newroot onto /; chroot("."); then, when the old root is a ramfs or
 * tmpfs (an initramfs, which nobody can unmount), delete its contents in a
 * child process, never crossing into another mount.  The init to exec is
 * looked up inside the new root before anything is moved, so a root
 * without an init leaves the initramfs intact for the rescue shell.
 *
 * PID 1 must never exit: the kernel panics when it does.  Every failure
 * ends in rescue(): a diagnosis on the console and in the kernel log, then
 * (a) a reboot after panic=N seconds when panic= asks for one, or (b) a
 * rescue shell (/bin/sh, if the image has one) run as a child; when it
 * exits the boot is tried again; or (c) waiting forever, reaping children.
 * A crash (SIGSEGV, SIGABRT, ...) as PID 1 ends in the same place through
 * a signal handler that only makes async-signal-safe calls.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <blkid.h>
#include <libkmod.h>
#include <libudev.h>

#include "asyncprobe.h"
#include "coldplug.h"
#include "cmdline.h"
#include "engine.h"
#include "init.h"

#define NEWROOT "/newroot"
#define RESCAN_INTERVAL_MS 5000U

extern char **environ;

/* A lock-free atomic: the handler can run on any thread not blocking it. */
static int got_signal;
static volatile sig_atomic_t crash_panic_s;      /* panic= for the crash handler */
static volatile sig_atomic_t crash_panic_set;

static int caught_signal(void)
{
	return __atomic_load_n(&got_signal, __ATOMIC_SEQ_CST);
}

static const char *run_dir(void)
{
	const char *d = getenv("ASYNCPROBE_RUNDIR");

	return d && *d ? d : "/run/asyncprobe";
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !caught_signal())
		;
}

/* ------------------------------------------------------------ mounts */

bool ap_init_is_mount_point(const char *path)
{
	_cleanup_free_ char *parent = NULL;
	struct statx stx;
	struct stat a, b;

	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_BASIC_STATS, &stx) == 0 &&
	    (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
		return stx.stx_attributes & STATX_ATTR_MOUNT_ROOT;
	if (lstat(path, &a) < 0 || !S_ISDIR(a.st_mode))
		return false;
	if (asprintf(&parent, "%s/..", path) < 0 || stat(parent, &b) < 0)
		return false;
	return a.st_dev != b.st_dev || a.st_ino == b.st_ino;
}

static int mount_api_filesystems(void)
{
	static const struct {
		const char *path, *type;
		unsigned long flags;
		const char *data;
	} api[] = {
		{ "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL },
		{ "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL },
		{ "/dev", "devtmpfs", MS_NOSUID, "mode=0755" },
		{ "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755" },
	};
	int failed = 0;
	size_t i;

	for (i = 0; i < sizeof(api) / sizeof(api[0]); i++) {
		if (mkdir(api[i].path, 0755) < 0 && errno != EEXIST)
			log_warning("mkdir %s: %m", api[i].path);
		if (ap_init_is_mount_point(api[i].path))
			continue;
		if (mount(api[i].type, api[i].path, api[i].type, api[i].flags, api[i].data) < 0) {
			/* the log may not work yet: the console always does */
			fprintf(stderr, "asyncprobe: mounting %s on %s: %m\n", api[i].type, api[i].path);
			failed++;
		}
	}
	return failed ? -EIO : 0;
}

/* The kernel gives /init no stdio when the image lacks /dev/console. */
static void ensure_console(void)
{
	int fd, i;

	for (i = 0; i <= 2; i++) {
		if (fcntl(i, F_GETFD) >= 0)
			continue;
		fd = open("/dev/console", O_RDWR | O_NOCTTY);
		if (fd < 0)
			fd = open("/dev/null", O_RDWR | O_NOCTTY);
		if (fd < 0)
			return;
		if (fd != i) {
			dup2(fd, i);
			close(fd);
		}
	}
}

int ap_init_mount_options(const char *options, unsigned long *flags, char **ret_data)
{
	static const struct {
		const char *name;
		unsigned long set, clear;
	} opts[] = {
		{ "ro", MS_RDONLY, 0 },             { "rw", 0, MS_RDONLY },
		{ "nosuid", MS_NOSUID, 0 },         { "suid", 0, MS_NOSUID },
		{ "nodev", MS_NODEV, 0 },           { "dev", 0, MS_NODEV },
		{ "noexec", MS_NOEXEC, 0 },         { "exec", 0, MS_NOEXEC },
		{ "sync", MS_SYNCHRONOUS, 0 },      { "async", 0, MS_SYNCHRONOUS },
		{ "dirsync", MS_DIRSYNC, 0 },
		{ "noatime", MS_NOATIME, 0 },       { "atime", 0, MS_NOATIME },
		{ "nodiratime", MS_NODIRATIME, 0 }, { "diratime", 0, MS_NODIRATIME },
		{ "relatime", MS_RELATIME, 0 },     { "norelatime", 0, MS_RELATIME },
		{ "strictatime", MS_STRICTATIME, 0 },
		{ "lazytime", MS_LAZYTIME, 0 },     { "nolazytime", 0, MS_LAZYTIME },
		{ "silent", MS_SILENT, 0 },         { "loud", 0, MS_SILENT },
		{ "defaults", 0, 0 },
	};
	_cleanup_free_ char *copy = NULL;
	char *data = NULL, *save = NULL, *tok;
	size_t dlen = 0;

	*ret_data = NULL;
	if (!options || !*options)
		return 0;
	copy = strdup(options);
	data = calloc(1, strlen(options) + 1);
	if (!copy || !data) {
		free(data);
		return -ENOMEM;
	}
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t i;
		bool generic = false;

		for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
			if (strcmp(tok, opts[i].name) != 0)
				continue;
			*flags = (*flags | opts[i].set) & ~opts[i].clear;
			generic = true;
			break;
		}
		if (generic)
			continue;
		if (dlen)
			data[dlen++] = ',';
		strcpy(data + dlen, tok);
		dlen += strlen(tok);
	}
	if (dlen == 0) {
		free(data);
		data = NULL;
	}
	*ret_data = data;
	return 0;
}

static bool kernel_has_fs(const char *type)
{
	_cleanup_free_ char *line = NULL;
	size_t n = 0;
	bool found = false;
	FILE *f = fopen("/proc/filesystems", "re");

	if (!f)
		return true;    /* cannot tell: let mount() say */
	while (!found && getline(&line, &n, f) > 0) {
		char *name = strchr(line, '\t');

		if (!name)
			continue;
		name++;
		name[strcspn(name, "\n")] = '\0';
		found = strcmp(name, type) == 0;
	}
	fclose(f);
	return found;
}

/*
 * The load plan of one module (libkmod's dry run: dependencies, softdeps,
 * install commands, in modprobe's order, with their options).  print_action
 * has no user pointer; PID 1 loads these modules from one thread.
 */
struct fs_plan {
	struct kmod_module *mods[32];
	char *options[32];
	size_t n;
	bool install;           /* an install command: left to libkmod */
};
static struct fs_plan *fs_plan;

static void fs_plan_action(struct kmod_module *m, bool install, const char *options)
{
	if (!fs_plan)
		return;
	if (install || fs_plan->n == 32) {
		fs_plan->install = true;
		return;
	}
	fs_plan->mods[fs_plan->n] = kmod_module_ref(m);
	fs_plan->options[fs_plan->n++] = strdup(options ? options : "");
}

/*
 * Insert @m and what it needs, each with async_probe
 * (ap_modules_insert_options()): without it, Linux ends each insertion
 * with a wait for every asynchronous probe in the system, and a disk
 * whose probe hangs (a dead disk's partition table read) would keep this
 * thread, PID 1's, from ever mounting the root.  Returns 0 or -errno.
 */
static int insert_with_async_probe(struct kmod_module *m)
{
	struct fs_plan plan = { .n = 0 };
	struct kmod_list *deps;
	size_t i;
	int r;

	fs_plan = &plan;
	r = kmod_module_probe_insert_module(m, KMOD_PROBE_APPLY_BLACKLIST | KMOD_PROBE_DRY_RUN |
					    KMOD_PROBE_IGNORE_LOADED, NULL, NULL, NULL,
					    fs_plan_action);
	fs_plan = NULL;
	if (r == 0 && plan.install)
		r = kmod_module_probe_insert_module(m, KMOD_PROBE_APPLY_BLACKLIST, NULL, NULL,
						    NULL, NULL);
	deps = kmod_module_get_dependencies(m);
	for (i = 0; r == 0 && !plan.install && i < plan.n; i++) {
		int state = kmod_module_get_initstate(plan.mods[i]);
		const char *name = kmod_module_get_name(plan.mods[i]);
		_cleanup_free_ char *opts = NULL;
		struct kmod_list *l;
		bool required = strcmp(name, kmod_module_get_name(m)) == 0;

		if (state == KMOD_MODULE_LIVE || state == KMOD_MODULE_BUILTIN)
			continue;
		kmod_list_foreach(l, deps) {
			struct kmod_module *d = kmod_module_get_module(l);

			required = required || strcmp(kmod_module_get_name(d), name) == 0;
			kmod_module_unref(d);
		}
		opts = ap_modules_insert_options(name, plan.options[i], ap_kernel_has_async_probe());
		r = kmod_module_insert_module(plan.mods[i], 0, opts ? opts : plan.options[i]);
		if ((r == -ENOENT || r == -EINVAL) && opts && strcmp(opts, plan.options[i]) != 0)
			r = kmod_module_insert_module(plan.mods[i], 0, plan.options[i]);
		/* a soft dependency may fail (crc32c_intel without SSE 4.2), as with modprobe */
		if (r == -EEXIST || (r < 0 && !required)) {
			if (r != -EEXIST)
				log_debug("soft dependency %s: %s, ignored", name, strerror(-r));
			r = 0;
		}
	}
	if (deps)
		kmod_module_unref_list(deps);
	for (i = 0; i < plan.n; i++) {
		kmod_module_unref(plan.mods[i]);
		free(plan.options[i]);
	}
	return r;
}

/*
 * Load @name (a module or an alias) through libkmod; quiet when @optional.
 * @async: with async_probe (insert_with_async_probe()), for modules that
 * probe no devices of their own (file systems, character sets).
 */
static void insert_module(struct kmod_ctx *ctx, const char *name, const char *what, bool optional,
			  bool async)
{
	struct kmod_list *list = NULL, *it;
	int r;

	r = kmod_module_new_from_lookup(ctx, name, &list);
	if (r < 0 || !list) {
		if (!optional)
			log_warning("no module provides %s (%s)", what,
				    r < 0 ? strerror(-r) : name);
		return;
	}
	kmod_list_foreach(it, list) {
		struct kmod_module *m = kmod_module_get_module(it);

		if (async)
			r = insert_with_async_probe(m);
		else
			r = kmod_module_probe_insert_module(m, KMOD_PROBE_APPLY_BLACKLIST, NULL, NULL,
							    NULL, NULL);
		if (r < 0)
			log_warning("loading %s for %s: %s", kmod_module_get_name(m), what, strerror(-r));
		else
			log_info("loaded %s for %s", kmod_module_get_name(m), what);
		kmod_module_unref(m);
	}
	kmod_module_unref_list(list);
}

/*
 * asyncprobe.modules= and rd.driver.pre=: modules the command line asks
 * for before the run, such as drivers with no modalias (scsi_debug).
 * libkmod adds their options from modprobe.d and from MODULE.PARAM= words
 * of the command line.  finit_module() returns once the module's
 * asynchronous work (a SCSI host scan) is done, so its devices are there
 * for the engine's enumeration.
 */
static void load_cmdline_modules(const struct ap_bootparams *bp)
{
	struct kmod_ctx *ctx;
	size_t i;

	if (bp->n_modules == 0 || ap_cfg.no_modules || ap_cfg.dry_run)
		return;
	ctx = kmod_new(ap_cfg.modules_dir, NULL);
	if (!ctx) {
		log_warning("asyncprobe.modules: cannot open the module index");
		return;
	}
	for (i = 0; i < bp->n_modules; i++)
		insert_module(ctx, bp->modules[i], "the kernel command line", false, false);
	kmod_unref(ctx);
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
static void load_fs_modules(const char *type, const char *data)
{
	static const char *const fat_nls[] = { "nls_cp437", "nls_ascii", "nls_utf8", "nls_iso8859-1" };
	bool fat = strcmp(type, "vfat") == 0 || strcmp(type, "msdos") == 0 ||
		   strcmp(type, "exfat") == 0;
	struct kmod_ctx *ctx;
	char what[160], val[64], name[96];
	size_t i;

	if (kernel_has_fs(type) && !fat)
		return;
	ctx = kmod_new(ap_cfg.modules_dir, NULL);
	if (!ctx) {
		log_warning("file system %s: cannot open the module index", type);
		return;
	}
	snprintf(what, sizeof(what), "file system %s", type);
	if (!kernel_has_fs(type)) {
		snprintf(name, sizeof(name), "fs-%s", type);
		insert_module(ctx, name, what, false, true);
	}
	if (fat) {
		for (i = 0; i < sizeof(fat_nls) / sizeof(fat_nls[0]); i++)
			insert_module(ctx, fat_nls[i], what, true, true);
		if (data_get(data, "codepage", val, sizeof(val))) {
			snprintf(name, sizeof(name), "nls_cp%s", val);
			insert_module(ctx, name, what, false, true);
		}
		if (data_get(data, "iocharset", val, sizeof(val))) {
			snprintf(name, sizeof(name), "nls_%s", val);
			insert_module(ctx, name, what, false, true);
		}
	}
	kmod_unref(ctx);
}

/* The file system type libblkid sees on @devnode, or NULL. */
static char *probe_fstype(const char *devnode)
{
	blkid_probe pr = blkid_new_probe_from_filename(devnode);
	const char *type = NULL;
	char *ret = NULL;

	if (!pr)
		return NULL;
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
	if (blkid_do_safeprobe(pr) == 0 && blkid_probe_lookup_value(pr, "TYPE", &type, NULL) == 0)
		ret = strdup(type);
	blkid_free_probe(pr);
	return ret;
}

/* File system types to try, in order. */
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

static void fstypes_clear(struct fstypes *t)
{
	while (t->n)
		free(t->v[--t->n]);
}

/* rootfstype=, else what blkid saw, else every block file system the kernel has. */
static void root_fstypes(const struct ap_bootparams *bp, const char *devnode, struct fstypes *t)
{
	_cleanup_free_ char *line = NULL, *probed = NULL;
	size_t n = 0;
	FILE *f;

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
	probed = probe_fstype(devnode);
	if (probed) {
		fstypes_add(t, probed, strlen(probed));
		return;
	}
	log_notice("blkid finds no file system on %s; trying every type the kernel knows", devnode);
	f = fopen("/proc/filesystems", "re");
	if (!f)
		return;
	while (getline(&line, &n, f) > 0) {
		char *name;

		if (strncmp(line, "nodev", 5) == 0)
			continue;
		name = line + strspn(line, " \t");
		fstypes_add(t, name, strcspn(name, "\n"));
	}
	fclose(f);
}

/*
 * Mount @devnode on @target as root= and friends say.  On failure *why
 * (malloc'ed) tells what was tried.
 */
static int mount_root(const struct ap_bootparams *bp, const char *devnode, const char *target,
		      char **ret_fstype, char **why)
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

		load_fs_modules(type, data);
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
		_cleanup_free_ char *seen = probe_fstype(devnode);
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

static bool is_mount_root_at(int dirfd, const char *name)
{
	struct statx stx;

	if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_BASIC_STATS, &stx) < 0)
		return false;
	return (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
	       (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

static int remove_below(int dirfd, dev_t dev)
{
	struct dirent *de;
	int failed = 0, fd;
	DIR *d;

	fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((errno = 0, de = readdir(d))) {
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			failed++;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			int cfd, r;

			if (st.st_dev != dev || is_mount_root_at(dirfd, de->d_name)) {
				log_debug("not removing the mount point %s", de->d_name);
				continue;
			}
			cfd = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (cfd < 0) {
				failed++;
				continue;
			}
			r = remove_below(cfd, dev);
			close(cfd);
			if (r != 0) {
				failed += r > 0 ? r : 1;
				continue;
			}
			if (unlinkat(dirfd, de->d_name, AT_REMOVEDIR) < 0)
				failed++;
		} else if (unlinkat(dirfd, de->d_name, 0) < 0) {
			failed++;
		}
	}
	closedir(d);
	return failed;
}

int ap_init_remove_tree(int dirfd)
{
	struct stat st;

	if (fstat(dirfd, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return remove_below(dirfd, st.st_dev);
}

/* Is @path, resolved inside the directory @rootfd, an executable file? */
static int executable_in_root(const char *root, int rootfd, const char *path)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	struct stat st;
	pid_t pid;
	int fd, status;

	fd = (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	if (fd >= 0) {
		int r = fstat(fd, &st) < 0 ? -errno :
			!S_ISREG(st.st_mode) ? -EACCES :
			!(st.st_mode & 0111) ? -EACCES : 0;

		close(fd);
		return r;
	}
	if (errno != ENOSYS)
		return -errno;

	/* Before Linux 5.6: look from inside, in a child. */
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (chroot(root) < 0 || chdir("/") < 0)
			_exit(2);
		_exit(access(path, X_OK) == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode) ? 0 : 1);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ENOENT;
}

int ap_init_find_init(const char *root, const char *requested, char **ret)
{
	static const char *const defaults[] = { "/sbin/init", "/etc/init", "/bin/init", "/bin/sh" };
	int rootfd, r;
	size_t i;

	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -errno;
	if (requested && *requested) {
		r = executable_in_root(root, rootfd, requested);
		if (r == 0) {
			close(rootfd);
			*ret = strdup(requested);
			return *ret ? 0 : -ENOMEM;
		}
		log_error("init=%s: %s in the root file system; trying the default inits",
			  requested, r == -EACCES ? "not an executable file" : strerror(-r));
	}
	for (i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
		if (executable_in_root(root, rootfd, defaults[i]) == 0) {
			close(rootfd);
			*ret = strdup(defaults[i]);
			return *ret ? 0 : -ENOMEM;
		}
	}
	close(rootfd);
	return -ENOENT;
}

/*
 * Move the API mounts into @newroot, make it / and delete the initramfs.
 * On failure before the root moved, nothing is lost: the caller can still
 * use the initramfs.
 */
static int switch_root(const char *newroot)
{
	static const char *const moves[] = { "/dev", "/proc", "/sys", "/run" };
	struct statfs sfs;
	int oldroot;
	size_t i;

	for (i = 0; i < sizeof(moves) / sizeof(moves[0]); i++) {
		char dst[PATH_MAX];
		struct stat st;

		if (!ap_init_is_mount_point(moves[i]))
			continue;
		snprintf(dst, sizeof(dst), "%s%s", newroot, moves[i]);
		if (stat(dst, &st) < 0 || !S_ISDIR(st.st_mode)) {
			log_warning("the root file system has no %s; unmounting it", moves[i]);
			umount2(moves[i], MNT_DETACH);
			continue;
		}
		if (mount(moves[i], dst, NULL, MS_MOVE, NULL) < 0) {
			log_warning("moving %s to %s: %m; unmounting it", moves[i], dst);
			umount2(moves[i], MNT_DETACH);
		}
	}
	if (chdir(newroot) < 0)
		return -errno;
	oldroot = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (oldroot < 0)
		return -errno;
	if (mount(newroot, "/", NULL, MS_MOVE, NULL) < 0) {
		int r = -errno;

		log_error("moving %s to /: %m", newroot);
		close(oldroot);
		return r;
	}
	if (chroot(".") < 0 || chdir("/") < 0) {
		int r = -errno;

		log_error("chroot into the new root: %m");
		close(oldroot);
		return r;
	}

	if (fstatfs(oldroot, &sfs) == 0 &&
	    (sfs.f_type == RAMFS_MAGIC || sfs.f_type == TMPFS_MAGIC)) {
		pid_t pid = fork();

		/* The child deletes while init starts; init reaps it. */
		if (pid <= 0) {
			int failed = ap_init_remove_tree(oldroot);

			if (failed)
				log_warning("%d entries of the initramfs could not be removed", failed);
			if (pid == 0)
				_exit(0);
		}
	} else {
		log_warning("the old root is no initramfs (file system type 0x%lx): not deleting it",
			    (unsigned long)sfs.f_type);
	}
	close(oldroot);
	return 0;
}

/* ---------------------------------------------------------- diagnosis */

static const char *human_size(unsigned long long bytes, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)bytes;
	size_t u = 0;

	while (v >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024.0;
		u++;
	}
	snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", v, units[u]);
	return buf;
}

static void list_block_devices(FILE *f)
{
	struct udev_list_entry *e;
	struct udev_enumerate *en;
	struct udev *udev = udev_new();
	int n = 0;

	fprintf(f, "block devices the kernel has:\n");
	if (!udev)
		goto out;
	en = udev_enumerate_new(udev);
	if (!en) {
		udev_unref(udev);
		goto out;
	}
	udev_enumerate_add_match_subsystem(en, "block");
	udev_enumerate_scan_devices(en);
	udev_list_entry_foreach(e, udev_enumerate_get_list_entry(en)) {
		struct udev_device *d = udev_device_new_from_syspath(udev, udev_list_entry_get_name(e));
		const char *size, *type;
		unsigned long long sectors = 0;
		char sz[32];
		dev_t dn;

		if (!d)
			continue;
		size = udev_device_get_sysattr_value(d, "size");
		if (size)
			sectors = strtoull(size, NULL, 10);
		type = udev_device_get_devtype(d);
		dn = udev_device_get_devnum(d);
		fprintf(f, "  %-12s %-9s %4u:%-4u %s\n", udev_device_get_sysname(d),
			type ? type : "?", major(dn), minor(dn), human_size(sectors * 512ULL, sz, sizeof(sz)));
		udev_device_unref(d);
		n++;
	}
	udev_enumerate_unref(en);
	udev_unref(udev);
out:
	if (n == 0)
		fprintf(f, "  (none: no storage driver bound to a controller?)\n");
}

static void list_links(FILE *f)
{
	char dir[PATH_MAX];
	struct dirent *de;
	int n = 0;
	DIR *top;

	snprintf(dir, sizeof(dir), "%s/disk", ap_cfg.dev_dir);
	fprintf(f, "links below %s:\n", dir);
	top = opendir(dir);
	while (top && (de = readdir(top))) {
		char sub[PATH_MAX + 256];
		struct dirent *le;
		DIR *d;

		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
		d = opendir(sub);
		while (d && (le = readdir(d))) {
			char link[PATH_MAX * 2], target[PATH_MAX];
			ssize_t len;

			if (le->d_name[0] == '.' && (!le->d_name[1] || strcmp(le->d_name, "..") == 0))
				continue;
			snprintf(link, sizeof(link), "%s/%s", sub, le->d_name);
			len = readlink(link, target, sizeof(target) - 1);
			target[len > 0 ? len : 0] = '\0';
			fprintf(f, "  %s/%s -> %s\n", de->d_name, le->d_name, target);
			n++;
		}
		if (d)
			closedir(d);
	}
	if (top)
		closedir(top);
	if (n == 0)
		fprintf(f, "  (none)\n");
}

static void list_filesystems(FILE *f)
{
	_cleanup_free_ char *line = NULL;
	size_t n = 0;
	FILE *pf = fopen("/proc/filesystems", "re");
	int count = 0;

	fprintf(f, "block file systems the kernel has:");
	while (pf && getline(&line, &n, pf) > 0) {
		if (strncmp(line, "nodev", 5) == 0)
			continue;
		line[strcspn(line, "\n")] = '\0';
		fprintf(f, " %s", line + strspn(line, " \t"));
		count++;
	}
	if (pf)
		fclose(pf);
	fprintf(f, "%s\n", count ? "" : " none loaded (their modules load when the root is mounted)");
}

/*
 * Write @text to the console, the kernel log and a file below the run dir.
 * The console gets it once, on stderr: in the kernel log the lines are
 * records of debug priority, which the console does not echo at the usual
 * log levels (dmesg shows them all the same).
 */
static void report(const char *text, const char *file)
{
	char path[PATH_MAX];
	const char *p = text;
	int kmsg;
	FILE *f;

	fputs(text, stderr);
	fflush(stderr);
	kmsg = open("/dev/kmsg", O_WRONLY | O_NOCTTY | O_CLOEXEC);
	while (kmsg >= 0 && *p) {
		size_t len = strcspn(p, "\n");
		char rec[1024];
		int n;

		if (len > 0) {
			n = snprintf(rec, sizeof(rec), "<%d>asyncprobe[%d]: %.*s", AP_LOG_DEBUG,
				     (int)getpid(), (int)len, p);
			if (n > 0 && write(kmsg, rec, (size_t)n < sizeof(rec) ? (size_t)n : sizeof(rec) - 1) < 0)
				break;
		}
		p += len;
		if (*p)
			p++;
	}
	if (kmsg >= 0)
		close(kmsg);
	snprintf(path, sizeof(path), "%s/%s", run_dir(), file);
	f = fopen(path, "we");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void diagnose(const struct ap_bootparams *bp, struct ap_engine *e, const char *root_path,
		     const char *why)
{
	_cleanup_free_ char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	if (!f) {
		fprintf(stderr, "asyncprobe: cannot boot: %s\n", why);
		return;
	}
	log_error("cannot boot: %s", why);
	fprintf(f, "\nasyncprobe: cannot boot: %s\n", why);
	if (bp->root)
		fprintf(f, "root=%s asks for %s/%s (%s)\n", bp->root, ap_cfg.dev_dir,
			root_path ? root_path : "?", ap_root_kind_to_string(bp->root_spec.kind));
	else
		fprintf(f, "the kernel command line has no root=\n");
	if (bp->root_error_msg)
		fprintf(f, "%s\n", bp->root_error_msg);
	if (bp->rootfstype)
		fprintf(f, "rootfstype=%s\n", bp->rootfstype);
	if (bp->rootflags)
		fprintf(f, "rootflags=%s\n", bp->rootflags);
	if (bp->n_blacklist) {
		size_t i;

		fprintf(f, "modprobe.blacklist:");
		for (i = 0; i < bp->n_blacklist; i++)
			fprintf(f, " %s", bp->blacklist[i]);
		fprintf(f, "\n");
	}
	list_block_devices(f);
	list_links(f);
	list_filesystems(f);
	if (e) {
		fprintf(f, "what the probe run found:\n");
		ap_engine_dump_state(e, f);
	}
	fclose(f);
	report(text, "diagnosis.txt");
}

/* ------------------------------------------------------------ rescue */

static void crash_handler(int sig)
{
	static const char msg[] = "\nasyncprobe: fatal signal as PID 1; not exiting, "
				  "that would panic the kernel\n";
	char *const sh_argv[] = { (char *)"/bin/sh", NULL };
	sigset_t all;
	pid_t pid;

	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
		/* nothing left to tell it to */
	}
	sigfillset(&all);
	if (crash_panic_set && crash_panic_s != 0) {
		struct timespec ts = { .tv_sec = crash_panic_s > 0 ? crash_panic_s : 0 };

		nanosleep(&ts, NULL);
		sync();
		reboot(RB_AUTOBOOT);
	}
	if (access("/bin/sh", X_OK) == 0) {
		pid = fork();
		if (pid == 0) {
			sigprocmask(SIG_UNBLOCK, &all, NULL);
			signal(sig, SIG_DFL);
			execve("/bin/sh", sh_argv, environ);
			_exit(127);
		}
	}
	for (;;) {
		if (waitpid(-1, NULL, 0) < 0 && errno == ECHILD)
			pause();
	}
}

static void install_crash_handlers(const struct ap_bootparams *bp)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	struct sigaction sa = { .sa_handler = crash_handler, .sa_flags = SA_NODEFER };
	size_t i;

	crash_panic_set = bp ? bp->panic_set : 0;
	crash_panic_s = bp ? bp->panic_s : 0;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* Run a shell on the console as a child; returns when it exits. */
static void run_shell(void)
{
	pid_t pid = fork();
	int status;

	if (pid < 0) {
		log_error("fork for the rescue shell: %m");
		sleep_ms(5000);
		return;
	}
	if (pid == 0) {
		char *const argv[] = { (char *)"/bin/sh", NULL };
		int fd;

		setsid();
		fd = open("/dev/console", O_RDWR | O_NOCTTY);
		if (fd >= 0) {
			ioctl(fd, TIOCSCTTY, 1);
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
			if (fd > 2)
				close(fd);
		}
		execve("/bin/sh", argv, environ);
		_exit(127);
	}
	/* Reap everything; the shell's exit ends the wait. */
	for (;;) {
		pid_t p = waitpid(-1, &status, 0);

		if (p == pid)
			break;
		if (p < 0 && errno != EINTR)
			break;
	}
	/* orphans the shell left behind */
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/*
 * After a failed boot attempt: reboot (panic=), a rescue shell, or wait.
 * Returns only to let the caller try again (after the shell exited).
 */
static void rescue(const struct ap_bootparams *bp)
{
	bool shell = bp->shell != 0 && access("/bin/sh", X_OK) == 0;

	if (bp->panic_set && bp->panic_s != 0) {
		if (bp->panic_s > 0) {
			fprintf(stderr, "asyncprobe: rebooting in %d seconds (panic=%d)\n",
				bp->panic_s, bp->panic_s);
			log_error("rebooting in %d seconds (panic=%d)", bp->panic_s, bp->panic_s);
			sleep_ms((unsigned int)bp->panic_s * 1000U);
		}
		sync();
		reboot(RB_AUTOBOOT);
		log_error("reboot: %m");
	}
	if (shell) {
		fprintf(stderr, "asyncprobe: starting /bin/sh; the diagnosis is in %s/diagnosis.txt. "
			"Leave the shell to try to boot again.\n", run_dir());
		run_shell();
		return;
	}
	fprintf(stderr, "asyncprobe: no shell in this image%s; waiting. "
		"Give panic=SECONDS on the kernel command line to reboot instead.\n",
		bp->shell == 0 ? " (asyncprobe.shell=0)" : "");
	for (;;) {
		if (waitpid(-1, NULL, 0) < 0 && errno == ECHILD)
			pause();
	}
}

/* ----------------------------------------------------------- the boot */

static void apply_bootparams(const struct ap_bootparams *bp, bool outputs)
{
	static char trace[PATH_MAX], plot[PATH_MAX], json[PATH_MAX];
	size_t i;

	ap_cfg.init_mode = true;
	if (ap_cfg.fastboot < 0)
		ap_cfg.fastboot = bp->fastboot;
	if (bp->timeout_ms >= 0)
		ap_cfg.device_timeout_ms = (unsigned int)bp->timeout_ms;
	if (bp->threads >= 0 && ap_cfg.max_threads == 0)
		ap_cfg.max_threads = (unsigned int)bp->threads;
	if (bp->verbose > ap_cfg.verbose)
		ap_cfg.verbose = bp->verbose;
	/* off: udev decides contested links again after switch_root */
	if (bp->udev_rules == 0 && !ap_cfg.udev_rules)
		ap_cfg.udev_rules = "none";
	if (outputs) {
		snprintf(json, sizeof(json), "%s/manifest.json", run_dir());
		snprintf(trace, sizeof(trace), "%s/trace.json", run_dir());
		snprintf(plot, sizeof(plot), "%s/plot.svg", run_dir());
		if (!ap_cfg.json_file)
			ap_cfg.json_file = json;
		if (bp->trace != 0 && !ap_cfg.trace_file)
			ap_cfg.trace_file = trace;
		if (bp->trace != 0 && !ap_cfg.plot_file)
			ap_cfg.plot_file = plot;
	}
	for (i = 0; i < bp->n_blacklist; i++)
		log_info("modprobe.blacklist: %s", bp->blacklist[i]);
	if (bp->root_error_msg)
		log_error("%s", bp->root_error_msg);
}

static int load_bootparams(struct ap_bootparams *bp)
{
	_cleanup_free_ char *cmdline = NULL;
	int r;

	r = ap_cmdline_read(&cmdline);
	if (r < 0) {
		log_error("reading the kernel command line: %s", strerror(-r));
		cmdline = NULL;
	}
	r = ap_bootparams_parse(cmdline ? cmdline : "", bp);
	if (r < 0)
		return r;
	if (cmdline)
		log_info("kernel command line: %s", cmdline);
	return 0;
}

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
static int wait_root(struct ap_engine **e, const struct ap_bootparams *bp, const char *relpath,
		     unsigned int timeout_ms, bool rescan, char **ret_node)
{
	uint64_t t0 = ap_now_ns(), last_run = t0;
	bool done = false;

	for (;;) {
		unsigned int slice = 250, waited = ap_ms_since(t0);
		int r;

		if (caught_signal())
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
			snprintf(path, sizeof(path), "%s/%s", ap_cfg.dev_dir, relpath);
			if (access(path, F_OK) == 0)
				r = 0;
			else if (timeout_ms != UINT32_MAX || bp->rootwait)
				r = -ETIMEDOUT;
			else
				return -ENOENT;
			if (r < 0) {
				sleep_ms(slice);
				if (rescan && ap_ms_since(last_run) >= RESCAN_INTERVAL_MS) {
					struct ap_engine *n = NULL;

					log_notice("root device %s not there yet; probing again", relpath);
					ap_engine_finish(*e);
					ap_engine_free(*e);
					*e = NULL;
					if (ap_engine_start(&n) == 0) {
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
			r = ap_engine_wait_path(*e, relpath, slice);
		}
		if (r == 0) {
			if (asprintf(ret_node, "%s/%s", ap_cfg.dev_dir, relpath) < 0)
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

static unsigned int root_timeout(const struct ap_bootparams *bp)
{
	if (bp->rootwait)
		return bp->rootwait_ms ? bp->rootwait_ms : UINT32_MAX;
	return bp->root_timeout_ms ? bp->root_timeout_ms : UINT32_MAX;
}

static char *wait_failure(int r, const struct ap_bootparams *bp, const char *relpath,
			  unsigned int waited_ms)
{
	char *s = NULL;

	if (r == -ETIMEDOUT && bp->rootwait)
		r = asprintf(&s, "the root device %s/%s did not appear within %.1f s (rootwait=%u)",
			     ap_cfg.dev_dir, relpath, waited_ms / 1000.0, bp->rootwait_ms / 1000U);
	else if (r == -ETIMEDOUT)
		r = asprintf(&s, "the root device %s/%s did not appear within %.1f s "
			     "(rootwait waits for ever, asyncprobe.root_timeout=SEC for longer)",
			     ap_cfg.dev_dir, relpath, waited_ms / 1000.0);
	else if (r == -ENOENT)
		r = asprintf(&s, "the root device %s/%s is not there after probing every disk found "
			     "(%.1f s; rootwait keeps looking)", ap_cfg.dev_dir, relpath,
			     waited_ms / 1000.0);
	else
		r = asprintf(&s, "waiting for the root device %s/%s: %s", ap_cfg.dev_dir, relpath,
			     strerror(-r));
	return r < 0 ? NULL : s;
}

/* Timing for the booted system: key=value lines, milliseconds since boot. */
static void write_timing(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void write_timing(const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	FILE *f;

	snprintf(path, sizeof(path), "%s/init.log", run_dir());
	f = fopen(path, "ae");
	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

static char **init_argv(const char *init, int argc, char **argv)
{
	char **v = calloc((size_t)argc + 2, sizeof(char *));
	int i, n = 0;

	if (!v)
		return NULL;
	v[n++] = (char *)init;
	/* what the kernel passed to /init (not asyncprobe's own options) goes on to init */
	for (i = 1; i < argc; i++)
		if (argv[i][0] != '-')
			v[n++] = argv[i];
	v[n] = NULL;
	return v;
}

/* One try at booting; returns (with the reason in *why) only when it failed. */
static void boot_attempt(struct ap_bootparams *bp, int argc, char **argv, char **why)
{
	_cleanup_free_ char *relpath = NULL, *node = NULL, *fstype = NULL, *init = NULL;
	struct ap_engine *e = NULL;
	uint64_t t0 = ap_now_ns();
	unsigned int root_ms;
	char **iv;
	int r, status;

	*why = NULL;
	if (!bp->root || bp->root_error) {
		if (asprintf(why, "%s", !bp->root ? "no root= on the kernel command line" :
			     bp->root_error_msg ? bp->root_error_msg : "root= is not understood") < 0)
			*why = NULL;
		/* still probe, so the shell has the links */
		if (ap_engine_start(&e) == 0) {
			ap_engine_finish(e);
			diagnose(bp, e, NULL, *why);
			ap_engine_free(e);
		} else {
			diagnose(bp, NULL, NULL, *why);
		}
		return;
	}
	r = ap_root_spec_devpath(&bp->root_spec, &relpath);
	if (r < 0) {
		if (asprintf(why, "root=%s names no usable link (%s)", bp->root, strerror(-r)) < 0)
			*why = NULL;
		diagnose(bp, NULL, NULL, *why ? *why : "bad root=");
		return;
	}

	log_notice("waiting for root=%s (%s/%s)", bp->root, ap_cfg.dev_dir, relpath);
	r = ap_engine_start(&e);
	if (r < 0) {
		if (asprintf(why, "the probe engine did not start: %s", strerror(-r)) < 0)
			*why = NULL;
		diagnose(bp, NULL, relpath, *why ? *why : "engine");
		return;
	}
	if (bp->rootdelay_s) {
		log_notice("rootdelay=%u: waiting %u s before looking for the root", bp->rootdelay_s,
			   bp->rootdelay_s);
		sleep_ms(bp->rootdelay_s * 1000U);
	}
	r = wait_root(&e, bp, relpath, root_timeout(bp), bp->rootwait, &node);
	root_ms = ap_ms_since(t0);
	if (r < 0) {
		*why = wait_failure(r, bp, relpath, root_ms);
		if (e)
			ap_engine_finish(e);
		diagnose(bp, e, relpath, *why ? *why : "no root device");
		ap_engine_free(e);
		return;
	}
	log_notice("root device %s appeared after %u ms; mounting it while probing goes on",
		   node, root_ms);
	write_timing("root_device=%s\nroot_found_ms=%llu", node,
		     (unsigned long long)(ap_now_ns() / 1000000ULL));

	r = mount_root(bp, node, NEWROOT, &fstype, why);
	if (r == 0)
		write_timing("root_mounted_ms=%llu\nroot_fstype=%s",
			     (unsigned long long)(ap_now_ns() / 1000000ULL), fstype ? fstype : "?");

	status = ap_engine_finish(e);
	write_timing("probe_finished_ms=%llu\nprobe_status=%d",
		     (unsigned long long)(ap_now_ns() / 1000000ULL), status);
	if (r < 0) {
		diagnose(bp, e, relpath, *why ? *why : "cannot mount the root");
		ap_engine_free(e);
		return;
	}

	r = ap_init_find_init(NEWROOT, bp->init, &init);
	if (r < 0) {
		if (asprintf(why, "no init in the root file system on %s: %s%s%s/sbin/init, "
			     "/etc/init, /bin/init and /bin/sh are missing or not executable",
			     node, bp->init ? "init=" : "", bp->init ? bp->init : "",
			     bp->init ? ", " : "") < 0)
			*why = NULL;
		diagnose(bp, e, relpath, *why ? *why : "no init");
		ap_engine_free(e);
		umount2(NEWROOT, MNT_DETACH);
		return;
	}
	ap_engine_free(e);
	e = NULL;

	write_timing("switch_root_ms=%llu\ninit=%s", (unsigned long long)(ap_now_ns() / 1000000ULL),
		     init);
	r = switch_root(NEWROOT);
	if (r < 0) {
		if (asprintf(why, "switching to the root file system: %s", strerror(-r)) < 0)
			*why = NULL;
		diagnose(bp, NULL, relpath, *why ? *why : "switch root");
		return;
	}
	log_notice("starting %s", init);
	ap_log_close();
	iv = init_argv(init, argc, argv);
	if (iv)
		execve(init, iv, environ);
	r = -errno;
	ap_log_open(AP_LOG_KMSG, ap_cfg.verbose);
	if (asprintf(why, "exec %s: %s", init, strerror(-r)) < 0)
		*why = NULL;
	free(iv);
	diagnose(bp, NULL, relpath, *why ? *why : "exec init");
}

static void __attribute__((noreturn)) init_pid1(int argc, char **argv)
{
	struct ap_bootparams bp = { .shell = -1 };
	char dir[PATH_MAX];
	int r;

	install_crash_handlers(NULL);
	umask(022);
	if (chdir("/") < 0) {
		/* nothing to do about it */
	}
	mount_api_filesystems();
	ensure_console();
	ap_log_open(AP_LOG_KMSG, ap_cfg.verbose);
	log_notice("asyncprobe as PID 1, %llu ms after boot",
		   (unsigned long long)(ap_now_ns() / 1000000ULL));

	r = load_bootparams(&bp);
	if (r < 0) {
		log_error("parsing the kernel command line: %s", strerror(-r));
		bp.shell = -1;
	}
	install_crash_handlers(&bp);
	ap_log_open(AP_LOG_KMSG, ap_cfg.verbose > bp.verbose ? ap_cfg.verbose : bp.verbose);
	snprintf(dir, sizeof(dir), "%s", run_dir());
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		log_warning("mkdir %s: %m", dir);
	apply_bootparams(&bp, true);
	write_timing("init_start_ms=%llu", (unsigned long long)(ap_now_ns() / 1000000ULL));
	load_cmdline_modules(&bp);

	for (;;) {
		char *why = NULL;

		boot_attempt(&bp, argc, argv, &why);
		free(why);
		rescue(&bp);
		log_notice("trying to boot again");
	}
}

/* -------------------------------------------------- unit mode (not PID 1) */

static void on_signal(int sig)
{
	__atomic_store_n(&got_signal, sig, __ATOMIC_SEQ_CST);
	ap_engine_request_stop(sig);
}

static int init_unit(void)
{
	_cleanup_free_ char *relpath = NULL, *node = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	struct ap_bootparams bp;
	struct ap_engine *e = NULL;
	uint64_t t0 = ap_now_ns();
	int r, status, root_status = AP_EXIT_OK;
	char dir[PATH_MAX];
	struct stat st;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	r = load_bootparams(&bp);
	if (r < 0) {
		log_error("parsing the kernel command line: %s", strerror(-r));
		return AP_EXIT_SYSTEM;
	}
	/* outputs go to the run dir only where it can be made (an initrd's /run) */
	snprintf(dir, sizeof(dir), "%s", run_dir());
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		log_debug("mkdir %s: %m; no manifest, trace or plot there", dir);
	apply_bootparams(&bp, stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && access(dir, W_OK) == 0);
	ap_log_open(ap_cfg.log_target, ap_cfg.verbose);
	load_cmdline_modules(&bp);

	if (bp.root && !bp.root_error) {
		r = ap_root_spec_devpath(&bp.root_spec, &relpath);
		if (r < 0) {
			log_error("root=%s names no usable link (%s)", bp.root, strerror(-r));
			root_status = AP_EXIT_CONFIG;
		}
	} else if (bp.root) {
		root_status = AP_EXIT_CONFIG;
	}

	ap_notify("STATUS=Loading storage drivers and probing disks");
	r = ap_engine_start(&e);
	if (r < 0) {
		ap_notifyf("STATUS=Probe engine failed to start: %s", strerror(-r));
		ap_bootparams_clear(&bp);
		return AP_EXIT_SYSTEM;
	}
	if (relpath) {
		ap_notifyf("STATUS=Waiting for the root device %s/%s", ap_cfg.dev_dir, relpath);
		r = wait_root(&e, &bp, relpath, root_timeout(&bp), false, &node);
		if (r == 0) {
			log_notice("root device %s appeared after %u ms", node, ap_ms_since(t0));
			ap_notifyf("READY=1\nSTATUS=Root device %s found; probing the other disks", node);
		} else if (r != -EINTR) {
			_cleanup_free_ char *why = wait_failure(r, &bp, relpath, ap_ms_since(t0));

			log_error("%s", why ? why : "root device not found");
			ap_notifyf("READY=1\nSTATUS=Root device %s/%s not found", ap_cfg.dev_dir, relpath);
			root_status = AP_EXIT_DEGRADED;
		}
	} else if (bp.root) {
		ap_notifyf("READY=1\nSTATUS=root=%s is not usable; probing", bp.root);
	} else {
		ap_notify("READY=1\nSTATUS=No root= to wait for; probing");
	}
	if (caught_signal()) {
		/* the engine has logged it and stops early: see ap_engine_request_stop() */
		ap_notify("STOPPING=1");
		/* a second signal ends it at once */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
	}
	status = ap_engine_finish(e);
	if (root_status == AP_EXIT_DEGRADED && e)
		ap_engine_dump_state(e, stderr);
	ap_engine_free(e);
	ap_bootparams_clear(&bp);
	if (caught_signal())
		return 128 + caught_signal();
	if (root_status > status)
		status = root_status;
	ap_notifyf("STATUS=Done (exit status %d)", status);
	return status;
}

int ap_init_main(int argc, char **argv)
{
	if (getpid() == 1)
		init_pid1(argc, argv);
	return init_unit();
}
