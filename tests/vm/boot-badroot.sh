#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A root that cannot be booted (issue 7, PID 1), with asyncprobe's default
# image (no shell in it) and the harness's panic=-1:
#  1. root= names the ext4 root partition, rootfstype=xfs: the mount fails;
#  2. init=/sbin/no-such-init on that (good) root: asyncprobe says init=
#     is missing and falls back to the default inits, so /sbin/init runs;
#  3. the same init= on the root disk's vfat partition, which has no init
#     at all: nothing to run;
#  4. root=/dev/mapper/vg-root (the root on LVM, as Debian's installer
#     lays it out): the image cannot set that up, and says so at once,
#     naming what to use instead, without waiting for the device.
# Where booting fails (1, 3, 4): no kernel panic (PID 1 must never exit), no
# root init, a diagnosis that names the device (as the /dev/disk path root=
# resolves to) and what was tried, then a reboot at once (no shell to
# start; QEMU runs with -no-reboot, so it exits by itself before the time
# limit).  tests/init/vm-pid1.sh covers the same
# failures with a shell in the image, and the rescue shell with panic=0.
. "$top_srcdir/tests/vm/lib.sh"
vm_setup
vm_plan 17
vm_initrd_asyncprobe || vm_bail "building the initramfs failed"
vm_devices small
# the root disk: part1 ext4 (the test root), part2 vfat with no init
efi_partuuid=0b6e2f1a-3c4d-4e5f-9a6b-7c8d9e0f1a2b

no_panic() {
	if vm_panicked "$1"; then
		grep -E -m3 'Kernel panic|Attempted to kill init' "$1" | vm_diag
		return 1
	fi
}
no_root_init() {
	! vm_reached_root "$1" || { echo "the root's init ran" | vm_diag; return 1; }
}
says() {
	# says LOG ERE: the console after /init shows ERE.  The diagnosis goes
	# to the console twice, as asyncprobe's own line ("asyncprobe: ...")
	# and as the kernel's echo of its kernel log copy ("asyncprobe[1]:
	# ..."); the kernel may print its record in the middle of the other,
	# which arrives over the serial line more slowly, so patterns accept
	# either (a kernel record is never split).
	if vm_after_init "$1" | grep -v 'Kernel command line' | grep -qE "$2"; then
		return 0
	fi
	echo "no line matches: $2" | vm_diag
	vm_after_init "$1" | tail -20 | vm_diag
	return 1
}
rebooted() {
	# rebooted LOG QEMU-STATUS: QEMU exited by itself after the kernel's
	# restart message, with asyncprobe neither waiting nor starting a shell
	if [ "$2" -eq 124 ] || [ "$2" -eq 137 ]; then
		echo "QEMU was still running at the time limit (status $2)" | vm_diag
		return 1
	fi
	grep -q 'reboot: Restarting system' "$1" ||
		{ echo "no 'reboot: Restarting system' from the kernel" | vm_diag; return 1; }
	! grep -qE 'asyncprobe: (starting /bin/sh|no shell in this image)' "$1" ||
		{ echo "asyncprobe went for the rescue path instead" | vm_diag; return 1; }
}

# fails_then_reboots NAME WHAT CMDLINE DIAGNOSIS-ERE: a boot that cannot
# succeed, its four checks
fails_then_reboots() {
	local name=$1 what=$2 cmdline=$3 ere=$4 rc log
	vm_boot "$name" "$VM_INITRD_AP" "$cmdline" 150
	rc=$?
	log=$VM_OUT/$name.log
	no_panic "$log"; vm_ok $? "$what: no kernel panic"
	no_root_init "$log"; vm_ok $? "$what: nothing from the root file system ran"
	says "$log" "$ere"; vm_ok $? "$what: the diagnosis names the device and what was tried"
	rebooted "$log" "$rc"; vm_ok $? "$what: panic=-1 and no shell: a reboot at once"
}

# 1. rootfstype= wrong for the partition: the type tried and blkid's type
fails_then_reboots badroot-fstype "rootfstype=xfs on ext4" \
	"root=UUID=$VM_ROOT_UUID rootfstype=xfs" \
	"asyncprobe(\\[1\\])?: cannot boot: cannot mount /dev/disk/by-uuid/$VM_ROOT_UUID: xfs: [^;]+ \\(rootfstype=xfs; blkid sees ext4 there\\)"

# 2. init= names a file the (good) root does not have
vm_boot badroot-initfallback "$VM_INITRD_AP" "root=UUID=$VM_ROOT_UUID init=/sbin/no-such-init"
log=$VM_OUT/badroot-initfallback.log
no_panic "$log"; vm_ok $? "init=/sbin/no-such-init: no kernel panic"
says "$log" 'asyncprobe.*init=/sbin/no-such-init: No such file or directory in the root file system; trying the default inits'
vm_ok $? "init=/sbin/no-such-init: the missing init= is logged"
vm_check_root "$log"; vm_ok $? "init=/sbin/no-such-init: the default /sbin/init ran instead"
got=$(awk '$1 == "@@AP" && $2 == "root" { print $4 }' "$log")
[ "$got" = "SER:AP_ROOT/0001-part1" ] || echo "mounted on /: '${got:-nothing}'" | vm_diag
vm_ok "$([ "$got" = "SER:AP_ROOT/0001-part1" ]; echo $?)" "init=/sbin/no-such-init: / is the root partition"

# 3. a root that mounts but has no init anywhere: init= and the defaults
fails_then_reboots badroot-noinit "no init" \
	"root=PARTUUID=$efi_partuuid init=/sbin/no-such-init" \
	"asyncprobe(\\[1\\])?: cannot boot: no init in the root file system on /dev/disk/by-partuuid/$efi_partuuid: init=/sbin/no-such-init, /sbin/init, /etc/init, /bin/init and /bin/sh are missing"
# 4. a device-mapper root: refused up front (no wait for the root
# device), the message names initramfs-tools and dracut
fails_then_reboots badroot-lvm "root=/dev/mapper/vg-root" \
	"root=/dev/mapper/vg-root" \
	"asyncprobe(\\[1\\])?: cannot boot: root=/dev/mapper/vg-root is a device-mapper device \\(LVM, dm-crypt, multipath\\), which asyncprobe does not set up: its own image cannot boot from it; make the initramfs with initramfs-tools and asyncprobe's hook, or with dracut and asyncprobe's module"
log=$VM_OUT/badroot-lvm.log
! vm_after_init "$log" | grep -Eq 'waiting for root=|did not appear'
rc=$?
[ $rc -eq 0 ] || vm_after_init "$log" | grep -E 'waiting for root=|did not appear' | vm_diag
vm_ok $rc "root=/dev/mapper/vg-root: no wait for the device"
exit 0
