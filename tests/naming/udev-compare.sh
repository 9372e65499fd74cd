#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Real udev as the oracle, on this host: a loop device with a GPT whose
# partition names and filesystem labels hold spaces, slashes, "../..",
# backslashes and odd UTF-8, and every virtio disk of the host.  For each
# device, `udevadm test` (systemd 252's own rules and builtins) and
# names-dump (asyncprobe's naming) must give the same /dev/disk names.
#
# udevadm test creates the links it computes, so it runs in a private
# mount namespace with tmpfs on /dev and /run holding only the nodes it
# needs: the host's /dev and /run are never touched.
set -u

builddir=${top_builddir:-.}
dump="$builddir/tests/naming/names-dump"

skip() {
	echo "1..0 # SKIP $*"
	exit 0
}

[ -x "$dump" ] || skip "names-dump not built"
[ -e /usr/lib/udev/rules.d/60-persistent-storage.rules ] || skip "udev rules not installed"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/loopdev.sh"
loop_setup udev-compare udevadm mkfs.ext4 mkfs.vfat unshare mknod
work=$LOOP_WORK

img="$work/disk.img"
# GPT partition names (UTF-16 on disk, UTF-8 for libblkid)
loop_image "$img" 80M <<'EOF'
label: gpt
start=2048, size=30720, name="EFI System Partition"
size=30720, name="a/b ../../etc"
size=30720, name="back\slash_café"
size=30720, name="."
EOF
loop_attach "$img" 4 || skip "no loop device with partitions p1-p4 (losetup/partx)"
loop=$LOOP_DEV
mkfs.ext4 -q -F -L "my root/x" -U 11111111-2222-3333-4444-555555555555 "${loop}p1" >/dev/null 2>&1 ||
	skip "mkfs.ext4 failed"
mkfs.vfat -n "MY DATA" -i 5e2ab0c3 "${loop}p2" >/dev/null 2>&1 || skip "mkfs.vfat failed"
mkfs.ext4 -q -F -L $'caf\xc3\xa9 \xef\xbf\xbe\\' "${loop}p3" >/dev/null 2>&1 || skip "mkfs.ext4 failed"
mkfs.ext4 -q -F -L ".." "${loop}p4" >/dev/null 2>&1 || skip "mkfs.ext4 failed"

devs=()
ln=$(basename "$loop")
devs+=("$ln" "${ln}p1" "${ln}p2" "${ln}p3" "${ln}p4")
for d in /sys/block/vd* /sys/block/sd* /sys/block/nvme*; do
	[ -e "$d" ] && devs+=("$(basename "$d")")
done

# Both sides inside the namespace; each line "<dev> <name>".  Exit status:
# 2 the namespace could not be set up, else names-dump's own.
inner() {
	set -u
	mount -t tmpfs tmpfs /run || exit 2
	mount -t tmpfs tmpfs /dev || exit 2
	for d in "$@"; do
		IFS=: read -r ma mi <"/sys/class/block/$d/dev"
		mknod "/dev/$d" b "$ma" "$mi" || exit 2
	done
	for d in "$@"; do
		udevadm test "/sys/class/block/$d" 2>/dev/null | sed -n 's/^DEVLINKS=//p' |
			tr ' ' '\n' | sed -n "s|^/dev/\(disk/.*\)|$d \1|p" >>"$work/udev.txt"
	done
	NAMES_DUMP_DEV=/dev "$dump" $(for d in "$@"; do printf '/sys/class/block/%s ' "$d"; done) \
		>"$work/ours.txt" 2>"$work/dump.err"
}
export -f inner
export work dump
# Whether this machine gives a mount namespace at all is asked on its own
# (a container may refuse it): only that is a reason to skip.  What happens
# inside, names-dump's crash, error or sanitizer report included, is tested.
unshare -m --propagation private true 2>"$work/unshare.err" ||
	skip "no private mount namespace here (unshare -m: $(head -1 "$work/unshare.err"))"

echo "1..$((${#devs[@]} + 1))"
unshare -m --propagation private bash -c 'inner "$@"' inner "${devs[@]}"
st=$?
if [ "$st" = 0 ]; then
	echo "ok 1 - names-dump ran over ${#devs[@]} devices (status 0)"
	sed 's/^/# /' "$work/dump.err" | head -20
else
	echo "not ok 1 - names-dump or the namespace failed: status $st$([ "$st" = 2 ] && echo ' (tmpfs or mknod in the namespace)')"
	sed 's/^/# /' "$work/dump.err" | head -40
fi
n=1
for d in "${devs[@]}"; do
	n=$((n + 1))
	want=$(grep "^$d " "$work/udev.txt" | sort)
	got=$(grep "^$d " "$work/ours.txt" | sort)
	if [ -z "$want" ]; then
		echo "not ok $n - $d: udevadm test gave no links (cannot compare)"
	elif [ "$want" = "$got" ]; then
		echo "ok $n - $d: $(echo "$want" | grep -c .) names as udev"
		echo "$want" | sed 's/^/#   /'
	else
		echo "not ok $n - $d differs from udevadm test"
		diff <(echo "$want") <(echo "$got") | sed 's/^/# /'
	fi
done
