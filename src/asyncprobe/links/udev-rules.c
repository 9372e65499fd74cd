/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Keeping asyncprobe's choice of contested links in the running system.
 *
 * links.c gives a link two devices claim to the first in publication
 * order (a partition beats its own disk).  udev gives it to the claimant
 * with the highest link_priority, and among equals to the one whose event
 * it processed last, so after switch_root the real system's coldplug, or
 * any later "change" event, can move it.  At the end of a run asyncprobe
 * leaves a rules file in /run/udev/rules.d, which survives switch_root,
 * that sets link_priority on every device taking part in a contest so that
 * each contest's winner ranks above each of its losers.
 *
 * Why priorities and not a removal of the name from the losers: udev 252
 * refuses SYMLINK-= ("Invalid operator for SYMLINK"), and SYMLINK= would
 * drop every other link of the device too.  A priority is per device, so
 * the ranks have to satisfy every contest at once: with "winner above
 * loser" as edges, a device's rank is the length of the longest chain of
 * winners above it, and its priority is minus that rank (a device that
 * loses nowhere gets 0, udev's default).  Losers sink rather than winners
 * rising, so a device asyncprobe never saw (a device-mapper target with
 * the same UUID) keeps the precedence its own rules give it.  A contest
 * whose edges would close a cycle (sda beats sdb for one name, sdb beats
 * sda for another: possible when a partition takes a name from its disk)
 * cannot be expressed; it is logged and left to udev.
 *
 * When /init hands over to the real system before the run is over
 * (asyncprobe.wait_all=0), the real root's udevd may have started, read
 * its rules and handled the contested devices before the file existed.
 * udevd 252 looks at the time stamps of its rules directories when it
 * takes new events, at most every 3 s, and reloads when they changed; a
 * udevd started later reads the file anyway (with systemd the control
 * socket exists before udevd reads its rules, so a missing socket means
 * the rules are still to be read).  So ap_udev_rules_retrigger() waits
 * until 3 s have passed since the file was written and then sends a
 * "change" event to every device the file names: whenever udevd last
 * looked, it looks again for these events and applies the priorities.
 *
 * The name, 97-asyncprobe-claims.rules: udev reads the rules files of
 * /etc, /run and /usr/lib udev/rules.d in the order of their names, and a
 * later OPTIONS+="link_priority=" replaces an earlier one.  97 comes after
 * every Debian 12 rules file that sets one (60-persistent-storage-dm,
 * 96-e2scrub), so ours is final for the devices it names, and before
 * 99-systemd.rules.  A file of the same name in /etc/udev/rules.d (a link
 * to /dev/null) masks it, as udev(7) describes.
 *
 * Devices are matched by KERNEL name and, where the kernel has one (5.15
 * and later), ATTRS{diskseq}: a kernel name freed by an unplugged disk
 * can go to the next one plugged in, a disk sequence number never does.
 * Link names only appear in comments, escaped; a kernel name that is not
 * plain ([A-Za-z0-9._:+-], '/' as '!') is refused, so nothing read from a
 * disk ever becomes rule syntax.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "probe/probe.h"
#include "links/links.h"

/* "cciss/c0d0" -> "cciss!c0d0"; NULL if not a plain kernel name */
static char *kernel_name(const char *devname)
{
	size_t n = strlen(devname);
	char *k;

	if (n == 0 || n > NAME_MAX || devname[0] == '.' || devname[0] == '/')
		return NULL;
	k = strdup(devname);
	if (!k)
		return NULL;
	for (char *p = k; *p; p++) {
		if (*p == '/')
			*p = '!';
		else if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			   (*p >= '0' && *p <= '9') || strchr("._:+-", *p))) {
			free(k);
			return NULL;
		}
	}
	return k;
}

struct graph {
	char **dev;          /* devnames */
	int *rank;
	size_t ndev;
	size_t (*edge)[2];   /* winner, loser */
	size_t nedge;
};

static void graph_free(struct graph *g)
{
	for (size_t i = 0; i < g->ndev; i++)
		free(g->dev[i]);
	free(g->dev);
	free(g->rank);
	free(g->edge);
}

