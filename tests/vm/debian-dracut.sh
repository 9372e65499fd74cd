#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dracut with asyncprobe's module on a real installed Debian 12 (issue 16,
# items 2 and 3): the dracut system of debian-fixture.sh (the Debian
# fixture with apt-get install dracut, which replaces initramfs-tools; 059
# builds a systemd initrd), asyncprobe installed into a copy as a user
# would (configure --prefix=/usr --sysconfdir=/etc, make, make install
# DESTDIR=), then inside it, with chroot:
#
#   dracut --force /boot/initrd-dracut.img KVER                    (control)
#   dracut --force --add asyncprobe /boot/initrd-asyncprobe.img KVER
#
# Both images carry the same instrumentation (dracut --include): a unit
# that, just before the initrd's cleanup and switch_root, waits for the
# initrd's udev queue to empty and records where /dev/disk/by-label/
# aptest-twin points, the link priorities udevd stored and whether
# asyncprobe's claims rules were there.  Note: dracut's systemd initrd
# refuses to switch into a root without /etc/os-release; the fixture has
# Debian's.
#
# The copy becomes an ext4 root on an AHCI disk, plus a SATA and a
# virtio-blk data disk, plus two disks whose file systems have the same
# label (one on AHCI, one on virtio-blk): two devices claim
# /dev/disk/by-label/aptest-twin.  The control boots once, the image with
# asyncprobe DEBIAN_DRACUT_BOOTS times (3): each must reach the real
# system's multi-user.target with no failed units, asyncprobe.service must
# have run in the initrd (systemd's journal, which survives switch_root, and asyncprobe's lines in the kernel log), and in
# the running system, after the real udev's coldplug, every /dev/disk link
# asyncprobe made must point where asyncprobe put it (its manifest), the
# contested one included, on every boot; its claims rules must have
# reached udevd in the initrd and in the real root (the link priority in
# udev's database).  Root only (chroot).
. "$top_srcdir/tests/vm/lib.sh"
. "$top_srcdir/tests/vm/debian-fixture.sh"
[ "$(id -u)" -eq 0 ] || vm_skip_all "not root: debootstrap and chroot need root"
vm_setup
command -v debootstrap >/dev/null || vm_bail "debootstrap is not installed (tests/install-deps.sh)"
vm_dracut_fixture || vm_bail "the dracut system could not be built"
kver=$VM_DEBIAN_KVER
nap=${DEBIAN_DRACUT_BOOTS:-3}
boots=(dracut)
for ((i = 1; i <= nap; i++)); do boots+=("asyncprobe-$i"); done
vm_plan $((3 + 3 + 7 * nap + 1))
vm_note "dracut system $VM_DRACUT: kernel $kver, $(du -sm "$VM_DRACUT" | cut -f1) MiB"

work=$(mktemp -d "${TMPDIR:-/var/tmp}/debian-dracut.XXXXXX")
cleanup() {
	vm_rm_tree "$work/root"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# The initrd instrumentation (both images).
incdir=$work/include
mkdir -p "$incdir/usr/lib/systemd/system/initrd.target.wants" "$incdir/usr/lib/aptest"
cat >"$incdir/usr/lib/systemd/system/aptest-initrd.service" <<'EOS'
[Unit]
Description=asyncprobe test: /dev/disk and udev's link priorities before switch_root
DefaultDependencies=no
After=initrd-fs.target initrd-root-fs.target systemd-udev-trigger.service asyncprobe.service
Before=initrd.target initrd-cleanup.service initrd-udevadm-cleanup-db.service

[Service]
Type=oneshot
ExecStart=/usr/lib/aptest/initrd-snapshot
EOS
ln -s ../aptest-initrd.service "$incdir/usr/lib/systemd/system/initrd.target.wants/aptest-initrd.service"
cat >"$incdir/usr/lib/aptest/initrd-snapshot" <<'EOS'
#!/bin/bash
# the queue the trigger left, then the state switch_root will carry over
udevadm settle --timeout=120
exec >/run/aptest-initrd.txt 2>&1
echo "twin $(readlink /dev/disk/by-label/aptest-twin)"
[ -e /run/udev/rules.d/97-asyncprobe-claims.rules ] && echo "rules present" || echo "rules absent"
for f in /run/udev/data/b*; do
	while read -r l; do
		case $l in L:*) echo "prio ${f##*/b} ${l#L:}" ;; esac
	done <"$f"
