#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# 1024 disks, no link lost (issue 7): the asyncprobe boot of the scale
# benchmark (tests/bench/scale.sh; the same command line and figures, from
# tests/vm/lib.sh), without udev.  scsi_debug makes 1024 SCSI disks (one
# host, one LUN per target) next to the SATA root disk; asyncprobe runs with
# fastboot and rootwait, and the root's init counts what /dev/disk has.
# Checks: no panic and the root's init ran; the kernel made all the disks;
# every disk has a by-id link, and as many by-id links as udev makes for
# this set (two per scsi_debug disk, measured by tests/bench/scale.sh:
# 2051 for both); the manifest knows every disk and partition, and says
# nothing failed, went without a module or was abandoned, exit status 0.
#
# Environment: VM_SCALE_DISKS (1024), VM_SCALE_LIMIT (900 s).
. "$top_srcdir/tests/vm/lib.sh"
vm_setup
vm_plan 7
n=${VM_SCALE_DISKS:-1024}
vm_initrd_asyncprobe -m scsi_debug || vm_bail "building the initramfs with scsi_debug failed"
vm_devices small
# the root disk: sda, with two partitions and three by-id links
root_disks=1 root_parts=2
log=$VM_OUT/scale-$n.log
vm_boot "scale-$n" "$VM_INITRD_AP" "$(vm_scale_cmdline_ap "$n")" "${VM_SCALE_LIMIT:-900}"
rc=$?
[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || echo "QEMU was still running at the time limit" | vm_diag
vm_check_root "$log"; vm_ok $? "$n scsi_debug disks: no panic, the root's init ran"
vm_scale_line "$log"
summary=$(vm_scale_summary "$log")
grep -E '^@@AP scale' "$log" | vm_diag
want=$((n + root_disks))
[ "${s_disks:-0}" -eq "$want" ]
vm_ok $? "the kernel made $want SCSI disks (${s_disks:-none})"
[ "${s_byid_disks:-0}" -eq "$want" ]
vm_ok $? "every disk has a by-id link (${s_byid_disks:-none} of $want)"
want_byid=$((2 * n + root_disks + root_parts))
[ "${s_by_id:-0}" -eq "$want_byid" ]
vm_ok $? "$want_byid by-id links, as udev makes (${s_by_id:-none})"
get() { sed -n "s/.*\"$1\":\([0-9-]*\).*/\1/p" <<<"$summary"; }
devs=$(get devices)
[ "${devs:-0}" -eq $((want + root_parts)) ]
vm_ok $? "the manifest has all $((want + root_parts)) disks and partitions (${devs:-none})"
bad=
for k in errors links_failed modules_failed modules_missing abandoned; do
	v=$(get "$k")
	[ "$v" = 0 ] || bad+=" $k=${v:-none}"
done
[ -z "$bad" ] || echo "manifest:$bad" | vm_diag
vm_ok "$([ -n "$summary" ] && [ -z "$bad" ]; echo $?)" \
	"the manifest: no errors, failed links or modules, none missing or abandoned"
[ "$(get exit_status)" = 0 ]
vm_ok $? "the manifest: exit status 0, not degraded"
echo "# $n disks: asyncprobe ${s_elapsed_ms:-?} ms to all links, peak RSS ${s_peak_rss_kib:-?} KiB, boot ${VM_BOOT_WALL}s wall"
exit 0
