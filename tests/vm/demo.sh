#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The main job in one command, on a fresh Debian 12 machine, as root:
#
#   bash tests/vm/demo.sh
#
# installs the build and test dependencies (tests/install-deps.sh), builds
# asyncprobe out of tree, makes its initramfs for Debian's kernel, boots a
# QEMU (TCG) machine with four SATA disks and three SCSI disks (virtio-scsi
# and MegaRAID), all partitioned, and shows asyncprobe's log, the
# /dev/disk links the booted system sees, the time to root, and where the
# trace and the SVG plot were saved.
#
# Options: --no-deps (do not apt-get), --no-build (use an existing build in
# DEMO_BUILD_DIR), --sequential (boot without fastboot), --compare (also boot
# Debian's initramfs-tools/udev initrd on the same disks and show both times
# to root and whether the links match).  Environment:
# DEMO_BUILD_DIR (default _build-demo in the tree), DEMO_OUT (default
# DEMO_BUILD_DIR/demo), and those of tests/vm/lib.sh.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
deps=1 build=1 fastboot=fastboot compare=0
for a in "$@"; do
	case $a in
	--no-deps) deps=0 ;;
	--no-build) build=0; deps=0 ;;
	--sequential) fastboot= ;;
	--compare) compare=1 ;;
	-h|--help) sed -n '3,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "demo: unknown option $a" >&2; exit 100 ;;
	esac
done
bdir=${DEMO_BUILD_DIR:-$top/_build-demo}
out=${DEMO_OUT:-$bdir/demo}

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
die() { echo "demo: $*" >&2; exit 1; }

if [ "$deps" -eq 1 ]; then
	step "installing dependencies (tests/install-deps.sh)"
	[ "$(id -u)" -eq 0 ] || die "run as root to install dependencies, or pass --no-deps"
	bash "$top/tests/install-deps.sh" || die "installing dependencies failed"
fi
if [ "$build" -eq 1 ]; then
	step "building in $bdir"
	mkdir -p "$bdir"
	(cd "$top" && ./autogen.sh) >"$bdir/autogen-demo.log" 2>&1 ||
		{ tail -20 "$bdir/autogen-demo.log"; die "autogen.sh failed"; }
	(cd "$bdir" && "$top/configure" -q && make -s -j"$(nproc)") >"$bdir/build-demo.log" 2>&1 ||
		{ tail -30 "$bdir/build-demo.log"; die "the build failed (log: $bdir/build-demo.log)"; }
	echo "built $bdir/src/asyncprobe/asyncprobe"
fi
[ -f "$bdir/Makefile" ] || die "no build in $bdir"

export top_srcdir=$top top_builddir=$bdir VM_OUT=$out
# shellcheck source=tests/vm/lib.sh
. "$top/tests/vm/lib.sh"
# The harness speaks TAP to the test driver; here it speaks to a person.
vm_skip_all() { die "cannot run the demo: $*"; }
vm_bail() { die "$*"; }

step "kernel package and disk images (cached in ${ASYNCPROBE_TEST_CACHE:-/var/cache/asyncprobe-test})"
vm_setup
echo "kernel $VM_KVER: $VM_KERNEL"
echo "disks in $VM_IMAGES"

step "asyncprobe-mkinitramfs"
vm_initrd_asyncprobe 2>&1 || die "building the initramfs failed"
echo "image: $VM_INITRD_AP ($(stat -c %s "$VM_INITRD_AP") bytes)"

vm_devices demo
step "booting: ${#VM_DEV_NAMES[@]} disks (4 x AHCI SATA, 2 x virtio-scsi, 1 x MegaRAID), ${fastboot:-sequential}"
cmdline="root=LABEL=$VM_ROOT_LABEL ${fastboot} quiet aptest.dump"
echo "qemu-system-x86_64 -accel tcg -kernel vmlinuz-$VM_KVER -append \"$cmdline\""
vm_boot demo "$VM_INITRD_AP" "$cmdline" 300 2>/dev/null
log=$VM_OUT/demo.log

step "asyncprobe's log (kernel log of the booted system)"
if grep -q '^@@AP kmsg' "$log"; then
	sed -n 's/^@@AP kmsg //p' "$log" | tee "$out/log"
else
	echo "(no asyncprobe lines in the kernel log; console after /init:)"
	vm_after_init "$log" | grep -v '^@@AP' | tail -25
fi
if vm_extract "$log" init.log "$out/init.log"; then
	echo "-- /run/asyncprobe/init.log (milliseconds since boot):"
	cat "$out/init.log"
fi

step "links the booted system sees under /dev/disk"
awk '$1 == "@@AP" && $2 == "link" { printf "  %-70s -> %-14s %s\n", $3, $4, $5 }' "$log"
n=$(grep -c '^@@AP link' "$log")
echo "$n links"

step "time to root"
if vm_reached_root "$log"; then
	echo "the root file system's /sbin/init started at $(vm_uptime "$log") s uptime (TCG, ${VM_SMP} vCPUs; console: $log)"
else
	echo "the boot did not reach the root file system; console: $log"
	vm_after_init "$log" | tail -15
fi

step "trace and plot"
for f in manifest.json trace.json plot.svg; do
	if vm_extract "$log" "$f" "$out/$f"; then
		echo "$f: $out/$f"
	else
		echo "$f: not left in /run/asyncprobe by this build"
	fi
done
if [ "$compare" -eq 1 ]; then
	step "the same machine with Debian's initramfs-tools/udev initrd"
	vm_initrd_debian || die "no Debian initrd for $VM_KVER (needs root to install linux-image-$VM_KVER)"
	vm_boot demo-udev "$VM_INITRD_DEBIAN" "root=LABEL=$VM_ROOT_LABEL quiet" 300 2>/dev/null
	ulog=$VM_OUT/demo-udev.log
	echo "time to root: asyncprobe $(vm_uptime "$log" || echo -) s, udev $(vm_uptime "$ulog" || echo -) s (one boot each; see the benchmarks for ratios)"
	if diff <(vm_links "$ulog") <(vm_links "$log") >"$out/links.diff"; then
		echo "links: the same $(vm_links "$log" | wc -l) names on the same disks as udev (by-diskseq aside)"
	else
		echo "links differ from udev's (< udev, > asyncprobe): $out/links.diff"
		grep '^[<>]' "$out/links.diff" | head -20
	fi
fi
vm_reached_root "$log"
