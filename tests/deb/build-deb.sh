#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The Debian packages (debian/): build them, lint them, and install them
# into a Debian 12 system with GRUB, as root (CI runs it as one step).
#
#   dpkg-buildpackage -b -us -uc in a copy of the source tree (git archive
#   HEAD in a git checkout, else the tree), lintian on the .changes (no E:),
#   then in a chroot of the cached Debian 12 fixture (tests/vm/debian-
#   fixture.sh) with grub-common and grub2-common added, on a loop-mounted
#   ext4 partition so that grub-probe finds its root device:
#   installing the three packages makes /boot/initrd-asyncprobe.img-VERSION
#   and update-grub puts the asyncprobe entry first (the default) with the
#   stock entries after it; a second kernel package gets its image and
#   entry, and its removal removes both; a kernel whose image cannot be
#   made does not fail the hook; "apt-get purge asyncprobe" leaves no image
#   and no entry.
#
# Environment: ASYNCPROBE_TEST_CACHE (tests/vm/lib.sh), DEB_KEEP=1 keeps the
# work directory.  Cached: the fixture with GRUB ($VM_CACHE/debgrub-*) and
# the second kernel's package.  About 3 to 5 minutes on two cores.
set -u
export LC_ALL=C
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top_srcdir=$(cd "$here/../.." && pwd)
export top_srcdir
# shellcheck source=../vm/lib.sh
. "$top_srcdir/tests/vm/lib.sh"
# shellcheck source=../vm/debian-fixture.sh
. "$top_srcdir/tests/vm/debian-fixture.sh"

[ "$(id -u)" -eq 0 ] || vm_skip_all "not root (chroot, losetup and mount need root)"
for t in dpkg-buildpackage dh lintian debootstrap losetup partx sfdisk mkfs.ext4; do
	command -v "$t" >/dev/null ||
		vm_skip_all "$t is not installed (tests/install-deps.sh)"
done

N=15
vm_plan $N

work=$(mktemp -d /tmp/ap-deb.XXXXXX)
root=$work/root
loopdev=
cleanup() {
	vm_chroot_umount "$root" 2>/dev/null
	mountpoint -q "$root" && umount "$root"
	if [ -n "$loopdev" ]; then
		partx -d "$loopdev" 2>/dev/null
		losetup -d "$loopdev"
	fi
	if [ -n "${DEB_KEEP:-}" ]; then
		echo "# kept $work" >&2
	else
		rm -rf --one-file-system "$work"
	fi
}
trap cleanup EXIT

# The remaining tests fail with REASON (not ok, one per test), then exit.
fail_rest() {
	while [ "$vm_ntest" -lt $N ]; do
		vm_ok 1 "$1"
	done
	exit 1
}
diag_file() { tail -n "${2:-15}" "$1" 2>/dev/null | vm_diag; }
inchroot() { vm_debian_chroot "$root" "$@"; }

# ------------------------------------------------------------ build and lint

version=$(sed -n '1s/^asyncprobe (\([^)]*\)).*/\1/p' "$top_srcdir/debian/changelog")
src=$work/src/asyncprobe-$version
mkdir -p "$src"
if git -C "$top_srcdir" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git -C "$top_srcdir" archive HEAD | tar -x -C "$src"
	vm_note "building the packages from git HEAD ($(git -C "$top_srcdir" rev-parse --short HEAD))"
else
	tar -C "$top_srcdir" --exclude=./debian/.debhelper -c . | tar -x -C "$src"
fi
t0=$(date +%s)
(cd "$src" && dpkg-buildpackage -b -us -uc -j"${JOBS:-2}") >"$work/build.log" 2>&1
rc=$?
vm_note "dpkg-buildpackage: $(($(date +%s) - t0)) s"
debs=()
for p in asyncprobe libasync1 libasync-dev; do
	debs+=("$(ls "$work/src/${p}_${version}_"*.deb 2>/dev/null | head -1)")
