#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The device matrix (AHCI SATA, virtio-scsi, LSI 53C895A, virtio-blk, NVMe)
# booted with asyncprobe's initramfs twice, sequentially and with fastboot:
# both reach the root file system's init, see the same /dev/disk links
# (each name and the physical disk behind it, by serial), the links the
# disks' labels call for, and asyncprobe's log, trace and plot in /run.
# A third boot, fastboot with asyncprobe.root_path= naming the root
# partition's by-path link (as the first fastboot boot made it): root
# first - the root's AHCI controller is cookie 2 and its subtree publishes
# before every other controller's, and nothing but the root partition's
# chain (controller, SCSI device, disk) before the root partition, and no
# device turns up late (the root's controller's driver goes in with
# async_probe, so the engine's own wait for its ports must be exact) - with
# the same links.
. "$top_srcdir/tests/vm/lib.sh"
vm_setup
vm_plan 13
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

# Root first, with the by-path name the fastboot boot gave the root partition.
root_ident=$(awk '$1 == "@@AP" && $2 == "root" { print $4; exit }' "$VM_OUT/matrix-fast.log")
root_bypath=$(awk -v id="$root_ident" '$2 == id && $1 ~ /^by-path\/pci-/ { sub(/^by-path\//, "", $1); print $1; exit }' \
	"$VM_OUT/matrix-fast.links")
root_pci=$(printf '%s\n' "$root_bypath" | sed -n 's/^pci-\([0-9a-f:.]\{12\}\).*$/\1/p')
vm_boot matrix-rootfirst "$VM_INITRD_AP" "$root fastboot aptest.dump asyncprobe.root_path=$root_bypath"
vm_check_root "$VM_OUT/matrix-rootfirst.log"
vm_ok $? "fastboot with asyncprobe.root_path=$root_bypath reaches the root's init"
vm_links "$VM_OUT/matrix-rootfirst.log" >"$VM_OUT/matrix-rootfirst.links"
cmp -s "$VM_OUT/matrix-seq.links" "$VM_OUT/matrix-rootfirst.links"
vm_ok $? "root first: the same $(wc -l <"$VM_OUT/matrix-rootfirst.links") links as the sequential boot"
# check_root_first NAME BYPATH: in boot NAME's manifest, the controller at
# BYPATH's PCI address is cookie 2, every other controller comes after its
# subtree, and nothing but BYPATH's partition's chain (its controller, SCSI
# device, disk) publishes before that partition.  Status 0 when so.
check_root_first() {
	local pci
	pci=$(printf '%s\n' "$2" | sed -n 's/^pci-\([0-9a-f:.]\{12\}\).*$/\1/p')
	[ -n "$2" ] && vm_extract "$VM_OUT/$1.log" manifest.json "$VM_OUT/$1.json" || return 1
	python3 - "$VM_OUT/$1.json" "$pci" "$2" <<'EOF_PY' | vm_diag
import json, sys
m = json.load(open(sys.argv[1]))
pci = sys.argv[2]
ctl = sorted(m["controllers"], key=lambda c: c["cookie"])
first = ctl[0]
root_ctl = [c["cookie"] for c in ctl if c["name"] == pci]
others = [c["cookie"] for c in ctl if c["name"] != pci and c["syspath"].find("/" + pci) < 0]
print("root first: controller %s is cookie %d; the others from cookie %s" % (first["name"], first["cookie"], min(others) if others else "-"))
def pub(d):
    t = d.get("time", {})
    return t.get("sync_ms", 0) + t.get("sync_wait_ms", 0)
for c in ctl:
    print("controller %-14s cookie %2d driver %-12s ready at %6.0f ms" % (c["name"], c["cookie"], c.get("driver"), c.get("time", {}).get("sync_ms", 0)))
for d in sorted(m["devices"], key=lambda d: d["cookie"]):
    print("%-9s %-10s cookie %2d probed from %6.0f ms, published at %6.0f ms" % (d["kind"], d["name"], d["cookie"], d.get("time", {}).get("start_ms", 0), pub(d)))
ok = first["name"] == pci and first["cookie"] == 2 and root_ctl == [2] and others and min(others) > 2
# The root's whole chain first: nothing but the root partition's ancestors
# publishes before it (its controller, SCSI device and disk).
target = [l["target"] for l in m["links"] if l["name"].endswith("by-path/" + sys.argv[3])]
part = [d for d in m["devices"] if target and d["name"] == target[0].rsplit("/", 1)[-1]]
by_cookie = {n["cookie"]: n for n in m["controllers"] + m["devices"]}
chain, c = set(), part[0]["parent"] if part else 0
while c in by_cookie:
    chain.add(c)
    c = by_cookie[c]["parent"]
before = {k for k in by_cookie if part and k < part[0]["cookie"]}
print("root first: the root partition %s is cookie %s; before it: %s; its chain: %s" %
      (part[0]["name"] if part else "?", part[0]["cookie"] if part else "?", sorted(before), sorted(chain)))
ok = ok and part and before == chain
# The root's controller is inserted with async_probe (modules.c): its
# devices are found by the engine's own wait for its ports, none of them
# (nor anything else) turns up as a later device with a cookie by timing.
late = [n["name"] for n in m["controllers"] + m["devices"] if n.get("hotplug")]
print("root first: later (hotplug) devices: %s" % (late or "none"))
ok = ok and not late
sys.exit(0 if ok else 1)
EOF_PY
	return "${PIPESTATUS[0]}"
}
check_root_first matrix-rootfirst "$root_bypath"
vm_ok $? "root first: the root's controller ${root_pci:-?} is cookie 2, every other controller after its subtree, only the root partition's chain publishes before it, and no device is a later one"

# The same with a root path naming the second partition of the controller's
# second disk (udev's ID_PATH form): that disk's chain first, its partition
# 2 before its partition 1 and before the first disk; the root (named by
# root=PARTUUID) still mounts and the links are the same.
sata2=$(vm_ident "$(printf '%s\n' "${VM_DISKS[@]}" | grep '^sata2|')")
other_bypath=$(awk -v id="$sata2-part2" '$2 == id && $1 ~ /^by-path\/pci-/ { sub(/^by-path\//, "", $1); if (length($1) > length(b)) b = $1 } END { print b }' \
	"$VM_OUT/matrix-fast.links")
vm_boot matrix-otherfirst "$VM_INITRD_AP" "$root fastboot aptest.dump asyncprobe.root_path=$other_bypath"
vm_check_root "$VM_OUT/matrix-otherfirst.log"
vm_ok $? "fastboot with asyncprobe.root_path=${other_bypath:-?} (the second disk's partition 2) reaches the root's init"
vm_links "$VM_OUT/matrix-otherfirst.log" >"$VM_OUT/matrix-otherfirst.links"
cmp -s "$VM_OUT/matrix-seq.links" "$VM_OUT/matrix-otherfirst.links"
vm_ok $? "that root path: the same $(wc -l <"$VM_OUT/matrix-otherfirst.links") links as the sequential boot"
check_root_first matrix-otherfirst "$other_bypath"
vm_ok $? "that root path: only the chain of ${other_bypath:-?} publishes before it (the controller's second disk before its first)"

echo "# time to root init: sequential $(vm_uptime "$VM_OUT/matrix-seq.log" || echo -) s, fastboot $(vm_uptime "$VM_OUT/matrix-fast.log" || echo -) s, root first $(vm_uptime "$VM_OUT/matrix-rootfirst.log" || echo -) s (uptime, TCG)"
exit 0
