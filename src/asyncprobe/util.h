/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Small helpers every part of asyncprobe uses (util.c): time, string
 * prefixes, copying a string that may be NULL, freeing an array of
 * strings, whether a directory exists, the process's peak memory, and
 * opening and closing an output file ("-" is stdout) so that a failed
 * write is never silent.
 */
#ifndef ASYNCPROBE_UTIL_H
#define ASYNCPROBE_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

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
 * Flush and close what ap_out_open() gave (stdout is flushed, not
 * closed).  0, or -errno when a write, the flush or the close failed
 * (-EIO for an earlier write whose errno is gone).
 */
int ap_out_close(FILE *f);

#endif
