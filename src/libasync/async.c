/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* STUB: sequential only, so the tree builds; the real core replaces it (issue 2). */
#include <string.h>

#include "async.h"

static async_cookie_t next_cookie = 1;
static __thread int in_call;

static async_cookie_t run(async_func_t *func, void *data)
{
	async_cookie_t c = __atomic_fetch_add(&next_cookie, 1, __ATOMIC_SEQ_CST);

	in_call++;
	func(data, c);
	in_call--;
	return c;
}

async_cookie_t async_schedule(async_func_t *func, void *data) { return run(func, data); }
async_cookie_t async_schedule_domain(async_func_t *func, void *data, struct async_domain *d) { return run(func, data); }
async_cookie_t async_schedule_special(async_func_t *func, void *data, struct async_domain *d) { return run(func, data); }
void async_synchronize_full(void) {}
void async_synchronize_full_domain(struct async_domain *d) {}
void async_synchronize_cookie(async_cookie_t c) {}
void async_synchronize_cookie_domain(async_cookie_t c, struct async_domain *d) {}
void async_synchronize_cookie_special(async_cookie_t c, struct async_domain *d) {}
void async_synchronize_full_special(struct async_domain *d) {}
void async_unregister_domain(struct async_domain *d) {}
bool current_is_async(void) { return in_call > 0; }
void async_set_enabled(bool enabled) {}
bool async_get_enabled(void) { return false; }
unsigned int async_set_max_threads(unsigned int max) { return 256; }
unsigned int async_set_max_pending(unsigned int max) { return 32768; }
int async_quiesce(void) { return 0; }
void async_set_chaos(uint64_t seed) {}
void async_chaos_point(void) {}
void async_set_trace(async_trace_func_t *fn, void *userdata) {}
void async_set_log(async_log_func_t *fn, void *userdata) {}
void async_get_stats(struct async_stats *ret) { memset(ret, 0, sizeof(*ret)); }
