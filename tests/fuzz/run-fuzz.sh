#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Short libFuzzer runs of every target (build with
#   CC=clang ./configure --enable-fuzz --disable-shared && make).
#
#   tests/fuzz/run-fuzz.sh [SECONDS [TARGET...]]   default 60 s, all targets
#
# The seed corpus is copied to a temporary directory, so the source tree is
# never written; new inputs that found coverage are left there and their
# directory is printed.  Crashes are written to the current directory as
# crash-*, which is what to attach to a report.  For long runs, pass e.g.
# 3600, or run a target by hand with -jobs=N -workers=N.
set -u
secs=${1:-${FUZZ_SECONDS:-60}}
shift $(( $# > 0 ? 1 : 0 ))
targets=${*:-encode names cmdline}
b=${top_builddir:-.}/tests/fuzz
c=${top_srcdir:-$(dirname "$0")/../..}/tests/fuzz/corpus
status=0
for t in $targets; do
	bin="$b/fuzz-$t"
	if [ ! -x "$bin" ]; then
		echo "run-fuzz: $bin not built (configure --enable-fuzz with CC=clang)" >&2
		exit 77
	fi
	work=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-$t.XXXXXX")
	cp "$c/$t"/* "$work"/
	echo "== fuzz-$t for ${secs}s, corpus $work"
	if ! "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "$work" 2>"$work.log"; then
		status=1
		tail -40 "$work.log"
	else
		grep -E "stat::number_of_executed_units|stat::new_units_added|Done [0-9]+ runs" "$work.log"
	fi
done
exit $status
