/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The probe run of PID 1, in a child process.  A thread that device I/O
 * freezes in the kernel (blkid reading a disk that stopped answering,
 * opening it, a hung device's sysfs file) cannot be killed, and a process
 * cannot exec while one of its threads is stuck there.  So PID 1 runs no
 * engine thread: it forks a child that runs the engine and talks to it
 * over a socket pair, and itself only waits (poll with timeouts), looks
 * at the root's link with stat() (no device I/O), mounts the root,
 * switches root and execs init.  Theory of operation: init.c.
 *
 * The child first moves to a mount namespace of its own (a private copy
 * of PID 1's), so /dev, /run, /sys and /proc stay where it found them
 * when PID 1 moves them into the new root: they are the same mounts of
 * the same devtmpfs and tmpfs, so the links, the manifest, the trace and
 * the udev claims rules it writes after the switch appear in the real
 * system's /dev and /run.  Where unshare() fails (a kernel without mount
 * namespaces) the engine runs in PID 1 as before, with a warning.
 *
 * The protocol is one message type per event, child to parent:
 *   HELLO value     0 once the child has its mount namespace (-EXDEV when
 *                   it has none: PID 1 then probes itself)
 *   STARTED value   ap_engine_start()'s result (0 or -errno)
 *   FINISHED value  ap_engine_finish()'s exit status: every call published
 *                   or abandoned, outputs written; its text, 8 bytes: when
 *                   (ms since boot, for init.log's probe_finished_ms)
 *   DUMP len text   ap_engine_dump_state(), answering a DUMP request
 * and two requests, parent to child: DUMP (served once the run is
 * finished) and HANDOVER: PID 1 starts the root's init before the run is
 * over (asyncprobe.wait_all=0, the default).  The child then owns the
 * end of the boot's run: it has an already running udevd apply the claims
 * rules (ap_udev_rules_retrigger()), deletes the initramfs, which PID 1
 * left alone because the child still loads modules from it (its "/" is
 * the same RAM file system), puts the kernel log's rate limit back, and
 * last appends probe_finished_ms and probe_status to init.log.  The child
 * exits when the parent closes its end, which exec does (close-on-exec); a
 * child with a thread stuck in the kernel stays behind until the kernel
 * lets it go, and the real init reaps it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "engine/engine.h"
#include "internal.h"
#include "probe/probe.h"
#include "links/links.h"

enum msg_type {
	MSG_HELLO = 0,
	MSG_STARTED = 1,
	MSG_FINISHED = 2,
	MSG_DUMP = 3,
	MSG_HANDOVER = 4,
};

struct msg {
	uint32_t type;
	int32_t value;
	uint32_t len;           /* bytes of text after the header (MSG_DUMP) */
};

#define POLL_MS 10U             /* how often PID 1 looks for the root's link */
#define DUMP_WAIT_MS 5000U
#define MAX_DUMP (4U << 20)

struct ap_init_engine {
	const struct ap_config *cfg; /* the caller's, for the run's lifetime */
	bool child;
	/* in this process */
	struct ap_engine *e;
	/* in a child */
	pid_t pid;
	int fd;                 /* PID 1's end of the socket pair, -1 once closed */
	bool hello;             /* HELLO received */
	int hello_error;        /* its value */
	bool started;           /* STARTED received */
	int start_error;        /* its value when negative */
	bool finished;          /* FINISHED received, or the child is gone */
	int status;             /* FINISHED's value */
	uint64_t finished_ms;   /* and its time */
	char *dump;             /* the last DUMP received */
	bool dump_ready;
};

/* ------------------------------------------------------------ the child */

static int send_msg(int fd, enum msg_type type, int value, const char *text, size_t len)
{
	struct msg m = { .type = type, .value = value, .len = (uint32_t)len };
	int r = ap_write_all(fd, &m, sizeof(m));

	if (r == 0 && len)
		r = ap_write_all(fd, text, len);
	return r;
}

static void send_dump(int fd, struct ap_engine *e)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	if (!f) {
		send_msg(fd, MSG_DUMP, -ENOMEM, NULL, 0);
		return;
	}
	ap_engine_dump_state(e, f);
	fclose(f);
	if (size > MAX_DUMP)
		size = MAX_DUMP;
	send_msg(fd, MSG_DUMP, 0, text, size);
	free(text);
}

/*
 * A copy of PID 1's mounts that PID 1's switch_root leaves alone.  Private
 * first: a mount shared with PID 1's copy would propagate its moves.
 */
static int own_mount_namespace(void)
{
	if (unshare(CLONE_NEWNS) < 0)
		return -errno;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -errno;
	return 0;
}

/*
 * The end of the boot's run after PID 1 handed over (see the top of this
 * file).  "/" here is still the initramfs: delete it as switch_root
 * would have, never crossing into a mount (/dev, /run, ... are mounts).
 */
static void child_end_of_boot(const struct ap_config *cfg, int status, uint64_t finished_ms)
{
	int root, r;

	if (!cfg->no_links && !cfg->dry_run) {
		r = ap_udev_rules_retrigger(cfg->udev_rules, "/sys", AP_UDEVD_CONTROL);
		if (r < 0)
			log_warning("the running udevd may not apply the claims rules: %s",
				    strerror(-r));
		else
			ap_init_timing("claims_change_events=%d", r);
	}
	root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root >= 0) {
		if (ap_fs_is_initramfs(root) && access("/init", F_OK) == 0)
			ap_init_remove_initramfs(root);
		close(root);
	}
	/*
	 * The rate limit last, so the lines above are not lost to it; the
	 * timing line after it: whoever waits for that line finds everything
	 * above done.
	 */
	ap_init_kmsg_limit_again();
	ap_init_timing("probe_finished_ms=%llu\nprobe_status=%d", (unsigned long long)finished_ms,
		       status);
}

