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

# Under ThreadSanitizer: libudev's own (uninstrumented) races are not ours (tests/tsan.supp).
export TSAN_OPTIONS="${TSAN_OPTIONS:-} suppressions=${top_srcdir:-$(dirname "$0")/../..}/tests/tsan.supp"

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

# One alias asked for again and again, from several threads at once: every
# request reports what the first did (a modalias is resolved once per run).
modcache="$builddir/tests/asyncprobe/test-modcache"
unknown='pci:v0000FFFEd0000FFFEsv00000000sd00000000bcFFscFFi00'
if [ -x "$modcache" ]; then
	out=$("$modcache" "$moddir" 'scsi:t-0x00' 'virtio:d00000008v00001AF4' "$unknown" 2>&1)
	st=$?
	printf '%s\n' "$out" | sed 's/^/# /'
	[ "$st" = 0 ] && ok "test-modcache: every alias's 12 requests from 4 threads agree" ||
		nok "test-modcache: status $st"
	printf '%s\n' "$out" | grep -q "^ok - scsi:t-0x00: .* agree: failed 0: sd_mod=dry-run\[.* sd_mod\]$" &&
		ok "test-modcache: scsi:t-0x00 is sd_mod, its dependencies first" ||
		nok "test-modcache: scsi:t-0x00 is not reported as sd_mod's plan"
	printf '%s\n' "$out" | grep -q "^ok - $unknown: .* agree: failed 0:$" &&
		ok "test-modcache: an alias nothing claims loads nothing, every time" ||
		nok "test-modcache: the unclaimed alias reported something"
else
	nok "no $modcache (make check builds it)"
fi

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

# Loading, without touching this kernel: on the scripted sysfs tree of
# test-topology (umockdev), against a copy of the tree under a version no
# kernel runs (so nothing counts as loaded), with a modprobe.d whose install
# commands stand in for insertion.  libahci fails: ahci must fail with the
# device and module named, everything else must go on.
tsan=0
ldd "$prog" 2>/dev/null | grep -q libtsan && tsan=1
srcdir=${top_srcdir:-$(dirname "$0")/../..}
if ! command -v umockdev-run >/dev/null 2>&1; then
	n=$((n + 1)); echo "ok $n - # SKIP umockdev-run not installed"
