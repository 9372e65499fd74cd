#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Resolve real modaliases against a real module index: Debian's
# linux-image-*-amd64 package, fetched with apt-get download, unpacked with
# dpkg-deb -x into a cache directory and indexed with depmod (the package
# ships no modules.dep; its postinst makes it).  No installation, no root
# needed once the cache exists.  Prints TAP.
#
# Environment: ASYNCPROBE_TEST_CACHE (default /var/cache/asyncprobe-test,
# or $TMPDIR/asyncprobe-test when that is not writable).
set -u

builddir=${top_builddir:-$(pwd)}
prog="$builddir/src/asyncprobe/asyncprobe"
cache=${ASYNCPROBE_TEST_CACHE:-/var/cache/asyncprobe-test}

skip() { echo "1..0 # SKIP $*"; exit 0; }

for tool in dpkg-deb depmod; do
	command -v "$tool" >/dev/null 2>&1 || PATH=$PATH:/sbin:/usr/sbin
	command -v "$tool" >/dev/null 2>&1 || skip "$tool not installed"
done
if ! mkdir -p "$cache" 2>/dev/null || [ ! -w "$cache" ]; then
	cache=${TMPDIR:-/tmp}/asyncprobe-test
	mkdir -p "$cache" || skip "no writable cache directory"
fi

# One fetcher/unpacker at a time (make -j, distcheck next to check).
exec 9>"$cache/.lock"
flock 9 2>/dev/null || true

# The newest linux-image-<abi>-amd64 .deb in the cache, else download the
# one the linux-image-amd64 metapackage currently depends on.
find_deb() {
	ls "$cache"/linux-image-[0-9]*-amd64_*_amd64.deb 2>/dev/null | sort -V | tail -1
}
deb=$(find_deb)
if [ -z "$deb" ]; then
	command -v apt-get >/dev/null 2>&1 || skip "no cached kernel package and no apt-get"
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -1)
	[ -n "$pkg" ] || skip "apt knows no linux-image-amd64 (apt-get update needed?)"
	(cd "$cache" && apt-get download -q "$pkg" >"$cache/.download.log" 2>&1) ||
		skip "apt-get download $pkg failed: $(tail -1 "$cache/.download.log")"
	deb=$(find_deb)
	[ -n "$deb" ] || skip "apt-get download $pkg left no .deb in $cache"
fi

name=$(basename "$deb" .deb)
root="$cache/root-$name"
if [ ! -f "$root/.ready" ]; then
	rm -rf "$root"
	mkdir -p "$root" && dpkg-deb -x "$deb" "$root" || skip "dpkg-deb -x $deb failed"
	kver=$(ls "$root/lib/modules" 2>/dev/null | head -1)
	[ -n "$kver" ] || skip "$deb holds no lib/modules"
	depmod -b "$root" "$kver" || skip "depmod -b $root $kver failed"
	touch "$root/.ready"
fi
kver=$(ls "$root/lib/modules" | head -1)
moddir="$root/lib/modules/$kver"

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }

# Module names of a plan, in load order, one line.
plan() {
	"$prog" -q "$@" | sed -n 's|^insmod \([^ ]*\).*|\1|p; s|^builtin \(.*\)|\1|p' |
		sed 's|.*/||; s|\.ko.*$||' | tr -- '-\n' '_ ' | sed 's/ $//'
}

# expect_plan ALIAS "mod1 mod2 ..." : the plan ends with the module and holds the
# dependencies before it, in the given relative order.
expect_plan() {
	local alias=$1 want=$2 got
	got=$(plan -b "$root" --resolve-modalias="$alias")
	# want is a subsequence of got, and got ends with want's last word
	if awk -v got="$got" -v want="$want" 'BEGIN {
		ng = split(got, g, " "); nw = split(want, w, " "); j = 1
		for (i = 1; i <= ng && j <= nw; i++) if (g[i] == w[j]) j++
		exit !(j > nw && g[ng] == w[nw]) }'; then
		ok "$alias -> $got"
	else
		nok "$alias: expected (in order) $want, got: $got"
	fi
}

echo "# module tree $moddir"
# QEMU's ICH9 AHCI controller
expect_plan 'pci:v00008086d00002922sv00001AF4sd00001100bc01sc06i01' \
	'scsi_common scsi_mod libata libahci ahci'
# SCSI disk and CD-ROM
expect_plan 'scsi:t-0x00' 'scsi_mod sd_mod'
expect_plan 'scsi:t-0x05' 'scsi_mod sr_mod'
expect_plan 'scsi:t-0x05' 'cdrom sr_mod'
# virtio block and SCSI
expect_plan 'virtio:d00000002v00001AF4' 'virtio_blk'
expect_plan 'virtio:d00000008v00001AF4' 'scsi_mod virtio_scsi'
# QEMU NVMe
expect_plan 'pci:v00001B36d00000010sv00001AF4sd00001100bc01sc08i02' 'nvme_core nvme'
# LSI 53c895a (QEMU's lsi), MegaRAID SAS
expect_plan 'pci:v00001000d00000012sv00000000sd00000000bc01sc00i00' 'scsi_mod sym53c8xx'
expect_plan 'pci:v00001000d0000005Bsv00001000sd00009276bc01sc04i00' 'scsi_mod megaraid_sas'
# USB mass storage interface
expect_plan 'usb:v0781p5567d0100dc00dsc00dp00ic08isc06ip50in00' 'usb_common usbcore usb_storage'

# The same through -S and through --modules-dir.
a=$(plan -b "$root" -S "$kver" --resolve-modalias='scsi:t-0x00')
b=$(plan --modules-dir="$moddir" --resolve-modalias='scsi:t-0x00')
c=$(plan -b "$root" --resolve-modalias='scsi:t-0x00')
[ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" = "$c" ] && ok "-b, -b -S and --modules-dir agree: $a" ||
	nok "-b -S: '$a', --modules-dir: '$b', -b: '$c'"

# An alias nothing claims: status 1, nothing printed.
out=$("$prog" -q -b "$root" --resolve-modalias='pci:v0000FFFEd0000FFFEsv00000000sd00000000bcFFscFFi00')
st=$?
[ "$st" = 1 ] && [ -z "$out" ] && ok "unknown alias: status 1, no plan" ||
	nok "unknown alias: status $st, output '$out'"

# A tree that does not exist is a configuration error (2), said clearly.
err=$("$prog" --modules-dir="$root/nonexistent" --resolve-modalias='scsi:t-0x00' 2>&1 >/dev/null)
st=$?
[ "$st" = 2 ] && echo "$err" | grep -q "no module tree" && ok "missing tree: status 2: $err" ||
	nok "missing tree: status $st, message '$err'"
err=$("$prog" --dry-run --no-links -b "$root/nonexistent" 2>&1 >/dev/null)
st=$?
[ "$st" = 2 ] && ok "engine with a missing -b tree: status 2" || nok "engine with a missing -b tree: status $st: $err"

# A dry run of the whole program on this machine against that tree.
json=$(mktemp)
"$prog" --dry-run --no-links --no-progress -b "$root" --json="$json" 2>"$json.err"
st=$?
if { [ "$st" = 0 ] || [ "$st" = 1 ]; } && grep -q '"modules_dir":"'"$moddir"'"' "$json" &&
	! grep -q '"result":"failed"' "$json"; then
	ok "dry run on this machine with -b: status $st, $(grep -c '"result":"dry-run"' "$json") modules planned"
else
	nok "dry run with -b: status $st: $(cat "$json.err")"
fi
rm -f "$json" "$json.err"

echo "1..$n"
[ "$failed" = 0 ]
