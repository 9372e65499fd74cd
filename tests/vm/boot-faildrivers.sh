#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Failing drivers, one boot: the LSI controller's driver (sym53c8xx) has a
# modprobe.d "install" command that fails, and nvme is blacklisted with
# modprobe.blacklist=.  The boot still reaches root; each failure is logged
# with its controller and module; the LSI and NVMe disks get no links, the
# other disks all theirs; the summary line and the JSON manifest count the
# failed module and call the run degraded.
. "$top_srcdir/tests/vm/lib.sh"
vm_setup
vm_plan 7
conf=$VM_OUT/faildrivers-modprobe.conf
echo "install sym53c8xx exit 1" >"$conf"
vm_initrd_asyncprobe --add /bin/busybox --add "$conf:/etc/modprobe.d/fail.conf" ||
	vm_bail "building the initramfs failed"
vm_devices matrix
log=$VM_OUT/faildrivers.log
vm_boot faildrivers "$VM_INITRD_AP" "root=UUID=$VM_ROOT_UUID modprobe.blacklist=nvme fastboot quiet aptest.dump"
vm_check_root "$log"; vm_ok $? "reaches the root's init with sym53c8xx failing and nvme blacklisted"
grep -E 'asyncprobe.*: module sym53c8xx (failed|.*install)' "$log" | vm_diag
grep -qE 'asyncprobe.*[0-9a-f:.]+.*: module sym53c8xx .*fail' "$log"
vm_ok $? "the failed insertion is logged with the controller and the module"
grep -qE 'asyncprobe.*[0-9a-f:.]+.*: module nvme is blacklisted' "$log"
vm_ok $? "the blacklisted module is logged with the controller"
vm_links "$log" >"$log.links"
n=$(grep -cE ' SER:AP-(NVME|LSI)' "$log.links")
vm_ok "$([ "$n" -eq 0 ]; echo $?)" "no links to the NVMe and LSI disks ($n)"
names=()
for d in "${VM_DEV_NAMES[@]}"; do [ "$d" = nvme ] || [ "$d" = lsi ] || names+=("$d"); done
vm_expected_links "${names[@]}" >"$log.expected"
missing=$(LC_ALL=C comm -23 "$log.expected" "$log.links")
[ -z "$missing" ] || { echo "missing:"; echo "$missing"; } | vm_diag
vm_ok "$([ -z "$missing" ]; echo $?)" "the other disks' label and uuid links are there"
summary=$(grep -oE 'asyncprobe.*[0-9]+ controllers, .*' "$log" | tail -1)
echo "$summary" | vm_diag
echo "$summary" | grep -qE ' [1-9][0-9]* failed, .*degraded'
vm_ok $? "the summary counts the failed module and says degraded"
vm_extract "$log" manifest.json "$log.json"
grep -q '"sym53c8xx"' "$log.json" 2>/dev/null && grep -q '"failed"' "$log.json" &&
	grep -q '"blacklisted"' "$log.json"
vm_ok $? "the JSON manifest lists the failed and the blacklisted module"
exit 0