done
EOS
chmod 0755 "$incdir/usr/lib/aptest/initrd-snapshot"

# The real root's report, besides the marker's: the instrumentation's
# record from the initrd, asyncprobe's journal from the initrd, its claims
# rules, udev's stored link priorities and asyncprobe's links (manifest).
cat >"$work/report-extra" <<'EOS'
#!/bin/sh
sed 's/^/@@AP initrd /' /run/aptest-initrd.txt 2>/dev/null
journalctl -b -o cat -u asyncprobe.service 2>/dev/null | sed 's/^/@@AP journal /'
sed -n 's/^SUBSYSTEM/@@AP rule SUBSYSTEM/p' /run/udev/rules.d/97-asyncprobe-claims.rules 2>/dev/null
for f in /run/udev/data/b*; do
	sed -n "s|^L:|@@AP prio ${f##*/b} |p" "$f"
done 2>/dev/null
sed -n 's/.*{"cookie":[0-9]*,"action":"\([a-z]*\)","name":"\([^"]*\)","target":"\([^"]*\)".*/@@AP aplink \1 \2 \3/p' \
	/run/asyncprobe/manifest.json 2>/dev/null | sed 's/\\\\/\\/g'
EOS

# 1-3: asyncprobe installed, the two images made inside the system
VM_DRACUT_INCLUDE=$incdir VM_DRACUT_REPORT_EXTRA=$work/report-extra VM_DRACUT_KEEP_ROOT=1 vm_dracut_prepare "$work"
rc=$?
root=$work/root
[ -d "$root/usr/lib/dracut/modules.d/90asyncprobe" ] && [ -x "$root/usr/sbin/asyncprobe" ] &&
	[ -f "$root/usr/lib/systemd/system/asyncprobe.service" ]
