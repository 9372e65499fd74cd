#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What a user does, on this machine itself: configure with --prefix=/usr
# --sysconfdir=/etc in a fresh build directory, make, make install into the
# real root; the files are where Debian's initramfs-tools, dracut and
# systemd look (initramfs-tools' own mkinitramfs runs the hook and takes the
# script); then the installed asyncprobe-mkinitramfs with its defaults
# (base directory /, the installed asyncprobe) for the kernel Debian's
# package installed in /lib/modules, its image holding the modules, one
# QEMU boot of that image to the root's init; and make uninstall, which
# leaves none of the installed files behind.
#
# Root only; skipped when a kernel package is not installed (tests/install-
# deps.sh installs linux-image-amd64) or asyncprobe is already installed in
# /usr (the test would overwrite and then remove it).
. "$top_srcdir/tests/vm/lib.sh"
[ "$(id -u)" -eq 0 ] || vm_skip_all "not root: the test installs into /usr and /etc"
kver=
for d in /lib/modules/*/; do
	d=${d%/}
	[ -f "$d/modules.dep" ] && [ -f "/boot/vmlinuz-${d##*/}" ] && kver=${d##*/}
done
[ -n "$kver" ] || vm_skip_all "no installed kernel package (/lib/modules/VERSION with /boot/vmlinuz-VERSION; tests/install-deps.sh installs linux-image-amd64)"
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null)
: "${unitdir:=/usr/lib/systemd/system}"
files=(
	/usr/sbin/asyncprobe
	/usr/sbin/asyncprobe-mkinitramfs
	/usr/share/initramfs-tools/hooks/asyncprobe
	/usr/share/initramfs-tools/scripts/init-top/asyncprobe
	/usr/share/initramfs-tools/scripts/panic/asyncprobe
	/usr/share/asyncprobe/initramfs-tools/udev-init-top
	/usr/share/asyncprobe/initramfs-tools/udev-init-bottom
	/usr/lib/dracut/modules.d/90asyncprobe/module-setup.sh
	/usr/lib/dracut/modules.d/90asyncprobe/asyncprobe-pretrigger.sh
	"$unitdir/asyncprobe.service"
	/usr/share/man/man8/asyncprobe.8
	/usr/share/man/man8/asyncprobe-mkinitramfs.8
	/usr/share/man/man7/asyncprobe-cmdline.7
	/usr/include/async.h
	/usr/lib/asyncprobe/libcrypto.so.3
	/etc/kernel/postinst.d/zz-asyncprobe
	/etc/kernel/postrm.d/zz-asyncprobe
	/etc/grub.d/09_asyncprobe
	/etc/default/asyncprobe
)
for f in "${files[@]}"; do
	[ ! -e "$f" ] || vm_skip_all "$f exists: asyncprobe is installed on this machine already"
done
vm_plan 11

work=$(mktemp -d "${TMPDIR:-/tmp}/install-host.XXXXXX")
build=$work/build
installed=0
# Directories make install may create: removed again when empty.
newdirs=()
for d in /usr/lib/asyncprobe /usr/lib/dracut/modules.d/90asyncprobe /usr/lib/dracut/modules.d /usr/lib/dracut \
	/usr/share/initramfs-tools/scripts/init-top /usr/share/initramfs-tools/scripts/panic \
	/usr/share/initramfs-tools/hooks /usr/share/asyncprobe/initramfs-tools /usr/share/asyncprobe \
	/etc/kernel/postinst.d /etc/kernel/postrm.d /etc/kernel /etc/grub.d /etc/default; do
	[ -d "$d" ] || newdirs+=("$d")
