/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel command line: splitting it into words the way the kernel's
 * next_arg() does, looking parameters up, and turning the boot parameters
 * asyncprobe cares about (root=, rootwait, panic=, asyncprobe.* ...) into
 * a struct.  Nothing here touches the system except ap_cmdline_read().
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <blkid.h>

#include "base/base.h"
#include "boot/boot.h"

/* The kernel's isspace() for the command line. */
static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

int ap_cmdline_read(char **ret)
{
	const char *path = getenv("ASYNCPROBE_CMDLINE");
	size_t len = 0, allocated = 4096;
	char *buf;
	int fd;

	if (!path || !*path)
		path = "/proc/cmdline";
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	buf = malloc(allocated);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t n;

		if (len + 1 >= allocated) {
			char *b = realloc(buf, allocated * 2);

			if (!b) {
				free(buf);
				close(fd);
				return -ENOMEM;
			}
			buf = b;
			allocated *= 2;
		}
		n = read(fd, buf + len, allocated - len - 1);
		if (n < 0) {
			int r = -errno;

			if (r == -EINTR)
				continue;
			free(buf);
			close(fd);
			return r;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	/* A NUL in the file ends the command line, as it would in the kernel. */
	buf[len] = '\0';
	len = strlen(buf);
	while (len > 0 && is_space(buf[len - 1]))
		buf[--len] = '\0';
	*ret = buf;
	return 0;
}

/*
 * One word, as next_arg() in the kernel's kernel/params.c splits it.
 * @p points at a non-space character; the word is copied into @buf
 * (at least as large as the rest of the line) and the position after it
 * is returned.  *key gets the word up to the first '=' (at a position
 * other than 0), *value what follows, or NULL.
 */
static const char *split_word(const char *p, char *buf, char **key, char **value)
{
	bool quoted = false, in_quote = false;
	size_t i = 0, equals = 0;
	char *v;

	if (*p == '"') {
		p++;
		quoted = in_quote = true;
	}
	for (; *p; p++) {
		if (!in_quote && is_space(*p))
			break;
		if (equals == 0 && *p == '=')
			equals = i;
		if (*p == '"')
			in_quote = !in_quote;
		buf[i++] = *p;
	}
	buf[i] = '\0';

	*key = buf;
	*value = NULL;
	if (equals == 0) {
		if (quoted && i > 0 && buf[i - 1] == '"')
			buf[i - 1] = '\0';
		return p;
	}
	buf[equals] = '\0';
	v = buf + equals + 1;
	if (*v == '"') {
		v++;
		if (i > equals + 1 && buf[i - 1] == '"' && buf + i - 1 >= v)
			buf[i - 1] = '\0';
	} else if (quoted && buf[i - 1] == '"') {
		buf[i - 1] = '\0';
	}
	*value = v;
	return p;
}

int ap_cmdline_foreach(const char *cmdline,
		       int (*cb)(const char *key, const char *value, void *userdata),
		       void *userdata)
{
	_cleanup_free_ char *buf = NULL;
	const char *p = cmdline;

	if (!cmdline)
		return 0;
	buf = malloc(strlen(cmdline) + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		char *key, *value;
		int r;

		while (is_space(*p))
			p++;
		if (!*p)
			return 0;
		p = split_word(p, buf, &key, &value);
		if (!value && strcmp(key, "--") == 0)
			return 0;
		r = cb(key, value, userdata);
		if (r < 0)
			return r;
	}
}

/* Parameter names compare with '-' and '_' as one character (kernel parameq()). */
static bool key_equal(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char ca = *a == '-' ? '_' : *a;
		char cb = *b == '-' ? '_' : *b;

		if (ca != cb)
			return false;
	}
	return *a == *b;
}

struct get_ctx {
	const char *key;
	bool found;
	char *copy;             /* the value of the last occurrence */
};

static int get_cb(const char *key, const char *value, void *userdata)
{
	struct get_ctx *c = userdata;

	if (!key_equal(key, c->key))
		return 0;
	c->found = true;
	free(c->copy);
	c->copy = NULL;
	if (value) {
		c->copy = strdup(value);
		if (!c->copy)
			return -ENOMEM;
	}
	return 0;
}

