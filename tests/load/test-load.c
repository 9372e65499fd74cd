/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Load test for libasync: many calls with random nesting across several
 * domains, optionally under chaos delays, checking every ordering
 * invariant of the core after the fact.
 *
 *   test-load [CALLS] [SEED]
 *
 * CALLS defaults to $LOAD_CALLS or 1000000, SEED to $LOAD_SEED or 1.  With
 * ASYNC_CHAOS set in the environment the library adds its random delays.
 * Prints TAP.
 *
 * What is checked, per domain D and for every pair of calls a, b in D with
 * cookie(a) < cookie(b):
 *   1. a completed before b returned from synchronizing on its own cookie
 *      (the in-order retirement guarantee), checked in O(n) as
 *      max(done_seq over all earlier a) < passed_seq(b);
 *   2. a call that synchronizes on ASYNC_COOKIE_MAX from inside itself (the
 *      self-deadlock case) returns having waited for every earlier call;
 * and globally:
 *   3. every cookie handed out is unique and increases in each thread;
 *   4. async_synchronize_full() returns only when every call in every
 *      registered domain, nested ones included, has completed;
 *   5. exclusive domains are not waited for by full sync, but are by their
 *      own async_synchronize_full_domain().
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async.h"

#define NDOMAINS 5
#define MAX_DEPTH 3

static ASYNC_DOMAIN(dom_a);
static ASYNC_DOMAIN(dom_b);
static ASYNC_DOMAIN(dom_c);
static ASYNC_DOMAIN_EXCLUSIVE(dom_x);
static ASYNC_DOMAIN_EXCLUSIVE(dom_y);
static struct async_domain *domains[NDOMAINS] = { &dom_a, &dom_b, &dom_c, &dom_x, &dom_y };
static const bool registered[NDOMAINS] = { true, true, true, false, false };

struct call {
	async_cookie_t cookie;
	_Atomic unsigned int domain_p1; /* domain + 1; 0 while the slot is being filled */
	unsigned int domain;
	unsigned int depth;
	uint32_t rnd;
	_Atomic uint64_t passed_seq;   /* when its own sync returned */
	_Atomic uint64_t done_seq;     /* when it finished */
	_Atomic int state;             /* 0 scheduled, 1 done */
	/*
	 * Calls this one ran inside of, on the same thread: the synchronous
	 * fallback (over the pending bound) runs a nested call in its parent,
	 * which by the self-synchronization rule it cannot wait for.
	 */
	struct call *anc[MAX_DEPTH + 1];
	unsigned int nanc;
};

static struct call *calls;
static _Atomic size_t ncalls;       /* slots handed out */
static size_t max_calls;
static _Atomic uint64_t seq = 1;
static _Atomic uint64_t self_syncs;
static _Atomic uint64_t schedule_order_errors;
static _Atomic uint64_t overflow;
static _Thread_local async_cookie_t last_cookie_seen;
static _Thread_local struct call *running[MAX_DEPTH + 2];
static _Thread_local unsigned int nrunning;

static int tap_n;
static int tap_failed;

static void ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	printf("%s %d - ", cond ? "ok" : "not ok", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond)
		tap_failed++;
	fflush(stdout);
}

static uint32_t xorshift(uint32_t *s)
{
	uint32_t x = *s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x ? x : 0x9e3779b9u;
}

static void work(void *data, async_cookie_t cookie);

/* Reserve a slot and schedule a call into @d; returns false when full. */
static bool spawn(unsigned int d, unsigned int depth, uint32_t rnd)
{
	size_t i = atomic_fetch_add(&ncalls, 1);
	struct call *c;
	async_cookie_t ck, prev;

	if (i >= max_calls) {
		atomic_fetch_add(&overflow, 1);
		return false;
	}
	c = &calls[i];
	c->domain = d;
	c->depth = depth;
	c->rnd = rnd ? rnd : 1;
	atomic_store(&c->domain_p1, d + 1);
	prev = last_cookie_seen;
	ck = async_schedule_domain(work, c, domains[d]);
	/*
	 * Cookies strictly increase as seen by any one thread (a call run
	 * inline may have scheduled later ones before this returned).
	 */
	if (ck <= prev)
		atomic_fetch_add(&schedule_order_errors, 1);
	if (ck > last_cookie_seen)
		last_cookie_seen = ck;
	return true;
}

