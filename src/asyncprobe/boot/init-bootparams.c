/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The boot parameters as init uses them: the kernel command line read and
 * parsed (cmdline.c) and applied to the run's config, where options given to
 * asyncprobe win; the run directory where init's outputs go; and the module
 * tree init loads from (the modules the command line asks for, file
 * system drivers), opened through modules.c with the settings the engine
 * uses (-b, -S, --modules-dir, -C, libkmod's messages in asyncprobe's log);
 * init.log, the timing lines PID 1 and the probe process append there.
 * Theory of operation: init.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "device/device.h"
#include "modules/modules.h"
#include "probe/probe.h"
#include "internal.h"

/* Opened on first use: PID 1 has one thread, the unit's main thread uses it. */
static struct ap_modules *init_modules;

const char *ap_init_run_dir(void)
{
	const char *d = getenv("ASYNCPROBE_RUNDIR");

	return d && *d ? d : "/run/asyncprobe";
}

void ap_init_timing(const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	FILE *f;

	snprintf(path, sizeof(path), "%s/init.log", ap_init_run_dir());
	f = fopen(path, "ae");
	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

void ap_init_load_module(const struct ap_config *cfg, const char *name, const char *who, bool quiet_missing, bool device)
{
	if (!init_modules &&
	    ap_modules_new(&init_modules, cfg->basedir, cfg->modules_dir, cfg->kernel_version,
			   cfg->modprobe_config, false) < 0) {
		log_dev_warning(who, "cannot open the module index");
		return;
	}
	ap_modules_load_name(init_modules, name, who, quiet_missing, device);
}

void ap_init_modules_close(void)
{
	init_modules = ap_modules_free(init_modules);
}

/*
 * asyncprobe.modules= and rd.driver.pre=: modules the command line asks
 * for before the run, such as drivers with no modalias (scsi_debug).
 * libkmod adds their options from modprobe.d and from MODULE.PARAM= words
 * of the command line.  finit_module() returns once the module's
 * asynchronous work (a SCSI host scan) is done, so its devices are there
 * for the engine's enumeration.
 */
void ap_init_load_cmdline_modules(const struct ap_config *cfg, const struct ap_bootparams *bp)
{
	size_t i;

	if (bp->n_modules == 0 || cfg->no_modules || cfg->dry_run)
		return;
	for (i = 0; i < bp->n_modules; i++)
		ap_init_load_module(cfg, bp->modules[i], "the kernel command line", false, true);
}

/*
 * The root's by-path name asyncprobe-mkinitramfs recorded in the image
 * (--root-path), for root first when neither asyncprobe.root_path= nor
 * --root-path names one.
 */
#define AP_ROOT_PATH_FILE "/etc/asyncprobe/root-path"

static void root_path_of_image(struct ap_config *cfg)
{
	static char line[PATH_MAX];
	FILE *f = fopen(AP_ROOT_PATH_FILE, "re");

	if (!f)
		return;
	if (fgets(line, sizeof(line), f)) {
		line[strcspn(line, " \t\r\n")] = '\0';
		cfg->root_path = line;
		cfg->root_path_source = AP_ROOT_PATH_FILE;
	}
	fclose(f);
}

void ap_init_apply_bootparams(struct ap_config *cfg, const struct ap_bootparams *bp, bool outputs)
{
	static char trace[PATH_MAX], plot[PATH_MAX], json[PATH_MAX];
	size_t i;

	cfg->init_mode = true;
	ap_config_apply_kernel(cfg, bp);
	if (!cfg->root_path)
		root_path_of_image(cfg);
	if (bp->timeout_ms >= 0)
		cfg->device_timeout_ms = (unsigned int)bp->timeout_ms;
	if (bp->threads >= 0 && cfg->max_threads == 0)
		cfg->max_threads = (unsigned int)bp->threads;
	if (bp->verbose > cfg->verbose)
		cfg->verbose = bp->verbose;
	/* off: udev decides contested links again after switch_root */
	if (bp->udev_rules == 0 && !cfg->udev_rules)
		cfg->udev_rules = "none";
	if (outputs) {
		snprintf(json, sizeof(json), "%s/manifest.json", ap_init_run_dir());
		snprintf(trace, sizeof(trace), "%s/trace.json", ap_init_run_dir());
		snprintf(plot, sizeof(plot), "%s/plot.svg", ap_init_run_dir());
		if (!cfg->json_file)
			cfg->json_file = json;
		if (bp->trace != 0 && !cfg->trace_file)
			cfg->trace_file = trace;
		if (bp->trace != 0 && !cfg->plot_file)
			cfg->plot_file = plot;
	}
	for (i = 0; i < bp->n_blacklist; i++)
		log_info("modprobe.blacklist: %s", bp->blacklist[i]);
	/* a stacked root: PID 1's diagnosis says it, a unit just probes */
	if (bp->root_error_msg && !ap_root_is_stacked(bp->root))
		log_error("%s", bp->root_error_msg);
}

int ap_init_load_bootparams(struct ap_bootparams *bp)
{
	_cleanup_free_ char *cmdline = NULL;
	int r;

	r = ap_cmdline_read(&cmdline);
	if (r < 0) {
		log_error("reading the kernel command line: %s", strerror(-r));
		cmdline = NULL;
	}
	r = ap_bootparams_parse(cmdline ? cmdline : "", bp);
	if (r < 0)
		return r;
	if (cmdline)
		log_info("kernel command line: %s", cmdline);
	return 0;
}

