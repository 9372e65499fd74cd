/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main(): options into its struct ap_config, then either PID 1 mode (init.c), a module
 * alias lookup (--resolve-modalias), or one engine run.  Exit status as in
 * asyncprobe(8), EXIT STATUS.
 */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "boot/boot.h"
#include "device/device.h"
#include "modules/modules.h"
#include "probe/probe.h"
#include "engine/engine.h"
#include "links/links.h"

static void usage(FILE *f)
{
	fputs("Usage: asyncprobe [OPTION]...\n"
	      "Load storage drivers, probe disks and partitions concurrently, and create the\n"
	      "/dev/disk/by-* links in the order a sequential boot would.\n"
	      "\n"
	      "  -n, --dry-run             resolve and print what would be loaded; insert nothing\n"
	      "  -b, --basedir=DIR         use the module tree DIR/lib/modules/KVER\n"
	      "  -S, --kernel-version=KVER kernel version below BASEDIR (default: running)\n"
	      "      --modules-dir=DIR     use the module tree DIR (a lib/modules/KVER)\n"
	      "  -C, --config=PATH         modprobe.d file or directory instead of the system's\n"
	      "  -a, --all-modules         load drivers for every device with a modalias\n"
	      "      --no-modules          load no drivers\n"
	      "      --no-links            probe, but create no links\n"
	      "      --include-loop[=NAMES]  probe loop devices too: every one, or only\n"
	      "                            those NAMES lists (loop3,loop7)\n"
	      "      --udev-rules=PATH     write udev rules keeping this run's choice of links\n"
	      "                            two devices claim (a directory for\n"
	      "                            " AP_UDEV_RULES_NAME ", or a *.rules file);\n"
	      "                            'none': never.  Default:\n"
	      "                            " AP_UDEV_RULES_DIR " in an initramfs, else none\n"
	      "  -d, --dev-dir=DIR         create the links below DIR/disk (an existing\n"
	      "                            directory; default /dev)\n"
	      "  -t, --device-timeout=SEC  longest wait for a controller's devices (default 10)\n"
	      "      --max-threads=N       at most N worker threads\n"
	      "      --fastboot            run concurrently (also: fastboot on the kernel command line)\n"
	      "      --no-fastboot         run strictly sequentially\n"
	      "      --root-path=NAME      the root device's /dev/disk/by-path name: its\n"
	      "                            chain (controller, device, disk, partition) comes\n"
	      "                            first in the order (none: no root)\n"
	      "      --json[=FILE]         write the run's manifest as JSON (default: stdout)\n"
	      "      --trace=FILE          write a Chrome trace-event file\n"
	      "      --plot=FILE.svg       write an SVG boot timeline\n"
	      "  -v, --verbose             more messages (twice: debug)\n"
	      "  -q, --quiet               errors and warnings only\n"
	      "      --log-target=TARGET   auto, stderr or kmsg\n"
	      "      --no-progress         no progress line (drawn only on a terminal that\n"
	      "                            is not the system console)\n"
	      "      --resolve-modalias=ALIAS  print the modules ALIAS loads, in load order\n"
	      "      --init                run as the initramfs's /init\n"
	      "  -h, --help                this help\n"
	      "  -V, --version             the version\n"
	      "\n"
	      "Exit status: 0 ok, 1 degraded (a module, device or link failed, or a storage\n"
	      "controller had no module), 2 bad "
	      "configuration, 100 bad usage, 111 system error.  See asyncprobe(8).\n", f);
}

enum {
	OPT_MODULES_DIR = 0x100,
	OPT_NO_MODULES,
	OPT_NO_LINKS,
	OPT_INCLUDE_LOOP,
	OPT_MAX_THREADS,
	OPT_FASTBOOT,
	OPT_NO_FASTBOOT,
	OPT_JSON,
	OPT_TRACE,
	OPT_PLOT,
	OPT_LOG_TARGET,
	OPT_NO_PROGRESS,
	OPT_RESOLVE,
	OPT_INIT,
	OPT_UDEV_RULES,
	OPT_ROOT_PATH,
};

