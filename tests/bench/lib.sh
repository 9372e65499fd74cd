# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# Helpers of the VM benchmarks (tests/bench/*.sh), sourced after
# tests/vm/lib.sh.  Every benchmark prints one JSON object per line on
# stdout (appended to $BENCH_OUT as well when set) and a short table.

# BENCH_RUN, when set (tests/bench/bench-debian.sh), is put first in every
# line as "run", so that the lines of one run can be picked out.
bench_json() {
	local line=$1
	[ -z "${BENCH_RUN:-}" ] || line="{\"run\":\"$BENCH_RUN\",${line#\{}"
	printf '%s\n' "$line"
	[ -z "${BENCH_OUT:-}" ] || printf '%s\n' "$line" >>"$BENCH_OUT"
	BENCH_LINES+=("$line")
}

bench_fail() {
	bench_json "{\"bench\":\"$1\",\"error\":\"$2\"}"
	exit 1
}

# A figure is a number as JSON writes one (-0.318, 6939.799, 1e-3) and
# nothing else: an empty string, null, "n/a", "1.2.3", "1.", inf or nan is
# no figure.  awk reads any of them as some number (most as 0), so every
# helper below checks with this pattern first.
bench_num_re='^-?(0|[1-9][0-9]*)([.][0-9]+)?([eE][-+]?[0-9]+)?$'

# bench_num X: X when it is a figure, else null (for the JSON lines).
bench_num() {
	if [[ $1 =~ $bench_num_re ]]; then printf '%s\n' "$1"; else echo null; fi
}

# bench_ratio A B: A / B with 3 decimals, null when either is no figure or
# B is 0.
bench_ratio() {
	awk -v a="$1" -v b="$2" -v re="$bench_num_re" 'BEGIN {
		if (a !~ re || b !~ re || b + 0 == 0) print "null"
		else printf "%.3f\n", a / b }'
}

# bench_median X...: the median of the figures among the arguments, null
# when there is none.
bench_median() {
	local x v=()
	for x in "$@"; do
		[[ $x =~ $bench_num_re ]] && v+=("$x")
	done
	[ ${#v[@]} -gt 0 ] || { echo null; return; }
	printf '%s\n' "${v[@]}" | sort -g | awk '{ v[NR] = $1 } END {
		if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# bench_load: the host's load when a boot starts ("1-min 5-min 15-min
# load averages, N QEMU guests": the host may be shared, and every VM
# figure is a ratio of boots made close together for that reason).
bench_load() {
	local q
	q=$(pgrep -c qemu-system 2>/dev/null)
	printf '%s, %s QEMU guests' "$(cut -d' ' -f1-3 /proc/loadavg)" "${q:-0}"
}

# bench_le A B: JSON true when A <= B, false otherwise, and false when
# either is no figure (empty, null, text): a goal is never met without data.
# bench_ge A B: the same for A >= B.
bench_le() {
	awk -v a="$1" -v b="$2" -v re="$bench_num_re" \
		'BEGIN { print (a ~ re && b ~ re && a + 0 <= b + 0) ? "true" : "false" }'
}
bench_ge() {
	awk -v a="$1" -v b="$2" -v re="$bench_num_re" \
		'BEGIN { print (a ~ re && b ~ re && a + 0 >= b + 0) ? "true" : "false" }'
}

# bench_table NAME: the JSON lines this run printed, as a table on stderr
# (every key of the first line is a column; stdout stays JSON only).
bench_table() {
	printf '%s\n' "${BENCH_LINES[@]}" | python3 "$top_srcdir/tests/bench/table.py" >&2
}