done
changes=$(ls "$work/src/asyncprobe_${version}_"*.changes 2>/dev/null | head -1)
[ $rc -eq 0 ] && [ -n "${debs[0]}" ] && [ -n "${debs[1]}" ] && [ -n "${debs[2]}" ] && [ -n "$changes" ]
vm_ok $? "dpkg-buildpackage -b -us -uc makes asyncprobe, libasync1 and libasync-dev"
[ $rc -eq 0 ] || { diag_file "$work/build.log" 25; fail_rest "no packages"; }

lintian --allow-root -I "$changes" >"$work/lintian.log" 2>&1
vm_diag <"$work/lintian.log"
! grep -q '^E:' "$work/lintian.log"
vm_ok $? "lintian on the .changes: no error"

# What goes where: the hooks, the GRUB script, the library and its symbols.
contents=$(dpkg-deb -c "${debs[0]}"; dpkg-deb -c "${debs[1]}"; dpkg-deb -c "${debs[2]}")
missing=
for f in ./usr/sbin/asyncprobe ./usr/sbin/asyncprobe-mkinitramfs ./etc/grub.d/09_asyncprobe \
	./etc/kernel/postinst.d/zz-asyncprobe ./etc/kernel/postrm.d/zz-asyncprobe \
	./etc/default/asyncprobe ./usr/share/initramfs-tools/hooks/asyncprobe \
	./usr/lib/dracut/modules.d/90asyncprobe/module-setup.sh ./lib/systemd/system/asyncprobe.service \
	./usr/include/async.h ./usr/share/man/man3/async.3.gz ./usr/share/man/man8/asyncprobe.8.gz; do
	grep -q " $f\$" <<<"$contents" || missing="$missing $f"
done
grep -Eq ' \./usr/lib/[^/]+/libasync\.so\.1\.' <<<"$contents" || missing="$missing libasync.so.1"
grep -Eq ' \./usr/lib/[^/]+/pkgconfig/libasync\.pc$' <<<"$contents" || missing="$missing libasync.pc"
dpkg-deb --ctrl-tarfile "${debs[1]}" | tar -t | grep -qx './symbols' || missing="$missing symbols"
[ -z "$missing" ]
vm_ok $? "the packages hold the programs, hooks, GRUB script, library, symbols file${missing:+ (missing:$missing)}"

# The kernel hooks and the GRUB script as installed: sh -n, shellcheck.
mkdir -p "$work/x" && dpkg-deb -x "${debs[0]}" "$work/x"
bad=
for f in etc/kernel/postinst.d/zz-asyncprobe etc/kernel/postrm.d/zz-asyncprobe etc/grub.d/09_asyncprobe; do
	sh -n "$work/x/$f" || bad="$bad $f"
	if command -v shellcheck >/dev/null; then
		# SC1091: the sourced files are not here; SC2154: grub-mkconfig's variables
		shellcheck -s sh -e SC1091,SC2154 "$work/x/$f" >"$work/shellcheck.log" 2>&1 ||
			{ bad="$bad $f"; vm_diag <"$work/shellcheck.log"; }
	fi
done
[ -z "$bad" ]
vm_ok $? "the kernel hooks and 09_asyncprobe pass sh -n$(command -v shellcheck >/dev/null && echo ' and shellcheck')${bad:+ (not:$bad)}"

# ------------------------------------------------------------ the system

