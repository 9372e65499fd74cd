#!/bin/sh
# libasync load test without chaos: LOAD_CALLS calls (default one million).
# Pipes through POSIX sh only; the program prints TAP.
unset ASYNC_CHAOS
exec "${top_builddir:-.}/tests/load/test-load" "${LOAD_CALLS:-1000000}" 1
