/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The defaults of struct ap_config (base.h), and the checks of what its
 * options name, made before anything is probed.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "base/base.h"

void ap_config_defaults(struct ap_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->dev_dir = "/dev";
	cfg->fastboot = -1;
	cfg->device_timeout_ms = 10000;
	cfg->log_target = AP_LOG_AUTO;
}

/* A path in a message: control bytes escaped, cut short when long. */
#define SHOWN_MAX 160

static const char *shown(const char *path, char *buf)
{
	return ap_escape(path, buf, SHOWN_MAX, AP_ESCAPE_CONTROLS | AP_ESCAPE_ELLIPSIS);
}

/* One refusal: on stderr, or as PID 1 in the log with what is used instead. */
static int __attribute__((format(printf, 3, 4)))
refuse(bool pid1, const char *instead, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (pid1)
		log_error("%s; ignoring it: %s", msg, instead);
	else
		fprintf(stderr, "asyncprobe: %s\n", msg);
	return AP_EXIT_CONFIG;
}

static int check_dev_dir(const struct ap_config *cfg, bool pid1)
{
	static const char instead[] = "the links go below /dev";
	char s[SHOWN_MAX], disk[PATH_MAX];
	const char *dir = cfg->dev_dir, *where = dir;
	struct stat st;
	int r;

	shown(dir, s);
	if (strlen(dir) >= PATH_MAX)
		return refuse(pid1, instead, "--dev-dir %s: %s", s, strerror(ENAMETOOLONG));
	if (stat(dir, &st) < 0)
		return refuse(pid1, instead, "--dev-dir %s: %s", s, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return refuse(pid1, instead, "--dev-dir %s: not a directory", s);
	if (cfg->dry_run || cfg->no_links)
		return 0;
	/* the links go below DIR/disk, made when missing, never through a symbolic link */
	r = snprintf(disk, sizeof(disk), "%s/disk", dir);
	if (r < 0 || (size_t)r >= sizeof(disk))
		return refuse(pid1, instead, "--dev-dir %s: %s", s, strerror(ENAMETOOLONG));
	if (lstat(disk, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			return refuse(pid1, instead, "--dev-dir %s: %s/disk is not a directory", s, s);
		where = disk;
	}
	r = ap_check_dir_writable(where);
	if (r < 0)
		return refuse(pid1, instead, "--dev-dir %s: cannot create links there: %s", s,
			      strerror(-r));
	return 0;
}

static int check_output(const char *option, const char *file, bool pid1)
{
	static const char instead[] = "the default is used";
	char s[SHOWN_MAX], sd[SHOWN_MAX];
	const char *slash;
	char *dir;
	struct stat st;
	int r;

	if (!file)
		return 0;
	if (!*file)
		return refuse(pid1, instead, "--%s: empty file name", option);
	r = ap_check_output_file(file);
	if (r == 0)
		return 0;
	shown(file, s);
	if (r == -EISDIR)
		return refuse(pid1, instead, "--%s=%s: is a directory", option, s);
	if (r == -ENOENT || r == -ENOTDIR) {
		/* say which directory is missing or is none */
		slash = strrchr(file, '/');
		if (!slash)
			dir = strdup(".");
		else if (slash == file)
			dir = strdup("/");
		else
			dir = strndup(file, (size_t)(slash - file));
		if (!dir)
			return refuse(pid1, instead, "--%s=%s: %s", option, s, strerror(ENOMEM));
		shown(dir, sd);
		if (stat(dir, &st) < 0)
			r = refuse(pid1, instead, "--%s=%s: directory %s: %s", option, s, sd,
				   strerror(errno));
		else if (!S_ISDIR(st.st_mode))
			r = refuse(pid1, instead, "--%s=%s: %s is not a directory", option, s, sd);
		else
			r = refuse(pid1, instead, "--%s=%s: cannot write: %s", option, s,
				   strerror(-r));
		free(dir);
		return r;
	}
	return refuse(pid1, instead, "--%s=%s: cannot write: %s", option, s, strerror(-r));
}

int ap_config_check(struct ap_config *cfg, bool pid1)
{
	int n = 0;

	if (cfg->dev_dir && check_dev_dir(cfg, pid1) != 0) {
		if (!pid1)
			return AP_EXIT_CONFIG;
		cfg->dev_dir = "/dev";
		n++;
	}
	if (check_output("json", cfg->json_file, pid1) != 0) {
		if (!pid1)
			return AP_EXIT_CONFIG;
		cfg->json_file = NULL;
		n++;
	}
	if (check_output("trace", cfg->trace_file, pid1) != 0) {
		if (!pid1)
			return AP_EXIT_CONFIG;
		cfg->trace_file = NULL;
		n++;
	}
	if (check_output("plot", cfg->plot_file, pid1) != 0) {
		if (!pid1)
			return AP_EXIT_CONFIG;
		cfg->plot_file = NULL;
		n++;
	}
	return n;
}
