#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Scale (issue 6, part 3): 256 and 1024 SCSI disks made by scsi_debug in
# the VM (vm_scale_sd in tests/vm/lib.sh: 1 MiB each, one LUN per target,
# all on one host; with several hosts of many targets most by-id names
# collide, measured at 4 x 256: both udev and asyncprobe give by-id links
# to 264 of 1024 disks), probed once by asyncprobe --fastboot and once by
# systemd-udevd, same kernel and QEMU settings.  tests/vm/boot-scale.sh
# checks the asyncprobe boot at 1024 disks.
#
#   asyncprobe  its own initramfs with scsi_debug.ko (-m scsi_debug),
#               loaded before the run (vm_scale_cmdline_ap); the figures
#               are the manifest's summary.time.elapsed_ms (time to all
#               links) and summary.time.peak_rss_kib (VmHWM at the end of
#               the run), printed by the root's init (aptest.scale).
#   udev        Debian's initramfs-tools initrd with its /init replaced by
#               tests/bench/scale-udev-init.sh (a cpio archive appended to
#               the image): scsi_debug loaded with no udevd listening, then
#               systemd-udevd started and "udevadm trigger --action=add;
#               udevadm settle" timed (/proc/uptime, 10 ms steps); RSS is
#               the main udevd's VmHWM (its workers are listed apart).
#
# Both count the SCSI disks the kernel made and the disks with a by-id
# link: a lost link shows as byid_disks < disks.  scsi_debug disks have no
# by-path link in udev either (no PCI or platform parent).  One JSON object
# per line, then a table.
#
# Environment: BENCH_SCALE_SIZES ("256 1024"), BENCH_SCALE_PAIRS (1),
# BENCH_SCALE_LIMIT (1500 s per boot), BENCH_SCALE_AP_EXTRA (more words
# for asyncprobe's command line, such as asyncprobe.threads=16),
# BENCH_SCALE_UDEV (0: asyncprobe boots only, no ratio).
. "$top_srcdir/tests/vm/lib.sh"
. "$top_srcdir/tests/bench/lib.sh"
vm_setup >/dev/null
vm_initrd_debian >/dev/null || bench_fail scale "no Debian initrd for $VM_KVER"
vm_initrd_asyncprobe -m scsi_debug >/dev/null || bench_fail scale "building asyncprobe's initramfs failed"
sizes=${BENCH_SCALE_SIZES:-256 1024}
pairs=${BENCH_SCALE_PAIRS:-1}
limit=${BENCH_SCALE_LIMIT:-1500}

# Debian's initrd plus an uncompressed cpio archive whose /init replaces
# initramfs-tools' (the kernel unpacks both; later files win).
udev_img=$VM_OUT/initrd-udev-scale.img
tmp=$VM_OUT/scale-cpio
rm -rf "$tmp" && mkdir -p "$tmp" &&
	install -m 0755 "$top_srcdir/tests/bench/scale-udev-init.sh" "$tmp/init" &&
	cp "$VM_INITRD_DEBIAN" "$udev_img.tmp" &&
	# pad to four bytes: each archive starts aligned
	truncate -s $(( ($(stat -c %s "$udev_img.tmp") + 3) / 4 * 4 )) "$udev_img.tmp" &&
	(cd "$tmp" && echo init | cpio -o -H newc -R 0:0 --quiet) >>"$udev_img.tmp" &&
	mv "$udev_img.tmp" "$udev_img" || bench_fail scale "building the udev initrd failed"
rm -rf "$tmp"

