#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# modprobe.blacklist= of a non-root disk's controller driver (nvme): the
# boot still reaches root, the NVMe disk gets no links, the other disks do.
. "$top_srcdir/tests/vm/lib.sh"
vm_setup
vm_plan 4
vm_initrd_asyncprobe || vm_bail "building the initramfs failed"
vm_devices matrix
log=$VM_OUT/blacklist.log
vm_boot blacklist "$VM_INITRD_AP" "root=UUID=$VM_ROOT_UUID modprobe.blacklist=nvme fastboot quiet"
vm_check_root "$log"; vm_ok $? "reaches the root's init with nvme blacklisted"
vm_links "$log" >"$log.links"
n=$(grep -c ' SER:AP-NVME/' "$log.links")
vm_ok "$([ "$n" -eq 0 ]; echo $?)" "no links to the NVMe disk ($n)"
grep -q '^@@AP block nvme' "$log"
vm_ok "$([ $? -ne 0 ]; echo $?)" "the nvme driver was not loaded (no nvme block device)"
names=()
for d in "${VM_DEV_NAMES[@]}"; do [ "$d" = nvme ] || names+=("$d"); done
vm_expected_links "${names[@]}" >"$log.expected"
missing=$(LC_ALL=C comm -23 "$log.expected" "$log.links")
[ -z "$missing" ] || { echo "missing:"; echo "$missing"; } | vm_diag
vm_ok "$([ -z "$missing" ]; echo $?)" "the other disks' label and uuid links are there"
exit 0
