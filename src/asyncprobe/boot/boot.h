/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The boot layer: the kernel command line (cmdline.c) and PID 1 or the
 * initrd unit (init.c and init-*.c behind internal.h).
 */
#ifndef ASYNCPROBE_BOOT_H
#define ASYNCPROBE_BOOT_H

#include <stdbool.h>
#include <stddef.h>

#include "base/base.h"

/* ------------------------------------------------------------- cmdline.c */

/* Kernel command line (cmdline.c). */

/*
 * Read the kernel command line (/proc/cmdline, or the file named by the
 * environment variable ASYNCPROBE_CMDLINE for tests).  Returns 0 or -errno;
 * *ret is malloc'ed.
 */
int ap_cmdline_read(char **ret);

/*
 * Look @key up in @cmdline as the kernel does (last occurrence wins,
 * double quotes group).  Returns true when present; *ret_value (if not
 * NULL) gets a malloc'ed copy of the value after '=', or NULL for a bare
 * flag.
 *
 * Splitting follows the kernel's next_arg(): words are separated by
 * whitespace outside double quotes; a quote at the start of the word or
 * at the start of the value is removed together with a quote that ends
 * the word; other quotes only group.  In keys '-' and '_' are the same
 * character, as in kernel parameter names.  A word "--" ends the kernel
 * parameters (what follows is for init).  When @key is present several
 * times the last occurrence wins.
 */
bool ap_cmdline_get(const char *cmdline, const char *key, char **ret_value);

/*
 * Walk the words of @cmdline: @cb is called with the key (up to the first
 * '=') and value (NULL for a bare word), both NUL-terminated and unquoted,
 * in order; a negative return from @cb stops the walk and is returned.
 * Words after "--" are not visited.  Returns 0, a negative @cb result or
 * -ENOMEM.
 */
int ap_cmdline_foreach(const char *cmdline,
		       int (*cb)(const char *key, const char *value, void *userdata),
		       void *userdata);

/*
 * Whether @cmdline turns asyncprobe off for this boot: asyncprobe.enable=
 * with a false value (0, n, no, false, off, in any case; the last
 * occurrence wins, as for every option).  A bare asyncprobe.enable, a
 * true value or one not understood leave it on.  Only --init outside PID
 * 1 (the systemd unit, the initramfs-tools script, dracut's hook) obeys
 * it: it exits 0 at once.  As PID 1 asyncprobe is the init and cannot
 * stand aside; it logs that it ignores it.
 */
bool ap_cmdline_disabled(const char *cmdline);

/* ------------------------------------------------------------ root= */

enum ap_root_kind {
	AP_ROOT_NONE = 0,      /* no root= */
	AP_ROOT_UUID,          /* UUID=... (filesystem UUID) */
	AP_ROOT_LABEL,         /* LABEL=... */
	AP_ROOT_PARTUUID,      /* PARTUUID=... */
	AP_ROOT_PARTLABEL,     /* PARTLABEL=... */
	AP_ROOT_PATH,          /* /dev/NAME, including /dev/disk/by-... links */
	AP_ROOT_DEVNUM,        /* MAJOR:MINOR, or a hexadecimal device number */
};

struct ap_root_spec {
	enum ap_root_kind kind;
	char *value;           /* the part after "UUID=" etc., or the path below /dev */
	unsigned int major, minor; /* AP_ROOT_DEVNUM */
};

/*
 * Parse a root= value.  Returns 0, -EINVAL for something that is not a
 * root specification (with a message in *ret_error, malloc'ed, when
 * @ret_error is not NULL), -EOPNOTSUPP for forms the kernel knows but
 * asyncprobe does not handle (PARTUUID=.../PARTNROFF=N, /dev/nfs, ...).
 */
int ap_root_spec_parse(const char *s, struct ap_root_spec *ret, char **ret_error);
void ap_root_spec_clear(struct ap_root_spec *r);

/*
 * Does the root= value @s name a device that userspace assembles from
 * other block devices: /dev/mapper/NAME or /dev/dm-N (LVM, dm-crypt,
 * multipath), /dev/mdN or /dev/md/NAME (md RAID)?  asyncprobe never makes
 * those: ap_root_spec_parse() refuses them with -EOPNOTSUPP, and in a
 * generator's initramfs (--init outside PID 1) asyncprobe probes every
 * disk without waiting for such a root, which the generator's own tools
 * (lvm2, cryptsetup, mdadm) then set up.
 */
bool ap_root_is_stacked(const char *s);

/*
 * The path below the dev dir that names the root device once the engine
 * (or the kernel, for /dev/NAME) has created it:
 *   UUID=x      -> disk/by-uuid/<x encoded as blkid_encode_string() does>
 *   LABEL=x     -> disk/by-label/<encoded x>
 *   PARTUUID=x  -> disk/by-partuuid/<x in lowercase>
 *   PARTLABEL=x -> disk/by-partlabel/<encoded x>
 *   /dev/foo    -> foo
 *   M:m         -> block/M:m (a link asyncprobe does not make: the caller
 *                  resolves it through /sys/dev/block)
 * The UUID keeps the case it was given in (vfat UUIDs are upper case).
 * Returns 0, -EINVAL (no root, or a name that would leave its directory)
 * or -ENOMEM; *ret is malloc'ed.
 */
int ap_root_spec_devpath(const struct ap_root_spec *r, char **ret);

/* A readable form for messages: "UUID=1234 (disk/by-uuid/1234)". */
const char *ap_root_kind_to_string(enum ap_root_kind k);

/* ------------------------------------------------- boot parameters */

#define AP_BOOT_ROOT_TIMEOUT_MS_DEFAULT 30000U

