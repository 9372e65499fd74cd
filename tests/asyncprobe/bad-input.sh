#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Bad input is refused before any probing, in every mode (--init outside
# PID 1 too): a --dev-dir that is missing, not a directory or where no link
# can be made (/proc), and --json=, --trace=, --plot= or --udev-rules=
# paths open() would refuse (a missing or non-directory parent, a name or
# component too long, /proc, a directory), exit with status 2 and one
# message that names the option and the path (no probing, no summary
# line).  Directories asyncprobe makes are 0755 whatever the umask.
# asyncprobe.enable=0 on the kernel command line turns --init off.  The
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
# --init reads these instead of /proc/cmdline and /run/asyncprobe
echo "quiet" >"$tmp/cmdline"
export ASYNCPROBE_CMDLINE="$tmp/cmdline" ASYNCPROBE_RUNDIR="$tmp/run"

n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; fails=$((fails + 1)); }
# a path of 100000 bytes, one component of 300
long=$tmp/$(head -c 100000 /dev/zero | tr '\0' a)
longname=$tmp/$(head -c 300 /dev/zero | tr '\0' b)

# Before each case's own option, so that whatever a (broken) build does,
# no link or rules file is made outside $tmp.
safe=(--no-modules --no-progress --dev-dir="$tmp/dir" --udev-rules=none)

# refused ARGS... : status 2, one line of stderr naming what was wrong
cases=(
	"--dev-dir=$tmp/missing|--dev-dir $tmp/missing: No such file or directory"
	"--dev-dir=$tmp/file|--dev-dir $tmp/file: not a directory"
	"--json=$tmp/missing/x.json|--json=$tmp/missing/x.json: directory $tmp/missing: No such file or directory"
	"--json=$tmp/dir|--json=$tmp/dir: is a directory"
	"--trace=$tmp/missing/x.trace|--trace=$tmp/missing/x.trace: directory $tmp/missing: No such file or directory"
	"--plot=$tmp/missing/x.svg|--plot=$tmp/missing/x.svg: directory $tmp/missing: No such file or directory"
	"--plot=$tmp/file/x.svg|--plot=$tmp/file/x.svg: $tmp/file is not a directory"
	"--json=/proc/x.json|--json=/proc/x.json: cannot write: No such file or directory"
	"--trace=/proc/x|--trace=/proc/x: cannot write: No such file or directory"
	"--dev-dir=/proc|--dev-dir /proc: cannot create links there: No such file or directory"
	"--udev-rules=/proc/x.rules|asyncprobe: error: cannot write udev rules to /proc/x.rules: No such file or directory"
)
# the same, where the message is only known to contain this
partial=(
	"--json=$long|--json=$tmp/aaa|: cannot write: File name too long"
	"--trace=$longname|--trace=$tmp/bbb|: cannot write: File name too long"
	"--plot=$long.svg|--plot=$tmp/aaa|: cannot write: File name too long"
	"--dev-dir=$long|--dev-dir $tmp/aaa|: File name too long"
	"--udev-rules=$longname.rules|error: cannot write udev rules to $tmp/bbb|: File name too long"
)
echo "1..$((2 * (${#cases[@]} + ${#partial[@]}) + 12))"
for mode in "" --init; do
	for c in "${cases[@]}" "${partial[@]}"; do
		arg=${c%%|*}
		want=${c#*|}
		case $want in
		*"|"*) start=${want%%|*} end=${want#*|} want="" ;;
		asyncprobe:*) ;;
		*) want="asyncprobe: $want" ;;
		esac
		rm -rf "$tmp/run" "$tmp/dir/disk"
		run ${mode:+"$mode"} "${safe[@]}" "$arg" >"$tmp/out" 2>"$tmp/err"
		rc=$?
		err=$(cat "$tmp/err")
		what="${mode:+$mode }${arg:0:70}$([ ${#arg} -gt 70 ] && echo ...)"
		if [ -n "$want" ]; then
			good=no
			[ "$err" = "$want" ] && good=yes
		else
			good=yes
			case $err in
			*$'\n'*) good=no ;;
			"asyncprobe: $start"*"$end") ;;
			*) good=no ;;
			esac
			want="asyncprobe: $start...$end"
		fi
		if [ "$rc" -eq 2 ] && [ "$good" = yes ] && [ ! -s "$tmp/out" ] &&
			[ ! -e "$tmp/run" ] && [ ! -e "$tmp/dir/disk" ]; then
			ok "$what: refused up front (status 2, \"${want:0:100}\")"
		else
			notok "$what: status $rc, want 2, nothing probed, and only \"${want:0:100}\""
			cut -c1-200 "$tmp/err" "$tmp/out" | sed 's/^/# /' | tail -5
		fi
	done