done
cleanup() {
	if [ "$installed" = 1 ]; then
		make -C "$build" uninstall >/dev/null 2>&1
		for d in "${newdirs[@]}"; do rmdir "$d" 2>/dev/null; done
	fi
	rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$build"

# 1: the README's commands, in a build directory
(
	cd "$build" &&
	"$top_srcdir/configure" --prefix=/usr --sysconfdir=/etc >configure.out 2>&1 &&
	make -j"${JOBS:-2}" >make.out 2>&1 &&
	make install >install.out 2>&1
)
rc=$?
[ -f "$build/install.out" ] && installed=1
[ $rc -eq 0 ] || tail -20 "$build"/*.out | vm_diag
vm_ok $rc "configure --prefix=/usr --sysconfdir=/etc && make && make install"
sed -n '/make install puts/,/initramfs-tools script/p' "$build/configure.out" | vm_diag

# 2: what configure said is where make put them
bad=0
for want in "systemd unit: *$unitdir/asyncprobe.service" \
	"dracut module: */usr/lib/dracut/modules.d/90asyncprobe" \
	"initramfs-tools hook: */usr/share/initramfs-tools/hooks/asyncprobe" \
	"initramfs-tools script: */usr/share/initramfs-tools/scripts/init-top/asyncprobe"; do
	grep -q "$want\$" "$build/configure.out" || { echo "configure did not say '$want'" | vm_diag; bad=1; }
done
vm_ok $bad "configure's summary names the generators' directories"

bad=0
for f in "${files[@]}"; do
	[ -e "$f" ] || { echo "not installed: $f" | vm_diag; bad=1; }
done
for f in /usr/sbin/asyncprobe-mkinitramfs /usr/share/initramfs-tools/hooks/asyncprobe \
	/usr/share/initramfs-tools/scripts/init-top/asyncprobe \
	/usr/lib/dracut/modules.d/90asyncprobe/module-setup.sh; do
	[ -x "$f" ] || { echo "not executable: $f" | vm_diag; bad=1; }
done
grep -q '"/usr/sbin/asyncprobe"' /usr/share/initramfs-tools/hooks/asyncprobe || bad=1
grep -q '^ExecStart=/usr/sbin/asyncprobe ' "$unitdir/asyncprobe.service" || bad=1
vm_ok $bad "program, generator, hook, script, dracut module, unit and man pages installed, with /usr/sbin paths"

# 3: the places the tools themselves look
bad=0
systemd-analyze unit-paths 2>/dev/null | grep -qx "$unitdir" ||
	{ echo "$unitdir is not in systemd-analyze unit-paths" | vm_diag; bad=1; }
[ "$(man -w asyncprobe 2>/dev/null)" = /usr/share/man/man8/asyncprobe.8.gz ] ||
	[ "$(man -w asyncprobe 2>/dev/null)" = /usr/share/man/man8/asyncprobe.8 ] ||
	{ echo "man -w asyncprobe: $(man -w asyncprobe 2>&1)" | vm_diag; bad=1; }
/usr/sbin/asyncprobe --version >/dev/null 2>&1 || { echo "/usr/sbin/asyncprobe does not run" | vm_diag; bad=1; }
vm_ok $bad "systemd's unit path holds the unit, man finds asyncprobe(8), the program runs"

# 4: initramfs-tools' own mkinitramfs runs the hook and takes the script
# (a copy of /etc/initramfs-tools with MODULES=list keeps it short)
if command -v mkinitramfs >/dev/null; then
	cp -a /etc/initramfs-tools "$work/conf"
	sed -i 's/^MODULES=.*/MODULES=list/' "$work/conf/initramfs.conf"
	mkinitramfs -d "$work/conf" -o "$work/debian.img" "$kver" >"$work/debian.out" 2>&1
	rc=$?
	lsinitramfs "$work/debian.img" >"$work/debian.list" 2>/dev/null
	[ $rc -eq 0 ] && grep -qx 'usr/sbin/asyncprobe\|sbin/asyncprobe' "$work/debian.list" &&
		grep -qx 'scripts/init-top/asyncprobe' "$work/debian.list"
	rc=$?
	[ $rc -eq 0 ] || { tail -5 "$work/debian.out"; grep asyncprobe "$work/debian.list"; } | vm_diag
	vm_ok $rc "initramfs-tools' mkinitramfs for $kver runs the hook: asyncprobe and scripts/init-top/asyncprobe are in its image"
else
	vm_ok 0 "initramfs-tools' mkinitramfs # SKIP initramfs-tools is not installed"
fi

# 5: dracut reads its modules from /usr/lib/dracut/modules.d only (it is
# not installed next to initramfs-tools on Debian: the path is checked)
bad=0
[ -f /usr/lib/dracut/modules.d/90asyncprobe/module-setup.sh ] &&
	bash -n /usr/lib/dracut/modules.d/90asyncprobe/module-setup.sh &&
	grep -q "require_binaries \"/usr/sbin/asyncprobe\"" /usr/lib/dracut/modules.d/90asyncprobe/module-setup.sh &&
	grep -q "inst_simple \"$unitdir/asyncprobe.service\"" /usr/lib/dracut/modules.d/90asyncprobe/module-setup.sh || bad=1
vm_ok $bad "dracut module 90asyncprobe in /usr/lib/dracut/modules.d, naming /usr/sbin/asyncprobe and $unitdir"

# 6: the installed generator with its defaults, as the README says (its
# libcrypto stand-in from /usr/lib/asyncprobe, not lib.sh's build tree one)
unset ASYNCPROBE_NOCRYPTO
out=$work/mk.out
img=$work/asyncprobe.img
(cd / && asyncprobe-mkinitramfs -o "$img" -k "$kver") >"$out" 2>&1
rc=$?
vm_diag <"$out"
vm_ok $rc "asyncprobe-mkinitramfs -o IMAGE -k $kver (base directory /, installed asyncprobe)"

mkdir "$work/x"
(cd "$work/x" && zstd -dc "$img" | cpio -id --quiet 2>/dev/null)
x=$work/x
m=$x/usr/lib/modules/$kver
bad=0
for mod in ahci sd_mod virtio_blk virtio_scsi nvme ext4 scsi_common; do
	deps=$(modprobe -d "$x" -S "$kver" --show-depends "$mod" 2>&1) ||
		{ echo "$mod: $deps" | vm_diag; bad=1; continue; }
	while read -r kind path _; do
		[ "$kind" = insmod ] || continue
		[ -f "$path" ] || { echo "$mod needs $path, not in the image" | vm_diag; bad=1; }
	done <<<"$deps"
done
nmods=$(find "$m" -name '*.ko*' | wc -l)
# the same program (its debugging information stripped in the image)
buildid() { readelf -n "$1" 2>/dev/null | sed -n 's/.*Build ID: //p'; }
id_init=$(buildid "$x/init")
id_inst=$(buildid /usr/sbin/asyncprobe)
[ -n "$id_init" ] && [ "$id_init" = "$id_inst" ] ||
	{ echo "/init (build ID '$id_init') is not /usr/sbin/asyncprobe ('$id_inst')" | vm_diag; bad=1; }
[ "$nmods" -ge 40 ] || bad=1
vm_ok $bad "the image has /init = /usr/sbin/asyncprobe and $nmods modules, the storage drivers with their dependencies (scsi_common among them)"

# and the host-only variant of the same command, if / is on a block device here
majmin=$(findmnt -n -o MAJ:MIN / 2>/dev/null | tr -d ' ')
if [ -n "$majmin" ] && [ -e "/sys/dev/block/$majmin" ]; then
	(cd / && asyncprobe-mkinitramfs -o "$work/hostonly.img" -k "$kver" --hostonly) >"$out" 2>&1
	rc=$?
	vm_diag <"$out"
	grep -q 'host-only for root' "$out" || rc=1
	vm_ok $rc "asyncprobe-mkinitramfs -o IMAGE -k $kver --hostonly"
else
	vm_ok 0 "asyncprobe-mkinitramfs --hostonly # SKIP / is not on a block device here"
fi

# 7: one boot of that image with the installed kernel
if command -v qemu-system-x86_64 >/dev/null; then
	vm_setup
	VM_KERNEL=/boot/vmlinuz-$kver
	vm_devices pair
	vm_boot install-host "$img" "root=UUID=$VM_ROOT_UUID quiet"
	vm_check_root "$VM_OUT/install-host.log"
	vm_ok $? "the image boots /boot/vmlinuz-$kver to the root's init (root=UUID=...)"
else
	vm_ok 0 "boot # SKIP qemu-system-x86_64 is not installed"
fi

# 8: make uninstall leaves nothing of ours
make -C "$build" uninstall >"$build/uninstall.out" 2>&1
rc=$?
for d in "${newdirs[@]}"; do rmdir "$d" 2>/dev/null; done
installed=0
left=
for f in "${files[@]}"; do [ ! -e "$f" ] || left+=" $f"; done
for d in "${newdirs[@]}"; do [ ! -e "$d" ] || left+=" $d"; done
left+=$(find /usr/lib /usr/sbin /usr/share/man /usr/include /usr/lib/pkgconfig \
	-maxdepth 2 \( -name 'libasync*' -o -name 'async*' -o -name 'asyncprobe*' \) \
	-newer "$build/configure.out" 2>/dev/null | sed 's/^/ /' | tr -d '\n')
[ -z "$left" ] || echo "left behind:$left" | vm_diag
vm_ok "$([ $rc -eq 0 ] && [ -z "$left" ]; echo $?)" "make uninstall removes every installed file"
exit 0
