#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Time to root of dracut (059, systemd initrd) with asyncprobe's module
# against without (issue 16, item 3), on the dracut system of tests/vm/
# debian-fixture.sh: the same system, kernel, disks (root on AHCI, a SATA
# and a virtio-blk data disk, the two twin disks of debian-dracut.sh) and
# QEMU settings; the images "dracut --force" and "dracut --force --add
# asyncprobe" made inside the system, booted alternately.  The figure is
# systemd's UserspaceTimestampMonotonic in the real system: when the
# root's systemd started, in seconds since the kernel started.  Each pair
# gives a ratio (asyncprobe / dracut).  On a shared host the kernel's own
# start varies by seconds, so each boot's initramfs phase, from "Run /init"
# to the root's systemd, is given as well, and for the asyncprobe boot the
# time asyncprobe took to find the root and its whole run (its own log
# lines on the console).  One JSON object per line, then a table.
#
# Root only.  Environment: BENCH_PAIRS (3), BENCH_OUT (where the JSON lines
# go besides stdout).
. "$top_srcdir/tests/vm/lib.sh"
. "$top_srcdir/tests/vm/debian-fixture.sh"
. "$top_srcdir/tests/bench/lib.sh"
[ "$(id -u)" -eq 0 ] || bench_fail debian-dracut "not root: chroot needs root"
vm_setup >/dev/null
vm_dracut_fixture >/dev/null || bench_fail debian-dracut "the dracut system could not be built"
work=$(mktemp -d "${TMPDIR:-/var/tmp}/debian-dracut-bench.XXXXXX")
trap 'vm_rm_tree "$work/root"; rm -rf "$work"' EXIT
trap 'exit 1' INT TERM
vm_dracut_prepare "$work" >&2 || bench_fail debian-dracut "preparing the system failed"
VM_KERNEL=$work/boot/vmlinuz
vm_debian_devices "$work/disk.img"
vm_twin_disks "$work" || bench_fail debian-dracut "making the twin disks failed"
cmdline="root=UUID=$VM_DEBIAN_UUID ro"

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

pairs=${BENCH_PAIRS:-3}
ratios=()
for ((i = 1; i <= pairs; i++)); do
	vm_debian_boot "dracut-control-$i" "$work/boot/initrd-dracut.img" "$cmdline" 1200
	log=$VM_OUT/dracut-control-$i.log
	s=$(vm_debian_time_to_root "$log") || s=null
	si=$(ts_first "$log" 'Run /init as init process')
	vm_debian_boot "dracut-asyncprobe-$i" "$work/boot/initrd-asyncprobe.img" "$cmdline" 1200
	log=$VM_OUT/dracut-asyncprobe-$i.log
	a=$(vm_debian_time_to_root "$log") || a=null
	r=$(bench_ratio "$a" "$s")
	[ "$r" = null ] || ratios+=("$r")
	ai=$(ts_first "$log" 'Run /init as init process')
	root_ms=$(sed -n 's/.*asyncprobe\[[0-9]*\]: root device .* appeared after \([0-9]*\) ms.*/\1/p' "$log" | head -1)
	run_ms=$(sed -n 's/.*asyncprobe\[[0-9]*\]: [0-9]* controllers, .* links, .*, \([0-9.]*\) ms (.*/\1/p' "$log" | head -1)
	bench_json "{\"bench\":\"debian-dracut\",\"pair\":$i,\"dracut_s\":$s,\"asyncprobe_s\":$a,\"ratio\":$r,\"dracut_initramfs_s\":$(since "$si" "$s"),\"asyncprobe_initramfs_s\":$(since "$ai" "$a"),\"asyncprobe_root_ms\":${root_ms:-null},\"asyncprobe_run_ms\":${run_ms:-null}}"
done
med=$(bench_median "${ratios[@]}")
bench_json "{\"bench\":\"debian-dracut\",\"summary\":true,\"kernel\":\"$VM_DEBIAN_KVER\",\"accel\":\"$VM_ACCEL\",\"smp\":$VM_SMP,\"pairs\":${#ratios[@]},\"dracut_initrd_bytes\":$(stat -c %s "$work/boot/initrd-dracut.img"),\"asyncprobe_initrd_bytes\":$(stat -c %s "$work/boot/initrd-asyncprobe.img"),\"ratio_median\":$med,\"goal\":0.7,\"met\":$(bench_le "$med" 0.7)}"
bench_table debian-dracut
