#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A hung disk on an earlier controller with the root's place known (issue
# 15, item 5): the disks of boot-hung-earlier.sh (a SCSI disk whose every
# read takes an hour on the virtio-scsi controller at 00:01.0, below the
# root's AHCI controller at 00:1f.2) and asyncprobe.root_path= naming the
# root partition's by-path name, so the root's chain comes first in the
# order.  Sequentially and with fastboot (asyncprobe.timeout=10, so the
# hung disk is abandoned 12 s after its call began): the root is mounted
# before the hung disk is abandoned (kernel-log times of PID 1's "mounted"
# and the probe process's "abandoned" lines), init starts before the hung
# disk is abandoned too (PID 1 hands the rest of the run over to the probe
# process), the hung disk is abandoned and logged, every other disk has
# all its links, and the link logs of both modes are identical.  A third
# boot with asyncprobe.wait_all=1: init starts only after the abandonment.
. "$top_srcdir/tests/vm/lib.sh"
vm_setup
vm_plan 15
vm_initrd_asyncprobe || vm_bail "building the initramfs failed"
vm_devices hungscsi
VM_KILL_AT_DONE=1
# q35's AHCI controller is 00:1f.2; the root disk is on its first port
root_bypath=pci-0000:00:1f.2-ata-1.0-part1

# kmsg_time LOG ERE: the kernel-log time (seconds) of the first record
# asyncprobe logged that matches ERE, as the root's init printed it.
kmsg_time() {
	awk -v re="$2" '$1 == "@@AP" && $2 == "kmsg" && $0 ~ re {
		sub(/^@@AP kmsg \[ */, ""); sub(/\].*/, ""); print; exit }' "$1"
}

for mode in sequential fastboot; do
	extra=
	[ $mode = sequential ] || extra=fastboot
	log=$VM_OUT/hung-rootfirst-$mode.log
	vm_boot "hung-rootfirst-$mode" "$VM_INITRD_AP" \
		"root=UUID=$VM_ROOT_UUID asyncprobe.root_path=$root_bypath asyncprobe.timeout=10 quiet aptest.dump $extra" 300
	vm_check_root "$log"; vm_ok $? "$mode: reaches the root's init with asyncprobe.root_path=$root_bypath and a disk that never answers on an earlier controller"
	mounted=$(kmsg_time "$log" 'asyncprobe\[1\]: mounted .* on /newroot')
	abandoned=$(kmsg_time "$log" 'asyncprobe\[[0-9]+\]: [0-9:]+: abandoned, no answer after')
	started=$(kmsg_time "$log" 'asyncprobe\[1\]: starting ')
	echo "root mounted at ${mounted:-?} s, hung disk abandoned at ${abandoned:-?} s, init started at ${started:-?} s" | vm_diag
	[ -n "$mounted" ] && [ -n "$abandoned" ] && [ -n "$started" ] &&
		awk -v m="$mounted" -v a="$abandoned" 'BEGIN { exit !(m < a) }'
	vm_ok $? "$mode: the root is mounted (${mounted:-?} s) before the hung disk is abandoned (${abandoned:-?} s)"
	[ -n "$abandoned" ] && [ -n "$started" ] &&
		awk -v s="$started" -v a="$abandoned" 'BEGIN { exit !(s < a) }' &&
		grep -q 'asyncprobe\[1\]: starting the root.s init while probe process [0-9]* goes on' "$log"
	vm_ok $? "$mode: init starts (${started:-?} s) before the hung disk is abandoned (${abandoned:-?} s): the probe process finishes the run"
	line=$(grep -m1 -E 'asyncprobe.*: abandoned, no answer after' "$log")
	echo "$line" | vm_diag
	grep -q 'waiting for its block device' <<<"$line"
	vm_ok $? "$mode: the log names the abandoned SCSI device and its step"
	vm_links "$log" >"$log.links"
	vm_expected_links "${VM_DEV_NAMES[@]}" >"$log.expected"
	missing=$(LC_ALL=C comm -23 "$log.expected" "$log.links")
	[ -z "$missing" ] || { echo "missing:"; echo "$missing"; } | vm_diag
	n=$(grep -c ' SER:AP-HUNG' "$log.links")
	[ -z "$missing" ] && [ "$n" -eq 0 ]
	vm_ok $? "$mode: the other disks' links are all there, none to the hung disk ($n)"
	vm_extract "$log" manifest.json "$log.json"
	python3 - "$log.json" <<'PY' 2>&1 | vm_diag
import json, sys
m = json.load(open(sys.argv[1]))
s = m["summary"]
bad = [d for k in ("controllers", "scsi_devices", "devices") for d in m.get(k, [])
       if str(d.get("status", "")).startswith("abandoned")]
assert s["abandoned"] == 1, s
assert s["exit_status"] != 0, s
assert len(bad) == 1 and "waiting for its block device" in bad[0]["status"], bad
print("abandoned:", bad[0]["name"], bad[0]["status"], bad[0]["time"])
PY
	vm_ok "${PIPESTATUS[0]}" "$mode: the manifest (the probe process wrote it) marks the SCSI device abandoned and counts it"
	python3 -c 'import json, sys
for l in json.load(open(sys.argv[1]))["links"]:
    if "/by-diskseq/" not in l["name"]:
        print(l["cookie"], l["action"], l["name"])' "$log.json" >"$log.linklog" 2>/dev/null
done
n=$(wc -l <"$VM_OUT/hung-rootfirst-sequential.log.linklog")
diff "$VM_OUT/hung-rootfirst-sequential.log.linklog" "$VM_OUT/hung-rootfirst-fastboot.log.linklog" | head -20 | vm_diag
cmp -s "$VM_OUT/hung-rootfirst-sequential.log.linklog" "$VM_OUT/hung-rootfirst-fastboot.log.linklog" && [ "$n" -gt 0 ]
vm_ok $? "the link logs of both modes are identical, cookies included ($n links)"

# asyncprobe.wait_all=1: PID 1 waits for the whole run, abandonment included
log=$VM_OUT/hung-rootfirst-waitall.log
vm_boot hung-rootfirst-waitall "$VM_INITRD_AP" \
	"root=UUID=$VM_ROOT_UUID asyncprobe.root_path=$root_bypath asyncprobe.timeout=10 asyncprobe.wait_all=1 quiet fastboot" 300
vm_check_root "$log"; vm_ok $? "asyncprobe.wait_all=1: reaches the root's init"
abandoned=$(kmsg_time "$log" 'asyncprobe\[[0-9]+\]: [0-9:]+: abandoned, no answer after')
started=$(kmsg_time "$log" 'asyncprobe\[1\]: starting ')
[ -n "$abandoned" ] && [ -n "$started" ] &&
	awk -v s="$started" -v a="$abandoned" 'BEGIN { exit !(s > a) }' &&
	! grep -q 'goes on; it makes the remaining links' "$log"
vm_ok $? "asyncprobe.wait_all=1: init starts (${started:-?} s) only after the hung disk is abandoned (${abandoned:-?} s)"
exit 0
