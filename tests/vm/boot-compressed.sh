#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Compressed modules, as most distributions' kernels ship them (.ko.zst,
# .ko.xz) and asyncprobe-mkinitramfs copies them: the image is remade with
# every module compressed (the SATA chain and ext4's with xz, the rest with
# zstd, indexes by depmod) and booted with fastboot and sequentially.
# Debian 12's kernel has no in-kernel decompression (no
# CONFIG_MODULE_DECOMPRESS): finit_module() with
# MODULE_INIT_COMPRESSED_FILE fails with EOPNOTSUPP, and asyncprobe must
# hand the module to libkmod, which decompresses it in a child process and
# inserts it with init_module().  Each boot reaches the root's init with
# the root partition mounted, every driver of the matrix loaded and none
# failed; the kernel's refusal is met once, after which compressed modules
# go to libkmod at once.
. "$top_srcdir/tests/vm/lib.sh"
vm_setup
vm_initrd_asyncprobe --root-fstype=ext4 || vm_bail "building the initramfs failed"
vm_devices pair
for t in zstd xz depmod cpio; do
	command -v "$t" >/dev/null || vm_skip_all "$t is not installed"
done
vm_plan 11

img=$VM_OUT/compressed.img
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
zstd -q -dc "$VM_INITRD_AP" | (cd "$dir" && cpio -id --quiet) || vm_bail "unpacking $VM_INITRD_AP failed"
mods=$dir/usr/lib/modules/$VM_KVER
[ -d "$mods" ] || vm_bail "no $mods in the image"
find "$mods" -name '*.ko' \( -path '*/ata/*' -o -path '*/scsi/*' -o -path '*/fs/*' \) \
	-exec xz -q --check=crc32 {} + || vm_bail "xz failed"
find "$mods" -name '*.ko' -exec zstd -q --rm {} + || vm_bail "zstd failed"
depmod -b "$dir/usr" "$VM_KVER" || vm_bail "depmod failed"
(cd "$dir" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0 | zstd -q -19 -c) >"$img" ||
	vm_bail "packing $img failed"
nzst=$(find "$mods" -name '*.ko.zst' | wc -l)
nxz=$(find "$mods" -name '*.ko.xz' | wc -l)
nko=$(find "$mods" -name '*.ko' | wc -l)
vm_ok "$([ "$nzst" -gt 10 ] && [ "$nxz" -gt 3 ] && [ "$nko" = 0 ]; echo $?)" \
	"the image holds only compressed modules ($nzst .ko.zst, $nxz .ko.xz, $nko .ko)"
config=$VM_KROOT/boot/config-$VM_KVER
if [ -f "$config" ] && grep -q '^CONFIG_MODULE_DECOMPRESS=y' "$config"; then
	echo "# this kernel decompresses modules itself: the fallback is not exercised"
	refusals=0
else
	echo "# this kernel has no CONFIG_MODULE_DECOMPRESS: libkmod decompresses"
	refusals=1
fi

want="SER:AP_ROOT/0001-part1"
for mode in fastboot sequential; do
	log=$VM_OUT/compressed-$mode.log
	cmd="root=UUID=$VM_ROOT_UUID quiet asyncprobe.verbose=1"
	[ $mode = fastboot ] && cmd+=" fastboot"
	vm_boot "compressed-$mode" "$img" "$cmd"
	vm_check_root "$log"; vm_ok $? "$mode: reaches the root's init"
	got=$(awk '$1 == "@@AP" && $2 == "root" { print $4 }' "$log")
	vm_ok "$([ "$got" = "$want" ]; echo $?)" \
		"$mode: the root partition is mounted on / (got '${got:-nothing}', want $want)"
	# "N controllers, ..., M modules loaded, F failed, ..."
	summary=$(grep -a -m1 -o '[0-9]* modules loaded, [0-9]* failed' "$log")
	loaded=${summary%% *} failed=${summary#*loaded, }
	failed=${failed%% *}
	[ -n "$summary" ] || echo "no summary line" | vm_diag
	vm_ok "$([ -n "$summary" ] && [ "$loaded" -ge 4 ] && [ "$failed" = 0 ]; echo $?)" \
		"$mode: the drivers went in, none failed (${summary:-no summary})"
	told='the kernel does not decompress modules itself'
	bad=$(grep -a -E 'asyncprobe\[[0-9]+\]: .*(Operation not supported|Exec format error|Invalid argument)' "$log" |
		grep -v -F "$told")
	[ -n "$bad" ] && echo "$bad" | vm_diag
	vm_ok "$([ -z "$bad" ]; echo $?)" "$mode: no insertion refused for its compression"
	# once per process: PID 1 inserts the root's file system, the engine the rest
	n=$(grep -a -c -F "$told" "$log")
	p=$(grep -a -F "$told" "$log" | grep -a -o 'asyncprobe\[[0-9]*\]' | sort -u | wc -l)
	if [ "$refusals" = 1 ]; then ok=$([ "$n" -ge 1 ] && [ "$n" = "$p" ]; echo $?)
	else ok=$([ "$n" = 0 ]; echo $?); fi
	vm_ok "$ok" "$mode: the kernel's refusal is met once per process, then remembered \
($n logged by $p processes)"
done
exit 0
