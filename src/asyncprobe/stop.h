/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A stop request by signal (stop.c): SIGINT or SIGTERM outside PID 1, for
 * the command line (cli.c) and the initrd unit (init.c).
 */
#ifndef ASYNCPROBE_STOP_H
#define ASYNCPROBE_STOP_H

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

#endif
