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
# One line each, naming the controller by its PCI address
# (domain:bus:slot.function) right before the module.
pci='[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]'
lsi=$(grep -oE "asyncprobe(\[[0-9]+\])?: (error: )?$pci: module sym53c8xx failed to load" "$log" | head -1 |
	grep -oE "$pci")
[ -n "$lsi" ]
vm_ok $? "the failed insertion is logged with the controller and the module (${lsi:-no line})"
nvme=$(grep -oE "asyncprobe(\[[0-9]+\])?: (notice: )?$pci: module nvme is blacklisted" "$log" | head -1 |
	grep -oE "$pci")
[ -n "$nvme" ] && [ "$nvme" != "$lsi" ]
vm_ok $? "the blacklisted module is logged with the controller (${nvme:-no line}, not the LSI's ${lsi:-?})"
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
# each on one record, for the controller the log named
grep -qE "\"device\":\"$lsi\",.*\"module\":\"sym53c8xx\",\"result\":\"failed\"" "$log.json" 2>/dev/null &&
	grep -qE "\"device\":\"$nvme\",.*\"module\":\"nvme\",\"result\":\"blacklisted\"" "$log.json"
st=$?
[ "$st" = 0 ] || grep -E '"module":"(sym53c8xx|nvme)"' "$log.json" 2>/dev/null | head -4 | vm_diag
vm_ok $st "the JSON manifest lists sym53c8xx failed and nvme blacklisted, each for its controller"
exit 0
