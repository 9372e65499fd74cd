/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Small shared helpers (see base.h): monotonic time and milliseconds,
 * string prefixes, string copies and arrays, writing a whole buffer,
 * directories, peak RSS, output files that report failed writes.
 * Each job has one helper here instead of a copy per file.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"

uint64_t ap_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

double ap_ms_between(uint64_t t0, uint64_t t)
{
	return t >= t0 ? (double)(t - t0) / 1e6 : 0.0;
}

unsigned int ap_ms_since(uint64_t t0)
{
	uint64_t now = ap_now_ns();

	return now >= t0 ? (unsigned int)((now - t0) / 1000000ULL) : 0;
}

bool ap_startswith(const char *s, const char *prefix)
{
	return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

bool ap_streq_ptr(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

char *ap_strdup_or_null(const char *s, int *err)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d && err)
		*err = -ENOMEM;
	return d;
}

void ap_strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

bool ap_dir_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool ap_read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	bool ok;

	buf[0] = '\0';
	if (!f)
		return false;
	ok = fgets(buf, (int)size, f) != NULL;
	fclose(f);
	if (!ok)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

bool ap_read_attr(const char *dir, const char *name, char *buf, size_t size)
{
	char path[PATH_MAX];

	buf[0] = '\0';
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return false;
	return ap_read_line(path, buf, size);
}

bool ap_link_name(const char *dir, const char *name, char *buf, size_t size)
{
	char path[PATH_MAX], target[PATH_MAX];
	const char *base;
	ssize_t k;

	buf[0] = '\0';
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return false;
	k = readlink(path, target, sizeof(target) - 1);
	if (k <= 0)
		return false;
	target[k] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (!*base || strlen(base) >= size)
		return false;
	memcpy(buf, base, strlen(base) + 1);
	return true;
}

long ap_peak_rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	long kib = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

FILE *ap_out_open(const char *path, int *ret_err)
{
	FILE *f;

	if (strcmp(path, "-") == 0)
		return stdout;
	f = fopen(path, "we");
	if (!f)
		*ret_err = -errno;
	return f;
}

int ap_check_output_file(const char *path)
{
	struct stat st;
	int fd;

	if (strcmp(path, "-") == 0)
		return 0;
	if (!*path)
		return -ENOENT;
	if (strlen(path) >= PATH_MAX)
		return -ENAMETOOLONG;
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		/* opening a FIFO or a device could block or do something */
		if (!S_ISREG(st.st_mode))
			return access(path, W_OK) < 0 ? -errno : 0;
		fd = open(path, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		close(fd);
		return 0;
	}
	if (errno != ENOENT)
		return -errno;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC, 0600);
	if (fd < 0)
		/* made meanwhile, or a dangling symbolic link: fopen() follows it */
		return errno == EEXIST ? 0 : -errno;
	close(fd);
	(void)unlink(path);
	return 0;
}

int ap_check_dir_writable(const char *dir)
{
	char probe[PATH_MAX];
	int n;

	n = snprintf(probe, sizeof(probe), "%s/.asyncprobe-check.XXXXXX", dir);
	if (n < 0 || (size_t)n >= sizeof(probe))
		return -ENAMETOOLONG;
	if (!mkdtemp(probe))
		return -errno;
	(void)rmdir(probe);
	return 0;
}

int ap_mkdir_mode(const char *path, mode_t mode)
{
	int fd, r = 0;

	if (mkdir(path, mode) < 0)
		return -errno;
	/* the umask took bits away; never follow a link put there meanwhile */
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, mode) < 0)
		r = -errno;
	close(fd);
	return r;
}

int ap_out_close(FILE *f)
{
	int r = 0;

	if (fflush(f) != 0)
		r = -errno;
	else if (ferror(f))
		r = -EIO;       /* an earlier write failed */
	if (f != stdout && fclose(f) != 0 && r == 0)
		r = -errno;
	return r;
}

int ap_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	bool sock = true;

	while (len) {
		ssize_t n = sock ? send(fd, p, len, MSG_NOSIGNAL) : write(fd, p, len);

		if (n < 0 && sock && errno == ENOTSOCK) {
			sock = false;
			continue;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

uint64_t ap_hash_string(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

int ap_parse_seconds_ms(const char *s, unsigned int *ret_ms)
{
	unsigned long long ms = 0;
	const char *p = s;
	int frac = 0;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		ms = ms * 10 + (unsigned)(*p - '0');
		if (ms > UINT_MAX / 1000)
			return -ERANGE;
	}
	ms *= 1000;
	if (*p == '.') {
		unsigned int scale = 100;

		p++;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		for (; isdigit((unsigned char)*p); p++, frac++) {
			ms += (unsigned)(*p - '0') * scale;
			scale /= 10;
		}
	}
	if (*p)
		return -EINVAL;
	if (ms > UINT_MAX)
		return -ERANGE;
	*ret_ms = (unsigned int)ms;
	return 0;
}

bool ap_fs_is_initramfs(int dirfd)
{
	struct statfs sfs;

	return fstatfs(dirfd, &sfs) == 0 &&
	       ((unsigned long)sfs.f_type == RAMFS_MAGIC || (unsigned long)sfs.f_type == TMPFS_MAGIC);
}

bool ap_in_initramfs(void)
{
	bool r;
	int fd;

	if (access("/etc/initrd-release", F_OK) == 0)
		return true;
	if (access("/init", X_OK) < 0)
		return false;
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return false;
	r = ap_fs_is_initramfs(fd);
	close(fd);
	return r;
}

static bool escape_byte(unsigned char c, bool last, unsigned int flags)
{
	if (flags & AP_ESCAPE_UDEV)
		return c <= 0x20 || c >= 0x7f || (c == '\\' && last);
	return c < 0x20 || c == 0x7f;
}

char *ap_escape(const char *s, char *buf, size_t size, unsigned int flags)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (; *s && o + 5 < size; s++) {
		unsigned char c = (unsigned char)*s;

		if (escape_byte(c, !s[1], flags)) {
			buf[o++] = '\\';
			buf[o++] = 'x';
			buf[o++] = hex[c >> 4];
			buf[o++] = hex[c & 0xf];
		} else {
			buf[o++] = (char)c;
		}
	}
	if (*s && (flags & AP_ESCAPE_ELLIPSIS) && o + 4 < size) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
	return buf;
}

void ap_escape_file(FILE *f, const char *s, unsigned int flags)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (escape_byte(c, !s[1], flags))
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
}
