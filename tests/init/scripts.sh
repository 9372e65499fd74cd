#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The dracut module and the initramfs-tools hook parse (sh -n / bash -n),
# have their paths substituted, and pass shellcheck where it is installed.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"

# script, shell (sh or bash), where make puts it
set -- \
	"src/initramfs/dracut/90asyncprobe/module-setup.sh bash built" \
	"src/initramfs/dracut/90asyncprobe/asyncprobe-pretrigger.sh sh built" \
	"src/initramfs/initramfs-tools/hooks/asyncprobe sh built" \
	"src/initramfs/initramfs-tools/scripts/init-top/asyncprobe sh source"

echo "1..$(($# * 3))"
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