vm_ok $? "configure --prefix=/usr --sysconfdir=/etc && make && make install DESTDIR=<the dracut system>: the module in /usr/lib/dracut/modules.d/90asyncprobe, the unit, asyncprobe"
[ $rc -eq 0 ] || { tail -15 "$work"/dracut-*.out "$work"/build/*.out 2>/dev/null | vm_diag; vm_bail "preparing the system failed"; }
vm_ok 0 "in the system: dracut --force /boot/initrd-dracut.img $kver, and the same with --add asyncprobe"
ls_img() { vm_debian_chroot "$root" lsinitrd "/boot/$1" 2>/dev/null; }
ls_img initrd-asyncprobe.img >"$work/ap.list"
ls_img initrd-dracut.img >"$work/control.list"
bad=0
for f in usr/sbin/asyncprobe usr/lib/systemd/system/asyncprobe.service \
	usr/lib/systemd/system/initrd.target.wants/asyncprobe.service \
	usr/lib/systemd/system/asyncprobe.service.d/dracut.conf \
	usr/lib/systemd/system/systemd-udevd.service; do
	grep -q " $f\( ->.*\)\?\$" "$work/ap.list" || { echo "not in the image: $f" | vm_diag; bad=1; }
	case $f in *asyncprobe*)
		! grep -q " $f\( ->.*\)\?\$" "$work/control.list" || { echo "in the control: $f" | vm_diag; bad=1; } ;;
	esac
done
vm_ok $bad "the image has asyncprobe, its unit (wanted by initrd.target, after dracut-pre-udev) and udevd; the control has no asyncprobe"
vm_rm_tree "$root"
echo "# initrd sizes: control $(stat -c %s "$work/boot/initrd-dracut.img"), asyncprobe $(stat -c %s "$work/boot/initrd-asyncprobe.img") bytes"

VM_KERNEL=$work/boot/vmlinuz
vm_debian_devices "$work/disk.img"
vm_twin_disks "$work" || vm_bail "making the twin disks failed"
vm_debian_expected_links >"$VM_OUT/dracut.expected"
echo "by-label/$VM_TWIN_LABEL SER:AP-TWIN-?" >>"$VM_OUT/dracut.expected"


# asyncprobe's final links (name -> kernel name), from its manifest's
# creation log: the last event that left the link on a device
ap_links() {
	awk '$1 == "@@AP" && $2 == "aplink" && ($3 == "created" || $3 == "unchanged" || $3 == "replaced") {
		n = $4; sub(/^disk\//, "", n); t[n] = $5 } END { for (n in t) print n, t[n] }' "$1" | LC_ALL=C sort
}
# the running system's links, name -> kernel name
sys_links() {
	awk '$1 == "@@AP" && $2 == "link" { t = $4; sub(/.*\//, "", t); print $3, t }' "$1" | LC_ALL=C sort
}

declare -A ttr
twins=()
for b in "${boots[@]}"; do
	img=asyncprobe
	[ "$b" = dracut ] && img=dracut
	log=$VM_OUT/debian-dracut-$b.log
	vm_debian_boot "debian-dracut-$b" "$work/boot/initrd-$img.img" "root=UUID=$VM_DEBIAN_UUID ro" 1200
	ttr[$b]=$(vm_debian_time_to_root "$log" || echo -)

	bad=0
	vm_debian_up "$log" || { echo "no APTEST-SYSTEM-UP from the marker unit" | vm_diag; bad=1; }
	vm_check_root "$log" || bad=1
	[ "$(vm_debian_pid1 "$log")" = systemd ] || { echo "PID 1 is '$(vm_debian_pid1 "$log")'" | vm_diag; bad=1; }
	grep -q '^@@AP root sd[a-z]*1 SER:AP_ROOT/0001-part1$' "$log" ||
		{ echo "root: $(grep '^@@AP root ' "$log")" | vm_diag; bad=1; }
	vm_ok $bad "$b: the real system's systemd runs from its root and reaches multi-user.target (time to root ${ttr[$b]} s)"

	failed=$(vm_debian_failed "$log")
	[ -z "$failed" ] || grep '^@@AP status ' "$log" | cut -c13- | vm_diag
	vm_ok "$([ "$(vm_debian_failed_count "$log")" = 0 ] && [ -z "$failed" ]; echo $?)" \
		"$b: no failed units (systemctl --failed)${failed:+; failed: ${failed//$'\n'/ }}"

	vm_links "$log" | sed "s|^\(by-label/$VM_TWIN_LABEL\) SER:AP-TWIN-[AB]\$|\1 SER:AP-TWIN-?|" \
		>"$VM_OUT/debian-dracut-$b.links"
	missing=$(LC_ALL=C comm -23 <(LC_ALL=C sort "$VM_OUT/dracut.expected") "$VM_OUT/debian-dracut-$b.links")
	[ -z "$missing" ] || { echo "missing or pointing elsewhere:"; echo "$missing"; } | vm_diag
	[ -z "$missing" ] && vm_debian_up "$log"
	vm_ok $? "$b: /dev/disk links of every disk in the running system ($(wc -l <"$VM_OUT/debian-dracut-$b.links") links)"
	twin=$(awk -v n="by-label/$VM_TWIN_LABEL" '$1 == "@@AP" && $2 == "link" && $3 == n { print $5 }' "$log")
	echo "# $b: by-label/$VM_TWIN_LABEL -> ${twin:-nothing} in the running system; in the initrd before switch_root: $(sed -n 's/^@@AP initrd twin //p' "$log")"
	[ "$b" = dracut ] && continue

	# asyncprobe.service ran in the initrd and ended well: systemd's
	# lines in the journal (which survives switch_root), asyncprobe's own
	# in the kernel log
	grep -q '^@@AP journal Finished asyncprobe.service' "$log" &&
		grep -Eq '^@@AP kmsg .*asyncprobe\[[0-9]+\]: [0-9]+ controllers, [0-9]+ devices, [0-9]+ links' "$log" &&
		grep -q '^@@AP kmsg .*asyncprobe\[[0-9]*\]: root device .* appeared after' "$log"
	rc=$?
	[ $rc -eq 0 ] || grep '^@@AP \(journal\|kmsg\)' "$log" | tail -8 | vm_diag
	vm_ok $rc "$b: asyncprobe.service ran in the initrd and finished (journal), root found and summary line (kernel log)"

	# every link asyncprobe made points where it put it
	ap_links "$log" >"$work/$b.ap"
	sys_links "$log" >"$work/$b.sys"
	diff=$(LC_ALL=C join -a1 "$work/$b.ap" "$work/$b.sys" | awk 'NF != 3 || $2 != $3')
	[ -s "$work/$b.ap" ] || diff="asyncprobe's manifest lists no links"
	[ -z "$diff" ] || { echo "asyncprobe's link, its device, the running system's device:"; echo "$diff"; } | vm_diag
	vm_ok "$([ -z "$diff" ]; echo $?)" "$b: all $(wc -l <"$work/$b.ap") links asyncprobe made point where it put them in the running system"

	# the contested one: asyncprobe's choice, kept by udev in the real root
	keep=$(sed -n "s|^@@AP kmsg .*asyncprobe\[[0-9]*\]: disk/by-label/$VM_TWIN_LABEL claimed by .*; \([a-z0-9]*\) keeps it.*|\1|p" "$log" | head -1)
	got=$(awk -v n="by-label/$VM_TWIN_LABEL" '$1 == n { print $2 }' "$work/$b.sys")
	[ -n "$keep" ] && [ "$keep" = "$got" ]
	vm_ok $? "$b: by-label/$VM_TWIN_LABEL, claimed by both twin disks: asyncprobe kept ${keep:-?}, the running system's link points to ${got:-nothing}"
	twins+=("$twin")

	# the claims rules reached udevd: in the real root (udev's database
	# has the loser's negative priority) and in the initrd (the same,
	# recorded before switch_root)
	rules=$(grep -c '^@@AP rule SUBSYSTEM.*link_priority' "$log")
	min_sys=$(awk '$1 == "@@AP" && $2 == "prio" && $4 < 0 { n++ } END { print n + 0 }' "$log")
	min_initrd=$(awk '$1 == "@@AP" && $2 == "initrd" && $3 == "prio" && $5 < 0 { n++ } END { print n + 0 }' "$log")
	grep '^@@AP \(rule\|prio\|initrd\)' "$log" | vm_diag
	[ "$rules" -ge 2 ] && [ "$min_sys" -ge 1 ]
	vm_ok $? "$b: the claims rules ($rules) reached the real root's udevd: $min_sys device(s) with a negative link priority in its database (initrd's udevd before switch_root: $min_initrd)"
done

# the same device on every boot with asyncprobe
first=${twins[0]:-}
same=0
for t in "${twins[@]}"; do [ "$t" = "$first" ] || same=1; done
[ ${#twins[@]} -eq "$nap" ] && [ -n "$first" ] || same=1
vm_ok $same "by-label/$VM_TWIN_LABEL on the same disk in all $nap boots with asyncprobe (${twins[*]})"
echo "# time to the root's systemd (one TCG boot each on a shared host; figures belong to tests/bench/debian-dracut.sh):" \
	"$(for b in "${boots[@]}"; do printf '%s %s s, ' "$b" "${ttr[$b]}"; done | sed 's/, $//')"
exit 0
