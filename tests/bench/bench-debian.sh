#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# "make bench-debian": the integration benchmarks of issue 16 in one run,
# from a build tree, as root: tests/bench/debian-itools.sh (initramfs-tools
# without asyncprobe, with the hook, asyncprobe's own image) and then
# tests/bench/debian-dracut.sh (dracut without and with the module), with
# the same BENCH_PAIRS.  Every JSON line of the run goes to stdout and to
# tests/bench/results-debian.jsonl in the build tree, each with a "run" key
# (the run's UTC start time) so that the lines of one run can be picked out
# of a file that collects several; a first and a last line of its own
# ("bench":"bench-debian") give the host's load when the run started and
# ended and the run's wall time.  Tables go to stderr.
#
# Environment: BENCH_PAIRS (3).
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
export top_srcdir top_builddir
. "$top_srcdir/tests/bench/lib.sh"
if [ "$(id -u)" -ne 0 ]; then
	echo "bench-debian: not root: the benchmarks build and chroot into Debian systems" >&2
	exit 1
fi
BENCH_OUT=$top_builddir/tests/bench/results-debian.jsonl
BENCH_RUN=$(date -u +%Y-%m-%dT%H:%M:%SZ)
BENCH_PAIRS=${BENCH_PAIRS:-3}
export BENCH_OUT BENCH_RUN BENCH_PAIRS
mkdir -p "$top_builddir/tests/bench"
: >"$BENCH_OUT"
t0=$(date +%s)
bench_json "{\"bench\":\"bench-debian\",\"start\":true,\"pairs\":$BENCH_PAIRS,\"load\":\"$(bench_load)\"}"
rc=0
for b in debian-itools debian-dracut; do
	bash "$top_srcdir/tests/bench/$b.sh" || rc=1
done
bench_json "{\"bench\":\"bench-debian\",\"end\":true,\"seconds\":$(($(date +%s) - t0)),\"load\":\"$(bench_load)\",\"status\":$rc}"
echo "bench-debian: JSON lines in $BENCH_OUT" >&2
exit $rc
