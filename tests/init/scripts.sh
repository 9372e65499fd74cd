#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The dracut module and the initramfs-tools hook and scripts parse (sh -n / bash -n),
# have their paths substituted, and pass shellcheck where it is installed.
# With asyncprobe.enable=0 on the kernel command line the init-top script
# and dracut's pre-trigger hook do nothing and warn of nothing.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"

# script, shell (sh or bash), where make puts it
set -- \
	"src/initramfs/dracut/90asyncprobe/module-setup.sh bash built" \
	"src/initramfs/dracut/90asyncprobe/asyncprobe-pretrigger.sh sh built" \
	"src/initramfs/initramfs-tools/hooks/asyncprobe sh built" \
	"src/initramfs/initramfs-tools/scripts/init-top/asyncprobe sh source" \
	"src/initramfs/initramfs-tools/scripts/panic/asyncprobe sh source" \
	"src/initramfs/initramfs-tools/udev/udev-init-top sh source" \
	"src/initramfs/initramfs-tools/udev/udev-init-bottom sh source"

echo "1..$(($# * 3 + 2))"
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; }
have_shellcheck=no
command -v shellcheck >/dev/null 2>&1 && have_shellcheck=yes

for entry in "$@"; do
	# shellcheck disable=SC2086
	set -- $entry
	rel=$1 shell=$2 where=$3
	if [ "$where" = built ]; then
		f="$top_builddir/$rel"
	else
		f="$top_srcdir/$rel"
	fi
	if [ ! -f "$f" ]; then
		notok "$rel exists"
		n=$((n + 2))
		echo "not ok $((n - 1)) - $rel: $shell -n (missing)"
		echo "not ok $n - $rel: shellcheck (missing)"
		continue
	fi
	if grep -q '@[a-z]*@' "$f" || [ ! -x "$f" ]; then
		notok "$rel is executable, with every @variable@ substituted"
	else
		ok "$rel is executable, with every @variable@ substituted"
	fi
	if out=$("$shell" -n "$f" 2>&1); then
		ok "$rel: $shell -n"
	else
		notok "$rel: $shell -n"
		printf '%s\n' "$out" | sed 's/^/# /'
	fi
	if [ "$have_shellcheck" = no ]; then
		ok "$rel: shellcheck # SKIP shellcheck is not installed (Debian: shellcheck)"
	# SC1091: the sourced hook-functions and /scripts/functions are not here;
	# SC2154: $initdir, $moddir, ... come from dracut
	elif out=$(shellcheck -s "$shell" -e SC1091,SC2154 "$f" 2>&1); then
		ok "$rel: shellcheck -s $shell"
	else
		notok "$rel: shellcheck -s $shell"
		printf '%s\n' "$out" | sed 's/^/# /'
	fi
done

# asyncprobe.enable=0: the init-top script (run) and the pre-trigger hook
# (sourced by dracut's init) with the asyncprobe this tree built, the
# command line and the run directory of the test, and links below a
# directory of the test.  Status 0, nothing made, no warning.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-scripts-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/dev"
{
	echo '#!/bin/sh'
	echo "exec '$top_builddir/libtool' --mode=execute '$top_builddir/src/asyncprobe/asyncprobe' \\"
	echo "	--no-modules --udev-rules=none --dev-dir='$tmp/dev' \"\$@\""
} >"$tmp/asyncprobe"
chmod +x "$tmp/asyncprobe"
echo 'log_warning_msg() { echo "warning: $*"; }' >"$tmp/functions"
sed -e "s|/sbin/asyncprobe|$tmp/asyncprobe|g" -e "s|/scripts/functions|$tmp/functions|" \
	"$top_srcdir/src/initramfs/initramfs-tools/scripts/init-top/asyncprobe" >"$tmp/init-top"
sed -e "s|\"[^\"]*/asyncprobe\"|\"$tmp/asyncprobe\"|g" \
	"$top_builddir/src/initramfs/dracut/90asyncprobe/asyncprobe-pretrigger.sh" >"$tmp/pretrigger"
echo "quiet asyncprobe.enable=0" >"$tmp/cmdline"
for name in init-top pre-trigger; do
	rm -rf "$tmp/run" "$tmp/dev/disk"
	if [ "$name" = init-top ]; then
		out=$(ASYNCPROBE_CMDLINE="$tmp/cmdline" ASYNCPROBE_RUNDIR="$tmp/run" sh "$tmp/init-top" 2>&1)
	else
		# shellcheck disable=SC2016
		out=$(ASYNCPROBE_CMDLINE="$tmp/cmdline" ASYNCPROBE_RUNDIR="$tmp/run" \
			sh -c 'warn() { echo "warning: $*"; }; . "$0"' "$tmp/pretrigger" 2>&1)
	fi
	rc=$?
	if [ "$rc" -eq 0 ] && [ ! -e "$tmp/run" ] && [ ! -e "$tmp/dev/disk" ] &&
		! printf '%s\n' "$out" | grep -q 'warning'; then
		ok "$name: asyncprobe.enable=0 does nothing (status 0)"
	else
		notok "$name: asyncprobe.enable=0: status $rc$([ -e "$tmp/run" ] && echo ", asyncprobe ran")"
		printf '%s\n' "$out" | tail -5 | sed 's/^/# /'
	fi
done
