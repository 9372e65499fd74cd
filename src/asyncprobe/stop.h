/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A stop request by signal (stop.c): SIGINT or SIGTERM outside PID 1, for
 * the command line (cli.c) and the initrd unit (init.c).
 */
#ifndef ASYNCPROBE_STOP_H
#define ASYNCPROBE_STOP_H

struct ap_engine;

/*
 * Catch SIGINT and SIGTERM (SA_RESTART).  The first one is recorded (see
 * ap_stop_signal()) and handed to @forward with the registered engine
 * (ap_stop_set_target()), called in the signal handler and so
 * async-signal-safe (ap_engine_request_stop()); @forward may be NULL.  A
 * second one ends the process at once, by the signal's default action.
 */
void ap_stop_catch(void (*forward)(struct ap_engine *e, int sig));

/*
 * The engine a stop signal goes to, or NULL (before it is freed).  When
 * the signal came already, @e gets it now.  The one registered pointer:
 * the signal handler has no other way to reach the running engine.
 */
void ap_stop_set_target(struct ap_engine *e);

/* The signal that asked to stop, or 0.  Safe from any thread. */
int ap_stop_signal(void);

/*
 * Sleep @ms milliseconds, or less when a stop signal has come (before
 * or during the sleep).
 */
void ap_stop_sleep_ms(unsigned int ms);

#endif
