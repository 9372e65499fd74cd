/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Pieces of PID 1 that can be tried on the host: mount options, finding
 * init inside a root, deleting an initramfs without crossing mounts, the
 * sd_notify protocol, and --init outside PID 1 (the initrd unit mode).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "boot/boot.h"
#include "boot/internal.h"

/* The settings each ap_init_main() call gets (main() in cli.c has its own). */
static struct ap_config cfg;

static char tmp[] = "/tmp/test-init-XXXXXX";

static void mkfile(const char *rel, mode_t mode, const char *content)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	assert_true(fd >= 0);
	if (content)
		assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	close(fd);
	assert_int_equal(chmod(path, mode), 0);
}

static void mkdirs(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	assert_true(mkdir(path, 0755) == 0 || errno == EEXIST);
}

static void mklink(const char *target, const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	assert_int_equal(symlink(target, path), 0);
}

static bool exists(const char *rel)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	return lstat(path, &st) == 0;
}

static void wipe(void)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'/*", tmp);
	assert_int_equal(system(cmd), 0);
}

static void test_mount_options(void **state)
{
	unsigned long flags;
	char *data;

	flags = 0;
	assert_int_equal(ap_init_mount_options(NULL, &flags, &data), 0);
	assert_null(data);
	assert_int_equal(flags, 0);

	flags = MS_RDONLY;
	assert_int_equal(ap_init_mount_options("rw,noatime,data=ordered,nodev,errors=remount-ro",
					       &flags, &data), 0);
	assert_int_equal(flags, MS_NOATIME | MS_NODEV);
	assert_string_equal(data, "data=ordered,errors=remount-ro");
	free(data);

	flags = 0;
	assert_int_equal(ap_init_mount_options("defaults,ro,,subvol=@,compress=zstd", &flags, &data), 0);
	assert_int_equal(flags, MS_RDONLY);
	assert_string_equal(data, "subvol=@,compress=zstd");
	free(data);

	/* only generic flags: no data */
	flags = MS_NOSUID;
	assert_int_equal(ap_init_mount_options("suid,relatime", &flags, &data), 0);
	assert_int_equal(flags, MS_RELATIME);
	assert_null(data);
}

static void test_find_init(void **state)
{
	char *init = NULL;

	wipe();
	/* nothing there */
	assert_int_equal(ap_init_find_init(tmp, NULL, &init), -ENOENT);

	/* /bin/sh only: the last fallback */
	mkdirs("bin");
	mkfile("bin/sh", 0755, "#!x\n");
	assert_int_equal(ap_init_find_init(tmp, NULL, &init), 0);
	assert_string_equal(init, "/bin/sh");
	free(init);

	/* /etc/init beats /bin/init and /bin/sh */
	mkdirs("etc");
	mkfile("etc/init", 0755, NULL);
	mkfile("bin/init", 0755, NULL);
	assert_int_equal(ap_init_find_init(tmp, NULL, &init), 0);
	assert_string_equal(init, "/etc/init");
	free(init);

	/* /sbin/init as an absolute symlink, resolved inside the root
	 * (on the host /lib/test-init-systemd does not exist) */
	mkdirs("sbin");
	mkdirs("lib");
	mkfile("lib/test-init-systemd", 0755, NULL);
	mklink("/lib/test-init-systemd", "sbin/init");
	assert_int_equal(ap_init_find_init(tmp, NULL, &init), 0);
	assert_string_equal(init, "/sbin/init");
	free(init);

	/* init= wins when it is there */
	mkfile("lib/myinit", 0755, NULL);
	assert_int_equal(ap_init_find_init(tmp, "/lib/myinit", &init), 0);
	assert_string_equal(init, "/lib/myinit");
	free(init);

	/* init= missing, not executable, or a directory: the defaults */
	assert_int_equal(ap_init_find_init(tmp, "/lib/missing", &init), 0);
	assert_string_equal(init, "/sbin/init");
	free(init);
	mkfile("lib/noexec", 0644, NULL);
	assert_int_equal(ap_init_find_init(tmp, "/lib/noexec", &init), 0);
	assert_string_equal(init, "/sbin/init");
	free(init);
	assert_int_equal(ap_init_find_init(tmp, "/lib", &init), 0);
	assert_string_equal(init, "/sbin/init");
	free(init);

	/* a symlink that climbs out of the root stays inside it: /bin/true of
	 * the host is not an init of this root */
	wipe();
	mkdirs("sbin");
	mklink("../../../../../../../../bin/true", "sbin/init");
	assert_int_equal(ap_init_find_init(tmp, NULL, &init), -ENOENT);
	wipe();
	mkdirs("sbin");
	mklink("/bin/true", "sbin/init");
	assert_int_equal(ap_init_find_init(tmp, NULL, &init), -ENOENT);
	/* a dangling one, and a loop */
	mklink("/nowhere", "etc");
	mkdirs("bin");
	mklink("/bin/init", "bin/init");
	assert_int_equal(ap_init_find_init(tmp, NULL, &init), -ENOENT);
	/* the root itself missing */
	assert_int_equal(ap_init_find_init("/nonexistent-test-init", NULL, &init), -ENOENT);
}

