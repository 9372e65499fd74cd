/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one stop-signal flag of the command line (cli.c) and of the initrd
 * unit (init.c, --init outside PID 1): SIGINT or SIGTERM asks the run to
 * stop early (engine.c, "A stop request"), and a second one ends the
 * process at once.  The threads of libasync and of the uevent monitor
 * block both signals, so the handler runs on the main thread; other
 * threads read the flag, so it is a lock-free atomic, not just a volatile
 * sig_atomic_t (that is only safe against a handler on the thread that
 * reads it).
 *
 * The engine keeps its own request (struct ap_engine), set for the one
 * engine registered here; the engine calls nothing of this file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "engine/engine.h"

static int stop_sig;
static struct ap_engine *stop_target;
static int stop_in_handler;     /* handlers between loading stop_target and using it */

/*
 * The signal is recorded before the target is read, and
 * ap_stop_set_target() stores the target before it reads the signal: one
 * of the two sees the other's write, so a signal that races with the
 * registration still reaches the engine (twice at worst, which is
 * harmless).
 */
static void on_stop_signal(int sig)
{
	struct ap_engine *target;
	int expected = 0;

	if (!__atomic_compare_exchange_n(&stop_sig, &expected, sig, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	__atomic_add_fetch(&stop_in_handler, 1, __ATOMIC_SEQ_CST);
	target = __atomic_load_n(&stop_target, __ATOMIC_SEQ_CST);
	if (target)
		ap_engine_request_stop(target, sig);
	__atomic_sub_fetch(&stop_in_handler, 1, __ATOMIC_SEQ_CST);
}

void ap_stop_catch(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

void ap_stop_set_target(struct ap_engine *e)
{
	int sig;

	__atomic_store_n(&stop_target, e, __ATOMIC_SEQ_CST);
	/* an engine about to be freed: no handler on another thread still holds it */
	while (!e && __atomic_load_n(&stop_in_handler, __ATOMIC_SEQ_CST))
		sched_yield();
	sig = ap_stop_signal();
	/* a signal that came before: the handler found no engine, or this one */
	if (e && sig)
		ap_engine_request_stop(e, sig);
}

int ap_stop_engine_start(struct ap_engine **ret, const struct ap_config *cfg)
{
	struct ap_engine *e;
	int r;

	r = ap_engine_new(&e, cfg);
	if (r < 0)
		return r;
	ap_stop_set_target(e);
	r = ap_engine_run(e);
	if (r < 0) {
		ap_stop_set_target(NULL);
		ap_engine_free(e);
		return r;
	}
	*ret = e;
	return 0;
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