static const struct option options[] = {
	{ "dry-run", no_argument, NULL, 'n' },
	{ "basedir", required_argument, NULL, 'b' },
	{ "kernel-version", required_argument, NULL, 'S' },
	{ "modules-dir", required_argument, NULL, OPT_MODULES_DIR },
	{ "config", required_argument, NULL, 'C' },
	{ "all-modules", no_argument, NULL, 'a' },
	{ "no-modules", no_argument, NULL, OPT_NO_MODULES },
	{ "no-links", no_argument, NULL, OPT_NO_LINKS },
	{ "include-loop", optional_argument, NULL, OPT_INCLUDE_LOOP },
	{ "dev-dir", required_argument, NULL, 'd' },
	{ "device-timeout", required_argument, NULL, 't' },
	{ "max-threads", required_argument, NULL, OPT_MAX_THREADS },
	{ "fastboot", no_argument, NULL, OPT_FASTBOOT },
	{ "no-fastboot", no_argument, NULL, OPT_NO_FASTBOOT },
	{ "json", optional_argument, NULL, OPT_JSON },
	{ "trace", required_argument, NULL, OPT_TRACE },
	{ "plot", required_argument, NULL, OPT_PLOT },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "log-target", required_argument, NULL, OPT_LOG_TARGET },
	{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
	{ "resolve-modalias", required_argument, NULL, OPT_RESOLVE },
	{ "init", no_argument, NULL, OPT_INIT },
	{ "udev-rules", required_argument, NULL, OPT_UDEV_RULES },
	{ "root-path", required_argument, NULL, OPT_ROOT_PATH },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{}
};

static int parse_uint(const char *s, unsigned int *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > 65536)
		return -EINVAL;
	*ret = (unsigned int)v;
	return 0;
}

/*
 * Parse into @cfg.  Returns 0 to go on, or an exit status; *done is set
 * when the status is final although 0 (--help, --version).  @lenient: as
 * PID 1 the kernel hands over arguments that are not ours; ignore them,
 * and a bad value of ours too (said on the console): PID 1 must not exit.
 */