static void test_remove_tree_plain(void **state)
{
	char outside[] = "/tmp/test-init-outside-XXXXXX", path[600];
	int fd;

	wipe();
	assert_non_null(mkdtemp(outside));
	snprintf(path, sizeof(path), "%s/keep", outside);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);

	mkdirs("a");
	mkdirs("a/b");
	mkdirs("a/b/c");
	mkfile("a/b/c/f", 0644, "x");
	mkfile("a/g", 0000, NULL);
	mkfile("top", 0755, NULL);
	mkdirs("empty");
	mklink(outside, "a/to-outside");    /* followed, it would delete "keep" */
	mklink("/nonexistent", "dangling");

	fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(ap_init_remove_tree(fd), 0);
	close(fd);
	assert_false(exists("a"));
	assert_false(exists("top"));
	assert_false(exists("empty"));
	assert_false(exists("dangling"));
	/* the directory itself stays */
	assert_int_equal(access(tmp, F_OK), 0);
	/* and what the symlink pointed at is untouched */
	assert_int_equal(access(path, F_OK), 0);
	unlink(path);
	rmdir(outside);

	/* not a directory */
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_int_equal(ap_init_remove_tree(fd), -ENOTDIR);
	close(fd);
}

/* Mounts inside the tree, in a private mount namespace (root only). */
static void test_remove_tree_mounts(void **state)
{
	char src[] = "/tmp/test-init-bindsrc-XXXXXX", path[600];
	int fd;

	if (geteuid() != 0 || unshare(CLONE_NEWNS) < 0) {
		skip();
		return;
	}
	assert_int_equal(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	wipe();
	assert_non_null(mkdtemp(src));
	snprintf(path, sizeof(path), "%s/in-bind", src);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);

	mkdirs("dev");
	mkdirs("newroot");
	mkdirs("deep");
	mkdirs("deep/bind");
	mkfile("deep/file", 0644, NULL);
	mkfile("init", 0755, NULL);

	/* a tmpfs: another st_dev */
	snprintf(path, sizeof(path), "%s/newroot", tmp);
	assert_int_equal(mount("tmpfs", path, "tmpfs", 0, "size=1m"), 0);
	mkfile("newroot/sbin-init", 0755, NULL);
	assert_true(ap_init_is_mount_point(path));

	/* a bind mount from the same file system: same st_dev, only statx tells */
	snprintf(path, sizeof(path), "%s/deep/bind", tmp);
	assert_int_equal(mount(src, path, NULL, MS_BIND, NULL), 0);
	assert_true(ap_init_is_mount_point(path));

	fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	/* "deep" cannot go: its child is a mount point. That counts as one. */
	assert_int_equal(ap_init_remove_tree(fd), 1);
	close(fd);

	assert_false(exists("dev"));
	assert_false(exists("init"));
	assert_false(exists("deep/file"));
	assert_true(exists("newroot/sbin-init"));
	assert_true(exists("deep/bind/in-bind"));
	snprintf(path, sizeof(path), "%s/in-bind", src);
	assert_int_equal(access(path, F_OK), 0);

	snprintf(path, sizeof(path), "%s/deep/bind", tmp);
	assert_int_equal(umount(path), 0);
	snprintf(path, sizeof(path), "%s/newroot", tmp);
	assert_int_equal(umount(path), 0);
	snprintf(path, sizeof(path), "%s/in-bind", src);
	unlink(path);
	rmdir(src);
}

