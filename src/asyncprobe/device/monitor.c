/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel uevent monitor: one thread reads the kernel's uevents and
 * wakes the waits about the device each event concerns.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>

#include <libudev.h>

#include "base/base.h"
#include "device/device.h"

#include "internal.h"

/*
 * One thread in ap_monitor_wait_below(): woken by the uevents of its
 * device and the devices below it (all of them when @prefix is NULL) and
 * by every kick, each with its own condition variable.  With one
 * condition for all, every uevent woke every waiter to look at sysfs
 * again: with 256 disks, each of every disk's uevents (several per disk)
 * woke every SCSI device call waiting for its own disk, up to 16 at once.
 */
struct ap_waiter {
	const char *prefix;
	size_t len;
	bool fired;             /* monitor lock */
	pthread_cond_t cond;
	struct ap_waiter *next;
};

struct ap_monitor {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;    /* ready */
	struct ap_waiter *waiters;      /* lock */
	bool ready;             /* lock */
	int error;              /* monitor could not be set up (lock) */
	int stop_fd;            /* eventfd */
	bool stopped;           /* thread joined (owner's thread only) */
	ap_monitor_func_t *fn;
	void *userdata;
};

/* Is @path @w's device or below it? */
static bool waiter_wants(const struct ap_waiter *w, const char *path)
{
	return !w->prefix || !path ||
	       (strncmp(path, w->prefix, w->len) == 0 && (path[w->len] == '\0' || path[w->len] == '/'));
}

/* Wake the waiters a uevent at @path concerns (NULL: all of them). */
static void monitor_fire(struct ap_monitor *m, const char *path)
{
	struct ap_waiter *w;

	pthread_mutex_lock(&m->lock);
	for (w = m->waiters; w; w = w->next)
		if (waiter_wants(w, path)) {
			w->fired = true;
			pthread_cond_signal(&w->cond);
		}
	pthread_mutex_unlock(&m->lock);
}

static void *monitor_thread(void *arg)
{
	struct ap_monitor *m = arg;
	struct udev *udev;
	struct udev_monitor *mon = NULL;
	int fd = -1, r = 0;

	/* Allocated here: libudev objects stay in the thread that made them. */
	udev = udev_new();
	if (udev)
		mon = udev_monitor_new_from_netlink(udev, "kernel");
	if (!mon) {
		r = -errno ?: -ENOMEM;
	} else {
		/* a burst of coldplug uevents must not overflow the socket */
		(void)udev_monitor_set_receive_buffer_size(mon, 64 * 1024 * 1024);
		r = udev_monitor_enable_receiving(mon);
		if (r >= 0)
			fd = udev_monitor_get_fd(mon);
	}

	pthread_mutex_lock(&m->lock);
	m->ready = true;
	m->error = r < 0 ? r : 0;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
	if (r < 0)
		goto out;

	for (;;) {
		struct pollfd p[2] = {
			{ .fd = fd, .events = POLLIN },
			{ .fd = m->stop_fd, .events = POLLIN },
		};
		struct udev_device *dev;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			log_error("uevent monitor: poll: %m");
			break;
		}
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		dev = udev_monitor_receive_device(mon);
		if (dev) {
			const char *action = udev_device_get_action(dev);
			const char *syspath = udev_device_get_syspath(dev);

			log_debug("uevent: %s %s", action ?: "?", syspath ?: "?");
			if (m->fn && action && syspath)
				m->fn(action, syspath, m->userdata);
			monitor_fire(m, syspath);
			udev_device_unref(dev);
		} else {
			monitor_fire(m, NULL);
		}
	}
out:
	if (mon)
		udev_monitor_unref(mon);
	if (udev)
		udev_unref(udev);
	return NULL;
}

