#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# asyncprobe as PID 1 when booting cannot succeed (issue 7, PID 1): a wrong
# rootfstype, and a root file system without an init.  Each time: no kernel
# panic, a diagnosis that says what went wrong, then what panic= and the
# image allow.  The image has busybox as /bin/sh: with the harness's
# panic=-1 asyncprobe reboots at once anyway (panic= wins over the shell);
# with panic=0 it starts the rescue shell.  Uses the QEMU harness of
# tests/vm (lib.sh); a VM test, for "make check-vm".
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
if [ ! -f "$top_srcdir/tests/vm/lib.sh" ]; then
	echo "1..0 # SKIP tests/vm/lib.sh (the QEMU harness) is not in this tree"
	exit 0
fi
. "$top_srcdir/tests/vm/lib.sh"
vm_setup
vm_plan 7
vm_devices small
vm_initrd_asyncprobe --add /bin/busybox:/bin/sh || vm_bail "building the initramfs failed"

# The small set is the root disk alone: sda1 ext4 with the test init, sda2 vfat.
no_panic() {
	if vm_panicked "$1"; then
		grep -E -m3 'Kernel panic|Attempted to kill init' "$1" | vm_diag
		return 1
	fi
}
says() {
	# says LOG REGEX: the console after /init shows REGEX
	if vm_after_init "$1" | grep -v 'Kernel command line' | grep -qE "$2"; then
		return 0
	fi
	vm_after_init "$1" | tail -20 | vm_diag
	return 1
}

# 1. rootfstype= that does not match: the diagnosis names the tries and
#    blkid's view; panic=-1 (from the harness): an immediate reboot.
vm_boot pid1-fstype "$VM_INITRD_AP" "root=/dev/sda1 rootfstype=vfat,msdos" 150
rc=$?
log=$VM_OUT/pid1-fstype.log
no_panic "$log"; vm_ok $? "wrong rootfstype: no kernel panic"
says "$log" 'cannot boot: cannot mount /dev/sda1: vfat: .*msdos: .*blkid sees ext4'
vm_ok $? "wrong rootfstype: the diagnosis names both tries and the type blkid sees"
[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] && ! says "$log" 'starting /bin/sh' 2>/dev/null >/dev/null
vm_ok $? "wrong rootfstype: panic=-1 rebooted at once, no shell (QEMU exited by itself)"

# 2. A root without any init (the vfat partition): init= falls back to the
#    defaults, then gives up; panic=0: the rescue shell (QEMU's console has
#    no input here, so the shell waits until the time limit).
vm_boot pid1-noinit "$VM_INITRD_AP" "root=/dev/sda2 init=/sbin/nope panic=0" 75
log=$VM_OUT/pid1-noinit.log
no_panic "$log"; vm_ok $? "no init: no kernel panic"
says "$log" 'cannot boot: no init in the root file system on /dev/sda2: init=/sbin/nope, /sbin/init'
vm_ok $? "no init: the diagnosis says so, naming init= and the defaults"
vm_reached_root "$log"
vm_ok "$([ $? -ne 0 ]; echo $?)" "no init: nothing from the root file system ran"
says "$log" 'asyncprobe: starting /bin/sh' && says "$log" 'BusyBox .* built-in shell'
vm_ok $? "no init, panic=0: asyncprobe started the rescue shell on the console"
exit 0