static void test_is_mount_point(void **state)
{
	assert_true(ap_init_is_mount_point("/"));
	if (access("/proc/self", F_OK) == 0)
		assert_true(ap_init_is_mount_point("/proc"));
	assert_false(ap_init_is_mount_point(tmp));
	assert_false(ap_init_is_mount_point("/nonexistent-test-init"));
}

/* A datagram socket to receive notifications on; @name "@..." is abstract. */
static int listen_on(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(name));
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct timeval tv = { .tv_sec = 5 };

	assert_true(fd >= 0);
	memcpy(sa.sun_path, name, strlen(name));
	if (name[0] == '@')
		sa.sun_path[0] = '\0';
	else
		len++;
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, len), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static void expect_datagram(int fd, const char *expect)
{
	char buf[512];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);

	assert_true(n >= 0);
	buf[n] = '\0';
	assert_string_equal(buf, expect);
}

static void expect_prefix(int fd, const char *prefix)
{
	char buf[512];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);

	assert_true(n >= 0);
	buf[n] = '\0';
	if (strncmp(buf, prefix, strlen(prefix)) != 0)
		fail_msg("got \"%s\", expected \"%s...\"", buf, prefix);
}

static void test_notify(void **state)
{
	char path[300], abstract[64];
	int fd, afd;

	snprintf(path, sizeof(path), "%s/notify", tmp);
	unlink(path);
	fd = listen_on(path);
	snprintf(abstract, sizeof(abstract), "@asyncprobe-test-%d", (int)getpid());
	afd = listen_on(abstract);

	/* the protocol by hand */
	assert_int_equal(ap_notify_socket(path, "READY=1"), 1);
	expect_datagram(fd, "READY=1");
	assert_int_equal(ap_notify_socket(abstract, "STATUS=probing\nREADY=1"), 1);
	expect_datagram(afd, "STATUS=probing\nREADY=1");
	assert_int_equal(ap_notify_socket("vsock:2:1234", "READY=1"), -EAFNOSUPPORT);
	assert_int_equal(ap_notify_socket("relative", "READY=1"), -EAFNOSUPPORT);
	assert_int_equal(ap_notify_socket("@", "READY=1"), -EINVAL);
	assert_true(ap_notify_socket("/nonexistent-dir/sock", "READY=1") < 0);

	/* through ap_notify (libsystemd's sd_notify where built with it) */
	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(ap_notify("READY=1"), 0);
	setenv("NOTIFY_SOCKET", path, 1);
	assert_true(ap_notify("STATUS=one") > 0);
	expect_datagram(fd, "STATUS=one");
	setenv("NOTIFY_SOCKET", abstract, 1);
	assert_true(ap_notifyf("STATUS=%d devices", 3) > 0);
	expect_datagram(afd, "STATUS=3 devices");
	unsetenv("NOTIFY_SOCKET");
	close(fd);
	close(afd);
	unlink(path);
}

