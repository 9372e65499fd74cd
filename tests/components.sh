#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# configure leaves the cmocka and umockdev unit programs out of TESTS when
# the library is missing.  This test makes that visible: one TAP point per
# library, a SKIP naming the programs that were not built.  tests/run-all.sh
# fails on any skip that is not in the README's expected list, so on CI
# (where tests/install-deps.sh installs both) a missing library fails.
# AP_HAVE_CMOCKA and AP_HAVE_UMOCKDEV come from configure (Makefile.am).
echo "1..2"
if [ "${AP_HAVE_CMOCKA:-}" = yes ]; then
	echo "ok 1 - cmocka found: test-async, test-cmdline, test-init, test-encoding, test-links, test-trace built"
else
	echo "ok 1 # SKIP cmocka not found by configure (Debian: libcmocka-dev): test-async, test-cmdline, test-init, test-encoding, test-links, test-names, test-trace not built"
fi
if [ "${AP_HAVE_UMOCKDEV:-}" = yes ]; then
	echo "ok 2 - umockdev found: test-topology and test-names built"
else
	echo "ok 2 # SKIP umockdev not found by configure (Debian: libumockdev-dev): test-topology, test-names not built"
fi