static size_t graph_find(const struct graph *g, const char *dev)
{
	for (size_t i = 0; i < g->ndev; i++)
		if (strcmp(g->dev[i], dev) == 0)
			return i;
	return (size_t)-1;
}

/* index of @dev, added if new; (size_t)-1 on OOM */
static size_t graph_node(struct graph *g, const char *dev)
{
	char **d;
	int *r;
	size_t i = graph_find(g, dev);

	if (i != (size_t)-1)
		return i;
	d = realloc(g->dev, (g->ndev + 1) * sizeof(*d));
	if (!d)
		return (size_t)-1;
	g->dev = d;
	r = realloc(g->rank, (g->ndev + 1) * sizeof(*r));
	if (!r)
		return (size_t)-1;
	g->rank = r;
	g->dev[g->ndev] = strdup(dev);
	if (!g->dev[g->ndev])
		return (size_t)-1;
	g->rank[g->ndev] = 0;
	return g->ndev++;
}

/* Is @to reachable from @from along the edges? (@seen: ndev bytes) */
static bool reaches(const struct graph *g, size_t from, size_t to, bool *seen)
{
	if (from == to)
		return true;
	if (seen[from])
		return false;
	seen[from] = true;
	for (size_t i = 0; i < g->nedge; i++)
		if (g->edge[i][0] == from && reaches(g, g->edge[i][1], to, seen))
			return true;
	return false;
}

/*
 * Add the contest's devices and edges unless an edge would close a cycle
 * (then nothing is added).  Returns 1 added, 0 refused, -ENOMEM.
 */
static int graph_add_contest(struct graph *g, const struct ap_contest *t)
{
	size_t w = graph_find(g, t->winner), (*e)[2];

	if (w != (size_t)-1)
		for (size_t k = 0; k < t->nlosers; k++) {
			size_t l = graph_find(g, t->losers[k]);
			_cleanup_free_ bool *seen = NULL;

			if (l == (size_t)-1)
				continue;       /* new: nothing leads back from it */
			seen = calloc(g->ndev, sizeof(*seen));
			if (!seen)
				return -ENOMEM;
			if (reaches(g, l, w, seen))
				return 0;
		}
	w = graph_node(g, t->winner);
	if (w == (size_t)-1)
		return -ENOMEM;
	e = realloc(g->edge, (g->nedge + t->nlosers) * sizeof(*e));
	if (!e)
		return -ENOMEM;
	g->edge = e;
	for (size_t k = 0; k < t->nlosers; k++) {
		size_t l = graph_node(g, t->losers[k]);

		if (l == (size_t)-1)
			return -ENOMEM;
		g->edge[g->nedge][0] = w;
		g->edge[g->nedge][1] = l;
		g->nedge++;
	}
	return 1;
}

/* rank = longest chain of winners above; the graph is acyclic */
static void graph_rank(struct graph *g)
{
	bool changed = true;

	for (size_t round = 0; changed && round <= g->ndev; round++) {
		changed = false;
		for (size_t i = 0; i < g->nedge; i++) {
			size_t w = g->edge[i][0], l = g->edge[i][1];

			if (g->rank[l] < g->rank[w] + 1) {
				g->rank[l] = g->rank[w] + 1;
				changed = true;
			}
		}
	}
}

static bool expressible(const struct ap_contest *t, char *why, size_t size)
{
	const char *bad = NULL;
	char *k;

	if (t->nlosers == 0)
		return false;
	k = kernel_name(t->winner);
	if (!k)
		bad = t->winner;
	free(k);
	for (size_t i = 0; !bad && i < t->nlosers; i++) {
		k = kernel_name(t->losers[i]);
		if (!k)
			bad = t->losers[i];
		free(k);
	}
	if (bad) {
		char pb[256];

		ap_escape(bad, pb, sizeof(pb), AP_ESCAPE_UDEV);
		snprintf(why, size, "claimant \"%s\" is not a plain kernel name", pb);
		return false;
	}
	return true;
}

/*
 * The disk sequence number udev sees as ATTRS{diskseq} for @kname: the
 * disk's own, a partition's disk's.  Unlike kernel names it is never
 * reused within a boot, so a rule cannot hit a disk plugged in later
 * under a freed name.  Empty when there is none (kernels before 5.15).
 */
