#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A root= that matches no device: asyncprobe as PID 1 must not die (no
# "Kernel panic", no "Attempted to kill init"), must say what it was asked
# for, and with panic=-1 and no shell in the image reboot at once (QEMU
# runs with -no-reboot, so it exits before the time limit).
. "$top_srcdir/tests/vm/lib.sh"
vm_setup
vm_plan 4
vm_initrd_asyncprobe || vm_bail "building the initramfs failed"
vm_devices pair
missing=0badc0de-0000-4000-8000-00000000dead
vm_boot noroot "$VM_INITRD_AP" "root=UUID=$missing asyncprobe.root_timeout=5" 300
rc=$?
log=$VM_OUT/noroot.log
if vm_panicked "$log"; then
	grep -E -m3 'Kernel panic|Attempted to kill init' "$log" | vm_diag
	vm_ok 1 "no kernel panic"
else
	vm_ok 0 "no kernel panic"
fi
vm_reached_root "$log"
vm_ok "$([ $? -ne 0 ]; echo $?)" "no root init ran"
# The diagnosis itself ("cannot boot: the root device /dev/disk/by-uuid/...
# did not appear ..."), not the "waiting for root=UUID=..." notice every
# boot prints, nor the kernel's echo of the command line.
if vm_after_init "$log" | grep -v "Kernel command line" |
	grep -qE "asyncprobe(\[1\])?: cannot boot: .*/dev/disk/by-uuid/$missing"; then
	vm_ok 0 "the diagnosis names the missing root"
else
	vm_after_init "$log" | tail -15 | vm_diag
	vm_ok 1 "the diagnosis names the missing root"
fi
[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || echo "QEMU was still running after 300 s" | vm_diag
vm_ok "$([ "$rc" -ne 124 ] && [ "$rc" -ne 137 ]; echo $?)" "panic=-1: asyncprobe rebooted instead of hanging"
exit 0