static void work(void *data, async_cookie_t cookie)
{
	struct call *c = data;
	uint32_t r = c->rnd;
	unsigned int k, nchildren;

	c->cookie = cookie;
	for (k = 0; k < nrunning && k <= MAX_DEPTH; k++)
		c->anc[c->nanc++] = running[k];
	running[nrunning++] = c;
	/* Some calls synchronize on "everything" from inside: must not deadlock. */
	if (xorshift(&r) % 97 == 0) {
		async_synchronize_cookie_domain(ASYNC_COOKIE_MAX, domains[c->domain]);
		atomic_fetch_add(&self_syncs, 1);
	} else {
		async_synchronize_cookie_domain(cookie, domains[c->domain]);
	}
	atomic_store(&c->passed_seq, atomic_fetch_add(&seq, 1));

	/* Nested calls, scheduled from inside, into random domains. */
	/*
	 * Calls of registered domains nest into any domain; calls of exclusive
	 * domains only into their own, since full sync does not wait for them
	 * and must be judged on registered calls alone.
	 */
	nchildren = c->depth < MAX_DEPTH ? xorshift(&r) % 4 : 0;
	for (k = 0; k < nchildren; k++) {
		unsigned int d = registered[c->domain] ? xorshift(&r) % NDOMAINS : c->domain;

		if (!spawn(d, c->depth + 1, xorshift(&r)))
			break;
	}

	nrunning--;
	atomic_store(&c->done_seq, atomic_fetch_add(&seq, 1));
	atomic_store(&c->state, 1);
}

static bool is_ancestor(const struct call *c, const struct call *a)
{
	unsigned int k;

	for (k = 0; k < c->nanc; k++)
		if (c->anc[k] == a)
			return true;
	return false;
}

static int cmp_cookie(const void *a, const void *b)
{
	const struct call *x = *(struct call *const *)a, *y = *(struct call *const *)b;

	return x->cookie < y->cookie ? -1 : x->cookie > y->cookie;
}

