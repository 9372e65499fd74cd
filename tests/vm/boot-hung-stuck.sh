#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A thread stuck in the kernel does not keep PID 1 from starting init
# (issue 15, item 3).  A SCSI disk on the virtio-scsi controller answers
# its first 64 KiB (the kernel's partition scan, so sd's probe returns and
# the disk is handed to the engine) and then a byte a second (QEMU's
# throttle on a null-co disk): blkid's first read past them never returns,
# and the probing thread sleeps uninterruptibly in the kernel.  A process
# cannot exec while one of its threads is stuck there; when that process
# was PID 1, init never started (the issue's module.async_probe=1 boot).
# Now the engine runs in a child of PID 1.  Sequentially and with
# fastboot (asyncprobe.timeout=5): the disk's call is abandoned while
# probing and logged, init starts although the probe process is still
# there with a thread in state D (the root's init lists it), and every
# other disk has all its links.
. "$top_srcdir/tests/vm/lib.sh"
vm_setup
vm_plan 8
vm_initrd_asyncprobe || vm_bail "building the initramfs failed"
vm_devices stall
VM_KILL_AT_DONE=1
for mode in sequential fastboot; do
	extra=
	[ $mode = sequential ] || extra=fastboot
	log=$VM_OUT/hung-stuck-$mode.log
	vm_boot "hung-stuck-$mode" "$VM_INITRD_AP" \
		"root=UUID=$VM_ROOT_UUID asyncprobe.timeout=5 quiet $extra" 300
	vm_check_root "$log"; vm_ok $? "$mode: reaches the root's init with a disk that stops answering after its partition scan"
	line=$(grep -m1 -E 'asyncprobe.*: sd[a-z]+: abandoned, no answer after .* probing' "$log")
	echo "$line" | vm_diag
	[ -n "$line" ]
	vm_ok $? "$mode: the log names the disk abandoned while probing"
	procs=$(awk '$1 == "@@AP" && $2 == "proc"' "$log")
	echo "${procs:-no asyncprobe process left}" | vm_diag
	grep -qE '^@@AP proc [0-9]+ asyncprobe-run [A-Za-z]*D' <<<"$procs"
	vm_ok $? "$mode: init started while the probe process still had a thread stuck in the kernel (state D)"
	vm_links "$log" >"$log.links"
	vm_expected_links "${VM_DEV_NAMES[@]}" >"$log.expected"
	missing=$(LC_ALL=C comm -23 "$log.expected" "$log.links")
	[ -z "$missing" ] || { echo "missing:"; echo "$missing"; } | vm_diag
	n=$(grep -c ' SER:AP-STALL' "$log.links")
	[ -z "$missing" ] && [ "$n" -eq 0 ]
	vm_ok $? "$mode: the other disks' links are all there, none to the stuck disk ($n)"
done
exit 0
