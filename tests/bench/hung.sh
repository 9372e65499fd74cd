#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The hung disk (issue 15, item 6): tests/vm/boot-hung-earlier.sh's
# machine (root, sata2, vscsi, nvme and, on the virtio-scsi controller,
# whose PCI address is below the root's AHCI controller, a SCSI disk that
# answers every read after an hour: QEMU null-co, latency-ns), booted with
# asyncprobe's generic image and fastboot, with the default
# asyncprobe.timeout (10 s), in turns without and with
# asyncprobe.root_path= naming the root partition (root first).
#
# Per boot: the uptime the root's /sbin/init reads first (the time to
# root), and from /run/asyncprobe/init.log when the root's link appeared
# and when it was mounted, when the run ended (the probe process ends it
# after /init started the root's init, unless asyncprobe.wait_all=1), and
# after how many
# seconds the hung disk's call was abandoned (asyncprobe's log).  QEMU
# cannot power off with the hung read pending: vm_boot kills it once the
# root's init is done (VM_KILL_AT_DONE).  Debian's udev initrd does not boot
# this machine at all (measured for issue 15: not at root after 500 s), so
# there is no udev boot here.
#
# Environment: BENCH_HUNG_PAIRS (1), BENCH_HUNG_LIMIT (240 s per boot),
# BENCH_OUT.
. "$top_srcdir/tests/vm/lib.sh"
. "$top_srcdir/tests/bench/lib.sh"
vm_setup >/dev/null
vm_initrd_asyncprobe >/dev/null || bench_fail hung "building asyncprobe's initramfs failed"
pairs=${BENCH_HUNG_PAIRS:-1}
limit=${BENCH_HUNG_LIMIT:-240}
vm_devices hungscsi
VM_KILL_AT_DONE=1
root="root=UUID=$VM_ROOT_UUID quiet fastboot aptest.dump"
rp=

# figures NAME: "INIT FOUND MOUNTED FINISHED ABANDONED" (s) of boot NAME,
# null where missing.
figures() {
	local log=$VM_OUT/$1.log init
	init=$(vm_uptime "$log") || init=null
	vm_extract "$log" init.log "$log.init" || : >"$log.init"
	awk -v init="$init" -F= '
		{ v[$1] = $2 }
		function s(k) { return (k in v) ? sprintf("%.3f", v[k] / 1000) : "null" }
		END { printf "%s %s %s %s ", init, s("root_found_ms"), s("root_mounted_ms"), s("probe_finished_ms") }' "$log.init"
	sed -nE 's/.*abandoned, no answer after ([0-9.]+) s.*/\1/p' "$log" | head -1 | grep . || echo null
}

declare -a without with
for ((i = 1; i <= pairs; i++)); do
	load=$(bench_load)
	vm_boot "hung-$i" "$VM_INITRD_AP" "$root" "$limit"
	read -r init found mounted finished abandoned <<<"$(figures "hung-$i")"
	if [ -z "$rp" ]; then
		# the root partition's by-path name, from this boot's links
		rp=$(awk -v id="$(awk '$1 == "@@AP" && $2 == "root" { print $4; exit }' "$VM_OUT/hung-$i.log")" \
			'$2 == id && $1 ~ /^by-path\/pci-/ { sub(/^by-path\//, "", $1); print $1; exit }' \
			<(vm_links "$VM_OUT/hung-$i.log"))
		[ -n "$rp" ] || bench_fail hung "no by-path link to the root in the first boot"
	fi
	vm_boot "hung-rootpath-$i" "$VM_INITRD_AP" "$root asyncprobe.root_path=$rp" "$limit"
	read -r rinit rfound rmounted rfinished rabandoned <<<"$(figures "hung-rootpath-$i")"
	[ "$init" = null ] || without+=("$init")
	[ "$rinit" = null ] || with+=("$rinit")
	bench_json "{\"bench\":\"hung\",\"pair\":$i,\"load\":\"$load\",\"init_s\":$init,\"root_found_s\":$found,\"root_mounted_s\":$mounted,\"run_end_s\":$finished,\"abandoned_after_s\":$abandoned,\"rootpath_init_s\":$rinit,\"rootpath_root_found_s\":$rfound,\"rootpath_root_mounted_s\":$rmounted,\"rootpath_run_end_s\":$rfinished,\"rootpath_abandoned_after_s\":$rabandoned,\"ratio\":$(bench_ratio "$rinit" "$init")}"
done
m=$(bench_median "${without[@]}")
rm_=$(bench_median "${with[@]}")
bench_json "{\"bench\":\"hung\",\"summary\":true,\"kernel\":\"$VM_KVER\",\"accel\":\"$VM_ACCEL\",\"smp\":$VM_SMP,\"pairs\":${#with[@]},\"root_path\":\"$rp\",\"init_s_median\":$m,\"rootpath_init_s_median\":$rm_,\"ratio_median\":$(bench_ratio "$rm_" "$m"),\"booted\":$([ ${#without[@]} -eq "$pairs" ] && [ ${#with[@]} -eq "$pairs" ] && echo true || echo false)}"
bench_table hung
