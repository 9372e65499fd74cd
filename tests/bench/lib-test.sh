#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The comparison helpers of the benchmarks (tests/bench/lib.sh): a goal is
# "met" only with a figure.  An empty, null or non-numeric figure is never
# <= or >= anything (awk alone reads "" as 0, so bench_le "" 0.3 was true),
# a ratio or median of no figures is null, and what they print is JSON.
# No VM, no root; prints TAP.
set -u
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=tests/bench/lib.sh
. "$srcdir/tests/bench/lib.sh"

n=0 failed=0
# is WANT CMD ARGS...: CMD ARGS prints WANT
is() {
	local want=$1 got
	shift
	got=$("$@" 2>&1)
	n=$((n + 1))
	if [ "$got" = "$want" ]; then
		echo "ok $n - $(printf '%q ' "$@")-> $want"
	else
		failed=$((failed + 1))
		echo "not ok $n - $(printf '%q ' "$@")-> '$got', want '$want'"
	fi
}

# figures
is true bench_le 0.2 0.3
is true bench_le 0.3 0.3
is false bench_le 0.31 0.3
is true bench_le -0.1 0
is true bench_le 1e-3 0.3
is true bench_le 5228 8192
is true bench_ge 7 6
is true bench_ge 0.8 0.8
is false bench_ge 0.79 0.8
# no figure: never met
for x in "" null n/a abc 1.2.3 1. .5 nan inf " 0.1" "0.1 "; do
	is false bench_le "$x" 0.3
	is false bench_ge "$x" -1
done
is false bench_le 0.2 ""
is false bench_le 0.2 null
is false bench_ge 7 ""

is 0.250 bench_ratio 1 4
is null bench_ratio "" 4
is null bench_ratio 1 ""
is null bench_ratio abc 4
is null bench_ratio 1 0
is null bench_ratio null 4

is null bench_median
is null bench_median ""
is null bench_median null n/a
is 2 bench_median 3 1 2
is 2.500 bench_median 4 1 3 2
is 3.000 bench_median null 2 "" x 4

is 0.318 bench_num 0.318
is 1024 bench_num 1024
is null bench_num ""
is null bench_num abc
is null bench_num 1.

# every line a JSON value
if command -v python3 >/dev/null; then
	bad=
	for v in "$(bench_median)" "$(bench_median 1 2)" "$(bench_ratio "" 1)" "$(bench_ratio 1 3)" \
		"$(bench_num "")" "$(bench_num 0.5)" "$(bench_le "" 1)" "$(bench_ge 2 1)"; do
		python3 -c 'import json, sys; json.loads(sys.argv[1])' "$v" 2>/dev/null || bad+=" '$v'"
	done
	n=$((n + 1))
	if [ -z "$bad" ]; then echo "ok $n - the helpers print JSON values"; else
		failed=$((failed + 1)); echo "not ok $n - not JSON:$bad"; fi
else
	n=$((n + 1)); echo "ok $n - the helpers print JSON values # SKIP python3 is not installed"
fi

echo "1..$n"
[ "$failed" = 0 ]
