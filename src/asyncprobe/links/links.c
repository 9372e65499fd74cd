/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The link registry: who owns each /dev/disk link, and the links on disk.
 *
 * Claims arrive in cookie order (the engine publishes one device at a
 * time, in its depth-first publication order, and the cookie is the place
 * in that order), so "first claimant keeps the link" is the same on every
 * boot and in every mode.  The one exception is a partition claiming a link its own
 * whole disk holds (a hybrid ISO's label is on both): the partition takes
 * it, as udev's partition-runs-last outcome gives users.
 *
 * On disk a link is created as a relative symlink under a temporary name
 * in its final directory and renamed over the old one, so a reader sees
 * the old link or the new one, never none.  The directories are walked
 * one component at a time with O_NOFOLLOW|O_DIRECTORY: a symlink planted
 * at disk or disk/by-label is never followed.  Names come from
 * ap_names_for_device(); any that ap_link_name_valid() refuses is logged
 * and recorded as AP_LINK_REJECTED, never created.
 *
 * Links this registry has no claim for are left alone (udev does not
 * remove links it has no record of either).
 *
 * Locking: one mutex, l->lock, guards everything in struct ap_links and
 * is held for a whole ap_links_publish(), file system work included.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "probe/probe.h"
#include "links/links.h"

struct claim {
	char *name;            /* relative to the dev dir */
	char *owner;           /* devname of the device holding it */
	char *owner_parent;    /* its whole disk, NULL for a disk */
	async_cookie_t cookie; /* the owner's cookie */
	char *claimants;       /* "sda (cookie 1), sdb (cookie 2)" for warnings */
	char **who;            /* every claimant's devname, in claim order */
	size_t nwho;
	uint64_t seq;          /* order of first claim (ap_links_contested) */
	struct claim *next;    /* hash chain */
};

struct ap_links {
	pthread_mutex_t lock;
	char *dev_dir;
	bool dry_run;
	int dir_fd;                  /* the dev dir, or -1 (dry run without it) */
	struct claim **buckets;      /* lock */
	size_t nbuckets, nclaims;    /* lock */
	uint64_t claim_seq;          /* lock */
	struct ap_link_event **log;  /* lock */
	size_t nlog, alog;           /* lock */
	unsigned long tmp_counter;   /* lock */
	struct swept { dev_t dev; ino_t ino; } *swept;  /* lock: directories swept of stale temps */
	size_t nswept;               /* lock */
};

struct ap_links *ap_links_new(const char *dev_dir, bool dry_run)
{
	struct ap_links *l;

	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->dev_dir = strdup(dev_dir ? dev_dir : "/dev");
	l->nbuckets = 256;
	l->buckets = calloc(l->nbuckets, sizeof(*l->buckets));
	if (!l->dev_dir || !l->buckets) {
		free(l->dev_dir);
		free(l->buckets);
		free(l);
		return NULL;
	}
	pthread_mutex_init(&l->lock, NULL);
	l->dry_run = dry_run;
	l->dir_fd = open(l->dev_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (l->dir_fd < 0 && !dry_run)
		log_warning("cannot open %s: %s; links will fail", l->dev_dir, strerror(errno));
	return l;
}

static void event_free(struct ap_link_event *e)
{
	if (!e)
		return;
	free(e->name);
	free(e->target);
	free(e->owner);
	free(e);
}

struct ap_links *ap_links_free(struct ap_links *l)
{
	if (!l)
		return NULL;
	for (size_t i = 0; i < l->nbuckets; i++) {
		struct claim *c = l->buckets[i];

		while (c) {
			struct claim *n = c->next;

			free(c->name);
			free(c->owner);
			free(c->owner_parent);
			free(c->claimants);
			for (size_t k = 0; k < c->nwho; k++)
				free(c->who[k]);
			free(c->who);
			free(c);
			c = n;
		}
	}
	free(l->buckets);
	for (size_t i = 0; i < l->nlog; i++)
		event_free(l->log[i]);
	free(l->log);
	free(l->swept);
	if (l->dir_fd >= 0)
		close(l->dir_fd);
	pthread_mutex_destroy(&l->lock);
	free(l->dev_dir);
	free(l);
	return NULL;
}

static struct claim *claim_find(struct ap_links *l, const char *name)
{
	for (struct claim *c = l->buckets[ap_hash_string(name) % l->nbuckets]; c; c = c->next)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

static void claims_grow(struct ap_links *l)
{
	size_t nb = l->nbuckets * 4;
	struct claim **b = calloc(nb, sizeof(*b));

	if (!b)
		return; /* longer chains, still correct */
	for (size_t i = 0; i < l->nbuckets; i++) {
		struct claim *c = l->buckets[i];

		while (c) {
			struct claim *n = c->next;
			size_t k = ap_hash_string(c->name) % nb;

			c->next = b[k];
			b[k] = c;
			c = n;
		}
	}
	free(l->buckets);
	l->buckets = b;
	l->nbuckets = nb;
}

static int who_add(struct claim *c, const char *dev)
{
	char **v;

	for (size_t i = 0; i < c->nwho; i++)
		if (strcmp(c->who[i], dev) == 0)
			return 0;
	v = realloc(c->who, (c->nwho + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	c->who = v;
	c->who[c->nwho] = strdup(dev);
	if (!c->who[c->nwho])
		return -ENOMEM;
	c->nwho++;
	return 0;
}

static struct claim *claim_add(struct ap_links *l, const char *name, const char *owner,
			       const char *parent, async_cookie_t cookie)
{
	struct claim *c = calloc(1, sizeof(*c));
	size_t k;

	if (!c)
		return NULL;
	c->name = strdup(name);
	c->owner = strdup(owner);
	c->owner_parent = parent ? strdup(parent) : NULL;
	c->cookie = cookie;
	if (asprintf(&c->claimants, "%s (cookie %llu)", owner, (unsigned long long)cookie) < 0)
		c->claimants = NULL;
	if (!c->name || !c->owner || (parent && !c->owner_parent) || !c->claimants ||
	    who_add(c, owner) < 0) {
		if (c->who)
			free(c->who[0]);
		free(c->who);
		free(c->name);
		free(c->owner);
		free(c->owner_parent);
		free(c->claimants);
		free(c);
		return NULL;
	}
	if (l->nclaims >= l->nbuckets * 2)
		claims_grow(l);
	c->seq = l->claim_seq++;
	k = ap_hash_string(name) % l->nbuckets;
	c->next = l->buckets[k];
	l->buckets[k] = c;
	l->nclaims++;
	return c;
}

static void claimants_append(struct claim *c, const char *dev, async_cookie_t cookie)
{
	char *n, item[PATH_MAX + 48];
	size_t il;

	/* each claimant once, however often it claims again */
	snprintf(item, sizeof(item), "%s (cookie %llu)", dev, (unsigned long long)cookie);
	il = strlen(item);
	for (const char *p = c->claimants; (p = strstr(p, item)); p += il)
		if ((p == c->claimants || (p >= c->claimants + 2 && p[-2] == ',' && p[-1] == ' ')) &&
		    (p[il] == '\0' || p[il] == ','))
			return;

	if (asprintf(&n, "%s, %s (cookie %llu)", c->claimants, dev, (unsigned long long)cookie) < 0)
		return;
	free(c->claimants);
	c->claimants = n;
}

static int log_event(struct ap_links *l, async_cookie_t cookie, enum ap_link_action a,
		     const char *name, const char *target, const char *owner, int error)
{
	struct ap_link_event *e;

	if (l->nlog == l->alog) {
		size_t na = l->alog ? l->alog * 2 : 64;
		struct ap_link_event **nl = realloc(l->log, na * sizeof(*nl));

		if (!nl)
			return -ENOMEM;
		l->log = nl;
		l->alog = na;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->cookie = cookie;
	e->action = a;
	e->error = error;
	e->name = strdup(name);
	e->target = strdup(target);
	e->owner = owner ? strdup(owner) : NULL;
	if (!e->name || !e->target || (owner && !e->owner)) {
		event_free(e);
		return -ENOMEM;
	}
	l->log[l->nlog++] = e;
	return 0;
}

/* "../../sda1" for "disk/by-id/x" and "sda1" */
static char *relative_target(const char *name, const char *devname)
{
	size_t depth = 0, n;
	char *t, *p;

	for (const char *s = name; *s; s++)
		if (*s == '/')
			depth++;
	n = depth * 3 + strlen(devname) + 1;
	t = malloc(n);
	if (!t)
		return NULL;
	p = t;
	for (size_t i = 0; i < depth; i++) {
		memcpy(p, "../", 3);
		p += 3;
	}
	strcpy(p, devname);
	return t;
}

/*
 * Open the directory holding @name's leaf, creating missing directories
 * (unless @create is false), never following a symlink.  Returns an fd,
 * -ENOENT when a directory is missing and !@create, or -errno.
 */
static int open_parent(struct ap_links *l, const char *name, bool create, const char **ret_leaf)
{
	_cleanup_free_ char *copy = strdup(name);
	char *p, *slash;
	int fd, r;

	if (!copy)
		return -ENOMEM;
	if (l->dir_fd < 0)
		return -EBADF;
	fd = dup(l->dir_fd);
	if (fd < 0)
		return -errno;
	p = copy;
	while ((slash = strchr(p, '/'))) {
		bool made = false;
		int nfd;

		*slash = '\0';
		if (create) {
			if (mkdirat(fd, p, 0755) == 0)
				made = true;
			else if (errno != EEXIST) {
				r = -errno;
				close(fd);
				return r;
			}
		}
		nfd = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			r = -errno;
			close(fd);
			/* a symlink or a file where a directory belongs */
			return r == -ENOTDIR ? -ELOOP : r;
		}
		/* 0755 as udev makes them, whatever the umask (not changed: threads share it) */
		if (made && fchmod(nfd, 0755) < 0)
			log_warning("cannot chmod %s/%.*s: %s", l->dev_dir, (int)(slash - copy), name,
				    strerror(errno));
		close(fd);
		fd = nfd;
		p = slash + 1;
	}
	*ret_leaf = name + (p - copy);
	return fd;
}

/* What is at @leaf now: 1 the right link, 0 absent, 2 another link, <0 other thing/error */
static int inspect_leaf(int dfd, const char *leaf, const char *target)
{
	char buf[PATH_MAX];
	ssize_t n;
	struct stat st;

	n = readlinkat(dfd, leaf, buf, sizeof(buf) - 1);
	if (n >= 0) {
		buf[n] = '\0';
		return strcmp(buf, target) == 0 ? 1 : 2;
	}
	if (errno == ENOENT)
		return 0;
	if (errno == EINVAL && fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return -EEXIST; /* a file or directory that is not ours */
	return -errno;
}

/*
 * Does the link at @leaf point at a partition of the whole disk @disk?
 * Then a rerun must not flap it to the disk and back: the partition will
 * claim it again (a partition beats its own disk).  Partitions are named
 * as the kernel names them: the disk's name, "p" if that ends in a digit,
 * and the number (sda -> sda1, nvme0n1 -> nvme0n1p1, but not sdaa1).
 */
static bool points_at_own_partition(int dfd, const char *leaf, const char *disk)
{
	char buf[PATH_MAX];
	const char *t = buf;
	size_t dl = strlen(disk);
	ssize_t n;

	if (dl == 0)
		return false;
	n = readlinkat(dfd, leaf, buf, sizeof(buf) - 1);
	if (n < 0)
		return false;
	buf[n] = '\0';
	while (strncmp(t, "../", 3) == 0)
		t += 3;
	if (strncmp(t, disk, dl) != 0)
		return false;
	t += dl;
	if (disk[dl - 1] >= '0' && disk[dl - 1] <= '9') {
		if (*t != 'p')
			return false;
		t++;
	}
	if (!*t)
		return false;
	for (; *t; t++)
		if (*t < '0' || *t > '9')
			return false;
	return true;
}

/*
 * Remove the temporary links a killed run left in @dfd: names
 * ".#asyncprobe.PID.N" whose PID is not a live process.  A run killed
 * between symlinkat() and renameat() leaves one; the rename is atomic, so
 * the real link is the old one or the new one and only the temporary is
 * stale.  A live PID (another asyncprobe at work in the same tree) is
 * left alone.
 */
static void sweep_stale_temps(int dfd)
{
	static const char prefix[] = ".#asyncprobe.";
	struct dirent *de;
	DIR *d;
	int fd = dup(dfd);

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d))) {
		char *end;
		long pid;

		if (strncmp(de->d_name, prefix, sizeof(prefix) - 1) != 0)
			continue;
		pid = strtol(de->d_name + sizeof(prefix) - 1, &end, 10);
		if (*end != '.' || pid <= 0 || pid == (long)getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == 0)
			log_debug("removed %s, left by a run that was killed", de->d_name);
	}
	closedir(d);
}

/*
 * Sweep each link directory once per run, not once per link: with a
 * thousand disks a per-link sweep would read by-id a thousand times.
 * Under l->lock, as every caller of link_apply() is.
 */
static void sweep_once(struct ap_links *l, int dfd)
{
	struct swept *v;
	struct stat st;

	if (fstat(dfd, &st) < 0)
		return;
	for (size_t i = 0; i < l->nswept; i++)
		if (l->swept[i].dev == st.st_dev && l->swept[i].ino == st.st_ino)
			return;
	sweep_stale_temps(dfd);
	v = realloc(l->swept, (l->nswept + 1) * sizeof(*v));
	if (!v)
		return;                 /* swept again next time: harmless */
	l->swept = v;
	l->swept[l->nswept++] = (struct swept){ st.st_dev, st.st_ino };
}

/* Make @name point at @devname.  Returns the action (CREATED, UNCHANGED, REPLACED) or -errno. */
static int link_apply(struct ap_links *l, const char *name, const char *devname, bool is_disk)
{
	_cleanup_free_ char *target = relative_target(name, devname);
	const char *leaf = NULL;
	char tmp[64];
	int dfd, r, state;

	if (!target)
		return -ENOMEM;
	dfd = open_parent(l, name, !l->dry_run, &leaf);
	if (dfd == -ENOENT && l->dry_run)
		return AP_LINK_CREATED;
	if (dfd == -EBADF && l->dry_run)
		return AP_LINK_CREATED;
	if (dfd < 0)
		return dfd;

	if (!l->dry_run)
		sweep_once(l, dfd);
	state = inspect_leaf(dfd, leaf, target);
	if (state < 0) {
		close(dfd);
		return state;
	}
	if (state == 1 || (state == 2 && is_disk && points_at_own_partition(dfd, leaf, devname))) {
		close(dfd);
		return AP_LINK_UNCHANGED;
	}
	if (l->dry_run) {
		close(dfd);
		return state == 2 ? AP_LINK_REPLACED : AP_LINK_CREATED;
	}

	/* temporary name in the same directory, then rename over */
	for (;;) {
		snprintf(tmp, sizeof(tmp), ".#asyncprobe.%ld.%lu", (long)getpid(), l->tmp_counter++);
		if (symlinkat(target, dfd, tmp) == 0)
			break;
		if (errno != EEXIST) {
			r = -errno;
			close(dfd);
			return r;
		}
	}
	if (renameat(dfd, tmp, dfd, leaf) < 0) {
		r = -errno;
		(void)unlinkat(dfd, tmp, 0);
		close(dfd);
		return r;
	}
	close(dfd);
	return state == 2 ? AP_LINK_REPLACED : AP_LINK_CREATED;
}

static int record_apply(struct ap_links *l, async_cookie_t cookie, const char *name,
			const char *devname, bool is_disk, const char *prev_owner, int *failures)
{
	char pn[512];
	int a = link_apply(l, name, devname, is_disk);

	if (a < 0) {
		ap_escape(name, pn, sizeof(pn), AP_ESCAPE_ELLIPSIS);
		if (a == -ELOOP)
			log_dev_error(devname,
				      "not creating %s/%s: a symlink or file is in its path, not following it",
				      l->dev_dir, pn);
		else if (a == -EEXIST)
			log_dev_error(devname,
				      "not creating %s/%s: something that is not a symlink is there",
				      l->dev_dir, pn);
		else
			log_dev_error(devname, "cannot create %s/%s: %s", l->dev_dir, pn,
				      strerror(-a));
		(*failures)++;
		return log_event(l, cookie, AP_LINK_FAILED, name, devname, NULL, a);
	}
	/* taken from its own disk: the link pointed at the disk */
	if (prev_owner && a == AP_LINK_CREATED)
		a = AP_LINK_REPLACED;
	return log_event(l, cookie, (enum ap_link_action)a, name, devname, prev_owner, 0);
}

int ap_links_publish(struct ap_links *l, async_cookie_t cookie, const char *devname,
		     const char *parent_devname, const struct ap_namelist *names)
{
	int failures = 0;
	char pn[512];

	if (!l || !devname || !names)
		return 0;
	pthread_mutex_lock(&l->lock);
	for (size_t i = 0; i < names->n; i++) {
		const char *name = names->names[i];
		struct claim *c;
		bool dup = false;

		for (size_t j = 0; j < i; j++)
			if (strcmp(names->names[j], name) == 0)
				dup = true;
		if (dup)
			continue;

		if (!ap_link_name_valid(name)) {
			ap_escape(name, pn, sizeof(pn), AP_ESCAPE_ELLIPSIS);
			log_dev_warning(devname, "refusing unsafe link name \"%s\"", pn);
			failures++;
			if (log_event(l, cookie, AP_LINK_REJECTED, name, devname, NULL, -EINVAL) < 0)
				goto oom;
			continue;
		}

		c = claim_find(l, name);
		if (!c) {
			c = claim_add(l, name, devname, parent_devname, cookie);
			if (!c)
				goto oom;
			if (record_apply(l, cookie, name, devname, !parent_devname, NULL, &failures) < 0)
				goto oom;
			continue;
		}
		if (strcmp(c->owner, devname) == 0)
			continue; /* published twice: nothing new */

		claimants_append(c, devname, cookie);
		if (who_add(c, devname) < 0)
			goto oom;
		if (parent_devname && !c->owner_parent && strcmp(c->owner, parent_devname) == 0) {
			/* a partition beats its own whole disk */
			_cleanup_free_ char *prev = c->owner;
			char *np = strdup(parent_devname);
			char *no = strdup(devname);

			if (!np || !no) {
				free(np);
				free(no);
				c->owner = TAKE_PTR(prev);
				goto oom;
			}
			c->owner = no;
			free(c->owner_parent);
			c->owner_parent = np;
			c->cookie = cookie;
			log_warning("%s claimed by %s; %s keeps it (a partition wins over its own disk)",
				    name, c->claimants, devname);
			if (record_apply(l, cookie, name, devname, false, prev, &failures) < 0)
				goto oom;
			continue;
		}
		log_warning("%s claimed by %s; %s keeps it (first in cookie order)",
			    name, c->claimants, c->owner);
		if (log_event(l, cookie, AP_LINK_CONFLICT, name, devname, c->owner, 0) < 0)
			goto oom;
	}
	pthread_mutex_unlock(&l->lock);
	return failures;
oom:
	pthread_mutex_unlock(&l->lock);
	log_dev_error(devname, "out of memory recording links");
	return failures + 1;
}

size_t ap_links_log_size(struct ap_links *l)
{
	size_t n;

	if (!l)
		return 0;
	pthread_mutex_lock(&l->lock);
	n = l->nlog;
	pthread_mutex_unlock(&l->lock);
	return n;
}

const struct ap_link_event *ap_links_log_get(struct ap_links *l, size_t i)
{
	const struct ap_link_event *e = NULL;

	if (!l)
		return NULL;
	pthread_mutex_lock(&l->lock);
	if (i < l->nlog)
		e = l->log[i];
	pthread_mutex_unlock(&l->lock);
	return e;
}

static int contest_seq_cmp(const void *a, const void *b)
{
	const struct claim *x = *(const struct claim *const *)a, *y = *(const struct claim *const *)b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void ap_contests_free(struct ap_contest *v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].winner);
		for (size_t k = 0; k < v[i].nlosers; k++)
			free(v[i].losers[k]);
		free(v[i].losers);
	}
	free(v);
}

int ap_links_contested(struct ap_links *l, struct ap_contest **ret, size_t *ret_n)
{
	_cleanup_free_ struct claim **cs = NULL;
	struct ap_contest *v = NULL;
	size_t n = 0, nv = 0;

	*ret = NULL;
	*ret_n = 0;
	if (!l)
		return 0;
	pthread_mutex_lock(&l->lock);
	cs = malloc((l->nclaims ? l->nclaims : 1) * sizeof(*cs));
	if (!cs)
		goto oom;
	for (size_t i = 0; i < l->nbuckets; i++)
		for (struct claim *c = l->buckets[i]; c; c = c->next)
			if (c->nwho > 1)
				cs[n++] = c;
	qsort(cs, n, sizeof(*cs), contest_seq_cmp);
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		goto oom;
	for (size_t i = 0; i < n; i++, nv++) {
		struct ap_contest *t = &v[i];

		t->name = strdup(cs[i]->name);
		t->winner = strdup(cs[i]->owner);
		t->losers = calloc(cs[i]->nwho, sizeof(*t->losers));
		if (!t->name || !t->winner || !t->losers) {
			nv++;
			goto oom;
		}
		for (size_t k = 0; k < cs[i]->nwho; k++) {
			if (strcmp(cs[i]->who[k], cs[i]->owner) == 0)
				continue;
			t->losers[t->nlosers] = strdup(cs[i]->who[k]);
			if (!t->losers[t->nlosers]) {
				nv++;
				goto oom;
			}
			t->nlosers++;
		}
	}
	pthread_mutex_unlock(&l->lock);
	*ret = v;
	*ret_n = nv;
	return 0;
oom:
	pthread_mutex_unlock(&l->lock);
	ap_contests_free(v, nv);
	return -ENOMEM;
}

const char *ap_link_action_to_string(enum ap_link_action a)
{
	switch (a) {
	case AP_LINK_CREATED:
		return "created";
	case AP_LINK_UNCHANGED:
		return "unchanged";
	case AP_LINK_REPLACED:
		return "replaced";
	case AP_LINK_CONFLICT:
		return "conflict";
	case AP_LINK_REJECTED:
		return "rejected";
	case AP_LINK_FAILED:
		return "failed";
	}
	return "unknown";
}
