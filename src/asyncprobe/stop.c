/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one stop-signal flag of the command line (cli.c) and of the initrd
 * unit (init.c, --init outside PID 1): SIGINT or SIGTERM asks the run to
 * stop early (engine.c, "A stop request"), and a second one ends the
 * process at once.  The handler can run on any thread that does not block
 * the signal (an engine thread, say), so the flag is a lock-free atomic,
 * not just a volatile sig_atomic_t: that is only safe against a handler
 * on the thread that reads it.
 *
 * The engine keeps its own request (struct ap_engine), set through the
 * @forward callback for the one engine registered here: a pointer, so
 * this file calls no function of the engine.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "stop.h"

static int stop_sig;
static void (*stop_forward)(struct ap_engine *e, int sig);
static struct ap_engine *stop_target;

static void on_stop_signal(int sig)
{
	void (*forward)(struct ap_engine *e, int sig) =
		__atomic_load_n(&stop_forward, __ATOMIC_SEQ_CST);
	struct ap_engine *target = __atomic_load_n(&stop_target, __ATOMIC_SEQ_CST);
	int expected = 0;

	if (!__atomic_compare_exchange_n(&stop_sig, &expected, sig, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	if (forward && target)
		forward(target, sig);
}

void ap_stop_catch(void (*forward)(struct ap_engine *e, int sig))
{
	struct sigaction sa = { .sa_handler = on_stop_signal, .sa_flags = SA_RESTART };

	__atomic_store_n(&stop_forward, forward, __ATOMIC_SEQ_CST);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

void ap_stop_set_target(struct ap_engine *e)
{
	void (*forward)(struct ap_engine *e, int sig) =
		__atomic_load_n(&stop_forward, __ATOMIC_SEQ_CST);
	int sig;

	__atomic_store_n(&stop_target, e, __ATOMIC_SEQ_CST);
	sig = ap_stop_signal();
	/* a signal that came before: the handler found no engine, or this one */
	if (e && sig && forward)
		forward(e, sig);
}

int ap_stop_signal(void)
{
	return __atomic_load_n(&stop_sig, __ATOMIC_SEQ_CST);
}

void ap_stop_sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !ap_stop_signal())
		;
}
