/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The base layer: what every other layer of asyncprobe may use.  Each
 * section names the file of base/ that implements it.
 */
#ifndef ASYNCPROBE_BASE_H
#define ASYNCPROBE_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#include "async.h"

/* ------------------------------------------------------- config.c, log.c */

struct udev;
struct udev_device;

/* Exit status, documented in asyncprobe(8). */
enum {
	AP_EXIT_OK = 0,          /* everything found was probed and linked */
	AP_EXIT_DEGRADED = 1,    /* ran to the end, but a module, device or link failed */
	AP_EXIT_CONFIG = 2,      /* bad configuration (module tree, command line) */
	AP_EXIT_USAGE = 100,     /* bad option */
	AP_EXIT_SYSTEM = 111,    /* a system call failed before work could start */
};

/* ---------------------------------------------------------------- config */

/*
 * Worker threads unless --max-threads or asyncprobe.threads= say otherwise.
 * Peak memory grows with the calls in flight (each holds a struct udev,
 * libudev devices and a libblkid probe with its read buffers, on a thread
 * stack of its own): with libasync's default of 256, 256 scsi_debug disks
 * peaked at 19.7 MiB, with 16 at 8.9 MiB.  udevd itself runs 8 + 2 x CPUs
 * workers.  The price: at most 16 probes wait on slow disks at once.
 */
#define AP_DEFAULT_MAX_THREADS 16u
/* One malloc arena: glibc makes one per thread (up to 8 x CPUs). */
#define AP_MALLOC_ARENA_MAX 1

/*
 * The settings of one run: main() (cli.c) parses the command line into
 * its own value and adds the kernel command line's (ap_config_apply_kernel()
 * in cmdline.c; init through init-bootparams.c, which also reads the root
 * path the image was made for), and the engine keeps a copy
 * (ap_engine_new()).  No global holds it, and the engine reads no command
 * line itself.
 */
struct ap_config {
	const char *dev_dir;            /* "/dev" */
	const char *basedir;            /* -b: root holding lib/modules/KVER, NULL = / */
	const char *modules_dir;        /* --modules-dir: explicit lib/modules/KVER */
	const char *kernel_version;     /* -S: KVER below BASEDIR, NULL = running kernel */
	const char *modprobe_config;    /* -C: modprobe.d file or directory, NULL = system's */
	int fastboot;                   /* -1 unset (kernel command line decides), 0, 1 */
	bool dry_run;
	bool all_modules;
	/*
	 * --include-loop[=NAMES]: which loop devices are probed (tests, image
	 * files): NULL none, "" every one, else a comma-separated list of
	 * loop device names ("loop3,loop7"); see ap_loop_included().
	 */
	const char *include_loop;
	bool no_modules;                /* skip driver loading */
	bool no_links;                  /* probe, do not create links */
	unsigned int device_timeout_ms; /* per controller or device wait */
	unsigned int max_threads;       /* 0 = AP_DEFAULT_MAX_THREADS */
	const char *json_file;          /* --json[=FILE], "-" = stdout */
	const char *trace_file;
	const char *plot_file;
	const char *udev_rules;         /* --udev-rules: file or dir, "none"; NULL = default */
	int verbose;                    /* 0 warnings, 1 info (-v), 2 debug (-vv) */
	bool quiet;
	int log_target;                 /* enum ap_log_target */
	bool progress;                  /* one-line progress display on a tty */
	bool init_mode;                 /* --init or PID 1 */
	const char *root_path;          /* --root-path: the root's by-path name, "none", NULL */
	const char *root_path_source;   /* where root_path came from (the log), NULL: --root-path */
	char *const *blacklist;         /* the kernel command line's modprobe.blacklist= names */
	size_t n_blacklist;
};

void ap_config_defaults(struct ap_config *cfg);

/*
 * Before anything is probed, in every mode: what the options name must be
 * usable.  --dev-dir an existing directory where links can be made (unless
 * dry_run or no_links); the files of --json, --trace and --plot writable
 * as ap_check_output_file() checks (--udev-rules: ap_udev_rules_check() of
 * the links layer).
 *
 * !@pid1: the first failure is printed on stderr, one line naming the
 * option and the path, and AP_EXIT_CONFIG is returned (0 when all is well).
 * @pid1: a bad value must not stop the boot: each one is logged as an error
 * and replaced by its default (--dev-dir /dev; no --json, --trace or
 * --plot of the command line, so init writes its own into its run
 * directory).  Returns how many were replaced.
 */