vm_devices small
declare -A ratio_of rss_of ms_of
# every boot must see every disk, each with a by-id link (the scsi_debug
# disks and the small set's root disk, as tests/vm/boot-scale.sh counts
# them); a boot that lost one, or printed no counts, leaves the goal unmet
counts_ok=true
for n in $sizes; do
	sd=$(vm_scale_sd "$n")
	want=$((n + ${#VM_DEV_NAMES[@]}))
	ratios=() rsss=() mss=()
	for ((i = 1; i <= pairs; i++)); do
		if [ "${BENCH_SCALE_UDEV:-1}" != 0 ]; then
			vm_boot "scale-udev-$n-$i" "$udev_img" "quiet $sd" "$limit"
			vm_scale_line "$VM_OUT/scale-udev-$n-$i.log"
		else
			vm_scale_line /dev/null
		fi
		u_ms=${s_elapsed_ms:-null} u_rss=${s_peak_rss_kib:-null} u_disks=${s_disks:-null}
		u_byid=${s_byid_disks:-null} u_w=${s_workers:-null} u_wrss=${s_workers_rss_kib:-null}
		vm_boot "scale-ap-$n-$i" "$VM_INITRD_AP" \
			"$(vm_scale_cmdline_ap "$n") ${BENCH_SCALE_AP_EXTRA:-}" "$limit"
		vm_scale_line "$VM_OUT/scale-ap-$n-$i.log"
		a_ms=${s_elapsed_ms:-null} a_rss=${s_peak_rss_kib:-null} a_disks=${s_disks:-null}
		a_byid=${s_byid_disks:-null}
		for x in u_ms u_rss u_disks u_byid u_w u_wrss a_ms a_rss a_disks a_byid; do
			printf -v "$x" '%s' "$(bench_num "${!x}")"
		done
		[ "$a_disks" = "$want" ] && [ "$a_byid" = "$want" ] || counts_ok=false
		if [ "${BENCH_SCALE_UDEV:-1}" != 0 ]; then
			[ "$u_disks" = "$want" ] && [ "$u_byid" = "$want" ] || counts_ok=false
		fi
		r=$(bench_ratio "$a_ms" "$u_ms")
		[ "$r" = null ] || ratios+=("$r")
		[ "$a_rss" = null ] || rsss+=("$a_rss")
		[ "$a_ms" = null ] || mss+=("$a_ms")
		bench_json "{\"bench\":\"scale\",\"pair\":$i,\"disks\":$n,\"extra\":\"${BENCH_SCALE_AP_EXTRA:-}\",\"udev_ms\":$u_ms,\"asyncprobe_ms\":$a_ms,\"ratio\":$r,\"asyncprobe_rss_kib\":$a_rss,\"udevd_rss_kib\":$u_rss,\"udev_workers\":$u_w,\"udev_workers_rss_kib\":$u_wrss,\"disks_expected\":$want,\"disks_seen\":[$a_disks,$u_disks],\"byid_disks\":[$a_byid,$u_byid]}"
	done
	ratio_of[$n]=$(bench_median "${ratios[@]}")
	rss_of[$n]=$(bench_median "${rsss[@]}")
	ms_of[$n]=$(bench_median "${mss[@]}")
done
# Linear or better from the smallest to the largest size: the time per
# disk at the largest over the time per disk at the smallest, <= 1.
set -- $sizes
lo=$1 hi=${!#}
growth=null
[ "$lo" = "$hi" ] || growth=$(awk -v a="${ms_of[$lo]}" -v b="${ms_of[$hi]}" -v n="$lo" -v m="$hi" \
	'BEGIN { if (a == "null" || b == "null" || a + 0 == 0) print "null"; else printf "%.3f\n", (b / m) / (a / n) }')
growth=$(bench_num "$growth")
# the worst ratio over every size; a size without one leaves no worst
worst=
for n in $sizes; do
	[ "${ratio_of[$n]}" = null ] && { worst=null; break; }
	worst=$(awk -v a="$worst" -v b="${ratio_of[$n]}" 'BEGIN { print (a == "" || b + 0 > a + 0) ? b : a }')
done
worst=$(bench_num "$worst")
# met needs every figure: a null growth (one size only, or no time) is not met
met=false
[ "$counts_ok" = true ] && [ "$(bench_le "$worst" 0.25)" = true ] &&
	[ "$(bench_le "${rss_of[256]:-null}" 8192)" = true ] && [ "$(bench_le "$growth" 1.0)" = true ] && met=true
bench_json "{\"bench\":\"scale\",\"summary\":true,\"kernel\":\"$VM_KVER\",\"accel\":\"$VM_ACCEL\",\"smp\":$VM_SMP,\"sizes\":[${sizes// /,}],\"ratio_worst\":$worst,\"rss_kib_256\":${rss_of[256]:-null},\"growth_per_disk\":$growth,\"all_disks_with_by_id\":$counts_ok,\"goal\":\"every disk seen with a by-id link, ratio <= 0.25, rss <= 8192 KiB at 256, growth <= 1 (two sizes or more)\",\"met\":$met}"
bench_table scale
