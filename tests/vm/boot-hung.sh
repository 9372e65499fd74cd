#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A hung disk (issue 7, item 3): a virtio disk whose every read takes an
# hour (QEMU's null-co driver with a large latency-ns).  virtio_blk's probe
# reads its partition table inside init_module(), so the call that loads
# the driver never returns; its cookie is lower than the SATA, SCSI and
# NVMe disks', so ordered publication would wait for it for ever.  With
# asyncprobe.timeout=3 the call must be abandoned after 3 s + 2 s in that
# step, sequentially and with fastboot: the boot reaches root on the SATA
# disk, every other disk has all its links, the log names the abandoned
# device and its step, the summary and the JSON manifest count it and call
# the run degraded, and the real init starts (exec ends the hung thread).
. "$top_srcdir/tests/vm/lib.sh"
vm_setup
vm_plan 13
vm_initrd_asyncprobe || vm_bail "building the initramfs failed"
vm_devices hung
VM_KILL_AT_DONE=1
for mode in sequential fastboot; do
	extra=
	[ $mode = sequential ] || extra=fastboot
	log=$VM_OUT/hung-$mode.log
	# the hung read keeps QEMU from powering off: the limit ends it
	vm_boot "hung-$mode" "$VM_INITRD_AP" \
		"root=UUID=$VM_ROOT_UUID asyncprobe.timeout=3 quiet aptest.dump $extra" 300
	vm_check_root "$log"; vm_ok $? "$mode: reaches the root's init with a disk that never answers"
	line=$(grep -m1 -E 'asyncprobe.*: abandoned, no answer after' "$log")
	echo "$line" | vm_diag
	after=$(sed -nE 's/.*no answer after ([0-9.]+) s .*/\1/p' <<<"$line")
	[ -n "$line" ] && grep -q 'loading its driver' <<<"$line" &&
		awk -v a="${after:-0}" 'BEGIN { exit !(a >= 5.0) }'
	vm_ok $? "$mode: the log names the abandoned call, its step, and it waited 3 s + 2 s (${after:-none} s)"
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
bad = [c for c in m["controllers"] if str(c.get("status", "")).startswith("abandoned")]
assert s["abandoned"] == 1, s
assert s["exit_status"] != 0, s
assert len(bad) == 1 and "loading its driver" in bad[0]["status"], bad
assert "abandoned_ms" in bad[0]["time"], bad[0]
print("abandoned:", bad[0]["name"], bad[0]["status"], bad[0]["time"])
PY
	vm_ok "${PIPESTATUS[0]}" "$mode: the manifest marks the controller abandoned and counts it"
	# the link log: cookie, action, name (by-diskseq numbers differ between boots)
	python3 -c 'import json, sys
for l in json.load(open(sys.argv[1]))["links"]:
    if "/by-diskseq/" not in l["name"]:
        print(l["cookie"], l["action"], l["name"])' "$log.json" >"$log.linklog" 2>/dev/null
done
n=$(wc -l <"$VM_OUT/hung-sequential.log.linklog")
diff "$VM_OUT/hung-sequential.log.linklog" "$VM_OUT/hung-fastboot.log.linklog" | head -20 | vm_diag
cmp -s "$VM_OUT/hung-sequential.log.linklog" "$VM_OUT/hung-fastboot.log.linklog" && [ "$n" -gt 0 ]
vm_ok $? "the link logs of both modes are identical, cookies included ($n links)"
exit 0
