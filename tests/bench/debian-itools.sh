#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Time to root of initramfs-tools with asyncprobe's hook against without
# (issue 16, item 3), on the installed Debian fixture of tests/vm/debian-
# fixture.sh: the same system, kernel, disks (root on AHCI, a SATA and a
# virtio-blk data disk) and QEMU settings; the initrd update-initramfs -u
# made before asyncprobe was installed (no hook) and the one it made with
# the hook installed, booted alternately.  The figure is systemd's
# UserspaceTimestampMonotonic in the real system: when the root's systemd
# started, in seconds since the kernel started.  Each pair gives a ratio
# (hook / stock).  Each pair is followed by a boot of asyncprobe's own
# image (asyncprobe-mkinitramfs in the same system, "fastboot" on the
# command line), with its ratio to the same pair's stock boot.  On a
# shared host the kernel's own start (to "Run /init") varies by seconds,
# so each boot's initramfs phase, from "Run /init" to the root's systemd,
# is given as well, with the hook's ratio of it.  From the hook boot it
# also reports what the hook's init-top/udev decided (hook_udevd: "skipped"
# when it started no udevd in the initramfs, the fast path this plain root
# should take, "started" when it ran udev's script; from its line in the
# kernel log), whether asyncprobe's summary line came
# before any udevd started, the last kernel time before "Starting
# systemd-udevd" (the real system's, on the fast path), and asyncprobe's
# own run time from its summary line.  One JSON object per line, then a
# table.
#
# The two boots of a pair run in alternating order (stock first in odd
# pairs, the hook first in even ones), so neither always boots into a
# host the other has just warmed or loaded.
#
# Root only.  Environment: BENCH_PAIRS (2), BENCH_OWN (1; 0 leaves out the
# boots of asyncprobe's own image), BENCH_OUT (where the JSON lines go
# besides stdout).
. "$top_srcdir/tests/vm/lib.sh"
. "$top_srcdir/tests/vm/debian-fixture.sh"
. "$top_srcdir/tests/bench/lib.sh"
[ "$(id -u)" -eq 0 ] || bench_fail debian-itools "not root: debootstrap and chroot need root"
vm_setup >/dev/null
vm_debian_fixture >/dev/null || bench_fail debian-itools "the Debian fixture could not be built"
work=$(mktemp -d "${TMPDIR:-/var/tmp}/debian-itools.XXXXXX")
trap 'vm_rm_tree "$work/root"; rm -rf "$work"' EXIT
trap 'exit 1' INT TERM
vm_debian_prepare "$work" >&2 || bench_fail debian-itools "preparing the system failed"
VM_KERNEL=$work/boot/vmlinuz
vm_debian_devices "$work/disk.img"
cmdline="root=UUID=$VM_DEBIAN_UUID ro"

# ts_before LOG PATTERN: the last kernel timestamp ("[ s.us]") on a line
# before the first line matching PATTERN (an ERE), or null.
ts_before() {
	awk -v p="$2" '$0 ~ p { f = 1; exit }
		match($0, /^\[ *[0-9]+\.[0-9]+\]/) { t = substr($0, RSTART + 1, RLENGTH - 2); sub(/^ +/, "", t) }
		END { print (f && t != "") ? t : "null" }' "$1"
}
# ts_first LOG PATTERN: the kernel timestamp of the first line matching
# PATTERN, or null.
ts_first() {
	awk -v p="$2" '$0 ~ p && match($0, /^\[ *[0-9]+\.[0-9]+\]/) {
		t = substr($0, RSTART + 1, RLENGTH - 2); sub(/^ +/, "", t); print t; f = 1; exit }
		END { if (!f) print "null" }' "$1"
}

# since A B: B - A with 2 decimals, null when either is missing.
since() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "null" || b == "null" || a == "" || b == "") print "null"
		else printf "%.2f\n", b - a }'
}

