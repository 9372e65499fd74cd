#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A real installed Debian 12 as the test subject (issue 16, items 2 and 3):
# the fixture of debian-fixture.sh (debootstrap of bookworm with systemd,
# udev, the Debian kernel package and initramfs-tools, cached), asyncprobe
# installed into a copy of it as a user would (configure --prefix=/usr
# --sysconfdir=/etc, make, make install DESTDIR=), then the documented
# commands run inside it with chroot:
#
#   asyncprobe-mkinitramfs -o /boot/initrd-asyncprobe.img -k KVER
#   update-initramfs -u              (initramfs-tools runs asyncprobe's hook)
#
# The copy becomes an ext4 root on an AHCI disk (plus a SATA and a
# virtio-blk data disk, and the twin disks of vm_twin_disks, two file
# systems of one label), booted three times with the system's own kernel:
# with the initrd the kernel package made before asyncprobe was installed
# (the control), with the one update-initramfs made with the hook, and with
# asyncprobe's own image.  Each boot must reach the real system: systemd
# as PID 1 on the fixture's root, multi-user.target (a marker unit prints
# APTEST-SYSTEM-UP), no failed units, and /dev/disk links for every disk
# in the running system; asyncprobe must have run in the two boots that
# carry it (its /run/asyncprobe survives switch_root) and not in the
# control.  The contested by-label link of the twins must point, in the
# running system, where asyncprobe put it (its manifest) in the two boots
# with asyncprobe.  The image with the hook must have taken the fast path
# on this plain root: asyncprobe's init-top/udev started no udevd in the
# initramfs (its decision in /run/asyncprobe/initramfs-udev says
# "skipped", and no systemd-udevd line comes between /init and the real
# system's systemd on the console), while the control's initramfs ran
# udevd.  Root only (debootstrap, chroot).
. "$top_srcdir/tests/vm/lib.sh"
. "$top_srcdir/tests/vm/debian-fixture.sh"
[ "$(id -u)" -eq 0 ] || vm_skip_all "not root: debootstrap and chroot need root"
vm_setup
command -v debootstrap >/dev/null || vm_bail "debootstrap is not installed (tests/install-deps.sh)"
vm_debian_fixture || vm_bail "the Debian fixture could not be built"
kver=$VM_DEBIAN_KVER
boots=(stock hook own)
vm_plan $((4 + 6 * ${#boots[@]}))
vm_note "fixture $VM_DEBIAN: kernel $kver, built in $(cat "$VM_DEBIAN/.build-seconds" 2>/dev/null || echo ?) s, $(du -sm "$VM_DEBIAN" | cut -f1) MiB"

work=$(mktemp -d "${TMPDIR:-/var/tmp}/debian-system.XXXXXX")
root=$work/root
cleanup() {
	vm_rm_tree "$root"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# 1: asyncprobe built and installed into the system as README "Installing"
# says, with DESTDIR for the system's root
vm_debian_copy "$root" || vm_bail "copying the fixture failed"
vm_debian_fsck_conf "$root"
vm_debian_asyncprobe_install "$root" "$work/build"
rc=$?
[ $rc -eq 0 ] || tail -20 "$work/build"/*.out | vm_diag
for f in usr/sbin/asyncprobe usr/sbin/asyncprobe-mkinitramfs \
	usr/share/initramfs-tools/hooks/asyncprobe \
	usr/share/initramfs-tools/scripts/init-top/asyncprobe; do
	[ -x "$root/$f" ] || { echo "not installed: /$f" | vm_diag; rc=1; }
done
vm_ok $rc "configure --prefix=/usr --sysconfdir=/etc && make && make install DESTDIR=<the system's root>"
[ $rc -eq 0 ] || vm_bail "nothing to boot"

# The control: the initrd Debian's kernel package made at installation
# (initramfs-tools without the hook).
mkdir -p "$work/boot"
cp "$root/boot/vmlinuz-$kver" "$work/boot/vmlinuz"
cp "$root/boot/initrd.img-$kver" "$work/boot/initrd-stock.img"
vm_debian_install_marker "$root"

# 2, 3: the documented commands, inside the system
vm_chroot_mount "$root" || vm_bail "mounting /proc, /sys, /dev for the chroot failed"
in_root() { vm_debian_chroot "$root" "$@"; }
in_root ldconfig
in_root asyncprobe-mkinitramfs -o /boot/initrd-asyncprobe.img -k "$kver" >"$work/mk.out" 2>&1
rc=$?
vm_diag <"$work/mk.out"
[ $rc -ne 0 ] || [ -s "$root/boot/initrd-asyncprobe.img" ] || rc=1
vm_ok $rc "in the system: asyncprobe-mkinitramfs -o /boot/initrd-asyncprobe.img -k $kver"

in_root update-initramfs -u -k "$kver" >"$work/update.out" 2>&1
rc=$?
in_root lsinitramfs "/boot/initrd.img-$kver" >"$work/hook.list" 2>/dev/null
grep -qx 'usr/sbin/asyncprobe\|sbin/asyncprobe' "$work/hook.list" &&
	grep -qx 'scripts/init-top/asyncprobe' "$work/hook.list" &&
	grep -qx 'scripts/panic/asyncprobe' "$work/hook.list" &&
	grep -qx 'usr/lib/asyncprobe/udev-init-top\|lib/asyncprobe/udev-init-top' "$work/hook.list" &&
	grep -qx 'usr/lib/asyncprobe/udev-init-bottom\|lib/asyncprobe/udev-init-bottom' "$work/hook.list" || {
	echo "the image lacks asyncprobe, its init-top or panic script, or udev's scripts kept in /lib/asyncprobe" | vm_diag
	rc=1
}
# udev's init-top and init-bottom scripts in the image are asyncprobe's
in_root unmkinitramfs "/boot/initrd.img-$kver" /tmp/aptest-hook.x >/dev/null 2>&1
for s in init-top init-bottom; do
	f=$(find "$root/tmp/aptest-hook.x" -path "*/scripts/$s/udev" | head -1)
	grep -q "^# asyncprobe's scripts/$s/udev" "${f:-/nonexistent}" ||
		{ echo "scripts/$s/udev in the image is not asyncprobe's (${f:-missing})" | vm_diag; rc=1; }
done
rm -rf "$root/tmp/aptest-hook.x"
[ $rc -eq 0 ] || tail -10 "$work/update.out" | vm_diag
vm_ok $rc "in the system: update-initramfs -u -k $kver runs the hook (asyncprobe and scripts/init-top/asyncprobe in the image)"
vm_chroot_umount "$root" || vm_bail "the chroot's mounts could not be removed"

cp "$root/boot/initrd.img-$kver" "$work/boot/initrd-hook.img"
cp "$root/boot/initrd-asyncprobe.img" "$work/boot/initrd-own.img"

# 4: the disk
vm_debian_disk "$root" "$work/disk.img"
rc=$?
vm_ok $rc "the system as an ext4 root file system (UUID $VM_DEBIAN_UUID) on a GPT disk"
[ $rc -eq 0 ] || vm_bail "no disk to boot"
vm_rm_tree "$root"
for b in "${boots[@]}"; do
	echo "# $b initrd: $(stat -c %s "$work/boot/initrd-$b.img") bytes"
done

VM_KERNEL=$work/boot/vmlinuz
vm_debian_devices "$work/disk.img"
vm_twin_disks "$work" || vm_bail "making the twin disks failed"
{
	vm_debian_expected_links
	echo "by-uuid/7a1e0001-0000-4000-8000-00000000000a SER:AP-TWIN-A"
	echo "by-uuid/7a1e0002-0000-4000-8000-00000000000b SER:AP-TWIN-B"
} | LC_ALL=C sort >"$VM_OUT/debian.expected"

# ap_twin LOG: the kernel name asyncprobe's manifest (in the running
# system's /run/asyncprobe) leaves by-label/aptest-twin on, or nothing.
ap_twin() {
	vm_extract "$1" manifest.json "$1.manifest" || return 0
	python3 - "$1.manifest" "$VM_TWIN_LABEL" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
keep = ""
for l in m["links"]:
    if l["name"].endswith("by-label/" + sys.argv[2]) and \
            l["action"] in ("created", "unchanged", "replaced"):
        keep = (l["target"] or "").split("/")[-1]
print(keep)
PY
}
# udevd_in_initramfs LOG: a systemd-udevd line between the kernel's "Run
# /init" and the real system's systemd (initramfs-tools' udevd logs its
# start to the console; the real system's comes after systemd's first
# line).
udevd_in_initramfs() {
	vm_after_init "$1" | awk '/systemd\[1\]|Welcome to/ { exit } /systemd-udevd/ { f = 1 } END { exit !f }'
}
declare -A ttr
for b in "${boots[@]}"; do
	log=$VM_OUT/debian-$b.log
	# aptest.dump: /run/asyncprobe's files in the log (the manifest for the
	# contested link, the hook's decision about udevd)
	vm_debian_boot "debian-$b" "$work/boot/initrd-$b.img" "root=UUID=$VM_DEBIAN_UUID ro aptest.dump" 900

	# the real system: systemd as PID 1, on the fixture's root, reached
	# multi-user.target
	bad=0
	vm_debian_up "$log" || { echo "no APTEST-SYSTEM-UP from the marker unit" | vm_diag; bad=1; }
	vm_check_root "$log" || bad=1
	[ "$(vm_debian_pid1 "$log")" = systemd ] || { echo "PID 1 is '$(vm_debian_pid1 "$log")'" | vm_diag; bad=1; }
	grep -q '^@@AP root sd[a-z]*1 SER:AP_ROOT/0001-part1$' "$log" ||
		{ echo "root: $(grep '^@@AP root ' "$log")" | vm_diag; bad=1; }
	[ $bad -eq 0 ] || tail -20 "$log" | vm_diag
	vm_ok $bad "$b: the installed system's systemd runs from its root and reaches multi-user.target"

	# the marker's count line proves its list arrived whole
	failed=$(vm_debian_failed "$log")
	[ -z "$failed" ] || grep '^@@AP status ' "$log" | cut -c13- | vm_diag
	vm_ok "$([ "$(vm_debian_failed_count "$log")" = 0 ] && [ -z "$failed" ]; echo $?)" \
		"$b: no failed units (systemctl --failed)${failed:+; failed: ${failed//$'\n'/ }}"

	vm_links "$log" >"$VM_OUT/debian-$b.links"
	missing=$(LC_ALL=C comm -23 "$VM_OUT/debian.expected" "$VM_OUT/debian-$b.links")
	for ident in SER:AP_ROOT/0001 SER:AP-SATA_0002 SER:AP_VBLK_0006; do
		for kind in by-id by-path; do
			grep -q "^$kind/[^ ]* $ident\$" "$VM_OUT/debian-$b.links" ||
				missing+=$'\n'"$kind/... $ident"
		done
	done
	[ -z "$missing" ] || { echo "missing or pointing elsewhere:"; echo "$missing"; } | vm_diag
	vm_ok "$([ -z "$missing" ] && vm_debian_up "$log"; echo $?)" \
		"$b: /dev/disk links of every disk in the running system ($(wc -l <"$VM_OUT/debian-$b.links") links)"

	# asyncprobe's summary line: on the console from initramfs-tools'
	# script, in the kernel log (printed by the marker) as PID 1
	summary='asyncprobe(\[[0-9]+\])?: [0-9]+ controllers, [0-9]+ devices, [0-9]+ links'
	if [ "$b" = stock ]; then
		! grep -q '^@@AP run manifest.json' "$log" && ! grep -Eq "$summary" "$log" && vm_debian_up "$log"
		vm_ok $? "$b: asyncprobe did not run (the control)"
	else
		grep -q '^@@AP run manifest.json [1-9]' "$log" && grep -Eq "$summary" "$log"
		rc=$?
		[ $rc -eq 0 ] || grep '^@@AP \(run\|kmsg\)' "$log" | vm_diag
		vm_ok $rc "$b: asyncprobe ran in the initramfs (its summary line, /run/asyncprobe/manifest.json in the running system)"
	fi
	# the contested link: asyncprobe's choice in the boots with it,
	# udev's (either twin) in the control
	twin=$(awk -v n="by-label/$VM_TWIN_LABEL" '$1 == "@@AP" && $2 == "link" && $3 == n { print $5 }' "$log")
	if [ "$b" = stock ]; then
		case $twin in SER:AP-TWIN-[AB]) rc=0 ;; *) rc=1 ;; esac
		vm_ok $rc "$b: by-label/$VM_TWIN_LABEL, claimed by both twin disks, points to one (${twin:-nothing}; udev's choice)"
	else
		keep=$(ap_twin "$log")
		keepident=$(awk -v k="$keep" '$1 == "@@AP" && $2 == "block" && $3 == k { print $4; exit }' "$log")
		[ -n "$keepident" ] && [ "$keepident" = "$twin" ]
		vm_ok $? "$b: by-label/$VM_TWIN_LABEL, claimed by both twin disks: asyncprobe kept ${keep:-?} (${keepident:-?}), the running system's link points to ${twin:-nothing}"
	fi

	# udevd in the initramfs: the control's and the own image's as they
	# are; the hook's fast path on this plain root starts none
	decision=
	vm_extract "$log" initramfs-udev "$VM_OUT/debian-$b.udev" && decision=$(head -1 "$VM_OUT/debian-$b.udev")
	case $b in
	stock)
		udevd_in_initramfs "$log" && [ -z "$decision" ]
		vm_ok $? "$b: initramfs-tools' udevd ran in the initramfs (its line before the real system's systemd)"
		;;
	hook)
		! udevd_in_initramfs "$log" && case $decision in skipped:*) true ;; *) false ;; esac
		rc=$?
		[ $rc -eq 0 ] || vm_after_init "$log" | grep -m3 'systemd-udevd\|asyncprobe: ' | vm_diag
		vm_ok $rc "$b: no udevd in the initramfs (/run/asyncprobe/initramfs-udev: ${decision:-missing})"
		;;
	own)
		! udevd_in_initramfs "$log" && [ -z "$decision" ]
		vm_ok $? "$b: no udevd in asyncprobe's own image"
		;;
	esac
	ttr[$b]=$(vm_debian_time_to_root "$log" || echo -)
done
echo "# time to the root's systemd (UserspaceTimestampMonotonic, one TCG boot each; figures belong to the benchmarks):" \
	"$(for b in "${boots[@]}"; do printf '%s %s s, ' "$b" "${ttr[$b]}"; done | sed 's/, $//')"
exit 0
