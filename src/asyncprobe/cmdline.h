/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Kernel command line (cmdline.c). */
#ifndef ASYNCPROBE_CMDLINE_H
#define ASYNCPROBE_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>

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

/*
 * Parse a duration in seconds as the options take it: a non-negative
 * decimal integer, optionally with a fraction ("2.5").  Returns 0 and the
 * value in milliseconds, or -EINVAL / -ERANGE.
 */
int ap_parse_seconds_ms(const char *s, unsigned int *ret_ms);

#endif
