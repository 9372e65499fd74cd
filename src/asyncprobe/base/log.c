/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Logging: stderr with a program prefix, or /dev/kmsg with a syslog
 * priority so messages land in the kernel log early in boot.  libasync's
 * warnings come here too (ap_log_open() installs the hook), so as PID 1
 * they reach the kernel log instead of a console nobody reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <libudev.h>

#include "base/base.h"

static int log_fd = -1;         /* kmsg fd, or -1 for stderr */
static int log_max = AP_LOG_NOTICE;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char progress[256];      /* the progress line shown on stderr, "" = none (log_lock) */

/* libasync's log hook: its priorities are syslog's, as ours. */
static void log_libasync(int priority, const char *msg, void *userdata)
{
	(void)userdata;
	ap_log(priority, "libasync: %s", msg);
}

int ap_log_resolve_target(int target)
{
	if (target == AP_LOG_AUTO)
		return ap_in_initramfs() || getpid() == 1 ? AP_LOG_KMSG : AP_LOG_STDERR;
	return target;
}

void ap_log_open(int target, int verbose)
{
	async_set_log(log_libasync, NULL);
	log_max = verbose >= 2 ? AP_LOG_DEBUG : verbose == 1 ? AP_LOG_INFO :
		  verbose < 0 ? AP_LOG_WARNING : AP_LOG_NOTICE;
	if (ap_log_resolve_target(target) == AP_LOG_KMSG && log_fd < 0) {
		log_fd = open("/dev/kmsg", O_WRONLY | O_NOCTTY | O_CLOEXEC);
		/* no /dev/kmsg yet (devtmpfs not mounted): stderr it is */
	}
}

void ap_log_close(void)
{
	if (log_fd >= 0)
		close(log_fd);
	log_fd = -1;
}

bool ap_log_enabled(int prio)
{
	return prio <= log_max;
}

void ap_logv(int prio, const char *fmt, va_list ap)
{
	char raw[1024], buf[1100];
	int n, saved = errno;

	if (!ap_log_enabled(prio))
		return;
	vsnprintf(raw, sizeof(raw), fmt, ap);
	/*
	 * Messages carry what media say (labels, model strings): a control
	 * byte must neither split a kmsg record nor reach a terminal, so each
	 * is escaped.  Bytes from 0x80 up pass, so UTF-8 labels stay readable.
	 */
	if (log_fd >= 0) {
		size_t len;

		n = snprintf(buf, sizeof(buf), "<%d>asyncprobe[%d]: ", prio, (int)getpid());
		ap_escape(raw, buf + n, sizeof(buf) - (size_t)n - 1, AP_ESCAPE_CONTROLS);
		/*
		 * One write per record: kmsg takes a record per write.  It ends
		 * with a newline: the kernel keeps a record without one open for
		 * a continuation, and readers (dmesg, the journal) see it only
		 * once someone logs the next record, so a run's last line (its
		 * summary, from a probe process that outlived PID 1's part)
		 * could stay invisible.
		 */
		len = strlen(buf);
		buf[len++] = '\n';
		if (write(log_fd, buf, len) < 0) {
			/* nothing better to do */
		}
	} else {
		ap_escape(raw, buf, sizeof(buf), AP_ESCAPE_CONTROLS);
		pthread_mutex_lock(&log_lock);
		/* a message takes the progress line's place, which is redrawn below it */
		fprintf(stderr, "%sasyncprobe: %s%s\n%s", progress[0] ? "\r\033[K" : "",
			prio <= AP_LOG_ERR ? "error: " : prio == AP_LOG_WARNING ? "warning: " : "",
			buf, progress);
		fflush(stderr);
		pthread_mutex_unlock(&log_lock);
	}
	errno = saved;
}

void ap_log(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ap_logv(prio, fmt, ap);
	va_end(ap);
}

void ap_log_dev(int prio, const char *dev, const char *fmt, ...)
{
	char msg[900];
	va_list ap;

	if (!ap_log_enabled(prio))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ap_log(prio, "%s: %s", dev ? dev : "?", msg);
}

void ap_log_progress(const char *line)
{
	pthread_mutex_lock(&log_lock);
	if (line && *line) {
		snprintf(progress, sizeof(progress), "%s", line);
		fprintf(stderr, "\r\033[K%s", progress);
	} else if (progress[0]) {
		progress[0] = '\0';
		fputs("\r\033[K", stderr);
	}
	fflush(stderr);
	pthread_mutex_unlock(&log_lock);
}

/*
 * The progress line redraws itself with a carriage return and an
 * erase-line escape: fine on a terminal someone watches, noise on the
 * system console, where a serial line records every redraw and the
 * kernel's messages land in the middle of it.  So only on a terminal that
 * is not /dev/console, not a serial line (ttyS*) and not one the kernel
 * writes its console to (/sys/class/tty/console/active).
 */
bool ap_log_is_user_terminal(int fd, const char *console_active)
{
	struct stat st;
	char buf[256], path[128], dev[32], *tok, *save;
	FILE *f;
	bool console = false;

	if (!isatty(fd) || fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode))
		return false;
	if (major(st.st_rdev) == 5 && minor(st.st_rdev) == 1)	/* /dev/console */
		return false;
	if (major(st.st_rdev) == 4 && minor(st.st_rdev) >= 64)	/* /dev/ttyS* */
		return false;
	f = console_active ? fopen(console_active, "re") : NULL;
	if (!f)
		return true;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	for (tok = strtok_r(buf, " \n", &save); tok && !console; tok = strtok_r(NULL, " \n", &save)) {
		unsigned int ma, mi;

		/* tty0 is "the foreground virtual console", not one terminal */
		if (strcmp(tok, "tty0") == 0)
			continue;
		snprintf(path, sizeof(path), "/sys/class/tty/%s/dev", tok);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(dev, sizeof(dev), f) && sscanf(dev, "%u:%u", &ma, &mi) == 2)
			console = major(st.st_rdev) == ma && minor(st.st_rdev) == mi;
		fclose(f);
	}
	return !console;
}
