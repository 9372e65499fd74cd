/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The engine layer: one run over the system's storage (engine.c and its
 * parts engine-*.c behind internal.h) and stop requests (stop.c).
 */
#ifndef ASYNCPROBE_ENGINE_H
#define ASYNCPROBE_ENGINE_H

#include "base/base.h"

/* -------------------------------------------------------------- engine.c */

/*
 * The engine (engine.c): one run of discovery, driver loading, probing and
 * linking.  Used by cli.c for a plain run and by init.c as PID 1.  The
 * parts are engine-*.c (internal.h has their map).
 */

struct ap_engine;

/*
 * A new engine for one run with the settings @cfg (copied: the engine
 * keeps its own; the strings it points to must outlive the engine).
 * Nothing runs yet: a caller that forwards stop signals registers the
 * engine first (ap_stop_set_target()).  Returns 0 or -ENOMEM.
 */
int ap_engine_new(struct ap_engine **ret, const struct ap_config *cfg);

/*
 * Start the run.  With concurrency on this returns as soon as the work is
 * scheduled; sequentially it returns when everything is done.  Returns 0
 * or -errno (and logs why; the caller still frees @e); -ENOENT means the
 * module tree given with -b/-S/--modules-dir is unusable (a configuration
 * error, AP_EXIT_CONFIG).  The engine reads no command line: fastboot
 * (-1: off), the blacklist and the root path come from @cfg, where the
 * caller put the kernel command line's (ap_config_apply_kernel()).
 */
int ap_engine_run(struct ap_engine *e);

/* ap_engine_new() and ap_engine_run() in one; on failure nothing is left. */
int ap_engine_start(struct ap_engine **ret, const struct ap_config *cfg);

/*
 * Wait until @relpath exists below the dev dir (a link such as
 * "disk/by-uuid/...", or a node such as "sda1"), re-checked whenever the
 * engine publishes something.  Returns 0 when it exists, -ETIMEDOUT after
 * @timeout_ms (0 = wait until the engine is done, UINT32_MAX = forever),
 * -ENOENT when the engine is done and it does not exist, -EINTR after a
 * stop request.
 */
int ap_engine_wait_path(struct ap_engine *e, const char *relpath, unsigned int timeout_ms);

/*
 * Wait for everything, write the outputs (--json, --trace, --plot, the
 * summary) and return the exit status (AP_EXIT_*).  Worker threads are gone
 * afterwards (async_quiesce()), so the caller may exec.
 */
int ap_engine_finish(struct ap_engine *e);

struct ap_engine *ap_engine_free(struct ap_engine *e);

/*
 * Ask the running engine @e to stop early (async-signal-safe; @sig is the
 * signal, for the log and the exit status 128 + @sig): no further device
 * is probed or published, calls in progress are left unfinished, and
 * ap_engine_finish() returns soon with the links of a prefix of cookie
 * order made.  For SIGINT and SIGTERM outside PID 1 (stop.c forwards them).
 */
void ap_engine_request_stop(struct ap_engine *e, int sig);

/* A human-readable account of what was found, for PID 1's diagnosis. */
void ap_engine_dump_state(struct ap_engine *e, FILE *f);

/* ---------------------------------------------------------------- stop.c */

/*
 * A stop request by signal (stop.c): SIGINT or SIGTERM outside PID 1, for
 * the command line (cli.c) and the initrd unit (init.c).
 */

struct ap_config;
struct ap_engine;

/*
 * Catch SIGINT and SIGTERM (SA_RESTART).  The first one is recorded (see
 * ap_stop_signal()) and handed to the registered engine
 * (ap_stop_set_target(), ap_engine_request_stop(), async-signal-safe); a
 * second one ends the process at once, by the signal's default action.
 */
void ap_stop_catch(void);

/*
 * The engine a stop signal goes to, or NULL (before it is freed).  When
 * the signal came already, @e gets it now.  The one registered pointer:
 * the signal handler has no other way to reach the running engine.
 */
void ap_stop_set_target(struct ap_engine *e);

/*
 * Start a run whose engine gets the stop signals: ap_engine_new() with
 * @cfg, ap_stop_set_target(), ap_engine_run() (which, sequentially, is
 * the whole run).  Returns 0, or -errno with nothing left registered or
 * allocated.  Call ap_stop_set_target(NULL) before ap_engine_free().
 */
int ap_stop_engine_start(struct ap_engine **ret, const struct ap_config *cfg);

/* The signal that asked to stop, or 0.  Safe from any thread. */
int ap_stop_signal(void);

/*
 * Sleep @ms milliseconds, or less when a stop signal has come (before
 * or during the sleep).
 */
void ap_stop_sleep_ms(unsigned int ms);

#endif /* ASYNCPROBE_ENGINE_H */