# The fixture with GRUB's configuration tools (no boot loader is
# installed: grub-common for grub-mkconfig, grub2-common for update-grub
# and its kernel hooks), /etc/default/grub as grub-pc's postinst leaves it
# and /boot/grub; cached like the dracut system.
deb_grub_build() {
	local d=$1 rc=0
	cp -L /etc/resolv.conf "$d/etc/resolv.conf" 2>/dev/null || :
	vm_chroot_mount "$d" || return 1
	vm_debian_chroot "$d" apt-get -q update &&
		vm_debian_chroot "$d" env DEBIAN_FRONTEND=noninteractive \
			apt-get -q -y --no-install-recommends install grub-common grub2-common cpio || rc=1
	vm_debian_chroot "$d" apt-get clean
	vm_chroot_umount "$d" || rc=1
	rm -f "$d/etc/resolv.conf"
	rm -rf "$d"/var/lib/apt/lists/*_Packages "$d"/var/lib/apt/lists/*_InRelease
	[ $rc -eq 0 ] && [ -x "$d/usr/sbin/update-grub" ] || return 1
	cp "$d/usr/share/grub/default/grub" "$d/etc/default/grub" && mkdir -p "$d/boot/grub" &&
		vm_debian_fsck_conf "$d" &&
		# initramfs-tools' images are not what is tested: small ones (no
		# modules but those listed, none) are made in seconds
		echo 'MODULES=list' >"$d/etc/initramfs-tools/conf.d/aptest-small"
}
deb_grub_new() { vm_debian_copy "$1" && deb_grub_build "$1"; }

vm_cache_dir || fail_rest "no cache directory"
vm_debian_fixture >"$work/fixture.log" 2>&1 || { diag_file "$work/fixture.log"; fail_rest "no Debian fixture"; }
key=$( (basename "$VM_DEBIAN"; declare -f deb_grub_build) | sha256sum | cut -c1-16)
vm_cache_tree GRUBTREE debgrub "$key" "Debian system with GRUB's tools" \
	"apt-get install grub-common grub2-common in a copy of $VM_DEBIAN" deb_grub_new ||
	fail_rest "no Debian system with GRUB"
kver=$VM_DEBIAN_KVER

# On a partition of a loop device: grub-mkconfig asks grub-probe for the
# device of /, which must be a block device it can read.
mib=$(($(du -sm "$GRUBTREE" | cut -f1) + 1536))
truncate -s "${mib}M" "$work/disk.img" &&
	printf 'label: gpt\nstart=2048, type=linux\n' | sfdisk -q "$work/disk.img" &&
	loopdev=$(losetup -f --show -P "$work/disk.img") || fail_rest "no loop device"
[ -b "${loopdev}p1" ] || partx -a "$loopdev" 2>/dev/null
[ -b "${loopdev}p1" ] || fail_rest "no partition device for $loopdev"
mkdir -p "$root"
mkfs.ext4 -q -F -d "$GRUBTREE" "${loopdev}p1" >"$work/mkfs.log" 2>&1 &&
	mount "${loopdev}p1" "$root" && rm -f "$root/.done" "$root/.build-seconds" &&
	vm_chroot_mount "$root" || { diag_file "$work/mkfs.log"; fail_rest "cannot make the system's disk"; }

# The boot loader's menu before asyncprobe, as on an installed system.
inchroot update-grub >"$work/grub-0.log" 2>&1 || { diag_file "$work/grub-0.log"; fail_rest "update-grub fails before asyncprobe"; }
cp "$root/boot/grub/grub.cfg" "$work/grub-stock.cfg"

# The top-level menu entries' titles of a grub.cfg, in order.
entries() { sed -n "s/^menuentry '\([^']*\)'.*/\1/p" "$1"; }
# The lines of the entry titled TITLE.
entry_body() { awk -v t="menuentry '$2'" 'index($0, t) == 1 { f = 1 } f { print } f && /^}/ { exit }' "$1"; }
stock_first=$(entries "$work/grub-stock.cfg" | head -1)

# ------------------------------------------------------------ install

mkdir -p "$root/tmp/debs" && cp "${debs[@]}" "$root/tmp/debs/"
t0=$(date +%s)
inchroot sh -c 'DEBIAN_FRONTEND=noninteractive dpkg -i /tmp/debs/*.deb' >"$work/install.log" 2>&1
rc=$?
vm_note "dpkg -i: $(($(date +%s) - t0)) s"
vm_ok $rc "dpkg -i of the three packages in the Debian 12 system"
[ $rc -eq 0 ] || { diag_file "$work/install.log" 25; fail_rest "not installed"; }

[ -s "$root/boot/initrd-asyncprobe.img-$kver" ]
vm_ok $? "the package's postinst made /boot/initrd-asyncprobe.img-$kver"

cfg=$root/boot/grub/grub.cfg
title="Debian GNU/Linux, with Linux $kver (asyncprobe)"
first=$(entries "$cfg" | head -1)
second=$(entries "$cfg" | sed -n 2p)
[ "$first" = "$title" ] && [ "$second" = "$stock_first" ] && grep -Eq '^[[:space:]]*set default="0"$' "$cfg"
vm_ok $? "update-grub: '$title' is the first entry (the default), the stock '$stock_first' follows"
if [ "$first" != "$title" ]; then
	entries "$cfg" | vm_diag
	diag_file "$work/install.log"
fi

body=$(entry_body "$cfg" "$title")
lin=$(grep -P '^\tlinux\t' <<<"$body")
ird=$(grep -P '^\tinitrd\t' <<<"$body")
stock_lin=$(entry_body "$cfg" "$stock_first" | grep -P '^\tlinux\t')
# the stock line plus fastboot (spaces between words squeezed)
# shellcheck disable=SC2086,SC2116
[ -n "$lin" ] && [ "$(echo $lin)" = "$(echo $stock_lin) fastboot" ]
r1=$?
[ "$ird" = "$(printf '\tinitrd\t/boot/initrd-asyncprobe.img-%s' "$kver")" ] &&
	grep -q 'search --no-floppy --fs-uuid --set=root' <<<"$body"
vm_ok $((r1 | $?)) "the entry: the stock linux line plus fastboot, the asyncprobe image as initrd"
printf '%s\n' "$body" | vm_diag

# An image that cannot be made (no modules for that version) is a warning;
# the hook succeeds, as a kernel's installation must.
out=$(inchroot /etc/kernel/postinst.d/zz-asyncprobe 0.0.0-none /boot/vmlinuz-0.0.0-none 2>&1)
rc=$?
[ $rc -eq 0 ] && grep -q '^W: asyncprobe:' <<<"$out" && [ ! -e "$root/boot/initrd-asyncprobe.img-0.0.0-none" ]
vm_ok $? "kernel hook: an image that cannot be made is a warning, status 0, no image"
printf '%s\n' "$out" | tail -3 | vm_diag

# ------------------------------------------------------------ a second kernel

# Another linux-image-6.1.0-N-amd64 than the fixture's: a package the test
# cache has already (tests/vm/lib.sh keeps one), else one from the archive.
second_deb() {
	local f p
	for f in "$VM_CACHE"/linux-image-6.1.0-*-amd64_*_amd64.deb; do
		[ -f "$f" ] || continue
		p=$(dpkg-deb -f "$f" Package 2>/dev/null)
		[ "$p" != "linux-image-$kver" ] && { echo "$f"; return 0; }
	done
	p=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' 2>/dev/null | cut -d' ' -f1 |
		grep -vx "linux-image-$kver" | sort -V | tail -1)
	[ -n "$p" ] || return 1
	(cd "$VM_CACHE" && apt-get -q download "$p" >/dev/null 2>&1) || return 1
	ls "$VM_CACHE/${p}_"*.deb 2>/dev/null | head -1
}
kdeb=$(second_deb)
if [ -z "$kdeb" ]; then
	reason="no other linux-image-6.1.0-*-amd64 package in the cache or the archive"
	vm_ok 0 "a second kernel gets its image # SKIP $reason"
	vm_ok 0 "update-grub: the second kernel's entry # SKIP $reason"
	vm_ok 0 "removing the second kernel removes its image and entry # SKIP $reason"
