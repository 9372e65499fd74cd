/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * When PID 1 cannot boot: the diagnosis (why, what the command line asked
 * for, the block devices, links and file systems the kernel has, what the
 * run found) on the console, in the kernel log and in diagnosis.txt; then
 * a reboot (panic=), a rescue shell, or waiting for ever; and the crash
 * handler that brings a fatal signal to the same place with
 * async-signal-safe calls only.  Theory of operation: init.c.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/reboot.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libudev.h>

#include "base/base.h"
#include "internal.h"
#include "engine/engine.h"

extern char **environ;

static volatile sig_atomic_t crash_panic_s;      /* panic= for the crash handler */
static volatile sig_atomic_t crash_panic_set;

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

static void list_links(FILE *f, const char *dev_dir)
{
	char dir[PATH_MAX];
	struct dirent *de;
	int n = 0;
	DIR *top;

	snprintf(dir, sizeof(dir), "%s/disk", dev_dir);
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

static void print_type(const char *type, void *userdata)
{
	fprintf(userdata, " %s", type);
}

static void list_filesystems(FILE *f)
{
	int count;

	fprintf(f, "block file systems the kernel has:");
	count = ap_init_filesystems(true, print_type, f);
	fprintf(f, "%s\n", count > 0 ? "" : " none loaded (their modules load when the root is mounted)");
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
			if (n < 0)
				break;
			if ((size_t)n > sizeof(rec) - 2)
				n = (int)sizeof(rec) - 2;
			rec[n++] = '\n';       /* a finished record (see log.c) */
			if (write(kmsg, rec, (size_t)n) < 0)
				break;
		}
		p += len;
		if (*p)
			p++;
	}
	if (kmsg >= 0)
		close(kmsg);
	snprintf(path, sizeof(path), "%s/%s", ap_init_run_dir(), file);
	f = fopen(path, "we");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

void ap_init_diagnose(const struct ap_config *cfg, const struct ap_bootparams *bp,
		      struct ap_init_engine *e, const char *root_path, const char *why)
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
		fprintf(f, "root=%s asks for %s/%s (%s)\n", bp->root, cfg->dev_dir,
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
	list_links(f, cfg->dev_dir);
	list_filesystems(f);
	if (e) {
		fprintf(f, "what the probe run found:\n");
		ap_init_engine_dump_state(e, f);
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

void ap_init_crash_handlers(const struct ap_bootparams *bp)
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
		ap_stop_sleep_ms(5000);
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
void ap_init_rescue(const struct ap_bootparams *bp)
{
	bool shell = bp->shell != 0 && access("/bin/sh", X_OK) == 0;

	if (bp->panic_set && bp->panic_s != 0) {
		if (bp->panic_s > 0) {
			fprintf(stderr, "asyncprobe: rebooting in %d seconds (panic=%d)\n",
				bp->panic_s, bp->panic_s);
			log_error("rebooting in %d seconds (panic=%d)", bp->panic_s, bp->panic_s);
			ap_stop_sleep_ms((unsigned int)bp->panic_s * 1000U);
		}
		sync();
		reboot(RB_AUTOBOOT);
		log_error("reboot: %m");
	}
	if (shell) {
		fprintf(stderr, "asyncprobe: starting /bin/sh; the diagnosis is in %s/diagnosis.txt. "
			"Leave the shell to try to boot again.\n", ap_init_run_dir());
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
