#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Time to root (issue 6, part 1; issue 15, item 6): the parity device matrix
# (7 disks on AHCI, virtio-scsi, LSI, MegaRAID, virtio-blk, NVMe; the root
# on AHCI, whose PCI address 00:1f.2 comes after every other controller's)
# booted in turns with Debian's initramfs-tools/udev initrd and two of
# asyncprobe's images, all with fastboot (same kernel, disks and QEMU
# settings):
#
#   generic   --root-path=none: the order is the hardware's alone
#   host      made for this machine's root (asyncprobe-mkinitramfs
#             --root-path=BY-PATH, the by-path name the first generic boot
#             gave the root partition): the root's chain comes first
#
# The figure is the uptime the root's /sbin/init reads first; each turn
# gives ratios against its own udev boot, so host noise shared by the boots
# of a turn cancels.  asyncprobe boots with asyncprobe.trace=1 and
# aptest.dump, and tests/bench/boot-trace.py reads the same boot's trace:
# the floor (the kernel's hand-over to /init, plus the own times of the
# root's chain: driver insertions, probes, naming, plus the mount), how far
# above it asyncprobe is, and where its time to root went.  One JSON object
# per line ("time-to-root" per turn, "time-to-root-where" per asyncprobe
# boot), then a table.  /init starts the root's init once the root is
# mounted; "rest_of_run" is what PID 1 still spent before switch_root
# (all of the run's end with asyncprobe.wait_all=1, or when the run was
# over first: writing the trace and the plot costs about 50 ms), and
# "probe_after_init" how long the probe process went on after init started.
#
# Environment: BENCH_PAIRS (3), BENCH_DEVICES (parity), BENCH_OUT (where
# the JSON lines go besides stdout).
. "$top_srcdir/tests/vm/lib.sh"
. "$top_srcdir/tests/bench/lib.sh"
vm_setup >/dev/null
vm_initrd_debian >/dev/null || bench_fail time-to-root "no Debian initrd for $VM_KVER"
vm_initrd_asyncprobe >/dev/null || bench_fail time-to-root "building asyncprobe's initramfs failed"
generic=$VM_INITRD_AP
host=
pairs=${BENCH_PAIRS:-3}
set=${BENCH_DEVICES:-parity}
vm_devices "$set"
root="root=UUID=$VM_ROOT_UUID quiet fastboot"
traced="$root asyncprobe.trace=1 aptest.dump"
ratios=() hratios=() above=() habove=() floors=() hfloors=()

