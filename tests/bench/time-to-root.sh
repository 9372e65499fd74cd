#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Time to root (issue 6, part 1): the parity device matrix (7 disks on
# AHCI, virtio-scsi, LSI, MegaRAID, virtio-blk, NVMe) booted alternately
# with Debian's initramfs-tools/udev initrd and asyncprobe's (same kernel,
# disks and QEMU settings).  The figure is the uptime the root's /sbin/init
# reads first; each pair gives a ratio, so host noise shared by the two
# boots of a pair cancels.  One JSON object per line, then a table.
#
# Environment: BENCH_PAIRS (3), BENCH_DEVICES (parity), BENCH_OUT (where
# the JSON lines go besides stdout).
. "$top_srcdir/tests/vm/lib.sh"
. "$top_srcdir/tests/bench/lib.sh"
vm_setup >/dev/null
vm_initrd_debian >/dev/null || bench_fail time-to-root "no Debian initrd for $VM_KVER"
vm_initrd_asyncprobe >/dev/null || bench_fail time-to-root "building asyncprobe's initramfs failed"
pairs=${BENCH_PAIRS:-3}
set=${BENCH_DEVICES:-parity}
vm_devices "$set"
root="root=UUID=$VM_ROOT_UUID quiet"
ratios=()
for ((i = 1; i <= pairs; i++)); do
	vm_boot "ttr-udev-$i" "$VM_INITRD_DEBIAN" "$root" 300
	u=$(vm_uptime "$VM_OUT/ttr-udev-$i.log") || u=null
	vm_boot "ttr-ap-$i" "$VM_INITRD_AP" "$root fastboot" 300
	a=$(vm_uptime "$VM_OUT/ttr-ap-$i.log") || a=null
	r=$(bench_ratio "$a" "$u")
	[ "$r" = null ] || ratios+=("$r")
	bench_json "{\"bench\":\"time-to-root\",\"pair\":$i,\"devices\":\"$set\",\"disks\":${#VM_DEV_NAMES[@]},\"udev_s\":$u,\"asyncprobe_s\":$a,\"ratio\":$r}"
done
med=$(bench_median "${ratios[@]}")
bench_json "{\"bench\":\"time-to-root\",\"summary\":true,\"kernel\":\"$VM_KVER\",\"accel\":\"$VM_ACCEL\",\"smp\":$VM_SMP,\"pairs\":${#ratios[@]},\"ratio_median\":$med,\"goal\":0.33,\"met\":$(bench_le "$med" 0.33)}"
bench_table time-to-root