static int parse_args(struct ap_config *cfg, int argc, char **argv, bool lenient,
		      const char ***resolve, size_t *n_resolve, bool *done)
{
	bool progress_off = false;
	int c;

	opterr = lenient ? 0 : 1;
	while ((c = getopt_long(argc, argv, "nb:S:C:ad:t:vqhV", options, NULL)) >= 0) {
		switch (c) {
		case 'n':
			cfg->dry_run = true;
			break;
		case 'b':
			cfg->basedir = optarg;
			break;
		case 'S':
			cfg->kernel_version = optarg;
			break;
		case OPT_MODULES_DIR:
			cfg->modules_dir = optarg;
			break;
		case 'C':
			cfg->modprobe_config = optarg;
			break;
		case 'a':
			cfg->all_modules = true;
			break;
		case OPT_NO_MODULES:
			cfg->no_modules = true;
			break;
		case OPT_NO_LINKS:
			cfg->no_links = true;
			break;
		case OPT_INCLUDE_LOOP:
			if (optarg && !ap_loop_list_valid(optarg)) {
				fprintf(stderr, "asyncprobe: invalid --include-loop=%s "
					"(loop device names, comma-separated: loop3,loop7)\n", optarg);
				return AP_EXIT_USAGE;
			}
			cfg->include_loop = optarg ? optarg : "";       /* "": every loop device */
			break;
		case 'd':
			cfg->dev_dir = optarg;
			break;
		case 't': {
			unsigned int ms;

			if (ap_parse_seconds_ms(optarg, &ms) < 0 || ms > 86400u * 1000u) {
				fprintf(stderr, "asyncprobe: invalid --device-timeout: %s (seconds)%s\n",
					optarg, lenient ? ", ignored" : "");
				if (!lenient)
					return AP_EXIT_USAGE;
				break;
			}
			cfg->device_timeout_ms = ms;
			break;
		}
		case OPT_MAX_THREADS:
			if (parse_uint(optarg, &cfg->max_threads) < 0) {
				fprintf(stderr, "asyncprobe: invalid --max-threads: %s%s\n", optarg,
					lenient ? ", ignored" : "");
				if (!lenient)
					return AP_EXIT_USAGE;
			}
			break;
		case OPT_FASTBOOT:
			cfg->fastboot = 1;
			break;
		case OPT_NO_FASTBOOT:
			cfg->fastboot = 0;
			break;
		case OPT_JSON:
			cfg->json_file = optarg ? optarg : "-";
			break;
		case OPT_TRACE:
			cfg->trace_file = optarg;
			break;
		case OPT_PLOT:
			cfg->plot_file = optarg;
			break;
		case 'v':
			cfg->verbose++;
			break;
		case 'q':
			cfg->quiet = true;
			break;
		case OPT_LOG_TARGET:
			if (strcmp(optarg, "auto") == 0)
				cfg->log_target = AP_LOG_AUTO;
			else if (strcmp(optarg, "stderr") == 0)
				cfg->log_target = AP_LOG_STDERR;
			else if (strcmp(optarg, "kmsg") == 0)
				cfg->log_target = AP_LOG_KMSG;
			else {
				fprintf(stderr, "asyncprobe: invalid --log-target: %s (auto, stderr, kmsg)%s\n",
					optarg, lenient ? ", ignored" : "");
				if (!lenient)
					return AP_EXIT_USAGE;
			}
			break;
		case OPT_NO_PROGRESS:
			progress_off = true;
			break;
		case OPT_RESOLVE: {
			const char **v = realloc(*resolve, (*n_resolve + 1) * sizeof(*v));

			if (!v)
				return AP_EXIT_SYSTEM;
			v[(*n_resolve)++] = optarg;
			*resolve = v;
			break;
		}
		case OPT_INIT:
			cfg->init_mode = true;
			break;
		case OPT_UDEV_RULES:
			if (!*optarg) {
				fprintf(stderr, "asyncprobe: --udev-rules needs a path or 'none'%s\n",
					lenient ? ", ignored" : "");
				if (!lenient)
					return AP_EXIT_USAGE;
				break;
			}
			cfg->udev_rules = optarg;
			break;
		case OPT_ROOT_PATH:
			cfg->root_path = optarg;
			break;
		case 'h':
			if (lenient)
				break;  /* a word of the kernel command line */
			usage(stdout);
			*done = true;
			return AP_EXIT_OK;
		case 'V':
			if (lenient)
				break;
			printf("asyncprobe %s\n", PACKAGE_VERSION);
			*done = true;
			return AP_EXIT_OK;
		default:
			if (lenient)
				break;
			fputs("Try 'asyncprobe --help'.\n", stderr);
			return AP_EXIT_USAGE;
		}
	}
	if (optind < argc && !lenient) {
		fprintf(stderr, "asyncprobe: unexpected argument: %s\nTry 'asyncprobe --help'.\n",
			argv[optind]);
		return AP_EXIT_USAGE;
	}
	if (cfg->basedir && cfg->modules_dir) {
		fputs("asyncprobe: --basedir and --modules-dir exclude each other\n", stderr);
		if (!lenient)
			return AP_EXIT_USAGE;
	}
	if (cfg->quiet)
		cfg->verbose = -1;
	/* as PID 1 or --init, stderr is the console */
	cfg->progress = !progress_off && !lenient && !cfg->init_mode && cfg->verbose == 0 &&
			  ap_log_resolve_target(cfg->log_target) != AP_LOG_KMSG &&
			  ap_log_is_user_terminal(STDERR_FILENO, "/sys/class/tty/console/active") &&
			  !(cfg->json_file && strcmp(cfg->json_file, "-") == 0 &&
			    isatty(STDOUT_FILENO));
	return 0;
}

/*
 * Before any probing, in every mode but PID 1 (which checks once its file
 * systems are mounted, and keeps booting: init.c): what the options name
 * must be usable, or the run would fail only at its end, or link by link.
 * Returns 0 or AP_EXIT_CONFIG, with one message on stderr.
 */
static int check_args(struct ap_config *cfg)
{
	char shown[160];
	int r;

	r = ap_config_check(cfg, false);
	if (r != 0)
		return r;
	r = ap_udev_rules_check(cfg->dry_run || cfg->no_links ? NULL : cfg->udev_rules);
	if (r == 0)
		return 0;
	ap_escape(cfg->udev_rules, shown, sizeof(shown), AP_ESCAPE_CONTROLS | AP_ESCAPE_ELLIPSIS);
	if (r == -EINVAL)
		log_error("--udev-rules=%s: not a directory, and not a file name ending in .rules "
			  "(udev reads no other)", shown);
	else
		log_error("cannot write udev rules to %s: %s", shown, strerror(-r));
	return AP_EXIT_CONFIG;
}

