#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Bad input is refused before any probing: a --dev-dir that is missing or
# not a directory, and --json=, --trace= or --plot= files in a missing
# directory or naming a directory, exit with status 2 and one message that
# names the option and the path (no probing, no summary line).  The
# progress line is drawn on a terminal (a pty) only, never into a pipe or
# a file.  Prints TAP.
set -u

builddir=${top_builddir:-$(pwd)}
prog="$builddir/src/asyncprobe/asyncprobe"
run() { "$builddir/libtool" --mode=execute "$prog" "$@"; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ap-bad-input.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/file"
mkdir "$tmp/dir"

n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; fails=$((fails + 1)); }

# refused ARGS... : status 2, one line of stderr naming what was wrong
cases=(
	"--dev-dir=$tmp/missing|--dev-dir $tmp/missing: No such file or directory"
	"--dev-dir=$tmp/file|--dev-dir $tmp/file: not a directory"
	"--json=$tmp/missing/x.json|--json=$tmp/missing/x.json: directory $tmp/missing: No such file or directory"
	"--json=$tmp/dir|--json=$tmp/dir: is a directory"
	"--trace=$tmp/missing/x.trace|--trace=$tmp/missing/x.trace: directory $tmp/missing: No such file or directory"
	"--plot=$tmp/missing/x.svg|--plot=$tmp/missing/x.svg: directory $tmp/missing: No such file or directory"
	"--plot=$tmp/file/x.svg|--plot=$tmp/file/x.svg: $tmp/file is not a directory"
)
echo "1..$((${#cases[@]} + 3))"
for c in "${cases[@]}"; do
	arg=${c%%|*}
	want="asyncprobe: ${c#*|}"
	run --no-modules "$arg" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq 2 ] && [ "$(cat "$tmp/err")" = "$want" ] && [ ! -s "$tmp/out" ]; then
		ok "$arg: refused up front (status 2, \"$want\")"
	else
		notok "$arg: status $rc, want 2 and only \"$want\""
		sed 's/^/# /' "$tmp/err" "$tmp/out"
	fi
done

# The same outputs in a directory that exists are accepted: a dry run
# writes them (whatever it finds on this machine: status 0 or 1).
run --dry-run --no-modules --no-progress --dev-dir="$tmp/dir" --json="$tmp/dir/run.json" \
	--trace="$tmp/dir/run.trace" --plot="$tmp/dir/run.svg" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -le 1 ] && [ -s "$tmp/dir/run.json" ] && [ -s "$tmp/dir/run.trace" ] && [ -s "$tmp/dir/run.svg" ]; then
	ok "existing directories: the run goes ahead and writes json, trace and plot (status $rc)"
else
	notok "existing directories: status $rc"
	sed 's/^/# /' "$tmp/err"
fi

# Progress: the erase-line escape only where stderr is a terminal.
esc=$(printf '\r\033[K')
run --dry-run --no-modules --dev-dir="$tmp/dir" >"$tmp/out" 2>"$tmp/err"
if grep -qF "$esc" "$tmp/err"; then
	notok "no progress line when stderr is a file"
else
	ok "no progress line when stderr is a file"
fi
if ! command -v script >/dev/null 2>&1 || ! script -qec true /dev/null >/dev/null 2>&1; then
	ok "progress line on a terminal # SKIP script(1) cannot make a pty here"
else
	script -qec "'$builddir/libtool' --mode=execute '$prog' --dry-run --no-modules --dev-dir='$tmp/dir'" \
		/dev/null >"$tmp/tty" 2>&1 </dev/null
	if grep -qF "$esc" "$tmp/tty" && grep -q 'asyncprobe: \[[0-9]*/[0-9]*\]' "$tmp/tty"; then
		ok "progress line on a terminal (a pty that is not the console)"
	else
		notok "progress line on a terminal"
		sed 's/^/# /' "$tmp/tty" | head -5
	fi
fi
exit 0