static void __attribute__((noreturn)) child_main(const struct ap_config *cfg, int fd)
{
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	struct ap_engine *e = NULL;
	struct msg req;
	bool handover = false;
	uint64_t finished_ms;
	size_t i;
	int r, status;

	/* PID 1's crash handler starts a shell and never returns: not for us */
	for (i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		signal(fatal[i], SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	send_msg(fd, MSG_HELLO, 0, NULL, 0);

	r = ap_engine_start(&e, cfg);
	send_msg(fd, MSG_STARTED, r, NULL, 0);
	if (r < 0)
		_exit(r == -ENOENT ? AP_EXIT_CONFIG : AP_EXIT_SYSTEM);
	status = ap_engine_finish(e);
	finished_ms = ap_now_ns() / 1000000ULL;
	send_msg(fd, MSG_FINISHED, status, (const char *)&finished_ms, sizeof(finished_ms));

	/* Requests until PID 1 closes its end (it started init, or gave up). */
	for (;;) {
		ssize_t n = recv(fd, &req, sizeof(req), MSG_WAITALL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(req))
			break;
		if (req.type == MSG_DUMP)
			send_dump(fd, e);
		else if (req.type == MSG_HANDOVER)
			handover = true;
	}
	if (handover)
		child_end_of_boot(cfg, status, finished_ms);
	/* abandoned calls may still run: ap_engine_free() leaves what they use */
	ap_engine_free(e);
	_exit(status);
}

/* ----------------------------------------------------------- PID 1's side */

/* Read what the child sent, waiting at most @timeout_ms for the first byte. */
static void pump(struct ap_init_engine *ie, unsigned int timeout_ms)
{
	struct pollfd p = { .fd = ie->fd, .events = POLLIN };
	struct msg m;
	ssize_t n;

	if (ie->fd < 0) {
		if (timeout_ms)
			poll(NULL, 0, (int)timeout_ms);
		return;
	}
	for (;;) {
		int pr = poll(&p, 1, (int)timeout_ms);

		if (pr < 0 && errno == EINTR)
			return;
		if (pr <= 0)
			return;
		timeout_ms = 0;
		/* the child writes whole messages at once: wait for the rest */
		n = recv(ie->fd, &m, sizeof(m), MSG_WAITALL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(m))
			goto gone;
		switch (m.type) {
		case MSG_HELLO:
			ie->hello = true;
			ie->hello_error = m.value;
			break;
		case MSG_STARTED:
			ie->started = true;
			if (m.value < 0) {
				ie->start_error = m.value;
				ie->finished = true;
				ie->status = m.value == -ENOENT ? AP_EXIT_CONFIG : AP_EXIT_SYSTEM;
			}
			break;
		case MSG_FINISHED:
			if (m.len != sizeof(ie->finished_ms) ||
			    recv(ie->fd, &ie->finished_ms, sizeof(ie->finished_ms), MSG_WAITALL) !=
			    (ssize_t)sizeof(ie->finished_ms))
				goto gone;
			ie->finished = true;
			ie->status = m.value;
			break;
		case MSG_DUMP: {
			char *text = NULL;

			if (m.len > MAX_DUMP)
				goto gone;
			text = malloc((size_t)m.len + 1);
			if (!text)
				goto gone;
			n = m.len ? recv(ie->fd, text, m.len, MSG_WAITALL) : 0;
			if (n != (ssize_t)m.len) {
				free(text);
				goto gone;
			}
			text[m.len] = '\0';
			free(ie->dump);
			ie->dump = text;
			ie->dump_ready = true;
			break;
		}
		default:
			log_warning("probe process %d sent message type %u; ignoring it", (int)ie->pid,
				    m.type);
			break;
		}
	}
gone:
	/* It exited (or crashed) without a word more: say how, if it is over. */
	close(ie->fd);
	ie->fd = -1;
	if (!ie->finished && ie->hello_error) {
		/* it said why (no namespace) and exited: PID 1 probes itself */
		ie->finished = true;
		ie->status = AP_EXIT_SYSTEM;
	} else if (!ie->finished) {
		int st;

		ie->finished = true;
		ie->status = AP_EXIT_SYSTEM;
		if (waitpid(ie->pid, &st, WNOHANG) == ie->pid && WIFSIGNALED(st))
			log_error("the probe process %d was killed by signal %d (%s) before it finished",
				  (int)ie->pid, WTERMSIG(st), strsignal(WTERMSIG(st)));
		else
			log_error("the probe process %d ended before it finished", (int)ie->pid);
	}
}

static bool path_exists(const struct ap_init_engine *ie, const char *relpath)
{
	char path[PATH_MAX];
	struct stat st;

	/* stat() of a link below devtmpfs and of a device node reads no disk */
	snprintf(path, sizeof(path), "%s/%s", ie->cfg->dev_dir, relpath);
	return stat(path, &st) == 0 || lstat(path, &st) == 0;
}

/* The newest change time below the dev dir's disk/ (a link made), in ms. */
static uint64_t links_changed_ms(const struct ap_init_engine *ie)
{
	char dir[PATH_MAX];
	uint64_t newest = 0;
	struct dirent *de;
	struct stat st;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/disk", ie->cfg->dev_dir);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			uint64_t t = (uint64_t)st.st_mtim.tv_sec * 1000U +
				     (uint64_t)st.st_mtim.tv_nsec / 1000000U;

			if (t > newest)
				newest = t;
		}
	}
	closedir(d);
	return newest;
}