/* --init outside PID 1: waits for root= in the dev dir, READY=1, exit status. */
static void test_unit_mode(void **state)
{
	char cmdline[300], sock[300], devdir[300], rundir[300], root[400];
	int fd, r;

	wipe();
	snprintf(devdir, sizeof(devdir), "%s/dev", tmp);
	snprintf(rundir, sizeof(rundir), "%s/run", tmp);
	mkdirs("dev");
	mkdirs("run");
	snprintf(root, sizeof(root), "%s/myroot", devdir);
	mkfile("dev/myroot", 0600, NULL);
	snprintf(cmdline, sizeof(cmdline), "%s/cmdline", tmp);
	snprintf(sock, sizeof(sock), "%s/notify", tmp);
	fd = listen_on(sock);

	memset(&cfg, 0, sizeof(cfg));
	cfg.dev_dir = devdir;
	cfg.fastboot = -1;
	cfg.no_modules = true;
	cfg.device_timeout_ms = 2000;
	cfg.log_target = AP_LOG_STDERR;
	setenv("ASYNCPROBE_CMDLINE", cmdline, 1);
	setenv("ASYNCPROBE_RUNDIR", rundir, 1);
	setenv("NOTIFY_SOCKET", sock, 1);

	/* the root is there (rootwait: a finished run does not end the wait) */
	mkfile("cmdline", 0644, "root=/dev/myroot rootwait asyncprobe.root_timeout=5\n");
	r = ap_init_main(&cfg, 1, (char *[]){ (char *)"asyncprobe", NULL });
	expect_datagram(fd, "STATUS=Loading storage drivers and probing disks");
	{
		char expect[600];

		snprintf(expect, sizeof(expect), "STATUS=Waiting for the root device %s", root);
		expect_datagram(fd, expect);
		snprintf(expect, sizeof(expect), "READY=1\nSTATUS=Root device %s found; "
			 "probing the other disks", root);
		expect_datagram(fd, expect);
	}
	expect_prefix(fd, "STATUS=Done (exit status ");
	assert_true(r == AP_EXIT_OK || r == AP_EXIT_DEGRADED);

	/* a root that never comes: exit status 1, READY=1 still sent */
	memset(&cfg, 0, sizeof(cfg));
	cfg.dev_dir = devdir;
	cfg.fastboot = -1;
	cfg.no_modules = true;
	cfg.log_target = AP_LOG_STDERR;
	mkfile("cmdline", 0644, "root=LABEL=nothing-by-this-name asyncprobe.root_timeout=0.5\n");
	r = ap_init_main(&cfg, 1, (char *[]){ (char *)"asyncprobe", NULL });
	assert_int_equal(r, AP_EXIT_DEGRADED);
	expect_datagram(fd, "STATUS=Loading storage drivers and probing disks");
	{
		char expect[600];

		snprintf(expect, sizeof(expect), "STATUS=Waiting for the root device %s/"
			 "disk/by-label/nothing-by-this-name", devdir);
		expect_datagram(fd, expect);
		snprintf(expect, sizeof(expect), "READY=1\nSTATUS=Root device %s/"
			 "disk/by-label/nothing-by-this-name not found", devdir);
		expect_datagram(fd, expect);
	}
	expect_datagram(fd, "STATUS=Done (exit status 1)");

	/* a root= asyncprobe cannot handle: configuration error */
	memset(&cfg, 0, sizeof(cfg));
	cfg.dev_dir = devdir;
	cfg.fastboot = -1;
	cfg.no_modules = true;
	cfg.log_target = AP_LOG_STDERR;
	mkfile("cmdline", 0644, "root=PARTUUID=12345678-01/PARTNROFF=1\n");
	r = ap_init_main(&cfg, 1, (char *[]){ (char *)"asyncprobe", NULL });
	assert_int_equal(r, AP_EXIT_CONFIG);
	expect_datagram(fd, "STATUS=Loading storage drivers and probing disks");
	expect_datagram(fd, "READY=1\nSTATUS=root=PARTUUID=12345678-01/PARTNROFF=1 is not usable; probing");
	expect_datagram(fd, "STATUS=Done (exit status 2)");

	/*
	 * an LVM root in a generator's initramfs: probe every disk without
	 * waiting for the mapper device (lvm2 makes it later): READY=1 at once,
	 * and the probe's own status (not 2: nothing is wrong with root=)
	 */
	memset(&cfg, 0, sizeof(cfg));
	cfg.dev_dir = devdir;
	cfg.fastboot = -1;
	cfg.no_modules = true;
	cfg.log_target = AP_LOG_STDERR;
	mkfile("cmdline", 0644, "root=/dev/mapper/vg-root\n");
	r = ap_init_main(&cfg, 1, (char *[]){ (char *)"asyncprobe", NULL });
	expect_datagram(fd, "STATUS=Loading storage drivers and probing disks");
	expect_datagram(fd, "READY=1\nSTATUS=root=/dev/mapper/vg-root is left to this initramfs's own tools; probing");
	expect_prefix(fd, "STATUS=Done (exit status ");
	assert_true(r == AP_EXIT_OK || r == AP_EXIT_DEGRADED);

	unsetenv("NOTIFY_SOCKET");
	unsetenv("ASYNCPROBE_CMDLINE");
	unsetenv("ASYNCPROBE_RUNDIR");
	close(fd);
}

/*
 * PID 1's probe run in a child process (init-engine.c): the link PID 1
 * waits for is seen with stat(), a path that never comes ends the wait
 * once the child says it has finished, the exit status and the state dump
 * come from the child.  (Without root, or without mount namespaces, the
 * run falls back into this process; the answers are the same.)
 */