static void read_diskseq(const char *sysfs, const char *kname, char *buf, size_t size)
{
	char path[PATH_MAX];
	struct stat st;
	size_t n;

	buf[0] = '\0';
	if (!sysfs)
		return;
	snprintf(path, sizeof(path), "%s/class/block/%s/partition", sysfs, kname);
	if (stat(path, &st) == 0)
		snprintf(path, sizeof(path), "%s/class/block/%s/../diskseq", sysfs, kname);
	else
		snprintf(path, sizeof(path), "%s/class/block/%s/diskseq", sysfs, kname);
	if (!ap_read_line(path, buf, size))
		return;
	n = strlen(buf);
	if (n == 0 || n > 20 || strspn(buf, "0123456789") != n)
		buf[0] = '\0';         /* not a number: do not put it in a rule */
}

int ap_udev_rules_render(const struct ap_contest *v, size_t n, const char *sysfs,
			 char **ret_text)
{
	struct graph g = {};
	_cleanup_free_ bool *kept = NULL;
	char *text = NULL, why[320], pn[512];
	size_t size = 0, nkept = 0;
	FILE *f;
	int r;

	*ret_text = NULL;
	kept = calloc(n ? n : 1, sizeof(*kept));
	if (!kept)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!expressible(&v[i], why, sizeof(why))) {
			if (v[i].nlosers == 0)
				continue;
			ap_escape(v[i].name, pn, sizeof(pn), AP_ESCAPE_UDEV);
			log_warning("%s: not kept in udev rules: %s; udev decides who gets it", pn, why);
			continue;
		}
		r = graph_add_contest(&g, &v[i]);
		if (r < 0)
			goto out;
		if (r == 0) {
			ap_escape(v[i].name, pn, sizeof(pn), AP_ESCAPE_UDEV);
			log_warning("%s: not kept in udev rules: %s keeps it, but a device that loses "
				    "it ranks above %s through another contested link (one link priority per "
				    "device cannot express both); udev decides who gets it",
				    pn, v[i].winner, v[i].winner);
			continue;
		}
		kept[i] = true;
		nkept++;
	}
	r = 0;
	if (nkept == 0)
		goto out;
	graph_rank(&g);

	f = open_memstream(&text, &size);
	if (!f) {
		r = -ENOMEM;
		goto out;
	}
	fprintf(f, "# Written by asyncprobe %s; rewritten at the end of each run, removed when\n"
		"# no link is contested.  See asyncprobe(8), \"Who creates links when\".\n"
		"#\n"
		"# Each link below was claimed by more than one device.  asyncprobe gave it\n"
		"# to the first claimant in publication order (a partition before its own\n"
		"# disk); udev gives it to the highest link_priority, else to the last event.\n"
		"# These rules rank every claimant so that udev keeps asyncprobe's choice\n"
		"# through the real system's coldplug and later change events.  Devices are\n"
		"# matched by kernel name and, where the kernel has one, the disk sequence\n"
		"# number (never reused within a boot); valid for this boot only.\n"
		"#\n", PACKAGE_VERSION);
	for (size_t i = 0; i < n; i++) {
		if (!kept[i])
			continue;
		fputs("# ", f);
		ap_escape_file(f, v[i].name, AP_ESCAPE_UDEV);
		fputs(": ", f);
		ap_escape_file(f, v[i].winner, AP_ESCAPE_UDEV);
		fputs(" keeps it; also claimed by", f);
		for (size_t k = 0; k < v[i].nlosers; k++) {
			fputs(k ? ", " : " ", f);
			ap_escape_file(f, v[i].losers[k], AP_ESCAPE_UDEV);
		}
		fputc('\n', f);
	}
	fputc('\n', f);
	for (size_t i = 0; i < g.ndev; i++) {
		_cleanup_free_ char *k = kernel_name(g.dev[i]);

		if (!k) {               /* checked in expressible() */
			fclose(f);
			r = -EINVAL;
			goto out;
		}
		char seq[32];

		read_diskseq(sysfs, k, seq, sizeof(seq));
		fprintf(f, "SUBSYSTEM==\"block\", KERNEL==\"%s\", %s%s%sOPTIONS+=\"link_priority=%d\"\n",
			k, *seq ? "ATTRS{diskseq}==\"" : "", seq, *seq ? "\", " : "", -g.rank[i]);
	}
	if (fclose(f) != 0) {
		r = -ENOMEM;
		goto out;
	}
	*ret_text = TAKE_PTR(text);
	r = (int)nkept;
