#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# One root on LVM (issue 16, item 5), as Debian's installer lays it out by
# default: the installed Debian of debian-fixture.sh with lvm2 installed
# (apt-get in a copy of the fixture, cached), asyncprobe installed into it
# as README "Installing" says, and inside it (chroot), as a user would:
#
#   update-initramfs -u              (asyncprobe's hook and lvm2's hook)
#
# The system's root file system then lives on a logical volume: a GPT disk
# whose one partition is an LVM physical volume, a volume group of a name
# unique to this run, and in it the logical volume "root" holding an ext4
# made from the system (its /etc/fstab names /dev/mapper/VG-root).  The
# boot with root=/dev/mapper/VG-root must reach the real system: systemd
# as PID 1 with the logical volume (dm-0) as root, multi-user.target, no
# failed units.  In the initramfs asyncprobe runs (its init-top
# script) and probes and links the disks, the physical volume included,
# without waiting for the mapper device it cannot make; lvm2 activates the
# volume group (bookworm's lvm2 has no initramfs script: its hook copies
# lvm and its udev rules, and 69-lvm.rules runs "vgchange -aay" when udev
# sees the physical volume; initramfs-tools then finds the mapper device).
# Every link asyncprobe made for the physical volume's partition is one
# the running system's udev makes too; udev's one more there is lvm2's
# by-id/lvm-pv-uuid-.  This is the hook's fallback: its init-top/udev,
# which leaves udevd out only for a plain root asyncprobe found, must
# have run udev's script (its decision in /run/asyncprobe/initramfs-udev
# says "started" and why; udevd's line on the console before the real
# system's systemd).
#
# The volume group is written on the host through a loop device by the
# lvm2 of the copy (chroot) with activation off (no device-mapper on the
# host): the logical volume is created inactive (lvcreate -an -Zn) and the
# file system is copied into the image at the logical volume's first
# extent.  Root only (debootstrap, chroot, losetup).
. "$top_srcdir/tests/vm/lib.sh"
. "$top_srcdir/tests/vm/debian-fixture.sh"

