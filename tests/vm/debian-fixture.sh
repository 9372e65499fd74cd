# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# An installed Debian 12 system as the subject of VM tests (issue 16, item
# 2).  Source it after lib.sh; it defines functions only.
#
#   vm_debian_fixture        debootstrap of bookworm (minbase, systemd,
#                            udev, the Debian kernel package, initramfs-
#                            tools), built once into the VM cache, keyed by
#                            the recipe's content; sets VM_DEBIAN (the
#                            tree, read only) and VM_DEBIAN_KVER
#   vm_debian_copy DEST      a private copy of the tree to change
#   vm_chroot_mount ROOT     /proc, /sys and /dev for a chroot; always pair
#   vm_chroot_umount ROOT    with this one (in a trap)
#   vm_debian_disk ROOT IMG  a GPT disk image whose one partition is an
#                            ext4 file system made from ROOT, with the UUID
#                            of the fixture's /etc/fstab
#   vm_debian_fsck_conf ROOT FSTYPE=ext4 for its initramfs-tools (fsck in
#                            images made in a chroot)
#   vm_debian_devices IMG    VM_DEV_ARGS: that disk on AHCI, a data disk on
#                            virtio-blk
#   vm_debian_report_*       the marker unit's lines on the console
#
# The fixture is a real installed system: its own kernel in /boot, its own
# initramfs-tools initrd made by the kernel package's postinst, systemd as
# /sbin/init.  Nothing is ever installed into the host's root: debootstrap
# writes into a directory of the cache, and every command that changes the
# system runs in a chroot of a copy.

VM_DEBIAN_SUITE=bookworm
# Besides minbase: the init system, udev, the kernel and the generator
# Debian installs with it, and zstd (initramfs-tools' default compressor,
# also asyncprobe-mkinitramfs').
VM_DEBIAN_PACKAGES=(systemd systemd-sysv udev linux-image-amd64 initramfs-tools zstd)
VM_DEBIAN_UUID=0d6b1f0e-5a2c-4e3b-9c4d-7e8f9a0b1c2d
VM_DEBIAN_PARTUUID=5e2a7c1b-3d4f-4a5b-8c6d-9e0f1a2b3c4d
VM_DEBIAN_MACHINE_ID=4a7c2e9b1d3f45a6b8c0d2e4f6a8b0c2