struct ap_bootparams {
	char *root;                /* root=, raw */
	struct ap_root_spec root_spec;
	int root_error;            /* 0, or the ap_root_spec_parse() error */
	char *root_error_msg;
	char *rootfstype;          /* rootfstype= (may be a comma-separated list) */
	char *rootflags;           /* rootflags= */
	bool read_write;           /* rw (the last of ro and rw wins; default ro) */
	char *init;                /* init= */
	bool rootwait;             /* rootwait, or rootwait=SEC */
	unsigned int rootwait_ms;  /* rootwait=SEC; 0 = forever */
	unsigned int rootdelay_s;  /* rootdelay= */
	bool panic_set;
	int panic_s;               /* panic=: >0 reboot after N s, <0 at once, 0 never */
	char **blacklist;          /* modprobe.blacklist=, every occurrence, split at ',' */
	size_t n_blacklist;
	char **modules;            /* asyncprobe.modules= and rd.driver.pre=, every
				    * occurrence, split at ','; loaded before the run */
	size_t n_modules;
	bool quiet;                /* quiet */

	/* asyncprobe.* (and the bare "fastboot") */
	int fastboot;              /* -1 unset, 0, 1 */
	int timeout_ms;            /* asyncprobe.timeout=SEC, -1 unset */
	unsigned int root_timeout_ms; /* asyncprobe.root_timeout=SEC, 0 = forever */
	int trace;                 /* asyncprobe.trace=0/1, -1 unset */
	int threads;               /* asyncprobe.threads=N, -1 unset */
	int verbose;               /* asyncprobe.verbose=N, asyncprobe.debug -> 2; -1 unset */
	int shell;                 /* asyncprobe.shell=0/1, -1 unset */
	int udev_rules;            /* asyncprobe.udev_rules=0/1, -1 unset */
	int wait_all;              /* asyncprobe.wait_all=0/1, -1 unset: /init waits
				    * for the whole run, not only the root */
	char *root_path;           /* asyncprobe.root_path= (may be ""), NULL unset */
	int enable;                /* asyncprobe.enable=0/1, -1 unset: 0 turns --init
				    * outside PID 1 off (ap_cmdline_disabled()) */

	/* Words that were not understood; kept for the log ("ignoring ..."). */
	unsigned int n_invalid;
};

/*
 * Parse the parameters asyncprobe cares about.  Unknown words are ignored
 * (they belong to the kernel or to init); known ones with a bad value are
 * logged as warnings and ignored, and counted in n_invalid.  root= errors
 * are kept in root_error/root_error_msg rather than failing the whole
 * parse.  Returns 0 or -ENOMEM.
 */
int ap_bootparams_parse(const char *cmdline, struct ap_bootparams *ret);
void ap_bootparams_clear(struct ap_bootparams *p);

struct ap_config;

/*
 * What the kernel command line @p says about a run, into @cfg: fastboot
 * (where the command line of asyncprobe left it unset), modprobe.blacklist=
 * and asyncprobe.root_path= (which wins over --root-path).  @cfg then
 * points into @p, which must outlive the run.
 */
void ap_config_apply_kernel(struct ap_config *cfg, const struct ap_bootparams *p);

/* ---------------------------------------------------------------- init.c */

/* PID 1 and initrd-unit mode (init*.c; init.c has the theory of operation). */

/*
 * Run as the initramfs's /init: mount the API filesystems, read the kernel
 * command line into @cfg, run the engine, wait for the root device, mount
 * it, switch root and exec init.  Returns only on failure outside PID 1;
 * as PID 1 it never returns.  @cfg holds the command-line options.
 *
 * Outside PID 1 (--init given by hand, or ExecStart= of asyncprobe.service
 * in a systemd initrd) nothing is mounted and root is not switched: it
 * waits for the root device of the kernel command line, reports READY=1 to
 * systemd once its link exists, finishes the run and returns the exit
 * status (AP_EXIT_DEGRADED when the root device did not appear).
 *
 * Outside PID 1 the caller has checked what the options name
 * (ap_config_check(), ap_udev_rules_check()) and asyncprobe.enable=
 * (ap_cmdline_disabled()) before.  As PID 1 those checks are made here,
 * once /dev, /run and the run directory exist: a bad value is logged and
 * its default used instead, and asyncprobe.enable=0 is logged as ignored.
 */
struct ap_config;

int ap_init_main(struct ap_config *cfg, int argc, char **argv);

/* ------------------------------------------ pieces of PID 1, for tests */

/*
 * Remove everything below the directory @dirfd (not @dirfd itself),
 * without crossing into other mounts: a directory whose st_dev differs, or
 * that statx() reports as a mount root, is left alone with its contents.
 * Symbolic links are removed, never followed.  Returns the number of
 * entries that could not be removed, or -errno if @dirfd cannot be read.
 */
int ap_init_remove_tree(int dirfd);

/*
 * Find the init to exec in the root file system @root (a directory):
 * @requested (init=) if given and executable there, else the first of
 * /sbin/init, /etc/init, /bin/init, /bin/sh.  Paths, symbolic links
 * included, are resolved inside @root.  Returns 0 and the path (as seen
 * from inside @root) in *ret, or -ENOENT.
 */
int ap_init_find_init(const char *root, const char *requested, char **ret);

/*
 * Split mount options (rootflags=) into MS_* flags, applied on top of
 * *flags, and the file-system-specific rest in *ret_data (malloc'ed, NULL
 * when empty).  Returns 0 or -ENOMEM.
 */
int ap_init_mount_options(const char *options, unsigned long *flags, char **ret_data);

/* Whether @path is the root of a mount (statx, or st_dev against ..). */
bool ap_init_is_mount_point(const char *path);

#endif /* ASYNCPROBE_BOOT_H */
