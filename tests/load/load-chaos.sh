#!/bin/sh
# libasync load test under chaos delays: LOAD_CHAOS_CALLS calls (default
# 100000; chaos delays make each call slower, so fewer of them).
ASYNC_CHAOS=${LOAD_CHAOS_SEED:-4242}
export ASYNC_CHAOS
exec "${top_builddir:-.}/tests/load/test-load" "${LOAD_CHAOS_CALLS:-100000}" 2
