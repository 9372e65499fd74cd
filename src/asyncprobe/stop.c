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
 * engine.c keeps its own flag (stop_request), set through the @forward
 * callback: it moves into the engine with the configuration (issue 14).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "stop.h"

static int stop_sig;
static void (*stop_forward)(int sig);

static void on_stop_signal(int sig)
{
	void (*forward)(int sig) = __atomic_load_n(&stop_forward, __ATOMIC_SEQ_CST);
	int expected = 0;

	if (!__atomic_compare_exchange_n(&stop_sig, &expected, sig, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	if (forward)
		forward(sig);
}

void ap_stop_catch(void (*forward)(int sig))
{
	struct sigaction sa = { .sa_handler = on_stop_signal, .sa_flags = SA_RESTART };

	__atomic_store_n(&stop_forward, forward, __ATOMIC_SEQ_CST);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
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