int ap_init_engine_start(const struct ap_config *cfg, bool child, struct ap_init_engine **ret)
{
	struct ap_init_engine *ie = calloc(1, sizeof(*ie));
	const bool pid1 = child;
	int sv[2], r;
	pid_t pid;

	if (!ie)
		return -ENOMEM;
	ie->cfg = cfg;
	ie->fd = -1;
	if (child && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		log_warning("socketpair for the probe process: %m; probing in PID 1");
		child = false;
	}
	if (child) {
		pid = fork();
		if (pid < 0) {
			log_warning("fork for the probe process: %m; probing in PID 1");
			close(sv[0]);
			close(sv[1]);
			child = false;
		} else if (pid == 0) {
			close(sv[0]);
			prctl(PR_SET_NAME, "asyncprobe-run", 0, 0, 0);
			r = own_mount_namespace();
			if (r < 0) {
				/* PID 1 probes itself: nothing has been probed yet */
				send_msg(sv[1], MSG_HELLO, -EXDEV, NULL, 0);
				log_warning("no mount namespace for the probe process (%s): probing in "
					    "PID 1, which a disk that hangs in the kernel can keep from "
					    "starting init", strerror(-r));
				_exit(AP_EXIT_SYSTEM);
			}
			child_main(cfg, sv[1]);
		} else {
			close(sv[1]);
			ie->pid = pid;
			ie->fd = sv[0];
			ie->child = true;
			log_info("probing in process %d; PID 1 waits for the root device", (int)pid);
			/* the first word says whether it has its namespace (at once) */
			while (!ie->hello && !ie->finished)
				pump(ie, 1000);
			if (ie->hello && ie->hello_error == 0) {
				*ret = ie;
				return 0;
			}
			waitpid(pid, NULL, 0);
			if (ie->fd >= 0)
				close(ie->fd);
			memset(ie, 0, sizeof(*ie));
			ie->cfg = cfg;
			ie->fd = -1;
		}
	}
	/* PID 1 (its child failed) takes no stop signal; the unit does */
	r = pid1 ? ap_engine_start(&ie->e, cfg) : ap_stop_engine_start(&ie->e, cfg);
	if (r < 0) {
		free(ie);
		return r;
	}
	*ret = ie;
	return 0;
}

