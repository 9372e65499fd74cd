/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Links the installed form of the library (libasync.la, shared when built)
 * and uses only the public header: the exported API works as a user sees it.
 */
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

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

static int gate[2];

/* Hangs until a byte arrives on the gate. */
static void hanging(void *data, async_cookie_t cookie)
{
	char c;

	(void)data;
	(void)cookie;
	while (read(gate[0], &c, 1) < 0 && errno == EINTR)
		;
}

int main(void)
{
	struct async_stats st;
	unsigned int n = 0;

	printf("1..5\n");
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

	/*
	 * An abandoned call that returns after the last async_quiesce(), and
	 * then the program exits: its thread must not be left for a join that
	 * never comes (ThreadSanitizer reports that as a thread leak).
	 */
	if (pipe(gate) < 0)
		return 1;
	{
		async_cookie_t c = async_schedule(hanging, NULL);
		struct timespec ms = { .tv_nsec = 1000000 };
		int r, q, tries = 0;

		while ((r = async_abandon(c)) == -EAGAIN && tries++ < 10000)
			nanosleep(&ms, NULL);   /* queued: wait until it starts */
		q = async_quiesce();
		printf("%s %u - abandoned (%d), quiesce does not wait for it (%d)\n",
		       r == 0 && q == -EBUSY ? "ok" : "not ok", ++n, r, q);
		if (write(gate[1], "", 1) != 1)
			return 1;
		tries = 0;
		do {
			nanosleep(&ms, NULL);
			async_get_stats(&st);
		} while (st.abandoned_returned != 1 && tries++ < 10000);
		nanosleep(&ms, NULL);   /* let its thread end */
		printf("%s %u - it returned (%llu), and the program exits without joining it\n",
		       st.abandoned_returned == 1 ? "ok" : "not ok", ++n,
		       (unsigned long long)st.abandoned_returned);
	}
	return 0;
}