# where NAME IMAGE: the floor and breakdown of boot NAME as a JSON line;
# sets w_floor and w_above (s, or null).
where() {
	local j
	w_floor=null w_above=null
	j=$(python3 "$top_srcdir/tests/bench/boot-trace.py" floor "$VM_OUT/$1.log") || return 0
	read -r w_floor w_above < <(python3 -c 'import json, sys
o = json.loads(sys.argv[1])
print("%.3f %.3f" % (o["floor_ms"] / 1000, o["above_floor_ms"] / 1000))' "$j")
	# a parse that failed leaves them empty (read clears them): no figure
	w_floor=$(bench_num "${w_floor:-}") w_above=$(bench_num "${w_above:-}")
	bench_json "$(python3 -c 'import json, sys
o = json.loads(sys.argv[1])
line = {"bench": "time-to-root-where", "pair": int(sys.argv[2]), "image": sys.argv[3],
        "init_s": round(o["init_ms"] / 1000, 3), "floor_s": round(o["floor_ms"] / 1000, 3),
        "above_floor_s": round(o["above_floor_ms"] / 1000, 3)}
line.update({k + "_ms": v for k, v in o["where_ms"].items()})
print(json.dumps(line, separators=(",", ":")))' "$j" "$i" "$2")"
}

# the generic boot of pair $i: sets a, f, fa; the first one also makes the host image
boot_generic() {
	vm_boot "ttr-ap-$i" "$generic" "$traced" 300
	a=$(bench_num "$(vm_uptime "$VM_OUT/ttr-ap-$i.log")")
	where "ttr-ap-$i" generic
	f=$w_floor fa=$w_above
	if [ -z "$host" ]; then
		# the root partition's by-path name, as a host's image records it
		rp=$(awk -v id="$(awk '$1 == "@@AP" && $2 == "root" { print $4; exit }' "$VM_OUT/ttr-ap-$i.log")" \
			'$2 == id && $1 ~ /^by-path\/pci-/ { sub(/^by-path\//, "", $1); print $1; exit }' \
			<(vm_links "$VM_OUT/ttr-ap-$i.log"))
		# and its file system type (the fixture's root is ext4), as a
		# host's image records both
		[ -n "$rp" ] && vm_initrd_asyncprobe --root-path="$rp" --root-fstype=ext4 >/dev/null ||
			bench_fail time-to-root "building the host image (--root-path=${rp:-?}) failed"
		host=$VM_INITRD_AP
	fi
}
# the host boot of pair $i: sets h, hf, hfa
boot_host() {
	vm_boot "ttr-host-$i" "$host" "$traced" 300
	h=$(bench_num "$(vm_uptime "$VM_OUT/ttr-host-$i.log")")
	where "ttr-host-$i" host
	hf=$w_floor hfa=$w_above
}

# udev first in every pair; the two images of asyncprobe take turns at
# coming second (pair 1 needs the generic boot first, for the root's name),
# so a cost of a boot's place in the pair does not end up on one image
for ((i = 1; i <= pairs; i++)); do
	load=$(bench_load)
	vm_boot "ttr-udev-$i" "$VM_INITRD_DEBIAN" "$root" 300
	u=$(bench_num "$(vm_uptime "$VM_OUT/ttr-udev-$i.log")")
	if [ $((i % 2)) = 1 ]; then
		order=generic,host
		boot_generic
		boot_host
	else
		order=host,generic
		boot_host
		boot_generic
	fi
	r=$(bench_ratio "$a" "$u") hr=$(bench_ratio "$h" "$u")
	[ "$r" = null ] || ratios+=("$r")
	[ "$hr" = null ] || hratios+=("$hr")
	[ "$fa" = null ] || above+=("$fa")
	[ "$hfa" = null ] || habove+=("$hfa")
	fr=$(bench_ratio "$f" "$u") hfr=$(bench_ratio "$hf" "$u")
	[ "$fr" = null ] || floors+=("$fr")
	[ "$hfr" = null ] || hfloors+=("$hfr")
	bench_json "{\"bench\":\"time-to-root\",\"pair\":$i,\"order\":\"udev,$order\",\"devices\":\"$set\",\"disks\":${#VM_DEV_NAMES[@]},\"load\":\"$load\",\"udev_s\":$u,\"asyncprobe_s\":$a,\"ratio\":$r,\"floor_s\":$f,\"above_floor_s\":$fa,\"floor_ratio\":$fr,\"host_s\":$h,\"host_ratio\":$hr,\"host_floor_s\":$hf,\"host_above_floor_s\":$hfa,\"host_floor_ratio\":$hfr}"
done
med=$(bench_median "${ratios[@]}")
hmed=$(bench_median "${hratios[@]}")
amed=$(bench_median "${above[@]}")
hamed=$(bench_median "${habove[@]}")
met=false
[ "$(bench_le "$hmed" 0.33)" = true ] && [ "$(bench_le "$hamed" 0.3)" = true ] && met=true
bench_json "{\"bench\":\"time-to-root\",\"summary\":true,\"kernel\":\"$VM_KVER\",\"accel\":\"$VM_ACCEL\",\"smp\":$VM_SMP,\"pairs\":${#ratios[@]},\"root_path\":\"${rp:-}\",\"ratio_median\":$med,\"above_floor_s_median\":$amed,\"floor_ratio_median\":$(bench_median "${floors[@]}"),\"host_ratio_median\":$hmed,\"host_above_floor_s_median\":$hamed,\"host_floor_ratio_median\":$(bench_median "${hfloors[@]}"),\"goal\":\"ratio <= 0.33, <= 0.3 s above the floor\",\"met\":$met}"
bench_table time-to-root
