/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libasync internals shared with the unit tests, which compile async.c
 * into themselves.  Nothing here is exported from libasync.so.
 */
#ifndef ASYNC_INTERNAL_H
#define ASYNC_INTERNAL_H

#include <stdint.h>

/*
 * Test hook: while positive, each entry allocation fails (and decrements
 * it), so the out-of-memory fallback can be exercised.  Guarded by the
 * library lock; set it only while no other thread schedules.
 */
extern unsigned int async_test_fail_alloc;

/* Chaos delays taken so far (atomic), so tests can see chaos is on. */
extern uint64_t async_test_chaos_delays;

#endif /* ASYNC_INTERNAL_H */