int ap_config_check(struct ap_config *cfg, bool pid1);

/* ------------------------------------------------------------------- log */

enum ap_log_target {
	AP_LOG_AUTO = 0,    /* kmsg as PID 1 or in an initramfs, else stderr */
	AP_LOG_STDERR = 1,
	AP_LOG_KMSG = 2,
};

/* syslog priorities */
#define AP_LOG_ERR 3
#define AP_LOG_WARNING 4
#define AP_LOG_NOTICE 5
#define AP_LOG_INFO 6
#define AP_LOG_DEBUG 7

void ap_log_open(int target, int verbose);
/* AP_LOG_AUTO made definite: AP_LOG_KMSG as PID 1 or in an initramfs, else AP_LOG_STDERR. */
int ap_log_resolve_target(int target);
void ap_log_close(void);
void ap_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ap_logv(int prio, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/*
 * A message about the device @dev (its sysname, syspath or label; NULL
 * is "?"): "DEV: message", the form every device message takes.
 */
void ap_log_dev(int prio, const char *dev, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool ap_log_enabled(int prio);
/*
 * The one-line progress display on stderr (a terminal): @line replaces it,
 * NULL or "" removes it.  Messages logged meanwhile appear above it.
 */
void ap_log_progress(const char *line);
/*
 * True when @fd is a terminal someone watches: not /dev/console, not a
 * serial line (ttyS*) and not a terminal the kernel has as its console
 * (@console_active: the /sys/class/tty/console/active file to read).
 */
bool ap_log_is_user_terminal(int fd, const char *console_active);

#define log_error(...)   ap_log(AP_LOG_ERR, __VA_ARGS__)
#define log_warning(...) ap_log(AP_LOG_WARNING, __VA_ARGS__)
#define log_notice(...)  ap_log(AP_LOG_NOTICE, __VA_ARGS__)
#define log_info(...)    ap_log(AP_LOG_INFO, __VA_ARGS__)
#define log_debug(...)   ap_log(AP_LOG_DEBUG, __VA_ARGS__)

#define log_dev_error(dev, ...)   ap_log_dev(AP_LOG_ERR, dev, __VA_ARGS__)
#define log_dev_warning(dev, ...) ap_log_dev(AP_LOG_WARNING, dev, __VA_ARGS__)
#define log_dev_notice(dev, ...)  ap_log_dev(AP_LOG_NOTICE, dev, __VA_ARGS__)
#define log_dev_info(dev, ...)    ap_log_dev(AP_LOG_INFO, dev, __VA_ARGS__)
#define log_dev_debug(dev, ...)   ap_log_dev(AP_LOG_DEBUG, dev, __VA_ARGS__)

/* --------------------------------------------------------------- cleanup */

static inline void ap_freep(void *p) { free(*(void **)p); }
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(ap_freep)
#define TAKE_PTR(p) ({ __typeof__(p) _tp = (p); (p) = NULL; _tp; })

/* ---------------------------------------------------------------- util.c */

/*
 * Small helpers every part of asyncprobe uses (util.c): time, string
 * prefixes, copying a string that may be NULL, freeing an array of
 * strings, whether a directory exists, the process's peak memory, and
 * opening and closing an output file ("-" is stdout) so that a failed
 * write is never silent.
 */

/* Monotonic time in nanoseconds (CLOCK_MONOTONIC). */
uint64_t ap_now_ns(void);

/* Milliseconds from @t0 to @t (ap_now_ns() times), 0 when @t is earlier. */
double ap_ms_between(uint64_t t0, uint64_t t);

/* Whole milliseconds from @t0 until now. */
unsigned int ap_ms_since(uint64_t t0);

/* True if @s (may be NULL) begins with @prefix. */
bool ap_startswith(const char *s, const char *prefix);

/* True if @a and @b are both non-NULL and equal. */
bool ap_streq_ptr(const char *a, const char *b);

/*
 * A copy of @s, or NULL when @s is NULL.  When the copy fails, NULL and,
 * if @err is not NULL, *err = -ENOMEM (so a series of copies checks once).
 */
char *ap_strdup_or_null(const char *s, int *err);

/*
 * Write all @len bytes of @buf to @fd, again after EINTR and short
 * writes; on a socket with MSG_NOSIGNAL (a peer gone is -EPIPE, not
 * SIGPIPE).  0 or -errno.
 */
int ap_write_all(int fd, const void *buf, size_t len);

/* Free the @n strings of @v (NULL entries allowed), then @v. */
void ap_strv_free(char **v, size_t n);

/* Whether @path is a directory (stat(), links followed). */
bool ap_dir_exists(const char *path);
/*
 * The first line of the file @path (a sysfs attribute) into @buf, without
 * its newline; false, and @buf empty, when it cannot be read.
 */
bool ap_read_line(const char *path, char *buf, size_t size);
/* The same for the attribute @name of the device at @dir. */
bool ap_read_attr(const char *dir, const char *name, char *buf, size_t size);
/*
 * The last component of the target of the link @dir/@name into @buf (a
 * device's "driver", a driver's "module"): the driver's or module's name,
 * read without libudev; false, and @buf empty, when there is none.
 */
bool ap_link_name(const char *dir, const char *name, char *buf, size_t size);

/*
 * The process's peak resident set so far in KiB: VmHWM of
 * /proc/self/status, what the README, the manifest's
 * summary.time.peak_rss_kib, the trace's otherData.peak_rss_kib and the
 * benchmarks mean by peak RSS.  -1 when /proc is not there.
 */
long ap_peak_rss_kib(void);

/*
 * An output file: "-" is stdout, anything else is created or truncated.
 * NULL with *ret_err = -errno on failure.
 */
FILE *ap_out_open(const char *path, int *ret_err);

/*
 * Whether ap_out_open(@path) could open the file now, checked without
 * changing anything: a file that exists is opened for writing and closed
 * (not truncated; a FIFO, a device or a socket is only checked with
 * access(W_OK)), a missing one is created and removed at once.  0, or the
 * -errno open() gives: -ENAMETOOLONG, -ENOENT, -ENOTDIR, -EACCES, -EROFS,
 * -EISDIR for a directory, ...  "-" (stdout) is always 0.
 */
int ap_check_output_file(const char *path);

/*
 * Whether entries can be created in the directory @dir: an empty
 * directory with a unique name is made there and removed at once, which
 * also catches what access(W_OK) does not (root on /proc or sysfs).  0 or
 * -errno.
 */
int ap_check_dir_writable(const char *dir);

/*
 * mkdir(@path, @mode), and a new directory gets exactly @mode whatever
 * the umask (which is the process's, shared by every thread, so it is not
 * touched).  0, or -errno (-EEXIST when @path exists).
 */
int ap_mkdir_mode(const char *path, mode_t mode);

/*
 * Flush and close what ap_out_open() gave (stdout is flushed, not
 * closed).  0, or -errno when a write, the flush or the close failed
 * (-EIO for an earlier write whose errno is gone).
 */
int ap_out_close(FILE *f);

/* FNV-1a, 64 bits, of the string @s: the hash of every table keyed by a name or a path. */
uint64_t ap_hash_string(const char *s);

/*
 * "1", "0.25", "10.5": seconds as a plain decimal, exactly, into
 * milliseconds (digits past the third decimal are dropped).  -EINVAL for
 * anything else (signs, exponents, a missing leading digit), -ERANGE above
 * UINT_MAX ms.  The kernel command line's timeouts and the program's
 * options read seconds with it.
 */
int ap_parse_seconds_ms(const char *s, unsigned int *ret_ms);

/*
 * Whether the file system of the directory @dirfd is ramfs or tmpfs, what
 * the kernel unpacks an initramfs into.
 */
bool ap_fs_is_initramfs(int dirfd);

/*
 * Whether this process runs inside an initramfs: /etc/initrd-release is
 * there (systemd's marker, which dracut's and our images carry), or / is
 * a ramfs or tmpfs with an executable /init (initramfs-tools, busybox
 * images).
 */
bool ap_in_initramfs(void);

/* How ap_escape() renders bytes: */
enum {
	AP_ESCAPE_CONTROLS = 0,      /* control bytes (0x01-0x1f, 0x7f) as \xNN: messages */
	AP_ESCAPE_UDEV = 1 << 0,     /* every byte outside '!'..'~', and a final '\', as \xNN,
				      * as udev encodes names: comments in rules files */
	AP_ESCAPE_ELLIPSIS = 1 << 1, /* "..." where the output had to be cut short */
};

/*
 * @s, untrusted bytes (a label, a link name), made printable into @buf of
 * @size bytes (at least 6) as @flags say, NUL-terminated; cut short, never
 * in the middle of an escape, when it does not fit.  Returns @buf.
 */
char *ap_escape(const char *s, char *buf, size_t size, unsigned int flags);

/* The same into @f, never cut short. */
void ap_escape_file(FILE *f, const char *s, unsigned int flags);

/* ---------------------------------------------------------------- utf8.c */

/*
 * The one UTF-8 decoder (utf8.c), for the JSON and XML writers and for
 * udev's replace step.
 */

/*
 * The UTF-8 sequence at @s: its length (1-4) with the code point in
 * *ret_cp, or 0 when the byte at @s does not start a valid sequence
 * (shortest form only, no UTF-16 surrogates, nothing above U+10FFFF; a
 * sequence cut short by the terminating NUL is invalid).  An ASCII byte,
 * NUL included, is a sequence of length 1.
 */
size_t ap_utf8_decode(const char *s, uint32_t *ret_cp);

/* U+FDD0..U+FDEF and every U+xxFFFE, U+xxFFFF: valid, but not for interchange. */
bool ap_unichar_is_noncharacter(uint32_t cp);

/* ---------------------------------------------------------------- json.c */

/*
 * The small JSON writer (json.c) behind the manifest (manifest.c) and the
 * Chrome trace (trace-chrome.c): string literals straight to a FILE; the
 * numbers are plain printf formats beside them.
 *
 * Strings.  Valid UTF-8 is copied.  '"' and '\' are escaped, control
 * characters (U+0000-U+001F) and DEL become \u00XX.  A byte that is not
 * part of valid UTF-8 (a label in Latin-1, a truncated sequence) cannot be
 * written as itself, since JSON text is Unicode; it becomes the four
 * characters \xNN (in the file: "\\xNN"), the spelling udev and libblkid
 * use for such bytes in link names, so a reader sees which byte it was and
 * no byte is passed off as the character U+00NN.
 */

/* The inside of a string literal for @s (nothing for NULL). */
void ap_json_chars(FILE *f, const char *s);

/* @s as a string literal, or null for NULL. */
void ap_json_string(FILE *f, const char *s);

/* --------------------------------------------------------- udev-string.c */

/* udev's string cleaning and encoding (udev-string.c): a leaf, it calls no other asyncprobe file but utf8.c. */

/*
 * udev's whitespace step (udev_replace_whitespace): copy at most @len
 * bytes of @str (stopping at NUL) to @to, dropping leading " \t\n\r" and
 * trailing whitespace and turning each inner run of isspace() bytes into
 * one '_'.  @to needs @len + 1 bytes; may equal @str.  Returns the length.
 */
size_t ap_udev_replace_whitespace(const char *str, char *to, size_t len);

/*
 * udev's replace step (udev_replace_chars): in place, every byte outside
 * [0-9A-Za-z#+-.:=@_], @allow, a "\x" pair or a valid multi-byte UTF-8
 * sequence becomes '_' (whitespace becomes ' ' if @allow has a space).
 * Returns the number of bytes replaced.
 */
size_t ap_udev_replace_chars(char *str, const char *allow);

/* Length (1-6) of the valid UTF-8 sequence at @s by udev's rules, or -EINVAL. */
int ap_utf8_encoded_valid_unichar(const char *s);

/*
 * A $attr{} value as udev substitutes it: trailing whitespace removed, then
 * the replace step with " /$%?," also allowed.  Returns a new string or NULL.
 */
char *ap_udev_attr_clean(const char *value);

/*
 * blkid_encode_string() into a 256-byte buffer as udev's blkid builtin
 * does (ID_FS_UUID_ENC, ID_FS_LABEL_ENC, ID_PART_ENTRY_NAME).  On overflow
 * libblkid stops early; like udev, whatever the buffer then holds is used:
 * for labels and UUIDs that is the blkid_safe_string() text udev wrote
 * there first (@after_safe = true), otherwise the zeroed remainder.
 * Returns a new string or NULL.
 */
char *ap_blkid_encode(const char *raw, bool after_safe);

/* -------------------------------------------------------------- notify.c */

/* sd_notify (notify.c): readiness and status for systemd. */

/*
 * Send @state ("READY=1", "STATUS=...") to the service manager named by
 * $NOTIFY_SOCKET: through libsystemd's sd_notify() where the build has it,
 * else with ap_notify_socket().  Returns 1 when sent, 0 when not started by
 * systemd (no NOTIFY_SOCKET), or -errno.
 */
int ap_notify(const char *state);
int ap_notifyf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The notification protocol by hand: one datagram holding @state sent to
 * the AF_UNIX socket @socket_path, a file system path ("/run/...") or an
 * abstract name written with a leading '@'.  Returns 1 or -errno.
 */
int ap_notify_socket(const char *socket_path, const char *state);

#endif /* ASYNCPROBE_BASE_H */