int ap_init_engine_wait_path(struct ap_init_engine *ie, const char *relpath,
			     unsigned int timeout_ms)
{
	uint64_t deadline = 0;

	if (!ie || !relpath)
		return -EINVAL;
	if (!ie->child)
		return ap_engine_wait_path(ie->e, relpath, timeout_ms);
	if (timeout_ms != 0 && timeout_ms != UINT32_MAX)
		deadline = ap_now_ns() + (uint64_t)timeout_ms * 1000000ULL;
	for (;;) {
		unsigned int slice = POLL_MS;
		uint64_t now;

		if (path_exists(ie, relpath))
			return 0;
		if (ie->start_error)
			return -ECHILD;
		if (ie->finished)
			return path_exists(ie, relpath) ? 0 : -ENOENT;
		now = ap_now_ns();
		if (deadline && now >= deadline)
			return -ETIMEDOUT;
		if (deadline && (deadline - now) / 1000000ULL < slice)
			slice = (unsigned int)((deadline - now) / 1000000ULL) + 1;
		pump(ie, slice);
	}
}

/*
 * How long PID 1 waits for a run that neither finishes nor makes a link:
 * every call is abandoned after the device timeout plus 2 s in one step,
 * so a run that stays silent much longer than a few of those is not going
 * to finish soon.
 */
static unsigned int backstop_ms(const struct ap_init_engine *ie)
{
	return 30000U + 3U * ie->cfg->device_timeout_ms;
}

int ap_init_engine_finish(struct ap_init_engine *ie)
{
	uint64_t last = ap_now_ns(), changed;

	if (!ie)
		return AP_EXIT_SYSTEM;
	if (!ie->child)
		return ap_engine_finish(ie->e);
	changed = links_changed_ms(ie);
	while (!ie->finished) {
		uint64_t now_changed;

		pump(ie, 1000);
		now_changed = links_changed_ms(ie);
		if (now_changed != changed) {
			changed = now_changed;
			last = ap_now_ns();
		}
		if (!ie->finished && ap_ms_since(last) >= backstop_ms(ie)) {
			log_error("the probe process %d has neither finished nor made a link for %u s: "
				  "going on without it (it keeps making links in the background)",
				  (int)ie->pid, backstop_ms(ie) / 1000U);
			return AP_EXIT_DEGRADED;
		}
	}
	return ie->status;
}

int ap_init_engine_start_error(const struct ap_init_engine *ie)
{
	return ie ? ie->start_error : 0;
}

void ap_init_engine_dump_state(struct ap_init_engine *ie, FILE *f)
{
	uint64_t t0 = ap_now_ns();

	if (!ie)
		return;
	if (!ie->child) {
		ap_engine_dump_state(ie->e, f);
		return;
	}
	if (ie->start_error) {
		fprintf(f, "  (the probe engine did not start: %s)\n", strerror(-ie->start_error));
		return;
	}
	if (!ie->finished || ie->fd < 0) {
		fprintf(f, "  (the probe process %d %s; no account of its run)\n", (int)ie->pid,
			ie->fd < 0 ? "is gone" : "has not finished");
		return;
	}
	ie->dump_ready = false;
	{
		struct msg req = { .type = MSG_DUMP };

		if (ap_write_all(ie->fd, &req, sizeof(req)) < 0) {
			fprintf(f, "  (the probe process %d does not answer)\n", (int)ie->pid);
			return;
		}
	}
	while (!ie->dump_ready && ie->fd >= 0 && ap_ms_since(t0) < DUMP_WAIT_MS)
		pump(ie, 100);
	if (ie->dump_ready)
		fputs(ie->dump, f);
	else
		fprintf(f, "  (the probe process %d does not answer)\n", (int)ie->pid);
}

uint64_t ap_init_engine_finished_ms(const struct ap_init_engine *ie)
{
	return ie && ie->child && ie->finished_ms ? ie->finished_ms : ap_now_ns() / 1000000ULL;
}

bool ap_init_engine_in_child(const struct ap_init_engine *ie)
{
	return ie && ie->child;
}

bool ap_init_engine_finished(struct ap_init_engine *ie)
{
	/* in this process, only after ap_init_engine_finish() */
	if (!ie || !ie->child)
		return true;
	pump(ie, 0);
	return ie->finished;
}

bool ap_init_engine_handover(struct ap_init_engine *ie)
{
	struct msg req = { .type = MSG_HANDOVER };

	if (!ie || !ie->child || ie->fd < 0)
		return false;
	if (ap_write_all(ie->fd, &req, sizeof(req)) < 0)
		return false;
	log_notice("starting the root's init while probe process %d goes on; it makes the "
		   "remaining links and deletes the initramfs when it is done", (int)ie->pid);
	return true;
}

struct ap_init_engine *ap_init_engine_free(struct ap_init_engine *ie)
{
	if (!ie)
		return NULL;
	if (!ie->child) {
		ap_engine_free(ie->e);
	} else {
		/* the child exits when it sees the end; it is never waited for */
		if (ie->fd >= 0)
			close(ie->fd);
		waitpid(ie->pid, NULL, WNOHANG);
		free(ie->dump);
	}
	free(ie);
	return NULL;
}