out:
	free(text);
	graph_free(&g);
	return r;
}

/* udev reads only files named *.rules */
static bool rules_file_name(const char *path)
{
	size_t n = strlen(path);
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return n > 6 && strcmp(path + n - 6, ".rules") == 0 && strlen(base) > 6;
}

int ap_udev_rules_write(const char *path, const struct ap_contest *v, size_t n,
			const char *sysfs)
{
	_cleanup_free_ char *file = NULL, *tmp = NULL, *text = NULL;
	struct stat st;
	int fd, r, kept;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (asprintf(&file, "%s/%s", path, AP_UDEV_RULES_NAME) < 0)
			return -ENOMEM;
	} else if (rules_file_name(path)) {
		file = strdup(path);
		if (!file)
			return -ENOMEM;
	} else {
		return -EINVAL;
	}
	kept = ap_udev_rules_render(v, n, sysfs, &text);
	if (kept < 0)
		return kept;
	if (!text) {
		if (unlink(file) < 0 && errno != ENOENT)
			return -errno;
		return 0;
	}

	/* not ending in ".rules": udev never reads the temporary file */
	if (asprintf(&tmp, "%s.XXXXXX", file) < 0)
		return -ENOMEM;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = ap_write_all(fd, text, strlen(text));
	if (r == 0 && fchmod(fd, 0644) < 0)
		r = -errno;
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, file) < 0)
		r = -errno;
	if (r < 0) {
		(void)unlink(tmp);
		return r;
	}
	return kept;
}

int ap_udev_rules_check(const char *path)
{
	_cleanup_free_ char *dir = NULL;
	const char *base;
	struct stat st;
	char *slash;

	if (!path || strcmp(path, "none") == 0)
		return 0;
	/* the file is written as a temporary "NAME.XXXXXX" renamed into place */
	if (strlen(path) + 7 >= PATH_MAX)
		return -ENAMETOOLONG;
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return ap_check_dir_writable(path);
		if (!S_ISREG(st.st_mode))
			return rules_file_name(path) ? -EISDIR : -EINVAL;
	} else if (errno == ENAMETOOLONG) {
		return -ENAMETOOLONG;
	}
	if (!rules_file_name(path))
		return -EINVAL;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (strlen(base) + 7 > NAME_MAX)
		return -ENAMETOOLONG;
	dir = strdup(path);
	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (stat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return ap_check_dir_writable(dir);
}

/* An initramfs: systemd's marker, or an /init on a RAM file system root. */
int ap_udev_rules_finish(struct ap_links *l, const struct ap_config *cfg)
{
	const char *path = cfg->udev_rules;
	struct ap_contest *v = NULL;
	size_t n = 0;
	int r;

	if (cfg->no_links || !l)
		return 0;
	if (cfg->dry_run) {
		log_debug("dry run: no udev rules written");
		return 0;
	}
	if (path && strcmp(path, "none") == 0)
		return 0;
	/* the default: where the real system's udev will read it */
	if (!path && (!(cfg->init_mode || ap_in_initramfs()) || strcmp(cfg->dev_dir, "/dev") != 0))
		return 0;
	r = ap_links_contested(l, &v, &n);
	if (r < 0) {
		log_error("udev rules %s: %s", path ? path : AP_UDEV_RULES_DIR, strerror(-r));
		return r;
	}
	if (!path) {
		path = AP_UDEV_RULES_DIR;
		if (n == 0 && access(path, F_OK) < 0) {
			ap_contests_free(v, n);
			return 0;       /* nothing to write, nothing stale */
		}
		/* 0755 whatever the umask, as udev makes it */
		if (((r = ap_mkdir_mode("/run/udev", 0755)) < 0 && r != -EEXIST) ||
		    ((r = ap_mkdir_mode(path, 0755)) < 0 && r != -EEXIST)) {
			ap_contests_free(v, n);
			log_error("cannot create %s: %s; udev may move contested links", path,
				  strerror(-r));
			return r;
		}
	}
	r = ap_udev_rules_write(path, v, n, "/sys");
	ap_contests_free(v, n);
	if (r < 0) {
		log_error("cannot write udev rules %s: %s; udev may move contested links", path,
			  strerror(-r));
		return r;
	}
	if (r > 0)
		log_info("udev rules %s keep %d contested link%s", path, r, r == 1 ? "" : "s");
	return 0;
}