bool ap_cmdline_get(const char *cmdline, const char *key, char **ret_value)
{
	struct get_ctx c = { .key = key };

	if (ret_value)
		*ret_value = NULL;
	if (ap_cmdline_foreach(cmdline, get_cb, &c) < 0) {
		free(c.copy);
		return false;
	}
	if (ret_value)
		*ret_value = c.copy;
	else
		free(c.copy);
	return c.found;
}

/* ------------------------------------------------------------ root= */

const char *ap_root_kind_to_string(enum ap_root_kind k)
{
	switch (k) {
	case AP_ROOT_NONE:      return "none";
	case AP_ROOT_UUID:      return "UUID";
	case AP_ROOT_LABEL:     return "LABEL";
	case AP_ROOT_PARTUUID:  return "PARTUUID";
	case AP_ROOT_PARTLABEL: return "PARTLABEL";
	case AP_ROOT_PATH:      return "path";
	case AP_ROOT_DEVNUM:    return "device number";
	}
	return "?";
}

void ap_root_spec_clear(struct ap_root_spec *r)
{
	free(r->value);
	memset(r, 0, sizeof(*r));
}

static int set_error(char **ret_error, int r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int set_error(char **ret_error, int r, const char *fmt, ...)
{
	va_list ap;
	char *m;

	if (!ret_error)
		return r;
	va_start(ap, fmt);
	if (vasprintf(&m, fmt, ap) < 0)
		m = NULL;
	va_end(ap);
	free(*ret_error);
	*ret_error = m;
	return r;
}

static bool parse_uint(const char *s, int base, unsigned long *ret)
{
	unsigned long v;
	char *end;

	if (!*s || !isxdigit((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoul(s, &end, base);
	if (errno || *end)
		return false;
	*ret = v;
	return true;
}

static int parse_devnum(const char *s, struct ap_root_spec *r)
{
	unsigned long ma, mi, dev;
	const char *colon = strchr(s, ':');

	if (colon) {
		char major[16];
		size_t n = (size_t)(colon - s);

		if (n == 0 || n >= sizeof(major))
			return -EINVAL;
		memcpy(major, s, n);
		major[n] = '\0';
		if (!isdigit((unsigned char)*major) || !isdigit((unsigned char)colon[1]) ||
		    !parse_uint(major, 10, &ma) || !parse_uint(colon + 1, 10, &mi))
			return -EINVAL;
		if (ma > 0xfff || mi > 0xfffff)
			return -ERANGE;
	} else {
		/* The old hexadecimal form, new_encode_dev() of the device number. */
		if (!parse_uint(s, 16, &dev) || dev > 0xffffffffUL)
			return -EINVAL;
		ma = (dev & 0xfff00) >> 8;
		mi = (dev & 0xff) | ((dev >> 12) & 0xfff00);
	}
	r->kind = AP_ROOT_DEVNUM;
	r->major = (unsigned int)ma;
	r->minor = (unsigned int)mi;
	return 0;
}

/*
 * What a path below /dev names when it is a block device that userspace
 * assembles from others (device-mapper: LVM, dm-crypt, multipath; md
 * RAID), which asyncprobe neither activates nor links: a description for
 * messages, or NULL.  @rel is normalized (normalize_dev_path()).
 */
static const char *stacked_kind(const char *rel)
{
	const char *p;

	if (strncmp(rel, "mapper/", 7) == 0 && rel[7])
		return "a device-mapper device (LVM, dm-crypt, multipath)";
	if (strncmp(rel, "dm-", 3) == 0 && rel[3]) {
		for (p = rel + 3; isdigit((unsigned char)*p); p++)
			;
		if (!*p)
			return "a device-mapper device (LVM, dm-crypt, multipath)";
	}
	if (strncmp(rel, "md/", 3) == 0 && rel[3])
		return "an md RAID array";
	if (strncmp(rel, "md", 2) == 0 && isdigit((unsigned char)rel[2]))
		return "an md RAID array";
	return NULL;
}

/* "/dev//disk/./by-uuid/x" -> "disk/by-uuid/x"; NULL for ".." or nothing. */
static char *normalize_dev_path(const char *s)
{
	char *out = malloc(strlen(s) + 1), *o = out;
	const char *p = s;

	if (!out)
		return NULL;
	while (*p) {
		const char *seg;
		size_t n;

		while (*p == '/')
			p++;
		seg = p;
		while (*p && *p != '/')
			p++;
		n = (size_t)(p - seg);
		if (n == 0 || (n == 1 && seg[0] == '.'))
			continue;
		if (n == 2 && seg[0] == '.' && seg[1] == '.') {
			free(out);
			errno = EINVAL;
			return NULL;
		}
		if (o != out)
			*o++ = '/';
		memcpy(o, seg, n);
		o += n;
	}
	*o = '\0';
	if (o == out) {
		free(out);
		errno = EINVAL;
		return NULL;
	}
	return out;
}

int ap_root_spec_parse(const char *s, struct ap_root_spec *ret, char **ret_error)
{
	static const struct {
		const char *prefix;
		enum ap_root_kind kind;
	} tags[] = {
		{ "UUID=", AP_ROOT_UUID },
		{ "LABEL=", AP_ROOT_LABEL },
		{ "PARTUUID=", AP_ROOT_PARTUUID },
		{ "PARTLABEL=", AP_ROOT_PARTLABEL },
	};
	struct ap_root_spec r = { .kind = AP_ROOT_NONE };
	size_t i;

	if (ret_error)
		*ret_error = NULL;
	if (!s || !*s)
		return set_error(ret_error, -EINVAL, "root= is empty");

	for (i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
		size_t plen = strlen(tags[i].prefix), vlen;
		const char *v;

		/* The kernel takes the tags in upper case only; so do we. */
		if (strncmp(s, tags[i].prefix, plen) != 0)
			continue;
		v = s + plen;
		vlen = strlen(v);
		/* UUID="..." as blkid prints it */
		if (vlen >= 2 && v[0] == '"' && v[vlen - 1] == '"') {
			v++;
			vlen -= 2;
		}
		if (vlen == 0)
			return set_error(ret_error, -EINVAL, "root=%s names nothing", s);
		if (tags[i].kind == AP_ROOT_PARTUUID && memmem(v, vlen, "/PARTNROFF=", 11))
			return set_error(ret_error, -EOPNOTSUPP,
					 "root=%s: PARTNROFF= (a partition counted from another) is not supported; "
					 "name the root partition itself with PARTUUID= or UUID=", s);
		r.kind = tags[i].kind;
		r.value = strndup(v, vlen);
		if (!r.value)
			return -ENOMEM;
		if (r.kind == AP_ROOT_PARTUUID) {
			char *c;

			for (c = r.value; *c; c++) {
				if (!isxdigit((unsigned char)*c) && *c != '-') {
					free(r.value);
					return set_error(ret_error, -EINVAL,
							 "root=%s: a PARTUUID is hexadecimal digits and '-'", s);
				}
				*c = (char)tolower((unsigned char)*c);
			}
		}
		*ret = r;
		return 0;
	}

	if (strncmp(s, "/dev/", 5) == 0) {
		if (strcmp(s, "/dev/nfs") == 0)
			return set_error(ret_error, -EOPNOTSUPP,
					 "root=%s: a network root is not supported by asyncprobe", s);
		r.value = normalize_dev_path(s + 5);
		if (!r.value) {
			if (errno == ENOMEM)
				return -ENOMEM;
			return set_error(ret_error, -EINVAL,
					 "root=%s: not a device below /dev", s);
		}
		if (stacked_kind(r.value)) {
			const char *what = stacked_kind(r.value);

			free(r.value);
			return set_error(ret_error, -EOPNOTSUPP,
					 "root=%s is %s, which asyncprobe does not set up: its own image "
					 "cannot boot from it; make the initramfs with initramfs-tools and "
					 "asyncprobe's hook, or with dracut and asyncprobe's module, where "
					 "lvm2, cryptsetup or mdadm set it up", s, what);
		}
		r.kind = AP_ROOT_PATH;
		*ret = r;
		return 0;
	}

	if (parse_devnum(s, &r) == 0) {
		*ret = r;
		return 0;
	}
	return set_error(ret_error, -EINVAL,
			 "root=%s is not understood: expected UUID=, LABEL=, PARTUUID=, PARTLABEL=, "
			 "/dev/NAME or MAJOR:MINOR", s);
}

bool ap_root_is_stacked(const char *s)
{
	_cleanup_free_ char *rel = NULL;

	if (!s || strncmp(s, "/dev/", 5) != 0)
		return false;
	rel = normalize_dev_path(s + 5);
	return rel && stacked_kind(rel);
}

/* blkid_encode_string() into a buffer big enough for any input. */
static char *encode(const char *s)
{
	size_t len = strlen(s) * 4 + 1;
	char *out = malloc(len);

	if (!out)
		return NULL;
	if (blkid_encode_string(s, out, len) != 0) {
		free(out);
		errno = EINVAL;
		return NULL;
	}
	return out;
}

int ap_root_spec_devpath(const struct ap_root_spec *r, char **ret)
{
	_cleanup_free_ char *name = NULL;
	const char *dir;
	char *path;

	switch (r->kind) {
	case AP_ROOT_UUID:
		dir = "disk/by-uuid/";
		break;
	case AP_ROOT_LABEL:
		dir = "disk/by-label/";
		break;
	case AP_ROOT_PARTUUID:
		dir = "disk/by-partuuid/";
		break;
	case AP_ROOT_PARTLABEL:
		dir = "disk/by-partlabel/";
		break;
	case AP_ROOT_PATH:
		if (!r->value || !*r->value)
			return -EINVAL;
		path = strdup(r->value);
		if (!path)
			return -ENOMEM;
		*ret = path;
		return 0;
	case AP_ROOT_DEVNUM:
		if (asprintf(&path, "block/%u:%u", r->major, r->minor) < 0)
			return -ENOMEM;
		*ret = path;
		return 0;
	default:
		return -EINVAL;
	}
	if (!r->value || !*r->value)
		return -EINVAL;
	if (r->kind == AP_ROOT_PARTUUID)
		name = strdup(r->value);
	else
		name = encode(r->value);
	if (!name)
		return errno == EINVAL ? -EINVAL : -ENOMEM;
	/* '.' and ".." survive the encoding; a link cannot be called that. */
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strlen(name) > NAME_MAX ||
	    strchr(name, '/'))
		return -EINVAL;
	if (asprintf(&path, "%s%s", dir, name) < 0)
		return -ENOMEM;
	*ret = path;
	return 0;
}

/* ------------------------------------------------- boot parameters */

static int parse_bool(const char *v)
{
	static const char *const yes[] = { "1", "y", "yes", "true", "on" };
	static const char *const no[] = { "0", "n", "no", "false", "off" };
	size_t i;

	if (!v)
		return 1;       /* a bare flag */
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (strcasecmp(v, yes[i]) == 0)
			return 1;
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (strcasecmp(v, no[i]) == 0)
			return 0;
	return -EINVAL;
}

static bool parse_int(const char *v, long min, long max, long *ret)
{
	long n;
	char *end;

	if (!v || !*v)
		return false;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || n < min || n > max)
		return false;
	*ret = n;
	return true;
}

static int set_string(char **field, const char *v)
{
	char *c = strdup(v ? v : "");

	if (!c)
		return -ENOMEM;
	free(*field);
	*field = c;
	return 0;
}

/* Append the names of the comma-separated list @v to *list. */
static int add_list(char ***list, size_t *n_list, const char *v)
{
	const char *s = v;

	while (s && *s) {
		const char *comma = strchr(s, ',');
		size_t n = comma ? (size_t)(comma - s) : strlen(s);

		if (n > 0) {
			char **l = realloc(*list, (*n_list + 1) * sizeof(char *));

			if (!l)
				return -ENOMEM;
			*list = l;
			l[*n_list] = strndup(s, n);
			if (!l[*n_list])
				return -ENOMEM;
			(*n_list)++;
		}
		s = comma ? comma + 1 : NULL;
	}
	return 0;
}

static void invalid(struct ap_bootparams *p, const char *key, const char *value, const char *why)
{
	p->n_invalid++;
	log_warning("kernel command line: %s%s%s: %s, ignoring", key, value ? "=" : "",
		    value ? value : "", why);
}

static int bootparam_cb(const char *key, const char *v, void *userdata)
{
	struct ap_bootparams *p = userdata;
	unsigned int ms;
	long n;
	int b;

	if (key_equal(key, "root")) {
		if (!v)
			return 0;
		if (set_string(&p->root, v) < 0)
			return -ENOMEM;
		ap_root_spec_clear(&p->root_spec);
		free(p->root_error_msg);
		p->root_error_msg = NULL;
		p->root_error = ap_root_spec_parse(v, &p->root_spec, &p->root_error_msg);
		return p->root_error == -ENOMEM ? -ENOMEM : 0;
	}
	if (key_equal(key, "rootfstype"))
		return v ? set_string(&p->rootfstype, v) : 0;
	if (key_equal(key, "rootflags"))
		return v ? set_string(&p->rootflags, v) : 0;
	if (key_equal(key, "init"))
		return v ? set_string(&p->init, v) : 0;
	if (!v && strcmp(key, "ro") == 0) {
		p->read_write = false;
		return 0;
	}
	if (!v && strcmp(key, "rw") == 0) {
		p->read_write = true;
		return 0;
	}
	if (!v && strcmp(key, "quiet") == 0) {
		p->quiet = true;
		return 0;
	}
	if (key_equal(key, "rootwait")) {
		p->rootwait = true;
		p->rootwait_ms = 0;
		if (v && ap_parse_seconds_ms(v, &ms) < 0)
			invalid(p, key, v, "not a number of seconds; waiting forever");
		else if (v)
			p->rootwait_ms = ms;
		return 0;
	}
	if (key_equal(key, "rootdelay")) {
		if (!parse_int(v, 0, 3600, &n)) {
			invalid(p, key, v, "expected seconds, 0 to 3600");
			return 0;
		}
		p->rootdelay_s = (unsigned int)n;
		return 0;
	}
	if (key_equal(key, "panic")) {
		if (!parse_int(v, -1000000, 1000000, &n)) {
			invalid(p, key, v, "expected a number of seconds");
			return 0;
		}
		p->panic_set = true;
		p->panic_s = (int)n;
		return 0;
	}
	if (key_equal(key, "modprobe.blacklist"))
		return v ? add_list(&p->blacklist, &p->n_blacklist, v) : 0;
	if (key_equal(key, "rd.driver.pre") || key_equal(key, "asyncprobe.modules"))
		return v ? add_list(&p->modules, &p->n_modules, v) : 0;
	if (!v && key_equal(key, "fastboot")) {
		p->fastboot = 1;
		return 0;
	}

	if (strncmp(key, "asyncprobe.", 11) != 0)
		return 0;       /* the kernel's, a module's or init's */
	key += 11;
	if (key_equal(key, "fastboot")) {
		b = parse_bool(v);
		if (b < 0)
			invalid(p, "asyncprobe.fastboot", v, "expected 0 or 1");
		else
			p->fastboot = b;
	} else if (key_equal(key, "trace")) {
		b = parse_bool(v);
		if (b < 0)
			invalid(p, "asyncprobe.trace", v, "expected 0 or 1");
		else
			p->trace = b;
	} else if (key_equal(key, "shell")) {
		b = parse_bool(v);
		if (b < 0)
			invalid(p, "asyncprobe.shell", v, "expected 0 or 1");
		else
			p->shell = b;
	} else if (key_equal(key, "udev_rules")) {
		b = parse_bool(v);
		if (b < 0)
			invalid(p, "asyncprobe.udev_rules", v, "expected 0 or 1");
		else
			p->udev_rules = b;
	} else if (key_equal(key, "wait_all")) {
		b = parse_bool(v);
		if (b < 0)
			invalid(p, "asyncprobe.wait_all", v, "expected 0 or 1");
		else
			p->wait_all = b;
	} else if (key_equal(key, "enable")) {
		b = parse_bool(v);
		if (b < 0)
			invalid(p, "asyncprobe.enable", v, "expected 0 or 1");
		else
			p->enable = b;
	} else if (key_equal(key, "timeout")) {
		if (ap_parse_seconds_ms(v, &ms) < 0 || ms > INT32_MAX)
			invalid(p, "asyncprobe.timeout", v, "expected seconds");
		else
			p->timeout_ms = (int)ms;
	} else if (key_equal(key, "root_timeout")) {
		if (ap_parse_seconds_ms(v, &ms) < 0)
			invalid(p, "asyncprobe.root_timeout", v, "expected seconds");
		else
			p->root_timeout_ms = ms;
	} else if (key_equal(key, "threads")) {
		if (!parse_int(v, 0, 4096, &n))
			invalid(p, "asyncprobe.threads", v, "expected 0 to 4096");
		else
			p->threads = (int)n;
	} else if (key_equal(key, "verbose")) {
		if (!v)
			p->verbose = 1;
		else if (!parse_int(v, 0, 2, &n))
			invalid(p, "asyncprobe.verbose", v, "expected 0, 1 or 2");
		else
			p->verbose = (int)n;
	} else if (key_equal(key, "debug")) {
		b = parse_bool(v);
		if (b < 0)
			invalid(p, "asyncprobe.debug", v, "expected 0 or 1");
		else
			p->verbose = b ? 2 : 0;
	} else if (key_equal(key, "root_path")) {
		/* the last one wins; a bare word or "none": no root first */
		free(p->root_path);
		p->root_path = strdup(v ? v : "");
		if (!p->root_path)
			return -ENOMEM;
	} else {
		p->n_invalid++;
		log_warning("kernel command line: unknown option asyncprobe.%s, ignoring", key);
	}
	return 0;
}

bool ap_cmdline_disabled(const char *cmdline)
{
	_cleanup_free_ char *v = NULL;

	if (!cmdline || !ap_cmdline_get(cmdline, "asyncprobe.enable", &v))
		return false;
	return parse_bool(v) == 0;
}

void ap_bootparams_clear(struct ap_bootparams *p)
{
	free(p->root);
	ap_root_spec_clear(&p->root_spec);
	free(p->root_error_msg);
	free(p->rootfstype);
	free(p->rootflags);
	free(p->init);
	free(p->root_path);
	ap_strv_free(p->blacklist, p->n_blacklist);
	ap_strv_free(p->modules, p->n_modules);
	memset(p, 0, sizeof(*p));
}

int ap_bootparams_parse(const char *cmdline, struct ap_bootparams *ret)
{
	struct ap_bootparams p = {
		.fastboot = -1,
		.timeout_ms = -1,
		.root_timeout_ms = AP_BOOT_ROOT_TIMEOUT_MS_DEFAULT,
		.trace = -1,
		.threads = -1,
		.verbose = -1,
		.shell = -1,
		.udev_rules = -1,
		.wait_all = -1,
		.enable = -1,
	};
	int r;

	r = ap_cmdline_foreach(cmdline, bootparam_cb, &p);
	if (r < 0) {
		ap_bootparams_clear(&p);
		return r;
	}
	*ret = p;
	return 0;
}

void ap_config_apply_kernel(struct ap_config *cfg, const struct ap_bootparams *p)
{
	if (cfg->fastboot < 0)
		cfg->fastboot = p->fastboot;
	cfg->blacklist = p->blacklist;
	cfg->n_blacklist = p->n_blacklist;
	if (p->root_path) {
		cfg->root_path = p->root_path;
		cfg->root_path_source = "asyncprobe.root_path";
	}
}
