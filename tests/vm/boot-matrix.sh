#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The device matrix (AHCI SATA, virtio-scsi, LSI 53C895A, virtio-blk, NVMe)
# booted with asyncprobe's initramfs twice, sequentially and with fastboot:
# both reach the root file system's init, see the same /dev/disk links
# (each name and the physical disk behind it, by serial), the links the
# disks' labels call for, and asyncprobe's log, trace and plot in /run.
. "$top_srcdir/tests/vm/lib.sh"
vm_setup
vm_plan 7
vm_initrd_asyncprobe || vm_bail "building the initramfs failed"
vm_devices matrix
root="root=PARTUUID=$VM_ROOT_PARTUUID quiet"

vm_boot matrix-seq "$VM_INITRD_AP" "$root"
vm_check_root "$VM_OUT/matrix-seq.log"; vm_ok $? "sequential boot reaches the root's init"
vm_boot matrix-fast "$VM_INITRD_AP" "$root fastboot aptest.dump"
vm_check_root "$VM_OUT/matrix-fast.log"; vm_ok $? "fastboot boot reaches the root's init"

vm_links "$VM_OUT/matrix-seq.log" >"$VM_OUT/matrix-seq.links"
vm_links "$VM_OUT/matrix-fast.log" >"$VM_OUT/matrix-fast.links"
n=$(wc -l <"$VM_OUT/matrix-seq.links")
if [ "$n" -gt 0 ] && cmp -s "$VM_OUT/matrix-seq.links" "$VM_OUT/matrix-fast.links"; then
	vm_ok 0 "both modes see the same $n links"
else
	diff "$VM_OUT/matrix-seq.links" "$VM_OUT/matrix-fast.links" | head -30 | vm_diag
	vm_ok 1 "both modes see the same links ($n sequential, $(wc -l <"$VM_OUT/matrix-fast.links") fastboot)"
fi

vm_expected_links "${VM_DEV_NAMES[@]}" >"$VM_OUT/matrix.expected"
missing=$(LC_ALL=C comm -23 "$VM_OUT/matrix.expected" "$VM_OUT/matrix-fast.links")
[ -z "$missing" ] || { echo "missing or pointing elsewhere:"; echo "$missing"; } | vm_diag
vm_ok "$([ -z "$missing" ]; echo $?)" "by-label, by-partlabel, by-uuid, by-partuuid links point at the right partitions"

# Every disk gets by-id and by-path links.
bad=0
for name in "${VM_DEV_NAMES[@]}"; do
	for spec in "${VM_DISKS[@]}"; do [ "${spec%%|*}" = "$name" ] && ident=$(vm_ident "$spec"); done
	for kind in by-id by-path; do
		grep -q "^$kind/.* $ident\$" "$VM_OUT/matrix-fast.links" ||
			{ echo "no $kind link for $name ($ident)" | vm_diag; bad=1; }
	done
done
vm_ok $bad "every disk has by-id and by-path links"

# Disk sequence numbers: one link per disk, matching its diskseq.
WITH_DISKSEQ=1 vm_links "$VM_OUT/matrix-fast.log" | grep -c '^by-diskseq/' >"$VM_OUT/matrix.ds" || true
ds=$(cat "$VM_OUT/matrix.ds")
vm_ok "$([ "$ds" -eq "${#VM_DEV_NAMES[@]}" ]; echo $?)" "one by-diskseq link per disk ($ds for ${#VM_DEV_NAMES[@]} disks)"

ok=0
for f in manifest.json trace.json plot.svg; do
	grep -q "^@@AP run $f [1-9]" "$VM_OUT/matrix-fast.log" || { echo "no /run/asyncprobe/$f" | vm_diag; ok=1; }
done
if vm_extract "$VM_OUT/matrix-fast.log" plot.svg "$VM_OUT/matrix-fast.svg"; then
	grep -q '<svg' "$VM_OUT/matrix-fast.svg" || { echo "plot.svg is not SVG" | vm_diag; ok=1; }
fi
vm_ok $ok "/run/asyncprobe holds the run's manifest.json, trace.json and plot.svg"

echo "# time to root init: sequential $(vm_uptime "$VM_OUT/matrix-seq.log" || echo -) s, fastboot $(vm_uptime "$VM_OUT/matrix-fast.log" || echo -) s (uptime, TCG)"
exit 0
