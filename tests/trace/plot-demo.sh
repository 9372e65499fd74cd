#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# TAP: plot-demo's runs (simulated concurrent, sequential, 1000 disks; real
# sleeping libasync calls) come out as a valid Chrome trace and a well-formed
# SVG with one bar per call.
demo="${top_builddir:-.}/tests/trace/plot-demo"
check="${top_srcdir:-.}/tests/trace/check-trace.py"

if ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP python3 is needed to validate the outputs"
	# real libasync calls that sleep through their phases, traced by the hook
t "real-call run written" "$demo" --real "$tmp/r.svg" "$tmp/r.json"
t "real-call trace is valid" python3 "$check" chrome "$tmp/r.json" --calls 20
t "real-call plot has 20 bars" python3 "$check" svg "$tmp/r.svg" --calls 20
exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/trace-demo.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

n=0
fails=0
t() {
	desc=$1
	shift
	n=$((n + 1))
	if "$@" >"$tmp/log" 2>&1; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc"
		sed 's/^/# /' "$tmp/log"
		fails=$((fails + 1))
	fi
}

echo "1..13"
# the demo machine: 20 calls; --disks 4 adds a controller and 4 disks with a partition each
t "concurrent run written" "$demo" "$tmp/c.svg" "$tmp/c.json"
t "concurrent trace is valid, several workers" python3 "$check" chrome "$tmp/c.json" --calls 20 --min-workers 2
t "concurrent plot has 20 bars in cookie order" python3 "$check" svg "$tmp/c.svg" --calls 20
summary_ok() {
	python3 "$check" summary "$tmp/c.json" >"$tmp/sum" &&
	head -n 1 "$tmp/sum" | python3 -c '
import json, sys
d = json.loads(sys.stdin.readline())
assert d["calls"] == 20 and d["critical_path_ms"] > 0 and "root found" in d["marks"], d'
}
t "summary of the concurrent trace: figures and critical path" summary_ok
t "sequential run written" "$demo" --sequential --disks 4 "$tmp/s.svg" "$tmp/s.json"
t "sequential trace is valid, everything inline" python3 "$check" chrome "$tmp/s.json" --calls 29 --all-inline
t "sequential plot has 29 bars" python3 "$check" svg "$tmp/s.svg" --calls 29
t "1000-disk run written" "$demo" --disks 1000 "$tmp/l.svg" "$tmp/l.json"
t "1000-disk trace is valid" python3 "$check" chrome "$tmp/l.json" --calls 2021
# readable: rows of at least 10 px, the picture grows with the calls
t "1000-disk plot: 2021 bars, at least 10 px each" python3 "$check" svg "$tmp/l.svg" --calls 2021 --min-height 20210
# real libasync calls that sleep through their phases, traced by the hook
t "real-call run written" "$demo" --real "$tmp/r.svg" "$tmp/r.json"
t "real-call trace is valid" python3 "$check" chrome "$tmp/r.json" --calls 20
t "real-call plot has 20 bars" python3 "$check" svg "$tmp/r.svg" --calls 20
exit 0