int ap_monitor_start(struct ap_monitor **ret, ap_monitor_func_t *fn, void *userdata)
{
	struct ap_monitor *m;
	pthread_condattr_t ca;
	sigset_t stop, old;
	int r;

	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->fn = fn;
	m->userdata = userdata;
	pthread_mutex_init(&m->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->cond, &ca);
	pthread_condattr_destroy(&ca);
	m->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (m->stop_fd < 0) {
		r = -errno;
		goto fail;
	}
	/*
	 * SIGINT and SIGTERM blocked in the thread, as in libasync's workers:
	 * the stop handler (stop.c) then runs on the main thread, never on one
	 * about to be joined.
	 */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop, &old);
	r = -pthread_create(&m->thread, NULL, monitor_thread, m);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0)
		goto fail;

	pthread_mutex_lock(&m->lock);
	while (!m->ready)
		pthread_cond_wait(&m->cond, &m->lock);
	r = m->error;
	pthread_mutex_unlock(&m->lock);
	if (r < 0) {
		pthread_join(m->thread, NULL);
		goto fail;
	}
	*ret = m;
	return 0;
fail:
	if (m->stop_fd >= 0)
		close(m->stop_fd);
	pthread_cond_destroy(&m->cond);
	pthread_mutex_destroy(&m->lock);
	free(m);
	return r;
}

void ap_monitor_stop(struct ap_monitor *m)
{
	uint64_t one = 1;

	if (!m || m->stopped)
		return;
	if (write(m->stop_fd, &one, sizeof(one)) < 0)
		log_error("uevent monitor: cannot stop: %m");
	pthread_join(m->thread, NULL);
	m->stopped = true;
}

void ap_monitor_free(struct ap_monitor *m)
{
	if (!m)
		return;
	ap_monitor_stop(m);
	close(m->stop_fd);
	pthread_cond_destroy(&m->cond);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

void ap_monitor_kick(struct ap_monitor *m)
{
	if (m)
		monitor_fire(m, NULL);
}

static void timespec_add_ms(struct timespec *ts, unsigned int ms)
{
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* Without a monitor (no netlink access) the predicate is re-checked at this interval. */
#define AP_FALLBACK_RECHECK_MS 20

int ap_monitor_wait_below(struct ap_monitor *m, const char *syspath,
			  bool (*pred)(void *data), void *data, unsigned int timeout_ms)
{
	struct ap_waiter w = { .prefix = syspath, .len = syspath ? strlen(syspath) : 0 };
	struct ap_waiter **pp;
	struct timespec deadline, now, step;
	pthread_condattr_t ca;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	timespec_add_ms(&deadline, timeout_ms);

	if (!m) {
		for (;;) {
			if (pred(data))
				return 0;
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec > deadline.tv_sec ||
			    (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec))
				return -ETIMEDOUT;
			step = now;
			timespec_add_ms(&step, AP_FALLBACK_RECHECK_MS);
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME,
					(step.tv_sec < deadline.tv_sec ||
					 (step.tv_sec == deadline.tv_sec && step.tv_nsec < deadline.tv_nsec))
					? &step : &deadline, NULL);
		}
	}

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w.cond, &ca);
	pthread_condattr_destroy(&ca);
	/* listed before the first look: no uevent after it is missed */
	pthread_mutex_lock(&m->lock);
	w.next = m->waiters;
	m->waiters = &w;
	pthread_mutex_unlock(&m->lock);

	for (;;) {
		bool timed_out = false;

		if (pred(data)) {
			r = 0;
			break;
		}
		pthread_mutex_lock(&m->lock);
		while (!w.fired && !timed_out)
			timed_out = pthread_cond_timedwait(&w.cond, &m->lock, &deadline) == ETIMEDOUT;
		w.fired = false;
		pthread_mutex_unlock(&m->lock);
		if (timed_out) {
			r = pred(data) ? 0 : -ETIMEDOUT;
			break;
		}
	}

	pthread_mutex_lock(&m->lock);
	for (pp = &m->waiters; *pp; pp = &(*pp)->next)
		if (*pp == &w) {
			*pp = w.next;
			break;
		}
	pthread_mutex_unlock(&m->lock);
	pthread_cond_destroy(&w.cond);
	return r;
}

int ap_monitor_wait(struct ap_monitor *m, bool (*pred)(void *data), void *data,
		    unsigned int timeout_ms)
{
	return ap_monitor_wait_below(m, NULL, pred, data, timeout_ms);
}
