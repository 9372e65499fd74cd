#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Every test of "make check" and "make check-vm" runs through this wrapper
# (LOG_COMPILER and SH_LOG_COMPILER in Makefile.am): a test that hangs is
# stopped and reported as an error instead of stalling the suite.
#
#   time-limit.sh TEST [ARGS...]
#
# Limits, generous for a loaded two-core machine under sanitizers:
# AP_TEST_TIMEOUT seconds for a host test (default 1800), AP_VM_TEST_TIMEOUT
# for a QEMU boot test, tests/vm/ and tests/init/vm-pid1.sh (default 3600).
# On expiry the test gets SIGTERM, then SIGKILL 30 s later, and the TAP
# stream ends with "Bail out!" naming the limit, which the TAP driver counts
# as an ERROR.
limit=${AP_TEST_TIMEOUT:-1800}
case $1 in
*/tests/vm/*|tests/vm/*|*/vm-pid1.sh|vm-pid1.sh) limit=${AP_VM_TEST_TIMEOUT:-3600} ;;
esac
t0=$(date +%s)
timeout -k 30 "$limit" "$@"
st=$?
if { [ "$st" = 124 ] || [ "$st" = 137 ]; } && [ $(($(date +%s) - t0)) -ge "$limit" ]; then
	echo "Bail out! $1 did not finish within its time limit of $limit s (tests/time-limit.sh)"
fi
exit "$st"
