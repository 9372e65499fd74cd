#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Drivers missing from the image, one boot:
#  - the LSI controller's driver (sym53c8xx) is left out with
#    asyncprobe-mkinitramfs --omit-module, so the image's modules.alias has
#    no entry for the controller's modalias: the lookup finds nothing;
#  - the NVMe driver's file (nvme.ko*) is deleted from the unpacked image,
#    which is then repacked: the index still names it, the file is gone.
# The root (on AHCI) still mounts; the LSI controller is logged with its
# name, sysfs path and modalias and "no module", the NVMe failure names the
# missing file; the other disks' links are all there; the summary line and
# the JSON manifest count both and call the run degraded.
. "$top_srcdir/tests/vm/lib.sh"
vm_setup
vm_plan 8
command -v cpio >/dev/null || vm_skip_all "cpio not installed"
vm_initrd_asyncprobe --add /bin/busybox --omit-module sym53c8xx --compress none ||
	vm_bail "building the initramfs failed"
tree=$VM_OUT/missingmod-tree
img=$VM_OUT/missingmod.img
rm -rf "$tree" && mkdir -p "$tree" &&
	(cd "$tree" && cpio -id --quiet <"$VM_INITRD_AP") || vm_bail "cannot unpack $VM_INITRD_AP"
sym=$(find "$tree" -name 'sym53c8xx.ko*' | wc -l)
alias=$(echo "$tree"/usr/lib/modules/*/modules.alias)
[ -s "$alias" ] && grep -q ' ahci$' "$alias" && ! grep -q ' sym53c8xx$' "$alias"
vm_ok "$([ $? -eq 0 ] && [ "$sym" -eq 0 ]; echo $?)" \
	"--omit-module: no sym53c8xx file ($sym) and no modules.alias entry in the image (ahci's are there)"
nvme=$(find "$tree" -name 'nvme.ko*')
[ -n "$nvme" ] || vm_bail "no nvme module in the image to delete"
rm -f $nvme
(cd "$tree" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$img" ||
	vm_bail "cannot repack the image"
rm -rf "$tree"
vm_devices matrix
log=$VM_OUT/missingmod.log
vm_boot missingmod "$img" "root=UUID=$VM_ROOT_UUID fastboot quiet aptest.dump"
vm_check_root "$log"; vm_ok $? "reaches the root's init without sym53c8xx and nvme.ko"
grep -E 'asyncprobe.*no driver' "$log" | vm_diag
# lsi53c895a: PCI vendor 1000, device 0012, class 01 (mass storage)
grep -qE 'asyncprobe.*[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9]: no driver: no module in .* for pci:v00001000d00000012[^ ]*bc01[^ ]* \(/sys/devices/pci[^)]*\)' "$log"
vm_ok $? "the LSI controller is logged with its address, modalias, sysfs path and 'no module'"
n=$(grep -cE 'asyncprobe.*no driver: no module' "$log")
vm_ok "$([ "$n" -eq 1 ]; echo $?)" "only that device is reported as having no module ($n)"
grep -E 'asyncprobe.*module nvme' "$log" | vm_diag
grep -qE 'asyncprobe.*[0-9a-f:.]+: module nvme: .*nvme\.ko[^ ]* is missing' "$log"
vm_ok $? "the NVMe controller's module file is logged as missing"
vm_links "$log" >"$log.links"
names=()
for d in "${VM_DEV_NAMES[@]}"; do [ "$d" = nvme ] || [ "$d" = lsi ] || names+=("$d"); done
vm_expected_links "${names[@]}" >"$log.expected"
missing=$(LC_ALL=C comm -23 "$log.expected" "$log.links")
[ -z "$missing" ] || { echo "missing:"; echo "$missing"; } | vm_diag
n=$(grep -cE ' SER:AP-(NVME|LSI)' "$log.links")
vm_ok "$([ -z "$missing" ] && [ "$n" -eq 0 ]; echo $?)" \
	"the other disks' label and uuid links are there, none to the LSI and NVMe disks ($n)"
summary=$(grep -oE 'asyncprobe.*[0-9]+ controllers, .*' "$log" | tail -1)
echo "$summary" | vm_diag
echo "$summary" | grep -qE ' 1 failed, 1 without a module, .*degraded'
vm_ok $? "the summary counts the missing file as failed, the LSI controller as without a module, degraded"
vm_extract "$log" manifest.json "$log.json"
grep -qE '"modalias":"pci:v00001000d00000012[^"]*","module":"","result":"none"' "$log.json" &&
	grep -qE '"module":"nvme","result":"failed"' "$log.json" &&
	grep -qE '"modules_failed":1,"modules_missing":1,.*"exit_status":1' "$log.json"
vm_ok $? "the manifest has the LSI controller without a module, nvme failed, exit status 1"
exit 0