done
rm -rf "$tmp/run" "$tmp/dir/disk"

# Directories asyncprobe makes get 0755, as udev makes them, under any
# umask: the link directories, in both modes, and --init's run directory.
for mode in --fastboot --init; do
	rm -rf "$tmp/modes" "$tmp/run"
	mkdir "$tmp/modes"
	(umask 077 && run "$mode" --no-modules --no-progress --udev-rules=none --dev-dir="$tmp/modes") \
		>"$tmp/out" 2>"$tmp/err"
	rc=$?
	made=$(find "$tmp/modes" -mindepth 1 -type d | wc -l)
	bad=$(find "$tmp/modes" -mindepth 1 -type d ! -perm 0755 -printf '%m %p\n')
	if [ "$mode" = --init ]; then
		if [ -d "$tmp/run" ]; then
			made=$((made + 1))
			bad="$bad$(find "$tmp/run" -maxdepth 0 ! -perm 0755 -printf '%m %p\n')"
		else
			bad="$bad(no run directory $tmp/run)"
		fi
	fi
	if [ "$rc" -gt 1 ]; then
		notok "umask 077, $mode: status $rc"
		sed 's/^/# /' "$tmp/err" | tail -5
	elif [ -n "$bad" ]; then
		notok "umask 077, $mode: directories made with another mode than 0755"
		printf '%s\n' "$bad" | sed 's/^/# /'
	elif [ "$made" -eq 0 ]; then
		ok "umask 077, $mode: directories are 0755 # SKIP no block device to link here"
	else
		ok "umask 077, $mode: the $made directories made are 0755"
	fi
done
rm -rf "$tmp/run"

# asyncprobe.enable=0 (any false spelling): --init exits 0 at once, before
# its checks, making nothing; the last occurrence counts; without --init
# it means nothing.
for spelling in 0 no off FALSE n; do
	echo "quiet asyncprobe.enable=$spelling" >"$tmp/cmdline"
	rm -rf "$tmp/run" "$tmp/dir/disk"
	run --init "${safe[@]}" --json="$tmp/missing/x.json" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq 0 ] && [ ! -s "$tmp/out" ] && [ ! -e "$tmp/run" ] && [ ! -e "$tmp/dir/disk" ] &&
		! grep -q 'controllers\|--json' "$tmp/err"; then
		ok "asyncprobe.enable=$spelling: --init exits 0 at once"
	else
		notok "asyncprobe.enable=$spelling: --init status $rc, want 0 and nothing done"
		sed 's/^/# /' "$tmp/err" | tail -5
	fi
done
echo "asyncprobe.enable=0 quiet asyncprobe.enable=on" >"$tmp/cmdline"
run --init "${safe[@]}" --json="$tmp/missing/x.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q -- "--json=$tmp/missing/x.json" "$tmp/err"; then
	ok "asyncprobe.enable=0 ... asyncprobe.enable=on: the last one counts, --init runs (its check refuses --json)"
else
	notok "asyncprobe.enable=0 ... asyncprobe.enable=on: status $rc, want 2 from the --json check"
	sed 's/^/# /' "$tmp/err" | tail -5
fi
echo "asyncprobe.enable=0" >"$tmp/cmdline"
run "${safe[@]}" --json="$tmp/missing/x.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 2 ]; then
	ok "asyncprobe.enable=0 does not concern a run without --init (status 2 from its check)"
else
	notok "asyncprobe.enable=0 without --init: status $rc, want 2 from the --json check"
	sed 's/^/# /' "$tmp/err" | tail -5
fi
echo "quiet" >"$tmp/cmdline"
rm -rf "$tmp/run" "$tmp/dir/disk"

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