pairs=${BENCH_PAIRS:-2}
ratios=()
own_ratios=()
init_ratios=()
for ((i = 1; i <= pairs; i++)); do
	first=stock
	[ $((i % 2)) -eq 1 ] || first=hook
	[ "$first" = stock ] || vm_debian_boot "itools-hook-$i" "$work/boot/initrd-hook.img" "$cmdline" 900
	vm_debian_boot "itools-stock-$i" "$work/boot/initrd-stock.img" "$cmdline" 900
	s=$(vm_debian_time_to_root "$VM_OUT/itools-stock-$i.log") || s=null
	si=$(ts_first "$VM_OUT/itools-stock-$i.log" 'Run /init as init process')
	[ "$first" = hook ] || vm_debian_boot "itools-hook-$i" "$work/boot/initrd-hook.img" "$cmdline" 900
	log=$VM_OUT/itools-hook-$i.log
	h=$(vm_debian_time_to_root "$log") || h=null
	r=$(bench_ratio "$h" "$s")
	[ "$r" = null ] || ratios+=("$r")
	hi=$(ts_first "$log" 'Run /init as init process')
	udevstart=$(ts_before "$log" 'Starting systemd-udevd')
	before=false
	awk '/asyncprobe(\[[0-9]+\])?: [0-9]+ controllers/ && !a { a = NR } /Starting systemd-udevd/ && !u { u = NR }
		END { exit !(a && u && a < u) }' "$log" && before=true
	# its line in the kernel log (the file's contents are not dumped: no aptest.dump)
	hook_udevd=null
	if grep -q 'asyncprobe: root .* found; udevd not started in the initramfs' "$log"; then
		hook_udevd='"skipped"'
	elif grep -q 'asyncprobe: starting udev in the initramfs' "$log"; then
		hook_udevd='"started"'
	fi
	apms=$(sed -n 's/.*asyncprobe\(\[[0-9]*\]\)\{0,1\}: [0-9]* controllers, .* links, .*, \([0-9.]*\) ms (.*/\2/p' "$log" | head -1)
	# asyncprobe's own image, same system and disks, "fastboot" as
	# time-to-root.sh gives it (the hook's script passes --fastboot)
	o=null oi=null
	if [ "${BENCH_OWN:-1}" != 0 ]; then
		vm_debian_boot "itools-own-$i" "$work/boot/initrd-own.img" "$cmdline fastboot" 900
		o=$(vm_debian_time_to_root "$VM_OUT/itools-own-$i.log") || o=null
		oi=$(ts_first "$VM_OUT/itools-own-$i.log" 'Run /init as init process')
	fi
	ro=$(bench_ratio "$o" "$s")
	[ "$ro" = null ] || own_ratios+=("$ro")
	ri=$(bench_ratio "$(since "$hi" "$h")" "$(since "$si" "$s")")
	[ "$ri" = null ] || init_ratios+=("$ri")
	bench_json "{\"bench\":\"debian-itools\",\"pair\":$i,\"first\":\"$first\",\"stock_s\":$s,\"hook_s\":$h,\"ratio\":$r,\"own_s\":$o,\"own_ratio\":$ro,\"stock_initramfs_s\":$(since "$si" "$s"),\"hook_initramfs_s\":$(since "$hi" "$h"),\"initramfs_ratio\":$ri,\"own_initramfs_s\":$(since "$oi" "$o"),\"hook_run_init_s\":$hi,\"hook_udevd\":$hook_udevd,\"asyncprobe_before_udev\":$before,\"udev_start_after_s\":$udevstart,\"asyncprobe_ms\":${apms:-null}}"
done
med=$(bench_median "${ratios[@]}")
omed=$(bench_median "${own_ratios[@]}")
bench_json "{\"bench\":\"debian-itools\",\"summary\":true,\"kernel\":\"$VM_DEBIAN_KVER\",\"accel\":\"$VM_ACCEL\",\"smp\":$VM_SMP,\"pairs\":${#ratios[@]},\"stock_initrd_bytes\":$(stat -c %s "$work/boot/initrd-stock.img"),\"hook_initrd_bytes\":$(stat -c %s "$work/boot/initrd-hook.img"),\"ratio_median\":$med,\"goal\":0.7,\"met\":$(bench_le "$med" 0.7),\"initramfs_ratio_median\":$(bench_median "${init_ratios[@]}"),\"own_initrd_bytes\":$(stat -c %s "$work/boot/initrd-own.img"),\"own_ratio_median\":$omed,\"own_met\":$(bench_le "$omed" 0.7)}"
bench_table debian-itools