# The mirror: ASYNCPROBE_TEST_MIRROR, else the first Debian URI of the
# host's apt sources (deb822 or one-line), else deb.debian.org.
vm_debian_mirror() {
	local m=${ASYNCPROBE_TEST_MIRROR:-}
	[ -n "$m" ] || m=$(awk '$1 == "URIs:" && $2 ~ /\/debian\/?$/ { print $2; exit }' \
		/etc/apt/sources.list.d/*.sources 2>/dev/null)
	[ -n "$m" ] || m=$(awk '$1 == "deb" && $3 == "'"$VM_DEBIAN_SUITE"'" { print $2; exit }' \
		/etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null)
	echo "${m:-http://deb.debian.org/debian}"
}

vm_chroot_mount() {
	local r=$1
	mount -t proc proc "$r/proc" &&
		mount -t sysfs sysfs "$r/sys" &&
		mount --bind /dev "$r/dev" || { vm_chroot_umount "$r"; return 1; }
}

# Unmounts everything mounted below ROOT (the three above, or what an
# interrupted debootstrap left: /proc, /sys, /dev/pts, ...), the deepest
# first; lazily if busy.  Returns 1 when something is still mounted there.
vm_chroot_umount() {
	local r m
	r=$(realpath -m "$1")
	for m in $(awk -v r="$r/" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r); do
		umount "$m" 2>/dev/null || umount -l "$m"
	done
	! awk -v r="$r/" 'index($2, r) == 1 { f = 1 } END { exit !f }' /proc/mounts
}

# Removes a tree that may have been a chroot: unmounts first and never
# crosses into another file system (a leftover bind mount of /dev).
vm_rm_tree() {
	[ -e "$1" ] || return 0
	vm_chroot_umount "$1" || return 1
	rm -rf --one-file-system "$1"
}

# The recipe.  Writes the system into DIR (empty); the cache key hashes
# this function, the package list and the suite.
vm_debian_build() {
	local d=$1 mirror
	mirror=$(vm_debian_mirror)
	local inc
	inc=$(IFS=,; echo "${VM_DEBIAN_PACKAGES[*]}")
	# debootstrap installs no Recommends: the system stays minimal
	debootstrap --variant=minbase --include="$inc" "$VM_DEBIAN_SUITE" "$d" "$mirror" ||
		return 1
	# The installed system's identity and root, as the installer would
	# leave them (a set machine-id: no first-boot prompts).
	echo "$VM_DEBIAN_MACHINE_ID" >"$d/etc/machine-id"
	echo aptest-debian >"$d/etc/hostname"
	printf '127.0.0.1\tlocalhost\n127.0.1.1\taptest-debian\n' >"$d/etc/hosts"
	printf 'UUID=%s\t/\text4\terrors=remount-ro\t0\t1\n' "$VM_DEBIAN_UUID" >"$d/etc/fstab"
	# Nothing downloaded stays in the image.
	rm -rf "$d"/var/cache/apt/archives/*.deb "$d"/var/lib/apt/lists/*_Packages \
		"$d"/var/lib/apt/lists/*_InRelease
	ls "$d"/boot/vmlinuz-* "$d"/boot/initrd.img-* >/dev/null
}

# vm_cache_tree VAR PREFIX KEY WHAT DETAIL BUILD: the cached tree
# $VM_CACHE/PREFIX-$VM_DEBIAN_SUITE-KEY (its path in VAR), built once by
# "BUILD DIR" (which makes DIR; output in $VM_CACHE/PREFIX-build.log).
# A lock ($VM_CACHE/PREFIX.lock) keeps concurrent tests from building it
# twice; the build goes to a temporary directory renamed at the end, so an
# interrupted build leaves no half tree (the next build removes its
# remains), and trees of other recipes nobody used for a week go.  WHAT
# names it in messages, DETAIL says how it is built.
vm_cache_tree() {
	local var=$1 prefix=$2 key=$3 what=$4 detail=$5 build=$6 tree d t0 t1 rc lockfd
	tree=$VM_CACHE/$prefix-$VM_DEBIAN_SUITE-$key
	printf -v "$var" '%s' "$tree"
	exec {lockfd}>"$VM_CACHE/$prefix.lock"
	flock "$lockfd"
	if [ ! -f "$tree/.done" ]; then
		for d in "$VM_CACHE/$prefix"-*.tmp; do
			[ -e "$d" ] || continue
			vm_note "removing an unfinished $what $d"
			vm_rm_tree "$d" || {
				exec {lockfd}>&-
				echo "cannot remove $d (still mounted?)" >&2
				return 1
			}
		done
		d=$tree.tmp
		vm_note "building the $what in $tree ($detail)"
		t0=$(date +%s)
		"$build" "$d" >"$VM_CACHE/$prefix-build.log" 2>&1
		rc=$?
		t1=$(date +%s)
		if [ $rc -ne 0 ]; then
			tail -20 "$VM_CACHE/$prefix-build.log" >&2
			vm_rm_tree "$d"
			exec {lockfd}>&-
			echo "building the $what failed (log: $VM_CACHE/$prefix-build.log)" >&2
			return 1
		fi
		echo "$((t1 - t0))" >"$d/.build-seconds"
		touch "$d/.done"
		mv -T "$d" "$tree"
		vm_note "$what built in $((t1 - t0)) s, $(du -sm "$tree" | cut -f1) MiB"
		find "$VM_CACHE" -maxdepth 1 -name "$prefix-*" -type d ! -name '*.tmp' -mtime +7 \
			-exec rm -rf --one-file-system {} + 2>/dev/null
	fi
	touch "$tree"
	exec {lockfd}>&-
}

vm_debian_new() { mkdir -p "$1" && vm_debian_build "$1"; }

# Build (once per recipe) the fixture: VM_DEBIAN, VM_DEBIAN_KVER.
vm_debian_fixture() {
	local key
	command -v debootstrap >/dev/null || {
		echo "debootstrap is not installed (tests/install-deps.sh)" >&2
		return 1
	}
	[ "$(id -u)" -eq 0 ] || { echo "not root: debootstrap and chroot need root" >&2; return 1; }
	key=$( (echo "$VM_DEBIAN_SUITE"; declare -p VM_DEBIAN_PACKAGES VM_DEBIAN_UUID VM_DEBIAN_MACHINE_ID;
		declare -f vm_debian_build) | sha256sum | cut -c1-16)
	vm_cache_tree VM_DEBIAN debian "$key" "Debian fixture" "debootstrap from $(vm_debian_mirror)" \
		vm_debian_new || return 1
	VM_DEBIAN_KVER=$(cd "$VM_DEBIAN/boot" && ls vmlinuz-* | sed 's/^vmlinuz-//' | sort -V | tail -1)
	[ -n "$VM_DEBIAN_KVER" ] && [ -d "$VM_DEBIAN/lib/modules/$VM_DEBIAN_KVER" ]
}

# A private, writable copy of the fixture at DEST (which must not exist).
vm_debian_copy() {
	cp -a --reflink=auto "$VM_DEBIAN" "$1" && rm -f "$1/.done" "$1/.build-seconds"
}

# vm_debian_disk ROOT IMG: a GPT disk with one partition (PARTUUID
# VM_DEBIAN_PARTUUID, name "aptest root") holding an ext4 file system made
# from ROOT (UUID VM_DEBIAN_UUID, label aptest-root), a quarter and 256 MiB
# larger than the tree.  Sparse.
vm_debian_disk() {
	local root=$1 img=$2 mib fs=$2.fs
	mib=$(($(du -sm "$root" | cut -f1) * 5 / 4 + 256))
	rm -f "$img" "$fs"
	truncate -s "${mib}M" "$fs" &&
		mkfs.ext4 -q -F -L aptest-root -U "$VM_DEBIAN_UUID" -E root_owner=0:0 -d "$root" "$fs" &&
		truncate -s "$((mib + 2))M" "$img" &&
		printf 'label: gpt\nstart=2048, size=%d, type=linux, uuid=%s, name="aptest root"\n' \
			$((mib * 2048)) "$VM_DEBIAN_PARTUUID" |
		sfdisk -q --no-reread --no-tell-kernel "$img" &&
		dd if="$fs" of="$img" bs=1M seek=1 conv=notrunc,sparse status=none
	local rc=$?
	rm -f "$fs"
	return $rc
}

# vm_debian_devices IMG: the disks of "vm_devices pair" (root and sata2 on
# AHCI, vblk on virtio-blk) with IMG instead of the busybox root disk, so
# the system's root is an AHCI disk with serial "AP ROOT/0001".
vm_debian_devices() {
	vm_devices pair || return 1
	VM_DEV_ARGS=("${VM_DEV_ARGS[@]/file=$VM_IMAGES\/root.img/file=$1}")
}

# The links the booted system must have for the disks of vm_debian_devices,
# as vm_links prints them: the data disks' from their table, the root's from
# the fixture's constants.
vm_debian_expected_links() {
	{
		vm_expected_links sata2 vblk
		echo "by-uuid/$VM_DEBIAN_UUID SER:AP_ROOT/0001-part1"
		echo "by-partuuid/$VM_DEBIAN_PARTUUID SER:AP_ROOT/0001-part1"
		echo "by-label/aptest-root SER:AP_ROOT/0001-part1"
		echo "by-partlabel/aptest\\x20root SER:AP_ROOT/0001-part1"
	} | LC_ALL=C sort
}

# The marker unit (test instrumentation, installed into a copy of the
# fixture): once multi-user.target is reached, it prints APTEST-SYSTEM-UP,
# PID 1's name, the monotonic time at which the root's systemd started
# (systemd's UserspaceTimestampMonotonic, microseconds: the time to root)
# and the failed units with their count, waits for udev's queue to empty
# and prints the rules files of /run/udev/rules.d ("@@AP udev-rules FILE
# LINE"), then hands over to rootfs-init.sh,
# which prints the block devices, the root, every /dev/disk link and
# /run/asyncprobe, says "@@AP done" and powers off.  All of it goes to the
# second serial port, ttyS1, which nothing else writes to: on ttyS0 the
# kernel's and systemd's messages would cut into its lines, and the serial
# getty's hangup of ttyS0 would swallow some (vm_debian_boot appends the
# port's output to the console log).
vm_debian_install_marker() {
	local r=$1
	mkdir -p "$r/usr/lib/aptest"
	sed 's|/dev/console|/dev/ttyS1|g' "$VM_LIB_DIR/rootfs-init.sh" >"$r/usr/lib/aptest/rootfs-init.sh"
	chmod 0755 "$r/usr/lib/aptest/rootfs-init.sh"
	cat >"$r/usr/lib/aptest/report" <<'EOS'
#!/bin/sh
exec </dev/null >/dev/ttyS1 2>&1
echo "APTEST-SYSTEM-UP"
echo "@@AP pid1 $(cat /proc/1/comm)"
echo "@@AP userspace-us $(systemctl show -P UserspaceTimestampMonotonic)"
failed=$(systemctl --failed --no-legend --plain | awk '{ print $1 }')
for u in $failed; do
	echo "@@AP failed $u"
	systemctl status --no-pager -l -n 10 "$u" | sed 's/^/@@AP status /'
done
echo "@@AP failed-count $(echo $failed | wc -w)"
# The links below are udev's after the coldplug: wait for its queue.
udevadm settle --timeout=60 || echo "@@AP settle-timeout"
for f in /run/udev/rules.d/*.rules; do
	[ -f "$f" ] && sed "s|^|@@AP udev-rules ${f##*/} |" "$f"
done
exec /usr/lib/aptest/rootfs-init.sh
EOS
	chmod 0755 "$r/usr/lib/aptest/report"
	cat >"$r/etc/systemd/system/aptest-marker.service" <<'EOS'
[Unit]
Description=asyncprobe test: report the booted system on the serial console
After=multi-user.target

[Service]
Type=oneshot
ExecStart=/usr/lib/aptest/report

[Install]
WantedBy=multi-user.target
EOS
	mkdir -p "$r/etc/systemd/system/multi-user.target.wants"
	ln -sf ../aptest-marker.service "$r/etc/systemd/system/multi-user.target.wants/aptest-marker.service"
}