elif [ "$tsan" = 1 ]; then
	n=$((n + 1)); echo "ok $n - # SKIP umockdev under ThreadSanitizer (GLib is not instrumented)"
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/ap-modload.XXXXXX")
	mkdir -p "$work/root/lib/modules"
	ln -s "$moddir" "$work/root/lib/modules/0.0.0-asyncprobe-test"
	# sd_mod, sr_mod and nvme pull crc-t10dif, which has softdeps: libkmod
	# then plans an insertion instead of an install command.  Keep them out.
	cat >"$work/modprobe.conf" <<-EOF
	blacklist sd_mod
	blacklist sr_mod
	blacklist nvme
	install libahci /bin/false
	options virtio_scsi num_queues=3
	install * echo "\$MODPROBE_MODULE \$CMDLINE_OPTS" >> $work/installed
	EOF
	ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0:detect_leaks=0" \
	ASYNCPROBE_CMDLINE=/dev/null umockdev-run -d "$srcdir/tests/asyncprobe/topology.umockdev" -- \
		"$prog" --no-links --no-progress -b "$work/root" -S 0.0.0-asyncprobe-test \
		-C "$work/modprobe.conf" --device-timeout=0.2 --json="$work/run.json" \
		>"$work/out" 2>"$work/err"
	st=$?
	[ "$st" = 1 ] && ok "a failing module degrades the run: status 1" ||
		nok "status $st (expected 1): $(tail -3 "$work/err")"
	grep -q '0000:00:1f.2: module ahci: dependency libahci failed to load' "$work/err" &&
		ok "the failure names device, module and dependency" ||
		nok "no message naming 0000:00:1f.2, ahci and libahci: $(grep -i ahci "$work/err")"
	grep -q '"device":"0000:00:1f.2",.*"module":"ahci","result":"failed"' "$work/run.json" &&
		grep -q '"device":"virtio2",.*"module":"virtio_scsi","result":"ok"' "$work/run.json" &&
		grep -q '"device":"0:0:0:0",.*"module":"sd_mod","result":"blacklisted"' "$work/run.json" &&
		grep -q '"modules_failed":1' "$work/run.json" &&
		ok "the manifest has ahci failed, virtio_scsi loaded, sd_mod blacklisted, 1 failure" ||
		nok "manifest modules: $(grep '"module"' "$work/run.json")"
	grep -qx 'virtio_scsi num_queues=3 ' "$work/installed" &&
		ok "modprobe.d options reach the install command" ||
		nok "install log: $(cat "$work/installed" 2>/dev/null)"
	order=$(tr -s '\n ' '  ' <"$work/installed")
	case "$order" in
	*"virtio virtio_scsi"*|*"scsi_mod virtio_scsi"*) ok "dependencies before the module: $order" ;;
	*) nok "install order: $order" ;;
	esac

	# modprobe.blacklist= and fastboot on the kernel command line
	echo "quiet fastboot modprobe.blacklist=virtio_scsi,mptsas" >"$work/cmdline"
	: >"$work/installed"
	ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0:detect_leaks=0" \
	ASYNCPROBE_CMDLINE=$work/cmdline umockdev-run -d "$srcdir/tests/asyncprobe/topology.umockdev" -- \
		"$prog" --no-links --no-progress -q -b "$work/root" -S 0.0.0-asyncprobe-test \
		-C "$work/modprobe.conf" --device-timeout=0.2 --json="$work/run2.json" 2>"$work/err2"
	st=$?
	# libahci still fails (degraded, 1); anything else is the run breaking
	[ "$st" = 1 ] && ok "with fastboot and modprobe.blacklist= on the kernel command line: status 1" ||
		nok "with fastboot and modprobe.blacklist= on the kernel command line: status $st (expected 1): $(tail -3 "$work/err2")"
	grep -q '"fastboot":true' "$work/run2.json" && ok "fastboot on the kernel command line is read" ||
		nok "fastboot on the kernel command line not in the manifest: $(grep -o '"fastboot":[a-z]*' "$work/run2.json")"
	if grep -q '"module":"virtio_scsi","result":"blacklisted"' "$work/run2.json" &&
		grep -q '"module":"mptsas","result":"blacklisted"' "$work/run2.json" &&
		! grep -q '^virtio_scsi' "$work/installed"; then
		ok "modprobe.blacklist= on the kernel command line keeps virtio_scsi and mptsas out"
	else
		nok "modprobe.blacklist=: $(grep -E 'virtio_scsi|mptsas' "$work/run2.json")"
	fi

	# A driver that never finishes loading: virtio_scsi's install command
	# sleeps.  With --device-timeout=0.5 its call is abandoned after
	# 0.5 s + 2 s; the run ends long before the sleep does, degraded, and
	# the others are done as usual.
	sed -i 's|^options virtio_scsi .*|install virtio_scsi exec sleep 61.25|' "$work/modprobe.conf"
	# "virtio2: abandoned, no answer after S s loading its driver": S at
	# least the timeout + 2 s (2.5), and well under the sleep (a loaded
	# machine may add seconds to when the hang check looks)
	abandoned_after() {
		local s
		s=$(sed -n 's/.*virtio2: abandoned, no answer after \([0-9]*\.[0-9]\) s loading its driver.*/\1/p' "$1" | head -1)
		[ -n "$s" ] && awk -v s="$s" 'BEGIN { exit !(s >= 2.5 && s < 30) }'
	}
	for mode in --no-fastboot --fastboot; do
		t0=$(date +%s%N)
		ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0:detect_leaks=0" \
		ASYNCPROBE_CMDLINE=/dev/null umockdev-run -d "$srcdir/tests/asyncprobe/topology.umockdev" -- \
			"$prog" --no-links --no-progress $mode -b "$work/root" -S 0.0.0-asyncprobe-test \
			-C "$work/modprobe.conf" --device-timeout=0.5 --json="$work/run3.json" \
			>"$work/out3" 2>"$work/err3"
		st=$?
		ms=$((($(date +%s%N) - t0) / 1000000))
		# the install command left behind must die on SIGTERM: it gets a
		# clean signal mask, not the worker thread's (all blocked)
		pkill -f 'sleep 61.25' 2>/dev/null
		for i in 1 2 3 4 5 6 7 8 9 10; do
			pgrep -f 'sleep 61.25' >/dev/null || break
			sleep 0.2
		done
		if pgrep -f 'sleep 61.25' >/dev/null; then
			nok "$mode: the hung install command does not die on SIGTERM ($(grep -E 'SigBlk|SigIgn' "/proc/$(pgrep -f 'sleep 61.25' | head -1)/status" | tr '\n' ' '))"
			pkill -9 -f 'sleep 61.25'
		else
			ok "$mode: the hung install command dies on SIGTERM (clean signal mask)"
		fi
		if [ "$st" = 1 ] && [ "$ms" -lt 30000 ] &&
			abandoned_after "$work/err3" &&
			grep -q '"name":"virtio2",.*"status":"abandoned while loading its driver"' "$work/run3.json" &&
			grep -q '"abandoned":1,' "$work/run3.json" &&
			grep -q '"device":"0000:00:1f.2",.*"module":"ahci","result":"failed"' "$work/run3.json" &&
			! grep -q '"name":"2:0:2:0"' "$work/run3.json"; then
			ok "$mode: a driver that hangs is abandoned after the timeout + 2 s, the run ends degraded in $ms ms"
		else
			nok "$mode: hung install command: status $st after $ms ms; $(grep -E 'abandon|virtio2' "$work/err3" | head -3)"
		fi
	done

	# SIGINT while that driver hangs, with --device-timeout=30: the run
	# stops at once, without waiting for the timeout (32 s), and says what
	# it left unfinished.  The signal is sent once the install command runs
	# (a sleep of its own length), so the handler is surely set up.
	sed -i 's|exec sleep 61.25|exec sleep 62.75|' "$work/modprobe.conf"
	for mode in --no-fastboot --fastboot; do
		pkill -f 'sleep 62.75' 2>/dev/null
		ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0:detect_leaks=0" \
		ASYNCPROBE_CMDLINE=/dev/null umockdev-run -d "$srcdir/tests/asyncprobe/topology.umockdev" -- \
			"$prog" --no-links --no-progress $mode -b "$work/root" -S 0.0.0-asyncprobe-test \
			-C "$work/modprobe.conf" --device-timeout=30 --json="$work/run4.json" \
			>"$work/out4" 2>"$work/err4" &
		upid=$!
		for i in $(seq 1 300); do
			pgrep -f 'sleep 62.75' >/dev/null && break
			sleep 0.1
		done
		apid=$(pgrep -P "$upid" | head -1)     # umockdev-run runs it as its child
		t0=$(date +%s%N)
		kill -INT "${apid:-$upid}" 2>/dev/null
		wait "$upid"
		st=$?
		ms=$((($(date +%s%N) - t0) / 1000000))
		pkill -f 'sleep 62.75' 2>/dev/null
		if [ "$st" = 130 ] && [ "$ms" -lt 25000 ] &&
			grep -q 'stopping on SIGINT: [1-9][0-9]* calls\? in progress left unfinished' "$work/err4" &&
			grep -q '"name":"virtio2",.*"status":"stopped while loading its driver"' "$work/run4.json" &&
			grep -q '"abandoned":0,"stopped":[1-9][0-9]*,"exit_status":130,' "$work/run4.json"; then
			ok "$mode: SIGINT while a driver hangs stops the run in $ms ms (status 130), the hung call marked stopped"
		else
			nok "$mode: SIGINT while a driver hangs: status $st after $ms ms (signalled ${apid:-umockdev-run}); $(tail -3 "$work/err4" | tr '\n' ' ')"
		fi
	done
	rm -rf "$work"
fi

echo "1..$n"
[ "$failed" = 0 ]
