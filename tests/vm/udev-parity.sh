#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Real udev is the oracle (issue 4): one VM (AHCI SATA, virtio-scsi, LSI
# 53C895A, MegaRAID SAS, virtio-blk, NVMe; GPT and MBR; ext4 and vfat;
# labels with spaces and slashes) booted twice, once with Debian's own
# initramfs-tools/udev initrd for the same kernel and once with asyncprobe's.
# udev's links survive switch_root (/dev is moved), so the same root init
# prints both sets.  Every link name and the physical disk behind it
# (serial and partition number, not sdX) must be the same, per by-* kind.
# by-diskseq numbers follow the kernel's registration order, which differs
# between boots: only their count is compared.
. "$top_srcdir/tests/vm/lib.sh"
vm_setup
why=$(vm_initrd_debian 2>&1 >/dev/null) || vm_skip_all "Debian's initramfs-tools initrd for $VM_KVER: $why"
vm_initrd_debian >/dev/null 2>&1
kinds=(by-id by-path by-uuid by-label by-partuuid by-partlabel)
vm_plan $((3 + ${#kinds[@]}))
vm_initrd_asyncprobe || vm_bail "building the initramfs failed"
vm_devices parity
root="root=UUID=$VM_ROOT_UUID quiet"

vm_boot parity-udev "$VM_INITRD_DEBIAN" "$root" 300
vm_check_root "$VM_OUT/parity-udev.log"; vm_ok $? "Debian's udev initrd reaches the root's init"
vm_boot parity-ap "$VM_INITRD_AP" "$root fastboot" 300
vm_check_root "$VM_OUT/parity-ap.log"; vm_ok $? "asyncprobe's initrd reaches the root's init"

u=$VM_OUT/parity-udev.links
a=$VM_OUT/parity-ap.links
vm_links "$VM_OUT/parity-udev.log" >"$u"
vm_links "$VM_OUT/parity-ap.log" >"$a"
for k in "${kinds[@]}"; do
	nu=$(grep -c "^$k/" "$u")
	d=$(diff <(grep "^$k/" "$u") <(grep "^$k/" "$a"))
	if [ "$nu" -gt 0 ] && [ -z "$d" ]; then
		vm_ok 0 "$k: the same $nu links as udev"
	else
		{ echo "< udev   > asyncprobe"; echo "$d" | grep '^[<>]' | head -40; } | vm_diag
		vm_ok 1 "$k: the same links as udev ($nu from udev, $(grep -c "^$k/" "$a") from asyncprobe)"
	fi
done
du=$(WITH_DISKSEQ=1 vm_links "$VM_OUT/parity-udev.log" | grep -c '^by-diskseq/')
da=$(WITH_DISKSEQ=1 vm_links "$VM_OUT/parity-ap.log" | grep -c '^by-diskseq/')
vm_ok "$([ "$du" -gt 0 ] && [ "$du" -eq "$da" ]; echo $?)" "by-diskseq: as many links as udev ($du, $da)"
echo "# time to root init: udev $(vm_uptime "$VM_OUT/parity-udev.log" || echo -) s, asyncprobe $(vm_uptime "$VM_OUT/parity-ap.log" || echo -) s (uptime, one run each, TCG; figures belong to the benchmarks)"
exit 0