/* udevd looks at its rules directories at most this often (udevd.c). */
#define UDEVD_RULES_CHECK_MS 3000U

int ap_udev_rules_retrigger(const char *path, const char *sysfs, const char *control)
{
	_cleanup_free_ char *file = NULL, *line = NULL;
	size_t size = 0;
	struct stat st;
	uint64_t written_ms, now_ms;
	struct timespec ts;
	int sent = 0;
	FILE *f;

	if (path && strcmp(path, "none") == 0)
		return 0;
	if (!path || (stat(path, &st) == 0 && S_ISDIR(st.st_mode))) {
		if (asprintf(&file, "%s/%s", path ? path : AP_UDEV_RULES_DIR, AP_UDEV_RULES_NAME) < 0)
			return -ENOMEM;
	} else {
		file = strdup(path);
		if (!file)
			return -ENOMEM;
	}
	if (access(control, F_OK) < 0) {
		/* no udevd yet: it reads the file when it starts */
		log_debug("no %s (%m): no udevd is running, it reads %s when it starts", control,
			  file);
		return 0;
	}
	f = fopen(file, "re");
	if (!f) {
		int r = -errno;

		log_debug("%s: %s; no claims to apply", file, strerror(-r));
		return r == -ENOENT ? 0 : r;
	}
	if (fstat(fileno(f), &st) < 0 || clock_gettime(CLOCK_REALTIME, &ts) < 0) {
		fclose(f);
		return -errno;
	}
	written_ms = (uint64_t)st.st_mtim.tv_sec * 1000U + (uint64_t)st.st_mtim.tv_nsec / 1000000U;
	now_ms = (uint64_t)ts.tv_sec * 1000U + (uint64_t)ts.tv_nsec / 1000000U;
	if (now_ms < written_ms + UDEVD_RULES_CHECK_MS + 100U) {
		uint64_t ms = written_ms + UDEVD_RULES_CHECK_MS + 100U - now_ms;

		if (ms > UDEVD_RULES_CHECK_MS + 100U)   /* a clock step */
			ms = UDEVD_RULES_CHECK_MS + 100U;
		log_debug("waiting %llu ms for udevd to look at its rules again",
			  (unsigned long long)ms);
		usleep((useconds_t)(ms * 1000U));
	}
	while (getline(&line, &size, f) > 0) {
		char name[NAME_MAX + 1], ev[PATH_MAX];
		const char *k = strstr(line, "KERNEL==\"");
		size_t n;
		int fd;

		if (line[0] == '#' || !k)
			continue;
		k += strlen("KERNEL==\"");
		n = strcspn(k, "\"");
		if (n == 0 || n > NAME_MAX || k[n] != '"')
			continue;
		memcpy(name, k, n);
		name[n] = '\0';
		/* the file only has plain names ("/" as "!"); check anyway */
		if (name[0] == '.' || strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					     "0123456789._:+-!") != n)
			continue;
		snprintf(ev, sizeof(ev), "%s/class/block/%s/uevent", sysfs, name);
		fd = open(ev, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || ap_write_all(fd, "change", 6) < 0)
			log_warning("cannot send a change event to %s: %m", name);
		else
			sent++;
		if (fd >= 0)
			close(fd);
	}
	fclose(f);
	if (sent)
		log_notice("udevd was already running: sent %d change event%s so that it applies %s",
			 sent, sent == 1 ? "" : "s", file);
	return sent;
}
