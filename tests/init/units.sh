#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# systemd-analyze verify accepts units/asyncprobe.service, with @sbindir@
# pointing at a directory that holds an executable asyncprobe, and every
# man page named in Documentation= is in the source tree.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"

if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "1..0 # SKIP systemd-analyze is not installed (Debian: systemd)"
	exit 0
fi

tmp=$(mktemp -d /tmp/test-units-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/sbin" "$tmp/units" "$tmp/man/man7" "$tmp/man/man8"
cp /bin/true "$tmp/sbin/asyncprobe"

echo "1..4"
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; }

in="$top_srcdir/units/asyncprobe.service.in"
unit="$tmp/units/asyncprobe.service"
sed -e "s|@sbindir@|$tmp/sbin|g" "$in" >"$unit"

# 1: nothing left unsubstituted, in the source and in what make built
if grep -q '@[a-z]*@' "$unit" || grep -q '@[a-z]*@' "$top_builddir/units/asyncprobe.service"; then
	notok "no @variable@ left in asyncprobe.service"
else
	ok "no @variable@ left in asyncprobe.service"
fi

# 2: the unit as systemd reads it (man pages checked separately below)
if systemd-analyze verify --man=no "$unit" >"$tmp/verify.out" 2>&1 &&
	! grep -q 'asyncprobe' "$tmp/verify.out"; then
	ok "systemd-analyze verify asyncprobe.service"
else
	notok "systemd-analyze verify asyncprobe.service"
	sed 's/^/# /' "$tmp/verify.out"
fi

# 3: the settings the initrd relies on
missing=""
# (a oneshot done before initrd.target, so the claims rules are complete
# at switch_root; not ordered before initrd-root-device.target, which
# waits for udevd's device unit anyway)
for want in '^Type=oneshot$' '^DefaultDependencies=no$' '^ConditionPathExists=/etc/initrd-release$' \
	'^Before=.*initrd\.target' '^Conflicts=.*initrd-switch-root\.target' \
	"^ExecStart=$tmp/sbin/asyncprobe --init" '^ConditionKernelCommandLine=!asyncprobe\.enable=0$'; do
	grep -q "$want" "$unit" || missing="$missing $want"
done
grep -v '^#' "$unit" | grep -q 'initrd-root-device' && missing="$missing (ordered against initrd-root-device.target)"
if [ -z "$missing" ]; then
	ok "asyncprobe.service is a oneshot before initrd.target, DefaultDependencies=no, with the initrd condition and asyncprobe.enable=0's"
else
	notok "asyncprobe.service lacks:$missing"
fi

# 4: every Documentation= man page exists, and verify agrees with them installed
docs=$(sed -n 's/^Documentation=//p' "$unit")
absent=""
for d in $docs; do
	page=${d#man:}
	name=${page%%(*}
	sect=${page#*(}
	sect=${sect%)}
	if [ -f "$top_srcdir/man/$name.$sect" ]; then
		cp "$top_srcdir/man/$name.$sect" "$tmp/man/man$sect/"
	else
		absent="$absent $name.$sect"
	fi
done
if [ -n "$absent" ]; then
	notok "Documentation= names man pages that are not in man/:$absent"
elif MANPATH="$tmp/man" systemd-analyze verify --man=yes "$unit" >"$tmp/verify-man.out" 2>&1 &&
	! grep -q 'asyncprobe' "$tmp/verify-man.out"; then
	ok "systemd-analyze verify --man=yes finds the Documentation= pages"
else
	notok "systemd-analyze verify --man=yes"
	sed 's/^/# /' "$tmp/verify-man.out"
fi
