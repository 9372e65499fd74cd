/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ASYNC_CHAOS is read at the library's first use: set it, use the library,
 * see chaos delays happen; and a bad value leaves chaos off with a warning.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async.h"
#include "libasync/async-internal.h"

static unsigned int done;

static void call(void *data, async_cookie_t cookie)
{
	async_synchronize_cookie(cookie);
	if (done + 1 != (unsigned int)(uintptr_t)data)
		abort();
	done = (unsigned int)(uintptr_t)data;
}

int main(int argc, char **argv)
{
	uint64_t delays;

	printf("1..2\n");
	if (setenv("ASYNC_CHAOS", "4242", 1) < 0)
		return 1;
	async_set_enabled(true);
	for (uintptr_t i = 1; i <= 200; i++)
		async_schedule(call, (void *)i);
	async_synchronize_full();
	delays = __atomic_load_n(&async_core.test_chaos_delays, __ATOMIC_SEQ_CST);
	printf("%s 1 - ASYNC_CHAOS=4242 injects delays (%llu), order kept (%u calls)\n",
	       delays > 0 && done == 200 ? "ok" : "not ok", (unsigned long long)delays, done);
	async_set_chaos(0);
	delays = __atomic_load_n(&async_core.test_chaos_delays, __ATOMIC_SEQ_CST);
	for (unsigned int i = 0; i < 50; i++)
		async_chaos_point();
	printf("%s 2 - async_set_chaos(0) turns it off\n",
	       __atomic_load_n(&async_core.test_chaos_delays, __ATOMIC_SEQ_CST) == delays ?
	       "ok" : "not ok");
	return async_quiesce() == 0 ? 0 : 1;
}
