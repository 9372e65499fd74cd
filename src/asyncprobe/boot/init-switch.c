/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Switching root, as switch_root(8) does: the API mounts move into the new
 * root, it becomes /, and the initramfs is deleted in a child without
 * crossing into another mount; before that, the init to exec is found
 * inside the new root, and its argv is made from what the kernel passed.
 * Theory of operation: init.c.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "internal.h"

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

			if (st.st_dev != dev || ap_init_statx_mount_root(dirfd, de->d_name) > 0) {
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

void ap_init_remove_initramfs(int dirfd)
{
	int failed = ap_init_remove_tree(dirfd);

	if (failed)
		log_warning("%d entries of the initramfs could not be removed", failed);
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
int ap_init_switch_root(const char *newroot, bool remove_old)
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

	if (!remove_old) {
		/* the probe process deletes it when it is done */
	} else if (ap_fs_is_initramfs(oldroot)) {
		pid_t pid = fork();

		/* The child deletes while init starts; init reaps it. */
		if (pid <= 0) {
			ap_init_remove_initramfs(oldroot);
			if (pid == 0)
				_exit(0);
		}
	} else {
		if (fstatfs(oldroot, &sfs) < 0)
			sfs.f_type = 0;
		log_warning("the old root is no initramfs (file system type 0x%lx): not deleting it",
			    (unsigned long)sfs.f_type);
	}
	close(oldroot);
	return 0;
}

char **ap_init_argv(const char *init, int argc, char **argv)
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
