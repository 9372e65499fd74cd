#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# root= by UUID, LABEL (with a slash: by-label/ap\x2froot), PARTUUID,
# PARTLABEL and a /dev/disk/by-uuid path: each boot reaches the root's init
# with the root partition of the SATA root disk mounted on / (disks: the
# root disk, a second SATA disk and a virtio-blk disk).  With rootfstype=,
# and with an image recording the type (--root-fstype), PID 1 inserts the
# file system's driver before the root appears.
. "$top_srcdir/tests/vm/lib.sh"
vm_setup
vm_initrd_asyncprobe || vm_bail "building the initramfs failed"
vm_devices pair
want="SER:AP_ROOT/0001-part1"
cases=(
	"uuid|root=UUID=$VM_ROOT_UUID"
	"label|root=LABEL=$VM_ROOT_LABEL"
	"partuuid|root=PARTUUID=${VM_ROOT_PARTUUID^^}"
	"partlabel|root=PARTLABEL=$VM_ROOT_PARTLABEL fastboot"
	"path|root=/dev/disk/by-uuid/$VM_ROOT_UUID rootwait fastboot asyncprobe.verbose=1"
	"fstype|root=UUID=$VM_ROOT_UUID rootfstype=ext4,ext2 fastboot"
)
vm_plan $((${#cases[@]} * 2 + 2 + 4))
for c in "${cases[@]}"; do
	name=${c%%|*}
	cmd=${c#*|}
	log=$VM_OUT/root-$name.log
	vm_boot "root-$name" "$VM_INITRD_AP" "$cmd quiet"
	vm_check_root "$log"; vm_ok $? "$cmd: reaches the root's init"
	got=$(awk '$1 == "@@AP" && $2 == "root" { print $4 }' "$log")
	[ "$got" = "$want" ] || echo "mounted on /: '${got:-nothing}', want $want" | vm_diag
	vm_ok "$([ "$got" = "$want" ]; echo $?)" "$cmd: the root partition is mounted on /"
	echo "# $name: root init at $(vm_uptime "$log" || echo -) s uptime"
done

# The verbose boot logs far more than the kernel's /dev/kmsg rate limit
# lets through (10 lines in 5 s): none of asyncprobe's lines is dropped,
# and the limit is back in place for the real system.
log=$VM_OUT/root-path.log
n=$(grep -c '^@@AP kmsg ' "$log")
dropped=$(grep '^@@AP kmsg-dropped ' "$log")
[ -n "$dropped" ] && echo "$dropped" | vm_diag
vm_ok "$([ "$n" -gt 20 ] && [ -z "$dropped" ]; echo $?)" \
	"asyncprobe.verbose=1: all $n of asyncprobe's kernel log lines kept, none suppressed"
got=$(awk '$1 == "@@AP" && $2 == "devkmsg" { print $3 }' "$log")
vm_ok "$([ "$got" = ratelimit ]; echo $?)" \
	"printk_devkmsg is 'ratelimit' again when the root's init runs (got '${got:-nothing}')"

# early LOG SOURCE: the root's driver went in before the root appeared,
# and the mount had no driver left to insert (what the insertion logs, such
# as ext4's soft dependency crc32c_intel missing under TCG, comes before)
early() {
	local log=$1 source=$2 pre found
	pre=$(grep -n "asyncprobe\[1\]: loading the root's file system ext4 ($source) before the root appears" "$log" | head -n 1 | cut -d: -f1)
	found=$(grep -n 'asyncprobe\[1\]: root device .* appeared after' "$log" | head -n 1 | cut -d: -f1)
	[ -n "$pre" ] && [ -n "$found" ] && [ "$pre" -lt "$found" ] &&
		! tail -n +"$found" "$log" | grep -q 'asyncprobe\[1\]: file system ext4: '
}
early "$VM_OUT/root-fstype.log" rootfstype=
vm_ok $? "rootfstype=ext4,ext2: ext4 is inserted before the root appears, not at the mount"
# without a type, the driver comes at the mount (nothing loads it early)
! grep -q "loading the root's file system" "$VM_OUT/root-uuid.log"
vm_ok $? "no rootfstype= and no recorded type: no early insertion"

vm_initrd_asyncprobe --root-fstype=ext4 || vm_bail "building the initramfs with --root-fstype failed"
log=$VM_OUT/root-recorded.log
vm_boot root-recorded "$VM_INITRD_AP" "root=UUID=$VM_ROOT_UUID quiet fastboot"
vm_check_root "$log"; vm_ok $? "an image made with --root-fstype=ext4: reaches the root's init"
early "$log" /etc/asyncprobe/root-fstype
vm_ok $? "an image made with --root-fstype=ext4: ext4 is inserted before the root appears"
exit 0
