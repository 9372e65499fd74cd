/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * PID 1's early file system set-up: /proc, /sys, /dev and /run mounted
 * before anything else runs, stdio on the console when the kernel gave
 * none, the mount-point test switch_root also uses, rootflags= split
 * into MS_* flags and file-system data, and the file system types the
 * kernel has (/proc/filesystems) for the root's mount and the diagnosis,
 * and the kernel log's rate limit for writers, lifted while PID 1 (and
 * its probe process) logs.  Theory of operation: init.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "internal.h"

int ap_init_statx_mount_root(int dirfd, const char *name)
{
	struct statx stx;

	if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_BASIC_STATS, &stx) < 0 ||
	    !(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
		return -1;
	return !!(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

bool ap_init_is_mount_point(const char *path)
{
	_cleanup_free_ char *parent = NULL;
	struct stat a, b;
	int r = ap_init_statx_mount_root(AT_FDCWD, path);

	if (r >= 0)
		return r;
	if (lstat(path, &a) < 0 || !S_ISDIR(a.st_mode))
		return false;
	if (asprintf(&parent, "%s/..", path) < 0 || stat(parent, &b) < 0)
		return false;
	return a.st_dev != b.st_dev || a.st_ino == b.st_ino;
}

int ap_init_mount_api(void)
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
void ap_init_ensure_console(void)
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

int ap_init_filesystems(bool block_only, void (*fn)(const char *type, void *userdata),
			void *userdata)
{
	_cleanup_free_ char *line = NULL;
	size_t size = 0;
	int n = 0;
	FILE *f = fopen("/proc/filesystems", "re");

	if (!f)
		return -errno;
	/* "nodev\tsysfs" or "\text4": the type follows the tab */
	while (getline(&line, &size, f) > 0) {
		char *name = line + strcspn(line, "\t");

		if (block_only && strncmp(line, "nodev", 5) == 0)
			continue;
		name += strspn(name, " \t");
		name[strcspn(name, "\n")] = '\0';
		if (!*name)
			continue;
		fn(name, userdata);
		n++;
	}
	fclose(f);
	return n;
}

/*
 * The kernel drops /dev/kmsg writes beyond 10 lines in 5 s per opener
 * ("N output lines suppressed due to ratelimiting") unless
 * printk.devkmsg=on; a probe run logs more than that, and a summary or
 * diagnosis line lost there is lost for good.  So for the run the sysctl
 * goes from "ratelimit" (the default) to "on", and back before init
 * starts.  A setting given on the kernel command line is locked (the
 * write fails) and left alone, as is "off".
 */
#define DEVKMSG_SYSCTL "/proc/sys/kernel/printk_devkmsg"

static bool devkmsg_lifted;

static int write_devkmsg(const char *value)
{
	int fd = open(DEVKMSG_SYSCTL, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, value, strlen(value));
	n = n < 0 ? -errno : 0;
	close(fd);
	return (int)n;
}

void ap_init_kmsg_unlimit(void)
{
	char buf[32] = "";
	ssize_t n;
	int fd = open(DEVKMSG_SYSCTL, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || strncmp(buf, "ratelimit", 9) != 0)
		return;
	if (write_devkmsg("on\n") == 0)
		devkmsg_lifted = true;
}

void ap_init_kmsg_limit_again(void)
{
	if (devkmsg_lifted && write_devkmsg("ratelimit\n") == 0)
		devkmsg_lifted = false;
}