/* --init outside PID 1: asyncprobe.enable=0 on the kernel command line turns it off. */
static bool init_disabled(void)
{
	_cleanup_free_ char *cmdline = NULL;

	return ap_cmdline_read(&cmdline) == 0 && ap_cmdline_disabled(cmdline);
}

static int resolve_aliases(const struct ap_config *cfg, const char **aliases, size_t n)
{
	struct ap_modules *m = NULL;
	size_t i;
	int r, status = AP_EXIT_OK;

	r = ap_modules_new(&m, cfg->basedir, cfg->modules_dir, cfg->kernel_version,
			   cfg->modprobe_config, true);
	if (r < 0)
		return r == -ENOENT ? AP_EXIT_CONFIG : AP_EXIT_SYSTEM;
	for (i = 0; i < n; i++) {
		r = ap_modules_show(m, aliases[i], stdout);
		if (r <= 0) {
			log_warning("%s: no module", aliases[i]);
			status = AP_EXIT_DEGRADED;
		}
	}
	ap_modules_free(m);
	return status;
}

/*
 * Outside PID 1: SIGINT or SIGTERM stops the run early (engine.c, "A stop
 * request"): no further device is probed or published, a device already
 * publishing finishes its links (each is renamed into place, so none is
 * left half made), and the run ends with 128 + the signal; a second one
 * ends it at once (stop.c).
 */
int main(int argc, char **argv)
{
	struct ap_config cfg;
	struct ap_bootparams kernel = { .fastboot = -1 };
	_cleanup_free_ char *cmdline = NULL;
	struct ap_engine *e = NULL;
	const char **resolve = NULL;
	size_t n_resolve = 0;
	bool pid1 = getpid() == 1, done = false;
	int r, sig;

	/* Before any thread: an arena per worker is most of their memory (docs/performance.md). */
	if (!getenv("MALLOC_ARENA_MAX"))
		(void)mallopt(M_ARENA_MAX, AP_MALLOC_ARENA_MAX);
	ap_config_defaults(&cfg);
	r = parse_args(&cfg, argc, argv, pid1, &resolve, &n_resolve, &done);
	if (r != 0 || done) {
		free(resolve);
		return r;
	}
	ap_log_open(cfg.log_target, cfg.verbose);

	if (pid1) {
		/* never exits; checks the options once /dev and /run are there */
		cfg.init_mode = true;
		free(resolve);
		return ap_init_main(&cfg, argc, argv);
	}
	if (cfg.init_mode) {
		free(resolve);
		if (init_disabled()) {
			log_notice("asyncprobe.enable is off on the kernel command line: not running");
			ap_log_close();
			return AP_EXIT_OK;
		}
		r = check_args(&cfg);
		if (r == 0)
			r = ap_init_main(&cfg, argc, argv);
		ap_log_close();
		return r;
	}
	if (n_resolve) {
		r = resolve_aliases(&cfg, resolve, n_resolve);
		free(resolve);
		ap_log_close();
		return r;
	}
	/* before the whole probe, not after it */
	r = check_args(&cfg);
	if (r != 0) {
		ap_log_close();
		return r;
	}

	/* fastboot, modprobe.blacklist=, asyncprobe.root_path= (init: init-bootparams.c) */
	if (ap_cmdline_read(&cmdline) == 0 && ap_bootparams_parse(cmdline, &kernel) == 0)
		ap_config_apply_kernel(&cfg, &kernel);

	ap_stop_catch();
	r = ap_stop_engine_start(&e, &cfg);
	if (r < 0) {
		ap_bootparams_clear(&kernel);
		ap_log_close();
		return r == -ENOENT || r == -EINVAL ? AP_EXIT_CONFIG : AP_EXIT_SYSTEM;
	}
	r = ap_engine_finish(e);
	ap_stop_set_target(NULL);
	ap_engine_free(e);
	ap_bootparams_clear(&kernel);
	sig = ap_stop_signal();
	if (sig && r != 128 + sig) {
		/* it came after the engine's last look: the run was complete */
		log_notice("stopped on %s after the run was complete",
			   sig == SIGINT ? "SIGINT" : "SIGTERM");
		r = 128 + sig;
	}
	ap_log_close();
	return r;
}