# vm_debian_boot NAME INITRD CMDLINE [LIMIT]: vm_boot with a second serial
# port for the marker's report, appended to $VM_OUT/NAME.log after the
# console's lines.
vm_debian_boot() {
	local name=$1 rep=$VM_OUT/$1.report rc
	rm -f "$rep"
	VM_QEMU_EXTRA="${VM_QEMU_EXTRA:-} -serial file:$rep" vm_boot "$@"
	rc=$?
	tr -d '\r' <"$rep" >>"$VM_OUT/$name.log" 2>/dev/null
	rm -f "$rep"
	vm_note "boot $name: the root's systemd at $(vm_debian_time_to_root "$VM_OUT/$name.log" || echo -)s"
	return $rc
}

vm_debian_up() { grep -q '^APTEST-SYSTEM-UP' "$1"; }
vm_debian_pid1() { awk '$1 == "@@AP" && $2 == "pid1" { print $3; exit }' "$1"; }
vm_debian_failed() { awk '$1 == "@@AP" && $2 == "failed" { print $3 }' "$1"; }
# The marker's count of failed units; nothing when its line is missing.
vm_debian_failed_count() { awk '$1 == "@@AP" && $2 == "failed-count" { print $3; exit }' "$1"; }
# Seconds from the kernel's start to the root's systemd (time to root).
vm_debian_time_to_root() {
	awk '$1 == "@@AP" && $2 == "userspace-us" && $3 > 0 { printf "%.2f\n", $3 / 1e6; f = 1; exit }
		END { exit !f }' "$1"
}