static void test_engine_child(void **state)
{
	char devdir[300], *text = NULL;
	struct ap_init_engine *ie = NULL;
	size_t size = 0;
	int status;
	FILE *f;

	(void)state;
	wipe();
	snprintf(devdir, sizeof(devdir), "%s/dev", tmp);
	mkdirs("dev");
	mkfile("dev/present", 0600, NULL);
	memset(&cfg, 0, sizeof(cfg));
	cfg.dev_dir = devdir;
	cfg.fastboot = 1;
	cfg.no_modules = true;
	cfg.device_timeout_ms = 2000;
	cfg.log_target = AP_LOG_STDERR;
	setenv("ASYNCPROBE_CMDLINE", "/dev/null", 1);

	assert_int_equal(ap_init_engine_start(&cfg, true, &ie), 0);
	assert_non_null(ie);
	assert_int_equal(ap_init_engine_wait_path(ie, "present", 1000), 0);
	assert_int_equal(ap_init_engine_wait_path(ie, "disk/by-label/never-there", 0), -ENOENT);
	assert_int_equal(ap_init_engine_start_error(ie), 0);
	status = ap_init_engine_finish(ie);
	assert_true(status == AP_EXIT_OK || status == AP_EXIT_DEGRADED);
	/* a second finish only repeats the status */
	assert_int_equal(ap_init_engine_finish(ie), status);
	f = open_memstream(&text, &size);
	assert_non_null(f);
	ap_init_engine_dump_state(ie, f);
	fclose(f);
	assert_non_null(strstr(text, "devices known"));
	free(text);
	/* a link made after the run, by anyone, is still seen */
	mkfile("dev/later", 0600, NULL);
	assert_int_equal(ap_init_engine_wait_path(ie, "later", 100), 0);
	assert_null(ap_init_engine_free(ie));
	unsetenv("ASYNCPROBE_CMDLINE");
}

/* --init outside PID 1 stops on SIGTERM/SIGINT: 128 + signal, STOPPING=1. */
static void stop_on(int sig)
{
	char cmdline[300], sock[300], devdir[300], rundir[300], expect[600];
	int fd, status;
	pid_t pid;

	wipe();
	snprintf(devdir, sizeof(devdir), "%s/dev", tmp);
	snprintf(rundir, sizeof(rundir), "%s/run", tmp);
	mkdirs("dev");
	mkdirs("run");
	snprintf(cmdline, sizeof(cmdline), "%s/cmdline", tmp);
	snprintf(sock, sizeof(sock), "%s/notify-stop", tmp);
	fd = listen_on(sock);
	/* rootwait: it would wait for ever */
	mkfile("cmdline", 0644, "root=LABEL=never-there rootwait\n");

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		memset(&cfg, 0, sizeof(cfg));
		cfg.dev_dir = devdir;
		cfg.fastboot = -1;
		cfg.no_modules = true;
		cfg.log_target = AP_LOG_STDERR;
		setenv("ASYNCPROBE_CMDLINE", cmdline, 1);
		setenv("ASYNCPROBE_RUNDIR", rundir, 1);
		setenv("NOTIFY_SOCKET", sock, 1);
		_exit(ap_init_main(&cfg, 1, (char *[]){ (char *)"asyncprobe", NULL }));
	}
	expect_datagram(fd, "STATUS=Loading storage drivers and probing disks");
	snprintf(expect, sizeof(expect), "STATUS=Waiting for the root device %s/disk/by-label/never-there",
		 devdir);
	expect_datagram(fd, expect);
	assert_int_equal(kill(pid, sig), 0);
	expect_datagram(fd, "STOPPING=1");
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 128 + sig);
	close(fd);
	unlink(sock);
}

static void test_unit_mode_sigterm(void **state)
{
	stop_on(SIGTERM);
}

static void test_unit_mode_sigint(void **state)
{
	stop_on(SIGINT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mount_options),
		cmocka_unit_test(test_find_init),
		cmocka_unit_test(test_remove_tree_plain),
		cmocka_unit_test(test_is_mount_point),
		cmocka_unit_test(test_notify),
		cmocka_unit_test(test_unit_mode),
		cmocka_unit_test(test_engine_child),
		cmocka_unit_test(test_unit_mode_sigterm),
		cmocka_unit_test(test_unit_mode_sigint),
		/* last: it moves the process into its own mount namespace */
		cmocka_unit_test(test_remove_tree_mounts),
	};
	char cmd[600];
	int r;

	ap_log_open(AP_LOG_STDERR, 0);
	if (!mkdtemp(tmp))
		return 99;
	r = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmp);
	return r;
}
