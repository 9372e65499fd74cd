#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# "make bench-vm": every benchmark of issues 6 and 15 from one command, from
# a build tree.  The core benchmark (bench-core, issue 1) first, then the VM
# benchmarks (time-to-root, fastboot, hung, scale).  JSON lines go to stdout and to
# tests/bench/results.jsonl in the build tree, tables to stderr; the plot
# (tests/bench/plot.py) is written to tests/bench/bench.svg.
#
# Environment: BENCH_PAIRS (3), BENCH_ONLY (a space-separated subset of
# "core time-to-root fastboot hung scale"; "debian-itools", initramfs-tools with
# and without the hook on the installed Debian fixture, runs only when
# named here, as root).
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
export top_srcdir top_builddir
BENCH_OUT=$top_builddir/tests/bench/results.jsonl
export BENCH_OUT
mkdir -p "$top_builddir/tests/bench"
: >"$BENCH_OUT"
only=${BENCH_ONLY:-core time-to-root fastboot hung scale}
rc=0
for b in $only; do
	case $b in
	core)
		"$top_builddir/tests/bench/bench-core" | tee -a "$BENCH_OUT" || rc=1 ;;
	*)
		bash "$top_srcdir/tests/bench/$b.sh" || rc=1 ;;
	esac
done
python3 "$top_srcdir/tests/bench/plot.py" "$BENCH_OUT" "$top_builddir/tests/bench/bench.svg" && \
	echo "plot: $top_builddir/tests/bench/bench.svg" >&2
exit $rc
