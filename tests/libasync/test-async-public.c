/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Links the installed form of the library (libasync.la, shared when built)
 * and uses only the public header: the exported API works as a user sees it.
 */
#include <stdio.h>

#include "async.h"

static unsigned int next = 1;
static unsigned int bad;

static void call(void *data, async_cookie_t cookie)
{
	async_synchronize_cookie(cookie);
	if ((uintptr_t)data != next)
		bad++;
	next++;
}

int main(void)
{
	struct async_stats st;
	unsigned int n = 0;

	printf("1..3\n");
	async_set_enabled(true);
	for (uintptr_t i = 1; i <= 5000; i++)
		async_schedule(call, (void *)i);
	async_synchronize_full();
	printf("%s %u - 5000 calls retire in cookie order\n", !bad && next == 5001 ? "ok" : "not ok", ++n);
	async_get_stats(&st);
	printf("%s %u - stats: %llu scheduled, %llu completed\n",
	       st.scheduled == 5000 && st.completed == 5000 ? "ok" : "not ok", ++n,
	       (unsigned long long)st.scheduled, (unsigned long long)st.completed);
	printf("%s %u - async_quiesce\n", async_quiesce() == 0 ? "ok" : "not ok", ++n);
	return 0;
}