# vm_debian_fsck_conf ROOT: FSTYPE=ext4 for the system's initramfs-tools.
# Its fsck hook ignores /etc/fstab's type for / and asks blkid about the
# root device, which a chroot on the test host does not have ("W: Couldn't
# identify type of root file system for fsck hook"), so the image lacked
# fsck and its boots said "Warning: fsck not present, so skipping root file
# system".  An installer runs update-initramfs on the booted target, where
# blkid finds the root; FSTYPE (initramfs.conf(5)) says the same in a
# chroot.  Any initrd made before this (the kernel package's) lacks fsck:
# make it again.
vm_debian_fsck_conf() {
	mkdir -p "$1/etc/initramfs-tools/conf.d" &&
		echo 'FSTYPE=ext4' >"$1/etc/initramfs-tools/conf.d/aptest-fstype"
}

# vm_debian_asyncprobe_install ROOT BUILD: README "Installing" for the
# system at ROOT: configure --prefix=/usr --sysconfdir=/etc in BUILD (a new
# directory), make, make install DESTDIR=ROOT.  Output in BUILD/*.out.
vm_debian_asyncprobe_install() {
	local root=$1 build=$2
	mkdir -p "$build" && (
		cd "$build" &&
		"$top_srcdir/configure" --prefix=/usr --sysconfdir=/etc >configure.out 2>&1 &&
		make -j"${JOBS:-2}" >make.out 2>&1 &&
		make install DESTDIR="$root" >install.out 2>&1
	)
}