else
	kpkg=$(dpkg-deb -f "$kdeb" Package)
	kver2=${kpkg#linux-image-}
	cp "$kdeb" "$root/tmp/debs/kernel.deb"
	t0=$(date +%s)
	inchroot env DEBIAN_FRONTEND=noninteractive dpkg -i /tmp/debs/kernel.deb >"$work/kernel.log" 2>&1
	rc=$?
	vm_note "dpkg -i $kpkg: $(($(date +%s) - t0)) s"
	[ $rc -eq 0 ] && [ -s "$root/boot/initrd-asyncprobe.img-$kver2" ]
	vm_ok $? "installing $kpkg makes /boot/initrd-asyncprobe.img-$kver2 (the kernel's postinst.d hook)"
	[ $rc -eq 0 ] || diag_file "$work/kernel.log"
	# update-grub by the kernel's zz-update-grub, after zz-asyncprobe: the
	# newer kernel's asyncprobe entry first, then the other's, then stock
	older=$(printf '%s\n%s\n' "$kver" "$kver2" | sort -V | head -1)
	newer=$(printf '%s\n%s\n' "$kver" "$kver2" | sort -V | tail -1)
	got=$(entries "$cfg" | head -2 | tr '\n' '|')
	want="Debian GNU/Linux, with Linux $newer (asyncprobe)|Debian GNU/Linux, with Linux $older (asyncprobe)|"
	[ "$got" = "$want" ] && [ "$(entries "$cfg" | sed -n 3p)" = "$stock_first" ]
	vm_ok $? "update-grub: asyncprobe entries for both kernels, newest first, then the stock entry"
	[ "$got" = "$want" ] || entries "$cfg" | vm_diag
	inchroot env DEBIAN_FRONTEND=noninteractive dpkg --purge "$kpkg" >"$work/kernel-rm.log" 2>&1
	rc=$?
	[ $rc -eq 0 ] && [ ! -e "$root/boot/initrd-asyncprobe.img-$kver2" ] &&
		! entries "$cfg" | grep -qF "Linux $kver2 (asyncprobe)" &&
		[ "$(entries "$cfg" | head -1)" = "$title" ]
	vm_ok $? "removing $kpkg removes its image and its entry (the postrm.d hook)"
	[ $rc -eq 0 ] || diag_file "$work/kernel-rm.log"
fi

# ------------------------------------------------------------ purge

inchroot env DEBIAN_FRONTEND=noninteractive dpkg --purge asyncprobe libasync-dev libasync1 \
	>"$work/purge.log" 2>&1
rc=$?
left=$(cd "$root/boot" && ls -d initrd-asyncprobe* 2>/dev/null)
[ $rc -eq 0 ] && [ -z "$left" ] && [ ! -e "$root/etc/grub.d/09_asyncprobe" ] &&
	[ ! -e "$root/etc/kernel/postinst.d/zz-asyncprobe" ]
vm_ok $? "dpkg --purge asyncprobe: no image left${left:+ (left: $left)}, hooks and GRUB script gone"
[ $rc -eq 0 ] || diag_file "$work/purge.log"

! grep -q asyncprobe "$cfg" && [ "$(entries "$cfg" | head -1)" = "$stock_first" ]
vm_ok $? "after the purge update-grub's menu has no asyncprobe entry; the stock entry is first again"

# The same menu as before asyncprobe (and the stock initrd again without the
# hook: the initramfs-tools trigger rebuilt it).
diff <(grep -v '^#' "$work/grub-stock.cfg") <(grep -v '^#' "$cfg") >"$work/grub.diff" &&
	! inchroot lsinitramfs "/boot/initrd.img-$kver" 2>/dev/null | grep -q 'sbin/asyncprobe$'
vm_ok $? "after the purge the menu is the one before asyncprobe, the stock initrd has no asyncprobe"
diag_file "$work/grub.diff"

[ $vm_nfail -eq 0 ]
