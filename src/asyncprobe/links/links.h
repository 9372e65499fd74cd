/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The links layer: the link registry (links.c) and the rules that make
 * udev keep asyncprobe's choice of contested links (udev-rules.c).
 */
#ifndef ASYNCPROBE_LINKS_H
#define ASYNCPROBE_LINKS_H

#include "base/base.h"
#include "probe/probe.h"

/* --------------------------------------------------------------- links.c */

/* The link registry: one per dev dir. Thread-safe. */
struct ap_links;

enum ap_link_action {
	AP_LINK_CREATED = 0,   /* a new link */
	AP_LINK_UNCHANGED = 1, /* it was already there, pointing at this device */
	AP_LINK_REPLACED = 2,  /* it pointed elsewhere (stale, or a partition took it from its disk) */
	AP_LINK_CONFLICT = 3,  /* an earlier claimant keeps it */
	AP_LINK_REJECTED = 4,  /* unsafe name, never created */
	AP_LINK_FAILED = 5,    /* a system call failed */
};

struct ap_link_event {
	async_cookie_t cookie;
	enum ap_link_action action;
	char *name;            /* relative to the dev dir */
	char *target;          /* sysname of the device, e.g. "sda1" */
	char *owner;           /* for CONFLICT: the device that keeps it */
	int error;             /* for FAILED: -errno */
};

struct ap_links *ap_links_new(const char *dev_dir, bool dry_run);
struct ap_links *ap_links_free(struct ap_links *l);

/*
 * Claim @names for the device @devname (path below the dev dir of its node,
 * "sda1"), whose whole disk is @parent_devname (NULL for a disk), and create
 * the links.  The caller has synchronized on @cookie, so claims arrive in
 * cookie order.  Returns the number of links that could not be created.
 */
int ap_links_publish(struct ap_links *l, async_cookie_t cookie, const char *devname,
		     const char *parent_devname, const struct ap_namelist *names);

/* The creation log, in publication order. */
size_t ap_links_log_size(struct ap_links *l);
const struct ap_link_event *ap_links_log_get(struct ap_links *l, size_t i);
const char *ap_link_action_to_string(enum ap_link_action a);

/* A link more than one device claimed, and who keeps it. */
struct ap_contest {
	char *name;            /* relative to the dev dir */
	char *winner;          /* devname holding it ("sda1") */
	char **losers;         /* the other claimants, in claim order */
	size_t nlosers;
};

/*
 * Every contested link so far, in the order of its first claim (rejected
 * names never make a claim).  *ret is freed with ap_contests_free().
 * Returns 0 or -ENOMEM.
 */
int ap_links_contested(struct ap_links *l, struct ap_contest **ret, size_t *ret_n);
void ap_contests_free(struct ap_contest *v, size_t n);

/* ---------------------------------------------------------- udev-rules.c */

#define AP_UDEV_RULES_DIR "/run/udev/rules.d"
#define AP_UDEV_RULES_NAME "97-asyncprobe-claims.rules"

/*
 * The text of a udev rules file that makes udev give each contested link
 * to the device asyncprobe chose (see udev-rules.c), or *ret_text = NULL
 * when no contest can be expressed.  Contests that cannot be expressed
 * safely are logged and left out.  With @sysfs ("/sys"), each device's
 * disk sequence number is read there and matched too; NULL: kernel names
 * only.  Returns the number of links kept, or -ENOMEM.
 */
int ap_udev_rules_render(const struct ap_contest *v, size_t n, const char *sysfs,
			 char **ret_text);

/*
 * Write that file to @path atomically (a directory: AP_UDEV_RULES_NAME in
 * it; else a name ending in ".rules", the only files udev reads), or
 * remove a stale one there when there is nothing to keep.  Returns the
 * number of links kept (0: no file), -EINVAL for a @path that is neither,
 * or -errno.
 */
int ap_udev_rules_write(const char *path, const struct ap_contest *v, size_t n,
			const char *sysfs);

/*
 * Can --udev-rules=@path be written: an existing directory where files can
 * be made, or a *.rules file in one ("none" and NULL are fine)?  Checked
 * as ap_check_dir_writable() does, with the lengths the temporary file's
 * name needs.  Returns 0, -EINVAL (neither a directory nor a *.rules
 * name), -EISDIR (a *.rules name that is a directory or no regular file)
 * or -errno (-ENAMETOOLONG, -ENOENT, -ENOTDIR, -EACCES, -EROFS, ...).
 */
int ap_udev_rules_check(const char *path);

/*
 * The engine's last step: the rules file for @l where cfg->udev_rules
 * (or the default: AP_UDEV_RULES_DIR in an initramfs) says; nothing with
 * cfg->no_links or cfg->dry_run.  Returns 0 or
 * -errno (logged).
 */
int ap_udev_rules_finish(struct ap_links *l, const struct ap_config *cfg);

/*
 * After a run that outlived /init's hand-over to the real system: when a
 * udevd already runs (its control socket @control exists), it read its rules before
 * the file of @path (NULL: the default) was there.  Wait until udevd will
 * look at its rules directories again, then send a "change" event (below
 * @sysfs) to every device the file names, so the links they contest go
 * where asyncprobe put them.  Returns the number of events sent (0: no
 * file, or no udevd yet, which then reads the file when it starts), or
 * -errno.
 */
int ap_udev_rules_retrigger(const char *path, const char *sysfs, const char *control);
#define AP_UDEVD_CONTROL "/run/udev/control"

#endif /* ASYNCPROBE_LINKS_H */