# ------------------------------------------------------------ the lvm2 system
#
# A system derived from the fixture: a copy in which apt-get installs lvm2
# (no Recommends), from the mirror of the fixture's /etc/apt/sources.list;
# built once and cached under its own key (the base fixture's directory
# name, which carries the base recipe's key, and the recipe below), with
# its own lock and names (lvm-*: the base fixture's cleanup of unfinished
# debian-*.tmp never touches one being built).  Sets VM_DEBIAN_LVM.
vm_lvm_build() {
	local d=$1 rc=0
	cp -L /etc/resolv.conf "$d/etc/resolv.conf" 2>/dev/null || :
	# no service starts in the chroot
	printf '#!/bin/sh\nexit 101\n' >"$d/usr/sbin/policy-rc.d"
	chmod 0755 "$d/usr/sbin/policy-rc.d"
	vm_chroot_mount "$d" || return 1
	vm_debian_chroot "$d" apt-get -q update &&
		vm_debian_chroot "$d" env DEBIAN_FRONTEND=noninteractive \
			apt-get -q -y --no-install-recommends install lvm2 || rc=1
	vm_debian_chroot "$d" apt-get clean
	vm_chroot_umount "$d" || rc=1
	rm -f "$d/etc/resolv.conf" "$d/usr/sbin/policy-rc.d"
	rm -rf "$d"/var/lib/apt/lists/*_Packages "$d"/var/lib/apt/lists/*_InRelease \
		"$d"/var/lib/apt/lists/*_Translation-*
	[ $rc -eq 0 ] && [ -x "$d/usr/sbin/lvm" ] &&
		[ -e "$d/usr/share/initramfs-tools/hooks/lvm2" ] && [ -e "$d/lib/udev/rules.d/69-lvm.rules" ]
}

vm_lvm_new() { vm_debian_copy "$1" && vm_lvm_build "$1"; }

vm_lvm_fixture() {
	local key
	vm_debian_fixture || return 1
	key=$( (basename "$VM_DEBIAN"; declare -f vm_lvm_build) | sha256sum | cut -c1-16)
	vm_cache_tree VM_DEBIAN_LVM lvm "$key" "lvm2 system" \
		"apt-get install lvm2 in a copy of $VM_DEBIAN" vm_lvm_new || return 1
	[ -x "$VM_DEBIAN_LVM/usr/sbin/lvm" ]
}

# "--fixture": build the lvm2 system only (and print where it is).
if [ "${1:-}" = --fixture ]; then
	vm_cache_dir && vm_lvm_fixture && echo "$VM_DEBIAN_LVM"
	exit
fi

[ "$(id -u)" -eq 0 ] || vm_skip_all "not root: debootstrap, chroot and losetup need root"
vm_setup
command -v debootstrap >/dev/null || vm_bail "debootstrap is not installed (tests/install-deps.sh)"
command -v losetup >/dev/null || vm_bail "losetup is not installed (tests/install-deps.sh)"
vm_lvm_fixture || vm_bail "the lvm2 system could not be built"
kver=$VM_DEBIAN_KVER
vm_plan 9
vm_note "lvm2 system $VM_DEBIAN_LVM: kernel $kver"

# A volume group name of this run only: a host whose own lvm2 sees the
# loop device never meets two groups of one name.  The root's mapper name
# is VG-root (no '-' in VG: it would be doubled there).
vg=aptest$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
lv=root
mapper=$vg-$lv
pv_partuuid=7b3e9c1d-2f4a-4b5c-9d6e-8f0a1b2c3d4e
pv_partlabel='aptest lvm'
work=$(mktemp -d "${TMPDIR:-/var/tmp}/debian-lvm.XXXXXX")
root=$work/root
loop=
# Undo the host side: the chroot's mounts, the volume group if a host
# udev activated it behind our back (lvm2's autoactivation), the loop
# device, the work directory.
host_deactivate() {
	command -v udevadm >/dev/null && udevadm settle -t 10 >/dev/null 2>&1
	if [ -e "/dev/mapper/$mapper" ] && [ -x "$root/usr/sbin/lvm" ]; then
		grep -q " $root/dev " /proc/mounts || vm_chroot_mount "$root" 2>/dev/null
		vm_debian_chroot "$root" env LVM_SUPPRESS_FD_WARNINGS=1 lvm vgchange -an \
			--devices "$loop" "$vg" >/dev/null 2>&1
	fi
}
cleanup() {
	if [ -n "$loop" ]; then
		host_deactivate
		losetup -d "$loop" 2>/dev/null
	fi
	vm_rm_tree "$root"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# 1: asyncprobe into the lvm2 system as README "Installing" says; the
# system's fstab names its root as the installer writes an LVM root
vm_debian_copy_from() { cp -a --reflink=auto "$1" "$2" && rm -f "$2/.done" "$2/.build-seconds"; }
vm_debian_copy_from "$VM_DEBIAN_LVM" "$root" || vm_bail "copying the lvm2 system failed"
vm_debian_asyncprobe_install "$root" "$work/build"
rc=$?
[ $rc -eq 0 ] || tail -20 "$work/build"/*.out | vm_diag
printf '/dev/mapper/%s\t/\text4\terrors=remount-ro\t0\t1\n' "$mapper" >"$root/etc/fstab"
vm_debian_install_marker "$root" || rc=1
vm_ok $rc "configure --prefix=/usr --sysconfdir=/etc && make && make install DESTDIR=<the lvm2 system's root>"
[ $rc -eq 0 ] || vm_bail "nothing to boot"

# 2: update-initramfs inside the system: asyncprobe's hook and lvm2's
vm_chroot_mount "$root" || vm_bail "mounting /proc, /sys, /dev for the chroot failed"
in_root() { vm_debian_chroot "$root" "$@"; }
in_root ldconfig
in_root update-initramfs -u -k "$kver" >"$work/update.out" 2>&1
rc=$?
in_root lsinitramfs "/boot/initrd.img-$kver" >"$work/initrd.list" 2>/dev/null
for f in usr/sbin/asyncprobe scripts/init-top/asyncprobe usr/sbin/lvm \
	usr/lib/udev/rules.d/69-lvm.rules; do
	# merged /usr or not: sbin/x and lib/udev are the same files
	grep -qx "$f\|${f#usr/}" "$work/initrd.list" ||
		{ echo "not in the image: $f" | vm_diag; rc=1; }
done
[ $rc -eq 0 ] || tail -10 "$work/update.out" | vm_diag
vm_ok $rc "in the system: update-initramfs -u -k $kver (asyncprobe, its init-top script, lvm and lvm2's udev rules in the image)"
cp "$root/boot/vmlinuz-$kver" "$work/vmlinuz" && cp "$root/boot/initrd.img-$kver" "$work/initrd.img" ||
	vm_bail "no kernel or initrd"

# 3: the disk.  GPT, one partition of type "Linux LVM" that is the
# physical volume; the logical volume holds an ext4 made from the system
# (UUID and label of the fixture).  lvm2 of the system writes the volume
# group through a loop device over the partition, without activating it;
# the file system goes into the image at the logical volume's first extent.
img=$work/disk.img
lv_mib=$((($(du -smx "$root" | cut -f1) * 5 / 4 + 256 + 3) / 4 * 4))
part_mib=$((lv_mib + 8))
rc=0
truncate -s "$((part_mib + 2))M" "$img" &&
	printf 'label: gpt\nstart=2048, size=%d, type=E6D6D379-F507-44C2-A23C-238F2A3DF928, uuid=%s, name="%s"\n' \
		$((part_mib * 2048)) "$pv_partuuid" "$pv_partlabel" |
	sfdisk -q --no-reread --no-tell-kernel "$img" || rc=1
[ $rc -eq 0 ] && loop=$(losetup --find --show --offset $((1 << 20)) --sizelimit $((part_mib << 20)) "$img") || rc=1
# lvm of the system on the loop device only, with device-mapper off: the
# logical volume is never activated on this host (whose kernel may not even
# have device-mapper)
lvm_in() {
	local cmd=$1
	shift
	in_root env LVM_SUPPRESS_FD_WARNINGS=1 lvm "$cmd" --devices "$loop" \
		--config global/activation=0 "$@"
}
if [ $rc -eq 0 ]; then
	{
		lvm_in pvcreate -y -ff "$loop" &&
			lvm_in vgcreate "$vg" "$loop" &&
			lvm_in lvcreate -an -Zn -Wn -y -L "${lv_mib}m" -n "$lv" "$vg"
	} >"$work/lvm.out" 2>&1 || rc=1
	pv_uuid=$(lvm_in pvs --noheadings -o pv_uuid "$loop" 2>>"$work/lvm.out" | tr -d ' ')
	pe_start=$(lvm_in pvs --noheadings --units b --nosuffix -o pe_start "$loop" 2>>"$work/lvm.out" | tr -d ' ')
	seg=$(lvm_in lvs --noheadings -o seg_pe_ranges "$vg/$lv" 2>>"$work/lvm.out" | tr -d ' ')
	active=$(lvm_in lvs --noheadings -o lv_active "$vg/$lv" 2>>"$work/lvm.out" | tr -d ' ')
	# one linear segment from the first extent, not active on this host
	[ "$seg" = "$loop:0-$((lv_mib / 4 - 1))" ] && [ -n "$pv_uuid" ] && [ "${pe_start:-0}" -gt 0 ] &&
		[ "$active" != active ] || {
		echo "segment '$seg', PV UUID '$pv_uuid', pe_start '$pe_start', '$active'"
		cat "$work/lvm.out"
	} | vm_diag
	host_deactivate
	losetup -d "$loop" && loop=
fi
vm_chroot_umount "$root" || vm_bail "the chroot's mounts could not be removed"
# lvm2's runtime files of the chroot are not part of the installed system
rm -rf "$root/run/lvm" "$root/run/lock/lvm"
if [ $rc -eq 0 ] && [ -n "$pv_uuid" ] && [ -z "$loop" ]; then
	fs=$work/root.fs
	truncate -s "${lv_mib}M" "$fs" &&
		mkfs.ext4 -q -F -L aptest-root -U "$VM_DEBIAN_UUID" -E root_owner=0:0 -d "$root" "$fs" &&
		dd if="$fs" of="$img" bs=1M oflag=seek_bytes seek=$(((1 << 20) + pe_start)) \
			conv=notrunc,sparse status=none || rc=1
	rm -f "$fs"
else
	rc=1
fi
vm_ok $rc "root on LVM: PV on a GPT partition, VG $vg, LV $lv ($lv_mib MiB) with the system as ext4"
[ $rc -eq 0 ] || vm_bail "no disk to boot"
vm_rm_tree "$root"
echo "# initrd: $(stat -c %s "$work/initrd.img") bytes; PV UUID $pv_uuid, data at $pe_start bytes into the partition"

# 4: the boot
VM_KERNEL=$work/vmlinuz
vm_debian_devices "$img"
log=$VM_OUT/debian-lvm.log
vm_debian_boot debian-lvm "$work/initrd.img" "root=/dev/mapper/$mapper ro aptest.dump" 900

bad=0
vm_debian_up "$log" || { echo "no APTEST-SYSTEM-UP from the marker unit" | vm_diag; bad=1; }
vm_check_root "$log" || bad=1
[ "$(vm_debian_pid1 "$log")" = systemd ] || { echo "PID 1 is '$(vm_debian_pid1 "$log")'" | vm_diag; bad=1; }
# the root is the logical volume: a dm device, the one udev names
# dm-name-VG-root
read -r _ _ rootname rootident < <(grep -m1 '^@@AP root ' "$log")
lvident=$(awk -v n="by-id/dm-name-$mapper" '$1 == "@@AP" && $2 == "link" && $3 == n { print $5 }' "$log")
case $rootname in
dm-*) [ -n "$lvident" ] && [ "$rootident" = "$lvident" ] || bad=1 ;;
*) bad=1 ;;
esac
[ $bad -eq 0 ] || { echo "root: $rootname $rootident; dm-name-$mapper: ${lvident:-none}"; tail -20 "$log"; } | vm_diag
vm_ok $bad "root=/dev/mapper/$mapper: systemd runs from the logical volume ($rootname) and reaches multi-user.target"

failed=$(vm_debian_failed "$log")
[ -z "$failed" ] || grep '^@@AP status ' "$log" | cut -c13- | vm_diag
vm_ok "$([ "$(vm_debian_failed_count "$log")" = 0 ] && [ -z "$failed" ]; echo $?)" \
	"no failed units (systemctl --failed)${failed:+; failed: ${failed//$'\n'/ }}"

# the running system's links: the physical volume's partition (by-id,
# by-path, by-partuuid, by-partlabel, lvm2's by-id/lvm-pv-uuid-, never a
# by-uuid: an LVM member), the file system on the logical volume, the
# data disks
pv=SER:AP_ROOT/0001-part1
vm_links "$log" >"$VM_OUT/debian-lvm.links"
{
	vm_expected_links sata2 vblk
	echo "by-partuuid/$pv_partuuid $pv"
	echo "by-partlabel/$(vm_encode "$pv_partlabel") $pv"
	echo "by-id/lvm-pv-uuid-$pv_uuid $pv"
	echo "by-uuid/$VM_DEBIAN_UUID ${lvident:-dm}"
	echo "by-label/aptest-root ${lvident:-dm}"
} | LC_ALL=C sort >"$VM_OUT/debian-lvm.expected"
missing=$(LC_ALL=C comm -23 "$VM_OUT/debian-lvm.expected" "$VM_OUT/debian-lvm.links")
for ident in SER:AP_ROOT/0001 $pv SER:AP-SATA_0002 SER:AP_VBLK_0006; do
	for kind in by-id by-path; do
		grep -q "^$kind/[^ ]* $ident\$" "$VM_OUT/debian-lvm.links" ||
			missing+=$'\n'"$kind/... $ident"
	done
done
grep -q "^by-uuid/[^ ]* $pv\$" "$VM_OUT/debian-lvm.links" && missing+=$'\n'"a by-uuid link for the LVM member"
[ -z "$missing" ] || { echo "missing, wrong or extra:"; echo "$missing"; } | vm_diag
vm_ok "$([ -z "$missing" ] && vm_debian_up "$log"; echo $?)" \
	"/dev/disk links of the running system: the physical volume's partition, the LV's file system, the data disks ($(wc -l <"$VM_OUT/debian-lvm.links") links)"

# asyncprobe ran in the initramfs, said why it does not wait for this
# root, and did not time out waiting for it
summary='asyncprobe(\[[0-9]+\])?: [0-9]+ controllers, [0-9]+ devices, [0-9]+ links'
bad=0
grep -q '^@@AP run manifest.json [1-9]' "$log" && grep -Eq "$summary" "$log" || bad=1
grep -q "root=/dev/mapper/$mapper is not a device asyncprobe makes" "$log" ||
	{ echo "no line says asyncprobe does not wait for the mapper root" | vm_diag; bad=1; }
! grep -Eq 'asyncprobe.*(not found|timed out|exit status [1-9])' "$log" ||
	{ grep -E 'asyncprobe.*(not found|timed out|exit status [1-9])' "$log" | vm_diag; bad=1; }
[ $bad -eq 0 ] || grep '^@@AP \(run\|kmsg\)' "$log" | vm_diag
vm_ok $bad "asyncprobe ran in the initramfs without waiting for the mapper root (its summary, /run/asyncprobe/manifest.json)"

# every link asyncprobe made for the physical volume's partition is one
# the running system's udev has too; udev's only other one there is lvm2's
# by-id/lvm-pv-uuid- (lvm2's own udev rules, which asyncprobe does not
# imitate)
pvname=$(awk -v p="$pv" '$1 == "@@AP" && $2 == "block" && $4 == p { print $3; exit }' "$log")
bad=0
if vm_extract "$log" manifest.json "$VM_OUT/debian-lvm.json" && [ -n "$pvname" ]; then
	python3 - "$VM_OUT/debian-lvm.json" "$pvname" >"$VM_OUT/debian-lvm.aplinks" <<'PY' || bad=1
import json, sys
m = json.load(open(sys.argv[1]))
for l in m["links"]:
    t = l["target"] or ""
    if l["action"] in ("created", "unchanged", "replaced") and t.split("/")[-1] == sys.argv[2]:
        n = l["name"]
        print(n[n.index("by-"):])
PY
	LC_ALL=C sort -u -o "$VM_OUT/debian-lvm.aplinks" "$VM_OUT/debian-lvm.aplinks"
	awk -v p="$pv" '$2 == p && $1 !~ /^by-diskseq\// { print $1 }' "$VM_OUT/debian-lvm.links" |
		LC_ALL=C sort >"$VM_OUT/debian-lvm.udevlinks"
	only_ap=$(LC_ALL=C comm -23 "$VM_OUT/debian-lvm.aplinks" "$VM_OUT/debian-lvm.udevlinks")
	only_udev=$(LC_ALL=C comm -13 "$VM_OUT/debian-lvm.aplinks" "$VM_OUT/debian-lvm.udevlinks")
	[ -s "$VM_OUT/debian-lvm.aplinks" ] && [ -z "$only_ap" ] &&
		[ "$only_udev" = "by-id/lvm-pv-uuid-$pv_uuid" ] || bad=1
	[ $bad -eq 0 ] || { echo "asyncprobe only: $only_ap"; echo "udev only: $only_udev"; } | vm_diag
	sed 's/^/asyncprobe: /' "$VM_OUT/debian-lvm.aplinks" | vm_diag
else
	echo "no manifest in the log, or no block device $pv" | vm_diag
	bad=1
fi
vm_ok $bad "asyncprobe's links of the physical volume ($pvname) are udev's, but for lvm2's by-id/lvm-pv-uuid-"
# the hook's fallback: udev's init-top script ran, because of the root
decision=
vm_extract "$log" initramfs-udev "$VM_OUT/debian-lvm.udev" && decision=$(head -1 "$VM_OUT/debian-lvm.udev")
case $decision in
"started: root=/dev/mapper/$mapper "*) rc=0 ;;
*) rc=1 ;;
esac
vm_after_init "$log" | awk '/systemd\[1\]|Welcome to/ { exit } /systemd-udevd/ { f = 1 } END { exit !f }' || rc=1
[ $rc -eq 0 ] || vm_after_init "$log" | grep -m3 'systemd-udevd\|asyncprobe: ' | vm_diag
vm_ok $rc "the hook's init-top/udev started udevd in the initramfs for the LVM root (/run/asyncprobe/initramfs-udev: ${decision:-missing})"
echo "# time to the root's systemd (one TCG boot): $(vm_debian_time_to_root "$log" || echo -) s"
exit 0