int main(int argc, char **argv)
{
	const char *env;
	size_t top, i, n, bad_order = 0, missing_reg = 0, missing_excl = 0, dup = 0;
	uint32_t rnd;
	unsigned int d;
	struct call **by_domain[NDOMAINS];
	size_t count[NDOMAINS] = { 0 };

	env = getenv("LOAD_CALLS");
	max_calls = argc > 1 ? strtoull(argv[1], NULL, 0) : env ? strtoull(env, NULL, 0) : 1000000;
	env = getenv("LOAD_SEED");
	rnd = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 0) : env ? (uint32_t)strtoul(env, NULL, 0) : 1;
	if (max_calls < 100)
		max_calls = 100;
	calls = calloc(max_calls, sizeof(*calls));
	if (!calls) {
		/* a TAP skip: exit status 77 would be an ERROR under the TAP driver */
		printf("1..0 # SKIP not enough memory for %zu call records\n", max_calls);
		return 0;
	}
	printf("1..7\n");
	printf("# %zu calls, seed %u, ASYNC_CHAOS=%s\n", max_calls, rnd,
	       getenv("ASYNC_CHAOS") ? getenv("ASYNC_CHAOS") : "(off)");

	async_set_enabled(true);
	/* Top-level calls take about a quarter; nesting fills the rest. */
	top = max_calls / 4;
	for (i = 0; i < top; i++)
		if (!spawn(xorshift(&rnd) % NDOMAINS, 0, xorshift(&rnd)))
			break;

	async_synchronize_full();
	/* 4: everything in registered domains is done, nested calls included. */
	n = atomic_load(&ncalls);
	if (n > max_calls)
		n = max_calls;
	for (i = 0; i < n; i++) {
		unsigned int dp1 = atomic_load(&calls[i].domain_p1);

		/* dp1 == 0: an exclusive call is still filling the slot */
		if (dp1 && registered[dp1 - 1] && !atomic_load(&calls[i].state))
			missing_reg++;
	}
	ok(missing_reg == 0, "full sync waited for all %zu calls of registered domains (%zu missing)",
	   n, missing_reg);

	for (d = 0; d < NDOMAINS; d++)
		if (!registered[d])
			async_synchronize_full_domain(domains[d]);
	/* Exclusive domains may still schedule into registered ones: settle. */
	async_synchronize_full();
	for (d = 0; d < NDOMAINS; d++)
		if (!registered[d])
			async_synchronize_full_domain(domains[d]);
	n = atomic_load(&ncalls);
	if (n > max_calls)
		n = max_calls;
	for (i = 0; i < n; i++)
		if (!atomic_load(&calls[i].state))
			missing_excl++;
	ok(missing_excl == 0, "every call completed after the exclusive domains were synchronized (%zu missing)",
	   missing_excl);

	/* 1, 2: in-order retirement per domain, in O(n). */
	for (d = 0; d < NDOMAINS; d++) {
		by_domain[d] = malloc(n * sizeof(struct call *));
		if (!by_domain[d]) {
			printf("Bail out! out of memory\n");
			return 1;
		}
	}
	for (i = 0; i < n; i++) {
		d = calls[i].domain;
		by_domain[d][count[d]++] = &calls[i];
	}
	/*
	 * Keep the calls with the TOPK latest completions among the earlier
	 * cookies: a call has at most MAX_DEPTH + 1 inline ancestors to
	 * exclude, so the latest non-ancestor is among them.
	 */
	for (d = 0; d < NDOMAINS; d++) {
		enum { TOPK = MAX_DEPTH + 2 };
		struct call *top_done[TOPK] = { NULL };

		qsort(by_domain[d], count[d], sizeof(struct call *), cmp_cookie);
		for (i = 0; i < count[d]; i++) {
			struct call *c = by_domain[d][i];
			unsigned int k, j;

			if (i > 0 && by_domain[d][i - 1]->cookie == c->cookie)
				dup++;
			for (k = 0; k < TOPK && top_done[k]; k++) {
				if (is_ancestor(c, top_done[k]))
					continue;
				if (atomic_load(&top_done[k]->done_seq) >= atomic_load(&c->passed_seq))
					bad_order++;
				break;
			}
			/* insert c, sorted by done_seq, latest first */
			for (k = 0; k < TOPK; k++)
				if (!top_done[k] || atomic_load(&top_done[k]->done_seq) < atomic_load(&c->done_seq))
					break;
			if (k < TOPK) {
				for (j = TOPK - 1; j > k; j--)
					top_done[j] = top_done[j - 1];
				top_done[k] = c;
			}
		}
	}
	ok(bad_order == 0, "no call passed its own cookie before an earlier call of its domain finished (%zu violations)",
	   bad_order);
	ok(atomic_load(&self_syncs) > 0, "%" PRIu64 " calls synchronized on everything from inside and returned",
	   atomic_load(&self_syncs));
	ok(dup == 0, "cookies are unique (%zu duplicates)", dup);
	ok(atomic_load(&schedule_order_errors) == 0, "cookies increase in every scheduling thread (%" PRIu64 " errors)",
	   atomic_load(&schedule_order_errors));
	{
		size_t depth_hist[MAX_DEPTH + 1] = { 0 };

		for (i = 0; i < n; i++)
			depth_hist[calls[i].depth]++;
		ok(n >= max_calls / 2 && depth_hist[MAX_DEPTH] > 0,
		   "ran %zu calls, nested to depth %d (per depth: %zu %zu %zu %zu)", n, MAX_DEPTH,
		   depth_hist[0], depth_hist[1], depth_hist[2], depth_hist[3]);
	}
	if (async_quiesce() < 0)
		printf("# async_quiesce failed\n");
	for (d = 0; d < NDOMAINS; d++)
		free(by_domain[d]);
	free(calls);
	return tap_failed ? 1 : 0;
}