# vm_debian_chroot ROOT COMMAND...: COMMAND inside the system, with a
# clean environment (mounts: vm_chroot_mount).
vm_debian_chroot() {
	local r=$1
	shift
	chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"
}

# vm_debian_prepare WORK: what tests/vm/debian-system.sh does before its
# boots, without the checks, for the benchmarks: WORK/boot/vmlinuz, the
# initrds WORK/boot/initrd-{stock,hook,own}.img (update-initramfs -u before
# asyncprobe is installed, update-initramfs -u with the hook,
# asyncprobe-mkinitramfs; both update-initramfs with vm_debian_fsck_conf) and the root
# disk WORK/disk.img.  Returns 1 with a reason on stderr.
vm_debian_prepare() {
	local w=$1 r=$1/root k=$VM_DEBIAN_KVER rc=0
	mkdir -p "$w/boot"
	vm_debian_copy "$r" || { echo "copying the fixture failed" >&2; return 1; }
	# the control: initramfs-tools without asyncprobe, with fsck
	vm_debian_fsck_conf "$r" && vm_chroot_mount "$r" || { vm_rm_tree "$r"; return 1; }
	vm_debian_chroot "$r" update-initramfs -u -k "$k" >"$w/stock.out" 2>&1 || rc=1
	vm_chroot_umount "$r" && [ $rc -eq 0 ] ||
		{ tail -5 "$w/stock.out" >&2; echo "update-initramfs for the control failed" >&2; vm_rm_tree "$r"; return 1; }
	vm_debian_asyncprobe_install "$r" "$w/build" ||
		{ tail -5 "$w"/build/*.out >&2; echo "building asyncprobe failed" >&2; vm_rm_tree "$r"; return 1; }
	cp "$r/boot/vmlinuz-$k" "$w/boot/vmlinuz" &&
		cp "$r/boot/initrd.img-$k" "$w/boot/initrd-stock.img" &&
		vm_debian_install_marker "$r" &&
		vm_chroot_mount "$r" || { vm_rm_tree "$r"; return 1; }
	vm_debian_chroot "$r" ldconfig &&
		vm_debian_chroot "$r" asyncprobe-mkinitramfs -o /boot/initrd-asyncprobe.img -k "$k" >"$w/mk.out" 2>&1 &&
		vm_debian_chroot "$r" update-initramfs -u -k "$k" >"$w/update.out" 2>&1 || rc=1
	vm_chroot_umount "$r" || rc=1
	[ $rc -eq 0 ] &&
		cp "$r/boot/initrd.img-$k" "$w/boot/initrd-hook.img" &&
		cp "$r/boot/initrd-asyncprobe.img" "$w/boot/initrd-own.img" &&
		vm_debian_disk "$r" "$w/disk.img" || rc=1
	vm_rm_tree "$r"
	[ $rc -eq 0 ] || echo "preparing the system failed (logs in $w)" >&2
	return $rc
}

# ------------------------------------------------------------ the dracut system
#
# dracut conflicts with initramfs-tools in Debian, so the dracut tests use a
# second system derived from the fixture above: a copy in which apt-get
# installs dracut (059 in bookworm; with systemd installed it builds a
# systemd initrd), from the mirror the fixture's /etc/apt/sources.list names.
# Built once and cached under its own key (the base fixture's directory
# name, which carries the base recipe's key, and the recipe below), with
# its own lock and its own names (dracut-*, so the base fixture's cleanup of
# unfinished debian-*.tmp never removes one of these being built).
#
#   vm_dracut_fixture        sets VM_DRACUT (the tree, read only) and
#                            VM_DEBIAN_KVER; builds the base first
#   vm_dracut_copy DEST      a private copy to change

# The recipe: DIR is a copy of the base fixture.  The host's resolv.conf
# is lent for the download only.
vm_dracut_build() {
	local d=$1 rc=0
	cp -L /etc/resolv.conf "$d/etc/resolv.conf" 2>/dev/null || :
	vm_chroot_mount "$d" || return 1
	vm_debian_chroot "$d" apt-get -q update &&
		vm_debian_chroot "$d" env DEBIAN_FRONTEND=noninteractive \
			apt-get -q -y --no-install-recommends install dracut || rc=1
	vm_debian_chroot "$d" apt-get clean
	vm_chroot_umount "$d" || rc=1
	rm -f "$d/etc/resolv.conf"
	rm -rf "$d"/var/lib/apt/lists/*_Packages "$d"/var/lib/apt/lists/*_InRelease
	# dracut in, initramfs-tools out (removed, not purged: dpkg's status)
	[ $rc -eq 0 ] && [ -x "$d/usr/bin/dracut" ] && [ -d "$d/usr/lib/dracut/modules.d/00systemd" ] &&
		! grep -A2 -x 'Package: initramfs-tools' "$d/var/lib/dpkg/status" |
		grep -qx 'Status: install ok installed'
}

vm_dracut_new() { vm_debian_copy "$1" && vm_dracut_build "$1"; }

vm_dracut_fixture() {
	local key
	vm_debian_fixture || return 1
	key=$( (basename "$VM_DEBIAN"; declare -f vm_dracut_build) | sha256sum | cut -c1-16)
	vm_cache_tree VM_DRACUT dracut "$key" "dracut system" \
		"apt-get install dracut in a copy of $VM_DEBIAN" vm_dracut_new || return 1
	[ -x "$VM_DRACUT/usr/bin/dracut" ]
}

vm_dracut_copy() {
	cp -a --reflink=auto "$VM_DRACUT" "$1" && rm -f "$1/.done" "$1/.build-seconds"
}

# vm_dracut_prepare WORK: the dracut system's copy at WORK/root with
# asyncprobe installed as README "Installing" says and the marker unit,
# then, inside it, what a user of dracut types: the image without
# asyncprobe (the control) and the one with its module:
#   dracut --force /boot/initrd-dracut.img KVER
#   dracut --force --add asyncprobe /boot/initrd-asyncprobe.img KVER
# Gives WORK/boot/vmlinuz, WORK/boot/initrd-{dracut,asyncprobe}.img and the
# root disk WORK/disk.img; dracut's output in WORK/dracut-*.out.  With
# VM_DRACUT_KEEP_ROOT set the tree stays (for checks; remove it with
# vm_rm_tree).  VM_DRACUT_INCLUDE: a directory copied into both images
# (dracut --include DIR /, with readlink installed), for instrumentation;
# VM_DRACUT_REPORT_EXTRA: a script the marker runs before its own report.  Returns 1 with a reason on stderr.
vm_dracut_prepare() {
	local w=$1 r=$1/root k=$VM_DEBIAN_KVER rc=0
	mkdir -p "$w/boot"
	vm_dracut_copy "$r" || { echo "copying the dracut system failed" >&2; return 1; }
	vm_debian_asyncprobe_install "$r" "$w/build" ||
		{ tail -5 "$w"/build/*.out >&2; echo "building asyncprobe failed" >&2; vm_rm_tree "$r"; return 1; }
	cp "$r/boot/vmlinuz-$k" "$w/boot/vmlinuz" &&
		vm_debian_install_marker "$r" || { vm_rm_tree "$r"; return 1; }
	if [ -n "${VM_DRACUT_REPORT_EXTRA:-}" ]; then
		install -m 0755 "$VM_DRACUT_REPORT_EXTRA" "$r/usr/lib/aptest/report-extra" &&
			sed -i 's|^exec /usr/lib/aptest/rootfs-init.sh|/usr/lib/aptest/report-extra\n&|' \
				"$r/usr/lib/aptest/report" || { vm_rm_tree "$r"; return 1; }
	fi
	vm_chroot_mount "$r" || { vm_rm_tree "$r"; return 1; }
	# test instrumentation, the same in both images
	local inc=()
	if [ -n "${VM_DRACUT_INCLUDE:-}" ]; then
		cp -a "$VM_DRACUT_INCLUDE" "$r/tmp/aptest-include" || rc=1
		inc=(--include /tmp/aptest-include / --install "readlink ${VM_DRACUT_INSTALL:-}")
	fi
	[ $rc -eq 0 ] &&
		vm_debian_chroot "$r" ldconfig &&
		vm_debian_chroot "$r" dracut --force "${inc[@]}" /boot/initrd-dracut.img "$k" \
			>"$w/dracut-control.out" 2>&1 &&
		vm_debian_chroot "$r" dracut --force --add asyncprobe "${inc[@]}" /boot/initrd-asyncprobe.img "$k" \
			>"$w/dracut-asyncprobe.out" 2>&1 || rc=1
	vm_chroot_umount "$r" || rc=1
	[ $rc -eq 0 ] &&
		cp "$r/boot/initrd-dracut.img" "$r/boot/initrd-asyncprobe.img" "$w/boot/" &&
		vm_debian_disk "$r" "$w/disk.img" || rc=1
	[ -n "${VM_DRACUT_KEEP_ROOT:-}" ] || vm_rm_tree "$r"
	[ $rc -eq 0 ] || echo "preparing the dracut system failed (logs in $w)" >&2
	return $rc
}

# vm_twin_disks DIR: two 16 MiB disks without a partition table, each an
# ext4 file system labelled aptest-twin (own UUIDs), DIR/twin-{a,b}.img,
# and VM_DEV_ARGS extended with them: twin-a on the AHCI controller's third
# port, twin-b on a virtio-blk controller of its own, so udev sees their
# events from different drivers in an order that varies between boots.
# Two devices claim /dev/disk/by-label/aptest-twin.
VM_TWIN_LABEL=aptest-twin
vm_twin_disks() {
	local d=$1
	vm_mkfs ext4 "$d/twin-a.img" 16 "$VM_TWIN_LABEL" 7a1e0001-0000-4000-8000-00000000000a &&
		vm_mkfs ext4 "$d/twin-b.img" 16 "$VM_TWIN_LABEL" 7a1e0002-0000-4000-8000-00000000000b || return 1
	VM_DEV_ARGS+=(-drive "if=none,id=d-twina,format=raw,snapshot=on,file=$d/twin-a.img"
		-device "ide-hd,bus=ide.2,drive=d-twina,serial=AP-TWIN-A"
		-drive "if=none,id=d-twinb,format=raw,snapshot=on,file=$d/twin-b.img"
		-device "virtio-blk-pci,drive=d-twinb,serial=AP-TWIN-B")
}
