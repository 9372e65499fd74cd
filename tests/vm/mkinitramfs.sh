#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# asyncprobe-mkinitramfs against the Debian kernel package of the VM tests
# (no QEMU needed): what goes into the image, that its module indexes
# resolve the storage drivers' dependencies, its size against Debian's
# initramfs-tools image, and the error exits.
. "$top_srcdir/tests/vm/lib.sh"
command -v cpio >/dev/null || vm_skip_all "cpio is not installed"
vm_cache_dir || vm_skip_all "no writable cache directory"
why=$(vm_kernel 2>&1 >/dev/null) || vm_skip_all "kernel package: $why"
vm_kernel 2>/dev/null
vm_plan 30
mk=$top_builddir/src/asyncprobe-mkinitramfs
work=$(mktemp -d "${TMPDIR:-/tmp}/mkinitramfs-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$top_builddir/libtool" --mode=execute "$mk" --asyncprobe "$top_builddir/src/asyncprobe/asyncprobe" \
	-k "$VM_KVER" -b "$VM_KROOT" -o "$work/img" --add /bin/busybox >"$work/out" 2>&1
rc=$?
vm_diag <"$work/out"
vm_ok $rc "builds an image for $VM_KVER"
mkdir "$work/x"
(cd "$work/x" && zstd -dc "$work/img" | cpio -id --quiet 2>/dev/null)
vm_ok $? "the image is a zstd-compressed newc cpio"
x=$work/x

head -c 4 "$x/init" | grep -q ELF
vm_ok $? "/init is the asyncprobe program"

interp=$(readelf -l "$x/init" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
[ -n "$interp" ] && [ -f "$x/$interp" ]
vm_ok $? "the dynamic loader (${interp:-none}) is there"

# Every library the program needs resolves inside the image.
bad=0
for lib in $(readelf -d "$x/init" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
	# The loader names itself when a program links it directly.
	[ "$lib" != "$(basename "$interp")" ] || continue
	[ -f "$x/usr/lib/$lib" ] || { echo "missing $lib" | vm_diag; bad=1; }
done
vm_ok $bad "every NEEDED library is in /usr/lib"

m=$x/usr/lib/modules/$VM_KVER
bad=0
for mod in ahci ata_piix virtio_scsi virtio_blk virtio_pci nvme sym53c8xx megaraid_sas \
	   mpt3sas usb-storage uas sd_mod sr_mod ext4 vfat nls_cp437 crc32c; do
	out=$(modprobe -d "$x" -S "$VM_KVER" --show-depends "$mod" 2>&1) ||
		{ echo "$mod: $out" | vm_diag; bad=1; continue; }
	while read -r kind path _; do
		[ "$kind" = insmod ] || continue
		[ -f "$path" ] || { echo "$mod needs $path, not in the image" | vm_diag; bad=1; }
	done <<<"$out"
done
vm_ok $bad "storage drivers and the default file systems (ext4, vfat) resolve with their dependencies inside the image"

# The default file systems are ext4 and vfat (-b is not /, so the host's
# root file system is not added); xfs and btrfs come with --filesystems.
have_ko() { find "$1" -name "$2.ko*" | grep -q .; }
! have_ko "$m" xfs && ! have_ko "$m" btrfs
vm_ok $? "no xfs or btrfs in the default image"
"$top_builddir/libtool" --mode=execute "$mk" --asyncprobe "$top_builddir/src/asyncprobe/asyncprobe" \
	-k "$VM_KVER" -b "$VM_KROOT" -o "$work/fs.img" --compress=none \
	--no-default-modules --filesystems=xfs,btrfs >"$work/fs.out" 2>&1
rc=$?
mkdir "$work/fs"
(cd "$work/fs" && cpio -id --quiet 2>/dev/null <"$work/fs.img")
bad=$rc
for mod in xfs btrfs; do
	modprobe -d "$work/fs" -S "$VM_KVER" --show-depends "$mod" >/dev/null 2>&1 ||
		{ echo "$mod does not resolve in the --filesystems=xfs,btrfs image" | vm_diag; bad=1; }
done
! have_ko "$work/fs" ext4 && ! have_ko "$work/fs" ahci || bad=1
vm_ok $bad "--no-default-modules --filesystems=xfs,btrfs: xfs and btrfs with their dependencies, nothing else ($rc)"

bad=0
# (the text modules.dep and modules.alias are busybox modprobe's)
for f in modules.dep.bin modules.alias.bin modules.symbols.bin modules.builtin.bin modules.order \
	 modules.dep modules.alias; do
	[ -f "$m/$f" ] || { echo "no $f" | vm_diag; bad=1; }
done
# modules.order lists the image's modules, not the kernel's 4000.
n_order=$(wc -l <"$m/modules.order")
n_ko=$(find "$m" -name '*.ko*' | wc -l)
[ "$n_order" -eq "$n_ko" ] || { echo "modules.order has $n_order lines for $n_ko modules" | vm_diag; bad=1; }
vm_ok $bad "depmod indexes, modules.builtin and modules.order (of the $n_ko modules in the image) are there"

grep -q '^ID=asyncprobe$' "$x/etc/initrd-release"
vm_ok $? "/etc/initrd-release"

bad=0
for d in dev proc sys run newroot sysroot tmp; do [ -d "$x/$d" ] || { echo "no /$d" | vm_diag; bad=1; }; done
vm_ok $bad "mount points dev proc sys run newroot sysroot tmp"

[ -x "$x/usr/bin/busybox" ] && [ "$(readlink "$x/usr/bin/sh")" = /usr/bin/busybox ]
vm_ok $? "--add /bin/busybox: /bin/sh is the busybox"

size=$(stat -c %s "$work/img")
grep -q "$size bytes" "$work/out"
vm_ok $? "prints the image size"
# Debian's initramfs-tools image for the same kernel when the udev-parity
# test has built it, else the 31 MB measured for 6.1 (issue 5).
deb=31000000
[ -f "$VM_CACHE/initrd-debian-$VM_KVER.img" ] && deb=$(stat -c %s "$VM_CACHE/initrd-debian-$VM_KVER.img")
echo "# generic image (zstd, with busybox) $size bytes, $(awk -v b="$size" 'BEGIN { printf "%.2f MB", b / 1000000 }'), goal 6.2 MB: $([ "$size" -le 6200000 ] && echo met || echo 'not met')"
echo "# image $size bytes, Debian initramfs-tools $deb bytes: ratio $(awk -v a="$size" -v b="$deb" 'BEGIN { printf "%.3f", a / b }')"
# The goal of issue 5 is 1/5 of Debian's image.  With the real libcrypto
# (1.64 MB compressed, which Debian's libkmod links for module signatures)
# the image was 0.23 of it on 6.1 with ext4 and vfat; with asyncprobe's
# stand-in (lib.sh points the build tree's generator at it) 0.143.  The
# test holds the line at 1/4 and prints the ratio; libsystemd, which the
# program loads with dlopen(), must not come back into the image.
heavy=
for lib in libsystemd.so.0 libgcrypt.so.20 liblz4.so.1; do
	[ ! -f "$x/usr/lib/$lib" ] || heavy+=" $lib"
done
libs_kib=$(du -sk "$x/usr/lib" --exclude=modules | cut -f1)
mods_kib=$(du -sk "$m" | cut -f1)
echo "# unpacked: libraries $libs_kib KiB, modules $mods_kib KiB"
vm_ok "$([ -z "$heavy" ]; echo $?)" "no libsystemd stack in the image${heavy:+ (found:$heavy)}"
vm_ok "$([ $((size * 4)) -le "$deb" ]; echo $?)" "at most 1/4 of Debian's initramfs-tools image (goal 1/5: $([ $((size * 5)) -le "$deb" ] && echo met || echo not met))"

# The root path: the default run above detected this machine's (whatever
# it found is printed; the record matches the summary line), an explicit
# name is recorded as given, none records nothing, a bad name is refused.
rp=$(sed -n 's/.*, root path \([^ ]*\)$/\1/p' "$work/out")
echo "# detected on this host: ${rp:-no root path} ($(grep -o 'notice: .*' "$work/out" || echo 'no notice'))"
if [ -n "$rp" ]; then
	[ "$(cat "$x/etc/asyncprobe/root-path" 2>/dev/null)" = "$rp" ]
else
	grep -q ', no root path$' "$work/out" && [ ! -e "$x/etc/asyncprobe/root-path" ]
fi
vm_ok $? "detected root path: /etc/asyncprobe/root-path matches the summary line (${rp:-none})"
# ... and the truth, computed here without the generator: the block device
# / is mounted from (through a device-mapper or md device with a single
# member, that member), named by udev's own path_id builtin (udevadm
# test-builtin needs no udev daemon or database), plus -partN for a
# partition as udev's rules add it.  No such name (a root not on a block
# device, a device path_id cannot name): the image must record none.
truth_root_path() {
	local majmin src dev idp
	read -r majmin src < <(findmnt -n -o MAJ:MIN,SOURCE / 2>/dev/null) || return 1
	if [ ! -e "/sys/dev/block/$majmin" ] && [ -b "$src" ]; then
		majmin=$(lsblk -dn -o MAJ:MIN "$src" 2>/dev/null | tr -d ' ')
	fi
	[ -n "$majmin" ] && [ -e "/sys/dev/block/$majmin" ] || return 1
	dev=$(readlink -f "/sys/dev/block/$majmin")
	while [ "$(ls "$dev/slaves" 2>/dev/null | wc -l)" = 1 ]; do
		dev=$(readlink -f "$dev/slaves/$(ls "$dev/slaves")")
	done
	idp=$(udevadm test-builtin path_id "$dev" 2>/dev/null | sed -n 's/^ID_PATH=//p')
	[ -n "$idp" ] || return 1
	[ ! -f "$dev/partition" ] || idp=$idp-part$(cat "$dev/partition")
	echo "$idp"
}
if ! command -v udevadm >/dev/null || ! command -v findmnt >/dev/null; then
	vm_ok 0 "detected root path against udev's path_id # SKIP udevadm or findmnt is not installed"
else
	truth=$(truth_root_path)
	echo "# the root's by-path name by udev's path_id: ${truth:-none}"
	[ "${rp:-}" = "$truth" ] && ! grep -q 'root path detection failed' "$work/out"
	vm_ok $? "detected root path is udev's path_id name of the root device (${truth:-none}), detected ${rp:-none}"
fi
# and the root's file system type with it: this machine's, when the path was
# detected here; nothing when it was not
rt=$(awk '$5 == "/" { fs = ""; for (i = 7; i <= NF; i++) if ($i == "-") { fs = $(i + 1); break } } END { print fs }' /proc/self/mountinfo)
if [ -n "$rp" ]; then
	[ "$(cat "$x/etc/asyncprobe/root-fstype" 2>/dev/null)" = "$rt" ]
else
	[ ! -e "$x/etc/asyncprobe/root-fstype" ]
fi
vm_ok $? "detected root file system type: /etc/asyncprobe/root-fstype is ${rp:+this machine's root's, }'$(cat "$x/etc/asyncprobe/root-fstype" 2>/dev/null)' (/ is $rt)"

small=(--asyncprobe "$top_builddir/src/asyncprobe/asyncprobe" -k "$VM_KVER" -b "$VM_KROOT"
	--no-default-modules -m virtio_blk)
"$top_builddir/libtool" --mode=execute "$mk" "${small[@]}" -o "$work/img3" \
	--root-path=/dev/disk/by-path/pci-0000:00:1f.2-ata-2.0-part1 >"$work/out3" 2>&1
rc=$?
vm_diag <"$work/out3"
mkdir "$work/x3"
(cd "$work/x3" && zstd -dc "$work/img3" | cpio -id --quiet 2>/dev/null)
[ $rc -eq 0 ] && [ "$(cat "$work/x3/etc/asyncprobe/root-path")" = pci-0000:00:1f.2-ata-2.0-part1 ] &&
	grep -q ', root path pci-0000:00:1f.2-ata-2.0-part1$' "$work/out3"
vm_ok $? "--root-path=/dev/disk/by-path/NAME: /etc/asyncprobe/root-path holds NAME, the summary says so"

# A failing detection is said, not hidden: where this machine's root is
# named by asyncprobe's own run (no by-path link, no udev database), a
# program that fails in its place (ls, which refuses asyncprobe's options
# with status 2) gives a warning and a generic image, and with --hostonly
# an error.
read -r majmin < <(findmnt -n -o MAJ:MIN / 2>/dev/null) || majmin=
if [ -z "$majmin" ] || [ ! -e "/sys/dev/block/$majmin" ]; then
	vm_ok 0 "a failing root path detection # SKIP the root is not on a block device (nothing to detect)"
else
	# Steps 1 and 2 answer wherever /dev/disk/by-path or udev's database
	# names the root (a host where udev or an earlier run made links): in
	# a private mount namespace both are hidden, so step 3, the program,
	# names it, wherever the test runs.
	unnamed() {
		unshare -m sh -c '[ ! -d /dev/disk ] || mount -t tmpfs none /dev/disk || exit 99
			[ ! -d /run/udev ] || mount -t tmpfs none /run/udev || exit 99
			exec "$@"' sh "$@"
	}
	failing=(--asyncprobe "$(command -v ls)" -k "$VM_KVER" -b "$VM_KROOT" --no-default-modules -m virtio_blk)
	unnamed "$mk" "${failing[@]}" -o "$work/imgf" >"$work/outf" 2>&1
	rc=$?
	unnamed "$mk" "${failing[@]}" --hostonly -o "$work/imgh" >"$work/outh" 2>&1
	rch=$?
	vm_diag <"$work/outf"
	vm_diag <"$work/outh"
	mkdir "$work/xf"
	(cd "$work/xf" && zstd -dc "$work/imgf" 2>/dev/null | cpio -id --quiet 2>/dev/null)
	[ $rc -eq 0 ] && grep -q 'warning: root path detection failed: .* failed with status 2' "$work/outf" &&
		grep -q ', no root path$' "$work/outf" && [ ! -e "$work/xf/etc/asyncprobe/root-path" ] &&
		[ $rch -eq 1 ] && grep -q 'hostonly: root path detection failed' "$work/outh" && [ ! -e "$work/imgh" ]
	vm_ok $? "a failing root path detection: a warning and a generic image ($rc), an error with --hostonly ($rch)"
fi

"$top_builddir/libtool" --mode=execute "$mk" "${small[@]}" -o "$work/img4" \
	--root-path=none >"$work/out4" 2>&1
rc=$?
mkdir "$work/x4"
(cd "$work/x4" && zstd -dc "$work/img4" | cpio -id --quiet 2>/dev/null)
[ $rc -eq 0 ] && [ -f "$work/x4/etc/initrd-release" ] && [ ! -e "$work/x4/etc/asyncprobe/root-path" ] &&
	grep -q ', no root path$' "$work/out4"
vm_ok $? "--root-path=none: a generic image, no /etc/asyncprobe/root-path"
[ ! -e "$work/x4/etc/asyncprobe/root-fstype" ] && ! find "$work/x4" -name 'ext4.ko*' | grep -q .
vm_ok $? "--root-path=none, --no-default-modules: no /etc/asyncprobe/root-fstype and no ext4"

"$top_builddir/libtool" --mode=execute "$mk" "${small[@]}" -o "$work/img7" \
	--root-path=none --root-fstype=ext4 >"$work/out7" 2>&1
rc=$?
vm_diag <"$work/out7"
mkdir "$work/x7"
(cd "$work/x7" && zstd -dc "$work/img7" | cpio -id --quiet 2>/dev/null)
[ $rc -eq 0 ] && [ "$(cat "$work/x7/etc/asyncprobe/root-fstype" 2>/dev/null)" = ext4 ] &&
	find "$work/x7" -name 'ext4.ko*' | grep -q . && [ ! -e "$work/x7/etc/asyncprobe/root-path" ]
vm_ok $? "--root-fstype=ext4 (with --no-default-modules): /etc/asyncprobe/root-fstype holds ext4, and ext4's module is in the image"
"$mk" -o "$work/img2" --root-fstype='ext4;x' >/dev/null 2>&1
rc=$?
"$mk" -o "$work/img2" --root-fstype= >/dev/null 2>&1
rc2=$?
vm_ok "$([ $rc -eq 100 ] && [ $rc2 -eq 100 ]; echo $?)" "a bad or empty --root-fstype is refused ($rc, $rc2)"

# libkmod's libcrypto.so.3: asyncprobe's stand-in (lib.sh names the build
# tree's), whose exports are what libkmod imports; the real library when a
# program added with --add uses more of OpenSSL, or with ASYNCPROBE_NOCRYPTO
# empty
crypto_is_standin() {
	nm -D --defined-only "$1/usr/lib/libcrypto.so.3" 2>/dev/null | grep -q ' T BIO_new_mem_buf@@OPENSSL_3.0.0$' &&
		[ "$(stat -c %s "$1/usr/lib/libcrypto.so.3")" -lt 100000 ]
}
if command -v nm >/dev/null && [ -f "$ASYNCPROBE_NOCRYPTO" ] && [ -e "$work/x4/usr/lib/libcrypto.so.3" ]; then
	need=$(nm -D --undefined-only "$work/x4/usr/lib/libkmod.so.2" 2>/dev/null | awk '$2 ~ /@OPENSSL_/ { print $2 }' | sort)
	have=$(nm -D --defined-only "$work/x4/usr/lib/libcrypto.so.3" 2>/dev/null | awk '{ sub("@@", "@", $3); print $3 }' | sort)
	crypto_is_standin "$work/x4" && [ -n "$need" ] && [ -z "$(comm -23 <(echo "$need") <(echo "$have"))" ]
	vm_ok $? "libcrypto.so.3 in the image is asyncprobe's stand-in, defining the $(echo "$need" | grep -c .) OpenSSL symbols libkmod imports ($(stat -c %s "$work/x4/usr/lib/libcrypto.so.3") bytes)"
	if command -v openssl >/dev/null; then
		"$top_builddir/libtool" --mode=execute "$mk" "${small[@]}" -o "$work/img5" -v \
			--add "$(command -v openssl)":/usr/bin/openssl >"$work/out5" 2>&1
		rc=$?
		mkdir "$work/x5"
		(cd "$work/x5" && zstd -dc "$work/img5" | cpio -id --quiet 2>/dev/null)
		[ $rc -eq 0 ] && ! crypto_is_standin "$work/x5" && [ -s "$work/x5/usr/lib/libcrypto.so.3" ] &&
			grep -q 'keeping libcrypto.so.3: the stand-in lacks' "$work/out5"
		vm_ok $? "--add openssl (more of OpenSSL): the real libcrypto.so.3 stays, and -v says why"
	else
		vm_ok 0 "--add openssl # SKIP openssl is not installed"
	fi
	ASYNCPROBE_NOCRYPTO='' "$top_builddir/libtool" --mode=execute "$mk" "${small[@]}" -o "$work/img6" \
		>/dev/null 2>&1
	rc=$?
	mkdir "$work/x6"
	(cd "$work/x6" && zstd -dc "$work/img6" | cpio -id --quiet 2>/dev/null)
	[ $rc -eq 0 ] && ! crypto_is_standin "$work/x6" && [ -s "$work/x6/usr/lib/libcrypto.so.3" ]
	vm_ok $? "ASYNCPROBE_NOCRYPTO empty: the real libcrypto.so.3 ($(stat -c %s "$work/x6/usr/lib/libcrypto.so.3" 2>/dev/null) bytes; images $(stat -c %s "$work/img4") and $(stat -c %s "$work/img6") bytes)"
else
	for t in stand-in openssl empty; do vm_ok 0 "libcrypto $t # SKIP nm (binutils) or the build tree's stand-in is missing, or libkmod does not link libcrypto"; done
fi

"$mk" -o "$work/img2" --root-path=../../sda1 >/dev/null 2>&1
rc=$?
"$mk" -o "$work/img2" --root-path= >/dev/null 2>&1
rc2=$?
vm_ok "$([ $rc -eq 100 ] && [ $rc2 -eq 100 ]; echo $?)" "a root path that is not a by-path name is refused ($rc, $rc2)"

"$mk" -o "$work/img2" -k 0.0-nonexistent -b "$VM_KROOT" --asyncprobe /bin/true >/dev/null 2>&1
rc=$?
"$mk" -o "$work/img2" --frobnicate >/dev/null 2>&1
rc2=$?
"$mk" -o "$work/img2" -k "$VM_KVER" -b "$VM_KROOT" --asyncprobe /bin/true --filesystems='ext4,../x' >/dev/null 2>&1
rc3=$?
vm_ok "$([ $rc -eq 2 ] && [ $rc2 -eq 100 ] && [ $rc3 -eq 100 ]; echo $?)" "exit 2 without a module tree, 100 on a bad option or file system name ($rc, $rc2, $rc3)"

# Without binutils' strip: a PATH of every program but strip.  The image is
# built, a notice says nothing was stripped; --no-strip asks for no notice.
mkdir "$work/nostrip"
for d in /usr/local/bin /usr/bin /usr/sbin /bin /sbin; do
	for p in "$d"/*; do
		n=${p##*/}
		[ "$n" != strip ] && [ -x "$p" ] && [ ! -e "$work/nostrip/$n" ] && ln -s "$p" "$work/nostrip/$n"
	done
done
ns() {
	PATH=$work/nostrip "$top_builddir/libtool" --mode=execute "$mk" \
		--asyncprobe "$top_builddir/src/asyncprobe/asyncprobe" -k "$VM_KVER" -b "$VM_KROOT" "$@" 2>&1
}
out=$(ns -o "$work/img-nostrip")
rc=$?
out2=$(ns -o "$work/img-nostrip2" --no-strip)
rc2=$?
grep -q 'strip (binutils) not found' <<<"$out" && [ -s "$work/img-nostrip" ] &&
	! grep -q 'strip (binutils)' <<<"$out2" && [ $rc -eq 0 ] && [ $rc2 -eq 0 ]
rc3=$?
[ $rc3 -eq 0 ] || { echo "$out"; echo "--no-strip:"; echo "$out2"; } | vm_diag
vm_ok $rc3 "without strip in PATH: the image is built and a notice says nothing was stripped (none with --no-strip)"
exit 0
