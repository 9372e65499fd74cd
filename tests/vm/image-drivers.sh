#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The module set of asyncprobe-mkinitramfs drives every controller of the
# parity matrix (AHCI, virtio-scsi, LSI, MegaRAID, virtio-blk, NVMe) and
# mounts ext4 root: the image is built as for the other tests, with a
# busybox, and a second cpio appended to it replaces /init with a busybox
# script that loads drivers by modalias from the image's own indexes.  This
# checks the image and the harness without depending on asyncprobe's
# engine; the boot tests check asyncprobe.
. "$top_srcdir/tests/vm/lib.sh"
vm_setup
vm_plan 3
vm_initrd_asyncprobe --add /bin/busybox || vm_bail "building the initramfs failed"
img=$VM_OUT/image-drivers.img
work=$(mktemp -d "${TMPDIR:-/tmp}/image-drivers.XXXXXX")
trap 'rm -rf "$work"' EXIT
install -m 0755 "$top_srcdir/tests/vm/modalias-init.sh" "$work/init"
cp "$VM_INITRD_AP" "$img"
(cd "$work" && echo init | cpio -o -H newc -R 0:0 --quiet | gzip -n) >>"$img"
vm_devices parity
log=$VM_OUT/image-drivers.log
vm_boot image-drivers "$img" "root=LABEL=$VM_ROOT_LABEL quiet"
vm_check_root "$log"; vm_ok $? "the image's drivers reach the root's init"
bad=0
for name in "${VM_DEV_NAMES[@]}"; do
	for spec in "${VM_DISKS[@]}"; do [ "${spec%%|*}" = "$name" ] && ident=$(vm_ident "$spec"); done
	grep -q "^@@AP block [a-z0-9]* $ident\$" "$log" || { echo "no block device for $name ($ident)" | vm_diag; bad=1; }
done
vm_ok $bad "every disk of the matrix appears (${VM_DEV_NAMES[*]})"
got=$(awk '$1 == "@@AP" && $2 == "root" { print $4 }' "$log")
vm_ok "$([ "$got" = SER:AP_ROOT/0001-part1 ]; echo $?)" "the root partition is mounted on / (${got:-nothing})"
echo "# busybox modalias init: root init at $(vm_uptime "$log" || echo -) s uptime"
exit 0
