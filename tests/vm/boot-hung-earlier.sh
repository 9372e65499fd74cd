#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A hung disk on an earlier controller (issue 15, item 5): a SCSI disk
# whose every read takes an hour (QEMU null-co, latency-ns) on the
# virtio-scsi controller, whose PCI address is below the root's AHCI
# controller (00:1f.2).  sd probes its disks asynchronously and reads the
# partition table in that probe, so the hung disk's probe never returns.
# Linux ends every module insertion that did not ask for async_probe with
# a wait for all asynchronous work (do_init_module()): sd_mod's insertion,
# and every later one (ext4's), would never return, and the root's SCSI
# device would be given up although its block device was there.
# asyncprobe inserts every module with async_probe and waits for each
# device's own probe ("bind"), so, sequentially and with fastboot
# (asyncprobe.timeout=3): the root mounts and init starts, only the hung
# disk's SCSI device call is abandoned (logged with its step), every other
# disk has all its links, the summary and the manifest count it and say
# degraded, and the link logs of both modes are identical.
. "$top_srcdir/tests/vm/lib.sh"
vm_setup
vm_plan 13
vm_initrd_asyncprobe || vm_bail "building the initramfs failed"
vm_devices hungscsi
VM_KILL_AT_DONE=1
for mode in sequential fastboot; do
	extra=
	[ $mode = sequential ] || extra=fastboot
	log=$VM_OUT/hung-earlier-$mode.log
	# the hung read keeps QEMU from powering off: the limit ends it
	vm_boot "hung-earlier-$mode" "$VM_INITRD_AP" \
		"root=UUID=$VM_ROOT_UUID asyncprobe.timeout=3 quiet aptest.dump $extra" 300
	vm_check_root "$log"; vm_ok $? "$mode: reaches the root's init with a disk that never answers on an earlier controller"
	line=$(grep -m1 -E 'asyncprobe.*: abandoned, no answer after' "$log")
	echo "$line" | vm_diag
	after=$(sed -nE 's/.*no answer after ([0-9.]+) s .*/\1/p' <<<"$line")
	[ -n "$line" ] && grep -q 'waiting for its block device' <<<"$line" &&
		awk -v a="${after:-0}" 'BEGIN { exit !(a >= 5.0) }'
	vm_ok $? "$mode: the log names the abandoned SCSI device, its step, and it waited 3 s + 2 s (${after:-none} s)"
	vm_links "$log" >"$log.links"
	vm_expected_links "${VM_DEV_NAMES[@]}" >"$log.expected"
	missing=$(LC_ALL=C comm -23 "$log.expected" "$log.links")
	[ -z "$missing" ] || { echo "missing:"; echo "$missing"; } | vm_diag
	vm_ok "$([ -z "$missing" ]; echo $?)" "$mode: the other disks' links are all there (SATA, virtio-scsi, NVMe)"
	n=$(grep -c ' SER:AP-HUNG' "$log.links")
	vm_ok "$([ "$n" -eq 0 ]; echo $?)" "$mode: no link to the hung disk ($n)"
	summary=$(grep -oE 'asyncprobe.*[0-9]+ controllers, .*' "$log" | tail -1)
	echo "$summary" | vm_diag
	grep -qE 'asyncprobe.*1 device abandoned' "$log" && grep -q 'degraded' <<<"$summary"
	vm_ok $? "$mode: the summary counts the abandoned device and says degraded"
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
	vm_ok "${PIPESTATUS[0]}" "$mode: the manifest marks the SCSI device abandoned and counts it"
	python3 -c 'import json, sys
for l in json.load(open(sys.argv[1]))["links"]:
    if "/by-diskseq/" not in l["name"]:
        print(l["cookie"], l["action"], l["name"])' "$log.json" >"$log.linklog" 2>/dev/null
done
n=$(wc -l <"$VM_OUT/hung-earlier-sequential.log.linklog")
diff "$VM_OUT/hung-earlier-sequential.log.linklog" "$VM_OUT/hung-earlier-fastboot.log.linklog" | head -20 | vm_diag
cmp -s "$VM_OUT/hung-earlier-sequential.log.linklog" "$VM_OUT/hung-earlier-fastboot.log.linklog" && [ "$n" -gt 0 ]
vm_ok $? "the link logs of both modes are identical, cookies included ($n links)"
exit 0
