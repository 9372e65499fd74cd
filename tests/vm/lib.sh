# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# QEMU harness of the VM tests, the demo and the VM benchmarks.  Source it
# from bash; it defines functions only, plus the disk table below.
#
#   vm_setup                 qemu, Debian kernel (cached), root fs and disk
#                            images (cached by content); skips the TAP test
#                            when QEMU or the kernel package cannot be had
#   vm_initrd_asyncprobe     asyncprobe's initramfs from the build tree
#   vm_initrd_debian         Debian's initramfs-tools/udev initrd, same kernel
#   vm_devices MATRIX        QEMU arguments for a set of disks (VM_DEV_ARGS)
#   vm_boot NAME INITRD CMDLINE [LIMIT]   boot, console to $VM_OUT/NAME.log
#   vm_links LOG             "by-x/name IDENT" lines the booted system saw
#   vm_uptime LOG            uptime at the root fs's /sbin/init
#   vm_extract LOG FILE DEST a /run/asyncprobe file printed base64 by init
#   vm_scale_*               the scsi_debug scale boot's command line and figures
#
# Environment: ASYNCPROBE_TEST_CACHE (default /var/cache/asyncprobe-test,
# or ~/.cache/asyncprobe-test when that is not writable), ASYNCPROBE_TEST_KVER
# (a kernel version whose linux-image package to use), VM_SMP (2), VM_MEM
# (1024), VM_ACCEL (tcg; kvm where it works), VM_OUT (where logs go),
# VM_QEMU_EXTRA (more QEMU arguments).
#
# Benchmarks (issue 6) reuse this: vm_initrd_debian and vm_initrd_asyncprobe
# give the two initrds for one kernel, vm_devices the same disks, vm_boot
# the same QEMU settings, and vm_uptime the time to root (the uptime the
# root file system's /sbin/init reads first).  Disks are attached with
# snapshot=on, so boots never change the cached images.

VM_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${top_srcdir:=$(cd "$VM_LIB_DIR/../.." && pwd)}"
: "${top_builddir:=$PWD}"
VM_SMP=${VM_SMP:-2}
VM_MEM=${VM_MEM:-1024}
VM_ACCEL=${VM_ACCEL:-tcg}
# The guest CPU has RDRAND, so the kernel's random pool is ready before the
# second CPU starts (random.trust_cpu).  Without it the pool became ready
# late, in the real system, and flipping the crng_is_ready static key there
# patches kernel text while both TCG vCPUs run it; in one boot of a
# clean-clone CI run (2026-12-05, tests/vm/debian-claims.sh) both vCPUs then
# spun in getrandom() for good (RCU stall, soft lockups) and the real
# system never started.
VM_CPU=${VM_CPU:-qemu64,+rdrand}
# asyncprobe-mkinitramfs run from the build tree takes the build tree's
# libcrypto stand-in (src/initramfs/nocrypto), as the installed one takes
# the installed one
: "${ASYNCPROBE_NOCRYPTO=$top_builddir/src/initramfs/nocrypto/.libs/libcrypto.so.3}"
export ASYNCPROBE_NOCRYPTO

# The root filesystem and what the tests ask for on the command line.
VM_ROOT_UUID=6a3f1c2e-4b5d-4e6f-8a9b-0c1d2e3f4a5b
VM_ROOT_LABEL=ap/root
VM_ROOT_PARTUUID=3c1d5e7f-9a0b-4c2d-8e4f-6a7b8c9d0e1f
VM_ROOT_PARTLABEL=aprootpart

# The disks: name, disk size (MiB, distinct, so a disk without a serial is
# still known by its size), serial, partition table, partitions as
# "fs|MiB|label|partlabel|partuuid|uuid" separated by ";".  Labels carry
# spaces and slashes on purpose (by-label encodes them as \x20 and \x2f).
VM_DISKS=(
	"root|40|AP ROOT/0001|gpt|ext4|24|$VM_ROOT_LABEL|$VM_ROOT_PARTLABEL|$VM_ROOT_PARTUUID|$VM_ROOT_UUID;vfat|8|ROOT EFI|EFI system|0b6e2f1a-3c4d-4e5f-9a6b-7c8d9e0f1a2b|"
	"sata2|41|AP-SATA 0002|dos|ext4|16|sata/two ext4||||;vfat|12|SATA TWO||||"
	"vscsi|42|AP VSCSI/0003|gpt|ext4|16|scsi disk one|scsi/part one|||;vfat|10|VSCSI FAT|esp|||"
	"lsi|43|AP-LSI 0004|dos|ext4|20|lsi/hba disk||||"
	"mega|44|AP-MEGA/0005|gpt|ext4|16|mega raid|mega part|||"
	"vblk|45|AP VBLK 0006|gpt|vfat|16|VIRTIO BLK|vblk one|||;ext4|16|virtio/blk two||||"
	"nvme|46|AP-NVME/0007|dos|ext4|24|nvme ns1||||"
	"sata3|47|AP-SATA 0008|gpt|ext4|20|sata three|sata 3/1|||"
	"sata4|48|AP-SATA/0009|dos|ext4|12|sata four||||;ext4|12|sata four b||||"
	"scsi2|49|AP VSCSI 0010|gpt|ext4|24|scsi two||||"
)

# ---------------------------------------------------------------- TAP

vm_ntest=0
vm_nfail=0
vm_plan() { echo "1..$1"; }
vm_ok() {
	# vm_ok STATUS DESCRIPTION: STATUS 0 is a pass; a failure implicates
	# the console of the last boot (vm_console_fail)
	vm_ntest=$((vm_ntest + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $vm_ntest - $2"
	else
		echo "not ok $vm_ntest - $2"
		vm_nfail=$((vm_nfail + 1))
		vm_console_fail "check $vm_ntest failed"
	fi
}
vm_diag() { sed 's/^/# /' ; }
vm_skip_all() { echo "1..0 # SKIP $*"; exit 0; }
vm_bail() { echo "Bail out! $*"; exit 1; }
vm_note() { echo "# $*" >&2; }

# ------------------------------------------------ consoles of failed boots

# Every boot's console is registered (vm_boot); a failed check implicates
# the console of the last boot before it, and a boot that hit its time
# limit is implicated too.  When the test fails (a failed check, a bail
# out, a non-zero exit, SIGTERM from tests/time-limit.sh), its EXIT trap
# copies each implicated console (the last boot's when none is) to
# $AP_CI_OUT/vm-consoles/TEST-N-NAME.log (tests/run-all.sh sets AP_CI_OUT
# to _ci, which outlives the build tree) and prints its last
# VM_CONSOLE_LINES (60) lines as TAP diagnostics.  A test that passes
# keeps nothing there: a deliberate timeout (the rescue shell that waits)
# is no failure.  VM_OUT keeps every console of the last run anyway.
VM_CONSOLES=()      # console logs of this test's boots, in boot order
VM_CONSOLE_WHY=()   # per boot: why it is implicated, empty when it is not
vm_console_fail() {
	local n=${#VM_CONSOLES[@]}
	[ "$n" -gt 0 ] || return 0
	VM_CONSOLE_WHY[n - 1]+="${VM_CONSOLE_WHY[n - 1]:+; }$1"
}
vm_console_register() {
	local log=$1 why=$2 cur
	VM_CONSOLES+=("$log")
	VM_CONSOLE_WHY+=("$why")
	# the test's own EXIT trap (set before or after lib.sh) is kept and
	# runs after this one, with the exit status it would have seen
	cur=$(trap -p EXIT)
	case $cur in *vm_consoles_at_exit*) return 0 ;; esac
	[ -z "$cur" ] || { eval "set -- $cur"; cur=$3; }
	# shellcheck disable=SC2064 # the current trap is meant to be expanded now
	trap "vm_consoles_at_exit \$?; (exit \$vm_exit_status); $cur" EXIT
}
vm_consoles_at_exit() {
	vm_exit_status=$1
	local i n=${#VM_CONSOLES[@]} dir test dest why kept=0
	[ "$vm_nfail" -gt 0 ] || [ "$vm_exit_status" -ne 0 ] || return 0
	[ "$n" -gt 0 ] || return 0
	test=$(basename "$0" .sh)
	dir=${AP_CI_OUT:+$AP_CI_OUT/vm-consoles}
	[ -z "$dir" ] || mkdir -p "$dir" || dir=
	for ((i = 0; i < n; i++)); do
		why=${VM_CONSOLE_WHY[i]}
		if [ -z "$why" ]; then
			# nothing implicates a boot: the last one, the test ended
			# (bailed out, killed) after it
			if [ $((i + 1)) -ne "$n" ] || [ "$kept" -ne 0 ]; then
				continue
			fi
			why="the last boot of a failed test, exit status $vm_exit_status"
		fi
		kept=$((kept + 1))
		dest=${VM_CONSOLES[i]}
		if [ -n "$dir" ]; then
			dest=$dir/$test-$((i + 1))-$(basename "${VM_CONSOLES[i]}")
			cp "${VM_CONSOLES[i]}" "$dest" 2>/dev/null || dest="${VM_CONSOLES[i]} (not copied)"
		fi
		echo "# console of boot $((i + 1)), $(basename "${VM_CONSOLES[i]}" .log) ($why): $dest"
		echo "# its last ${VM_CONSOLE_LINES:-60} lines:"
		tail -n "${VM_CONSOLE_LINES:-60}" "${VM_CONSOLES[i]}" 2>/dev/null |
			LC_ALL=C sed 's/[\x00-\x08\x0b-\x1f\x7f]//g; s/^/#   /'
	done
	return 0
}
# SIGTERM or SIGINT (tests/time-limit.sh) ends the test with a failure
# status, so the EXIT trap keeps the consoles; tests may set their own.
trap 'exit 143' TERM
trap 'exit 130' INT

# --------------------------------------------------------------- setup

vm_cache_dir() {
	local c=${ASYNCPROBE_TEST_CACHE:-/var/cache/asyncprobe-test}
	if ! mkdir -p "$c" 2>/dev/null || [ ! -w "$c" ]; then
		c=${XDG_CACHE_HOME:-$HOME/.cache}/asyncprobe-test
		mkdir -p "$c" || return 1
	fi
	VM_CACHE=$c
}

# Which linux-image package: the one ASYNCPROBE_TEST_KVER names, else the
# one the linux-image-amd64 metapackage depends on, else the newest in the
# cache.  Sets VM_KVER, VM_KROOT (unpacked package, depmod run) and
# VM_KERNEL.  Returns 1 (with a reason on stderr) when there is none.
vm_kernel() {
	local pkg='' deb='' dir
	if [ -n "${ASYNCPROBE_TEST_KVER:-}" ]; then
		pkg=linux-image-$ASYNCPROBE_TEST_KVER
	elif command -v apt-cache >/dev/null; then
		pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
			awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
	fi
	if [ -n "$pkg" ]; then
		deb=$(ls "$VM_CACHE/${pkg}_"*_amd64.deb 2>/dev/null | sort -V | tail -1)
		if [ -z "$deb" ]; then
			vm_note "downloading $pkg into $VM_CACHE"
			(cd "$VM_CACHE" && apt-get download -q "$pkg") >&2 || true
			deb=$(ls "$VM_CACHE/${pkg}_"*_amd64.deb 2>/dev/null | sort -V | tail -1)
		fi
	fi
	if [ -z "$deb" ]; then
		deb=$(ls "$VM_CACHE"/linux-image-[0-9]*_amd64.deb 2>/dev/null | sort -V | tail -1)
	fi
	if [ -z "$deb" ]; then
		echo "no linux-image package (apt-get download ${pkg:-linux-image-amd64} failed)" >&2
		return 1
	fi
	pkg=$(dpkg-deb -f "$deb" Package) || return 1
	VM_KVER=${pkg#linux-image-}
	dir=$VM_CACHE/kernel-$VM_KVER-$(dpkg-deb -f "$deb" Version)
	if [ ! -f "$dir/.done" ]; then
		vm_note "unpacking $deb"
		local tmp=$dir.tmp.$$
		rm -rf "$tmp" && mkdir -p "$tmp" &&
			dpkg-deb -x "$deb" "$tmp" &&
			depmod -b "$tmp" "$VM_KVER" &&
			touch "$tmp/.done" || {
			rm -rf "$tmp"
			echo "unpacking $deb failed" >&2
			return 1
		}
		# A concurrent run may have unpacked it first: keep that one.
		mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"
	fi
	VM_KROOT=$dir
	VM_KERNEL=$dir/boot/vmlinuz-$VM_KVER
	[ -f "$VM_KERNEL" ] || { echo "$deb has no /boot/vmlinuz-$VM_KVER" >&2; return 1; }
}

# One filesystem image FILE of SIZE MiB.
vm_mkfs() {
	local fs=$1 file=$2 size=$3 label=$4 uuid=$5 content=${6:-}
	rm -f "$file"
	truncate -s "${size}M" "$file"
	case $fs in
	ext4)
		mkfs.ext4 -q -F -b 1024 -L "$label" ${uuid:+-U "$uuid"} \
			-E root_owner=0:0 ${content:+-d "$content"} "$file" ;;
	vfat)
		mkfs.vfat -n "$label" "$file" >/dev/null ;;
	*) echo "vm_mkfs: unknown filesystem $fs" >&2; return 1 ;;
	esac
}

# The busybox root filesystem tree.
vm_rootfs_tree() {
	local t=$1 a
	mkdir -p "$t"/bin "$t"/sbin "$t"/proc "$t"/sys "$t"/dev "$t"/run "$t"/tmp \
		"$t"/etc "$t"/root "$t"/mnt
	cp /bin/busybox "$t/bin/busybox"
	for a in $(/bin/busybox --list); do
		[ "$a" = busybox ] || ln -sf busybox "$t/bin/$a"
	done
	install -m 0755 "$VM_LIB_DIR/rootfs-init.sh" "$t/sbin/init"
	echo "asyncprobe-test" >"$t/etc/hostname"
}

# One disk image from a VM_DISKS entry.
vm_mkdisk() {
	local out=$1 spec=$2 name size serial table parts tmp p i start
	local fs psize label plabel puuid uuid script
	IFS='|' read -r name size serial table parts <<<"$spec"
	parts=${spec#*|*|*|*|}
	tmp=$out.parts
	mkdir -p "$tmp"
	rm -f "$out"
	truncate -s "${size}M" "$out"
	if [ "$table" = gpt ]; then
		script="label: gpt"$'\n'"label-id: $(printf '%08x' "$size")-1111-4222-8333-444455556666"$'\n'
	else
		script="label: dos"$'\n'"label-id: 0x$(printf '%08x' $((0x5a000000 + size)))"$'\n'
	fi
	start=1
	i=0
	IFS=';' read -r -a p <<<"$parts"
	for part in "${p[@]}"; do
		i=$((i + 1))
		IFS='|' read -r fs psize label plabel puuid uuid <<<"$part"
		local line="start=$((start * 2048)), size=$((psize * 2048))"
		if [ "$table" = gpt ]; then
			[ "$fs" = vfat ] && line+=", type=uefi" || line+=", type=linux"
			[ -z "$plabel" ] || line+=", name=\"$plabel\""
			[ -z "$puuid" ] || line+=", uuid=$puuid"
		else
			[ "$fs" = vfat ] && line+=", type=c" || line+=", type=83"
		fi
		script+="$line"$'\n'
		local content=
		[ "$name" != root ] || [ "$i" -ne 1 ] || { vm_rootfs_tree "$tmp/tree"; content=$tmp/tree; }
		vm_mkfs "$fs" "$tmp/p$i" "$psize" "$label" "$uuid" "$content" || return 1
		dd if="$tmp/p$i" of="$out" bs=1M seek="$start" conv=notrunc,sparse status=none || return 1
		start=$((start + psize))
	done
	printf '%s' "$script" | sfdisk -q --no-reread --no-tell-kernel "$out" >"$tmp/sfdisk.log" 2>&1 || {
		cat "$tmp/sfdisk.log" >&2
		return 1
	}
	rm -rf "$tmp"
}

# Build (once per content) the root fs disk and the data disks into
# $VM_IMAGES.  The key hashes the disk table, the functions that build
# the disks, the root init and busybox.
vm_images() {
	local key d spec
	key=$( (declare -p VM_DISKS; declare -f vm_mkdisk vm_mkfs vm_rootfs_tree;
		cat "$VM_LIB_DIR/rootfs-init.sh" /bin/busybox) | sha256sum | cut -c1-16)
	VM_IMAGES=$VM_CACHE/images-$key
	if [ -f "$VM_IMAGES/.done" ]; then
		touch "$VM_IMAGES"
		return 0
	fi
	vm_note "building disk images in $VM_IMAGES"
	# Other trees may share the cache with other layouts at the same
	# time: only layouts nobody used for a week go.
	find "$VM_CACHE" -maxdepth 1 -name 'images-*' -mtime +7 -exec rm -rf {} + 2>/dev/null
	d=$VM_IMAGES.tmp.$$
	rm -rf "$d" && mkdir -p "$d" || return 1
	for spec in "${VM_DISKS[@]}"; do
		vm_mkdisk "$d/${spec%%|*}.img" "$spec" || { rm -rf "$d"; return 1; }
	done
	touch "$d/.done"
	# Someone else may have built the same layout meanwhile: keep theirs.
	mv -T "$d" "$VM_IMAGES" 2>/dev/null || rm -rf "$d"
	[ -f "$VM_IMAGES/.done" ]
}

vm_setup() {
	local t
	for t in qemu-system-x86_64 timeout; do
		command -v "$t" >/dev/null || vm_skip_all "$t is not installed (tests/install-deps.sh)"
	done
	for t in busybox sfdisk mkfs.ext4 mkfs.vfat dpkg-deb depmod modprobe cpio; do
		command -v "$t" >/dev/null || vm_bail "$t is not installed (tests/install-deps.sh)"
	done
	[ -x /bin/busybox ] && /bin/busybox --list | grep -qx poweroff ||
		vm_bail "/bin/busybox is not busybox-static"
	vm_cache_dir || vm_skip_all "no writable cache directory"
	local why
	why=$(vm_kernel 2>&1 >/dev/null) || vm_skip_all "kernel package: $why"
	vm_kernel 2>/dev/null
	vm_images || vm_bail "building disk images failed"
	VM_OUT=${VM_OUT:-$top_builddir/tests/vm/out}
	mkdir -p "$VM_OUT"
}

# asyncprobe's initramfs from the build tree, cached by the content of the
# program, its libraries and the generator.  Generic (--root-path=none:
# this machine's root says nothing about the VM's; a test that wants root
# first passes --root-path=NAME, which comes later and wins).  Sets
# VM_INITRD_AP.
vm_initrd_asyncprobe() {
	local key out libdir=$top_builddir/.libs prog
	prog=$top_builddir/src/asyncprobe/asyncprobe
	[ -x "$prog" ] || { echo "no $prog: build first" >&2; return 1; }
	key=$( (cat "$top_builddir/src/asyncprobe-mkinitramfs" "$prog" \
		"$top_builddir/src/asyncprobe/.libs/asyncprobe" "$libdir"/*.so* "$ASYNCPROBE_NOCRYPTO" 2>/dev/null;
		echo "$VM_KVER" "$*") | sha256sum | cut -c1-16)
	out=$top_builddir/tests/vm/initrd-ap-$key.img
	if [ ! -f "$out" ]; then
		# mkinitramfs writes a temporary file and renames it itself
		mkdir -p "${out%/*}" &&
		"$top_builddir/libtool" --mode=execute \
			"$top_builddir/src/asyncprobe-mkinitramfs" --asyncprobe "$prog" \
			-k "$VM_KVER" -b "$VM_KROOT" -o "$out" --root-path=none "$@" >&2 || return 1
	else
		echo "asyncprobe-mkinitramfs: $out: $(stat -c %s "$out") bytes (cached)" >&2
	fi
	VM_INITRD_AP=$out
}

# Debian's own initrd (initramfs-tools with udev) for the same kernel:
# mkinitramfs needs the kernel installed, so as root the package is
# installed with apt-get (it writes /boot/initrd.img-KVER).  Cached under
# $VM_CACHE.  Sets VM_INITRD_DEBIAN.
vm_initrd_debian() {
	local out=$VM_CACHE/initrd-debian-$VM_KVER.img
	if [ ! -f "$out" ]; then
		if [ ! -f "/boot/initrd.img-$VM_KVER" ]; then
			[ "$(id -u)" -eq 0 ] || { echo "not root: cannot install linux-image-$VM_KVER" >&2; return 1; }
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
				"linux-image-$VM_KVER" initramfs-tools udev >&2 || return 1
		fi
		if [ ! -f "/boot/initrd.img-$VM_KVER" ]; then
			command -v mkinitramfs >/dev/null || return 1
			mkinitramfs -o "$out.tmp" "$VM_KVER" >&2 || return 1
			mv "$out.tmp" "$out"
		else
			cp "/boot/initrd.img-$VM_KVER" "$out"
		fi
	fi
	VM_INITRD_DEBIAN=$out
}

# ------------------------------------------------------------- devices

# The QEMU arguments for a set of disks, in VM_DEV_ARGS:
#   matrix  root and a second disk on AHCI, virtio-scsi, LSI 53C895A
#           (sym53c8xx), virtio-blk, NVMe
#   parity  matrix plus a MegaRAID SAS HBA (megaraid_sas)
#   demo    four AHCI SATA disks and virtio-scsi and MegaRAID SCSI disks
#   small   the root disk only
#   pair    the root disk and a second SATA disk, and a virtio-blk disk
#   slow8   the root disk and eight data disks (three SATA, two virtio-scsi,
#           LSI, virtio-blk, NVMe)
#   hung    root, sata2, vscsi, nvme and a virtio-blk disk that never answers
#   hungscsi root, sata2, vscsi, nvme and, on the virtio-scsi controller
#           (PCI address below the root's AHCI controller, 00:1f.2), a SCSI
#           disk that never answers
#   stall   root, sata2, vscsi, nvme and, on the virtio-scsi controller, a
#           SCSI disk that answers its first 64 KiB (the kernel's partition
#           scan) and then a byte a second: the first read past them (blkid)
#           never returns, and its thread is stuck in the kernel
# VM_DRIVE_OPTS (such as throttling.iops-total=20) is added to every data
# disk's -drive, never to the root disk's.
vm_devices() {
	local set=$1 d
	VM_DEV_ARGS=()
	VM_DEV_NAMES=()
	case $set in
	small) d="root" ;;
	pair) d="root sata2 vblk" ;;
	matrix) d="root sata2 vscsi lsi vblk nvme" ;;
	parity) d="root sata2 vscsi lsi mega vblk nvme" ;;
	demo) d="root sata2 sata3 sata4 vscsi scsi2 mega" ;;
	slow8) d="root sata2 sata3 sata4 vscsi scsi2 lsi vblk nvme" ;;
	hung) d="root sata2 vscsi nvme hung" ;;
	hungscsi) d="root sata2 vscsi nvme hungscsi" ;;
	stall) d="root sata2 vscsi nvme stallscsi" ;;
	*) echo "vm_devices: unknown set $set" >&2; return 1 ;;
	esac
	local ide=0 have_vscsi='' have_lsi='' have_mega='' name spec serial opts
	for name in $d; do
		if [ "$name" = hung ]; then
			# A virtio disk that never answers: every read takes an
			# hour.  Its driver's probe reads the partition table
			# inside init_module(), so the insertion hangs.  QEMU needs
			# SIGKILL (vm_boot's timeout -k) while such a read is pending.
			VM_DEV_ARGS+=(-drive "driver=null-co,if=none,id=d-hung,size=64M,latency-ns=${VM_HUNG_LATENCY_NS:-3600000000000}"
				-device "virtio-blk-pci,drive=d-hung,serial=AP-HUNG/0011,cyls=130,heads=16,secs=63")
			continue
		fi
		if [ "$name" = hungscsi ]; then
			# The same on virtio-scsi: sd's asynchronous probe reads the
			# partition table and never returns (after vscsi: same bus).
			# The geometry is given: QEMU would read sector 0 to guess it,
			# for an hour, before starting the guest.
			[ -n "$have_vscsi" ] || VM_DEV_ARGS+=(-device "virtio-scsi-pci,id=vscsi0")
			have_vscsi=1
			VM_DEV_ARGS+=(-drive "driver=null-co,if=none,id=d-hungscsi,size=64M,latency-ns=${VM_HUNG_LATENCY_NS:-3600000000000}"
				-device "scsi-hd,bus=vscsi0.0,drive=d-hungscsi,serial=AP-HUNG/0012,cyls=130,heads=16,secs=63")
			continue
		fi
		if [ "$name" = stallscsi ]; then
			# QEMU's throttle lets requests through while its bucket
			# holds at most bps-total-max bytes, and drains it at
			# bps-total bytes a second: 64 KiB (and the request that
			# crosses it), then hours per page.  Zeros: no partition
			# table, no file system.
			[ -n "$have_vscsi" ] || VM_DEV_ARGS+=(-device "virtio-scsi-pci,id=vscsi0")
			have_vscsi=1
			VM_DEV_ARGS+=(-drive "driver=null-co,read-zeroes=on,if=none,id=d-stallscsi,size=64M,throttling.bps-total=1,throttling.bps-total-max=65536"
				-device "scsi-hd,bus=vscsi0.0,drive=d-stallscsi,serial=AP-STALL/0013,cyls=130,heads=16,secs=63")
			continue
		fi
		spec=
		for s in "${VM_DISKS[@]}"; do [ "${s%%|*}" = "$name" ] && spec=$s; done
		serial=$(cut -d'|' -f3 <<<"$spec")
		opts=
		[ "$name" = root ] || [ -z "${VM_DRIVE_OPTS:-}" ] || opts=,$VM_DRIVE_OPTS
		VM_DEV_ARGS+=(-drive "if=none,id=d-$name,format=raw,snapshot=on,file=$VM_IMAGES/$name.img$opts")
		VM_DEV_NAMES+=("$name")
		case $name in
		root|sata*)
			VM_DEV_ARGS+=(-device "ide-hd,bus=ide.$ide,drive=d-$name,serial=$serial")
			ide=$((ide + 1)) ;;
		vscsi|scsi*)
			[ -n "$have_vscsi" ] || VM_DEV_ARGS+=(-device "virtio-scsi-pci,id=vscsi0")
			have_vscsi=1
			VM_DEV_ARGS+=(-device "scsi-hd,bus=vscsi0.0,drive=d-$name,serial=$serial") ;;
		lsi)
			[ -n "$have_lsi" ] || VM_DEV_ARGS+=(-device "lsi53c895a,id=lsi0")
			have_lsi=1
			VM_DEV_ARGS+=(-device "scsi-hd,bus=lsi0.0,scsi-id=1,drive=d-$name,serial=$serial") ;;
		mega)
			[ -n "$have_mega" ] || VM_DEV_ARGS+=(-device "megasas,id=mega0")
			have_mega=1
			VM_DEV_ARGS+=(-device "scsi-hd,bus=mega0.0,scsi-id=0,drive=d-$name,serial=$serial") ;;
		vblk)
			VM_DEV_ARGS+=(-device "virtio-blk-pci,drive=d-$name,serial=$serial") ;;
		nvme)
			VM_DEV_ARGS+=(-device "nvme,drive=d-$name,serial=$serial") ;;
		esac
	done
}

# ---------------------------------------------------------------- boot

# The kernel command line always has console=ttyS0, edd=off (no BIOS disk
# probe stall), panic=-1 (a panic ends QEMU at once, -no-reboot) and
# no_timer_check (on a starved host the IO-APIC timer check of a TCG guest
# fails and panics).
#
# vm_boot NAME INITRD CMDLINE [LIMIT]: boot with the disks of the last
# vm_devices; the console goes to $VM_OUT/NAME.log (CR stripped).  Returns
# QEMU's status (124 or 137: the limit was hit).  With VM_KILL_AT_DONE set,
# QEMU is killed once the root's init has said "@@AP done" (a guest with
# I/O pending on a hung disk never powers off; the status is then 137).
vm_boot() {
	local name=$1 initrd=$2 cmdline=$3 limit=${4:-${VM_LIMIT:-300}} log raw rc t0 t1
	log=$VM_OUT/$name.log
	raw=$log.raw
	rm -f "$log" "$raw"
	t0=$(date +%s.%N)
	timeout -k 5 "$limit" qemu-system-x86_64 -M q35 -accel "$VM_ACCEL" -cpu "$VM_CPU" -smp "$VM_SMP" -m "$VM_MEM" \
		-nodefaults -no-user-config -display none -no-reboot \
		-serial "file:$raw" -monitor none \
		-kernel "$VM_KERNEL" -initrd "$initrd" \
		-append "console=ttyS0 edd=off panic=-1 no_timer_check $cmdline" \
		"${VM_DEV_ARGS[@]}" ${VM_QEMU_EXTRA:-} </dev/null >"$log.qemu" 2>&1 &
	local qpid=$! killed=0
	if [ -n "${VM_KILL_AT_DONE:-}" ]; then
		while kill -0 "$qpid" 2>/dev/null; do
			if grep -q '^@@AP done' "$raw" 2>/dev/null; then
				sleep 1
				pkill -KILL -P "$qpid" 2>/dev/null && killed=1
				break
			fi
			sleep 0.5
		done
	fi
	wait "$qpid"
	rc=$?
	t1=$(date +%s.%N)
	tr -d '\r' <"$raw" >"$log" 2>/dev/null
	rm -f "$raw"
	VM_BOOT_WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	# 124: timeout's TERM ended QEMU; 137 without our own kill at "@@AP
	# done": its KILL did
	if [ $rc -eq 124 ] || { [ $rc -eq 137 ] && [ "$killed" = 0 ]; }; then
		vm_console_register "$log" "QEMU still running at the ${limit} s limit"
	else
		vm_console_register "$log" ""
	fi
	vm_note "boot $name: qemu status $rc, ${VM_BOOT_WALL}s wall, root init at $(vm_uptime "$log" || echo -)s uptime"
	return $rc
}

vm_reached_root() { grep -q '^@@AP done' "$1"; }
vm_uptime() { awk '$1 == "@@AP" && $2 == "uptime" { print $3; f = 1 } END { exit !f }' "$1"; }
vm_panicked() { grep -qE 'Kernel panic|Attempted to kill init' "$1"; }

# "by-x/NAME IDENT" for every link, sorted; by-diskseq is left out (the
# kernel numbers disks in the order it registers them, which differs between
# boots) unless WITH_DISKSEQ=1.
vm_links() {
	awk -v ds="${WITH_DISKSEQ:-0}" '$1 == "@@AP" && $2 == "link" {
		if (ds == 0 && $3 ~ /^by-diskseq\//) next
		print $3, $5 }' "$1" | LC_ALL=C sort
}

vm_extract() {
	local log=$1 file=$2 dest=$3
	awk -v f="$file" '$0 == "@@AP end " f { p = 0 } p { print } $0 == "@@AP begin " f { p = 1 }' "$log" |
		base64 -d >"$dest" 2>/dev/null && [ -s "$dest" ]
}

# The part of the console after the kernel handed over to /init: from its
# "Run /init" message, or when "quiet" hid that, from asyncprobe's first
# line; nothing when neither is there (the kernel never got that far).
vm_after_init() {
	if grep -q 'Run /init as init process' "$1"; then
		sed -n '/Run \/init as init process/,$p' "$1"
	else
		sed -n '/asyncprobe/,$p' "$1"
	fi
}

# --------------------------------------------------------------- scale

# The scale boots (tests/bench/scale.sh, tests/vm/boot-scale.sh): N SCSI
# disks made by scsi_debug in the VM, 1 MiB each, one LUN per target, all
# on one host (scsi_debug derives its VPD device identifiers from
# (host + 1) * 2000 + target * 1000 + lun, so with several hosts of many
# targets most by-id names collide), the module's default response delay.
vm_scale_sd() {
	echo "scsi_debug.add_host=1 scsi_debug.num_tgts=$1 scsi_debug.max_luns=1 scsi_debug.dev_size_mb=1"
}

# asyncprobe's command line for N disks, with an initramfs built by
# "vm_initrd_asyncprobe -m scsi_debug": scsi_debug is loaded before the run
# (asyncprobe.modules=), the root's init prints only the "@@AP scale" lines
# (aptest.scale).  rootwait: the root partition's links come after every
# scsi_debug disk's in cookie order when their host comes first, which can take longer
# than the default 30 s root timeout.
vm_scale_cmdline_ap() {
	echo "root=UUID=$VM_ROOT_UUID rootwait quiet fastboot aptest.scale asyncprobe.modules=scsi_debug $(vm_scale_sd "$1")"
}

# vm_scale_line LOG: the KEY=VALUE words of the boot's "@@AP scale" line as
# shell variables s_KEY (disks, byid_disks, by_id, by_path, by_uuid,
# elapsed_ms, peak_rss_kib; the udev side also workers, workers_rss_kib);
# those the line lacks are unset.
vm_scale_line() {
	local kv
	unset s_disks s_byid_disks s_by_id s_by_path s_by_uuid s_elapsed_ms s_peak_rss_kib \
		s_workers s_workers_rss_kib
	for kv in $(awk '$1 == "@@AP" && $2 == "scale" { $1 = $2 = ""; print; exit }' "$1"); do
		case $kv in *=*) declare -g "s_${kv%%=*}=${kv#*=}" ;; esac
	done
}

# vm_scale_summary LOG: the "summary" object of asyncprobe's manifest as
# the root's init printed it ("@@AP scale-summary"), or nothing.
vm_scale_summary() {
	awk '$1 == "@@AP" && $2 == "scale-summary" { $1 = $2 = ""; sub(/^ +/, ""); print; exit }' "$1"
}

# ----------------------------------------------------------- expectations

# udev's encoding of a label for by-label/by-partlabel (blkid_encode_string:
# space, slash and backslash and non-printable bytes become \xNN).
vm_encode() {
	local s=$1 out='' c i
	for ((i = 0; i < ${#s}; i++)); do
		c=${s:i:1}
		case $c in
		[A-Za-z0-9#+:=@_.-]) out+=$c ;;
		*) out+=$(printf '\\x%02x' "'$c") ;;
		esac
	done
	printf '%s\n' "$out"
}

# IDENT of a VM_DISKS disk as rootfs-init.sh prints it.
vm_ident() { local s; s=$(cut -d'|' -f3 <<<"$1"); echo "SER:${s// /_}"; }

# The by-label and by-partlabel links every disk of the given names must
# produce, as "by-x/NAME IDENT" lines (sorted).
vm_expected_links() {
	local name spec parts p i fs psize label plabel puuid uuid ident table
	for name in "$@"; do
		for spec in "${VM_DISKS[@]}"; do
			[ "${spec%%|*}" = "$name" ] || continue
			ident=$(vm_ident "$spec")
			table=$(cut -d'|' -f4 <<<"$spec")
			parts=${spec#*|*|*|*|}
			IFS=';' read -r -a p <<<"$parts"
			i=0
			for part in "${p[@]}"; do
				i=$((i + 1))
				IFS='|' read -r fs psize label plabel puuid uuid <<<"$part"
				[ -z "$label" ] || echo "by-label/$(vm_encode "$label") $ident-part$i"
				[ "$table" != gpt ] || [ -z "$plabel" ] ||
					echo "by-partlabel/$(vm_encode "$plabel") $ident-part$i"
				[ -z "$uuid" ] || echo "by-uuid/$uuid $ident-part$i"
				[ -z "$puuid" ] || echo "by-partuuid/$puuid $ident-part$i"
				[ "$table" != dos ] || printf 'by-partuuid/%08x-%02x %s-part%d\n' \
					$((0x5a000000 + $(cut -d'|' -f2 <<<"$spec"))) "$i" "$ident" "$i"
			done
		done
	done | LC_ALL=C sort
}

# vm_check_root LOG: 0 when the boot reached the root's init and nothing
# panicked; otherwise prints why (as TAP comments) and returns 1.
vm_check_root() {
	local log=$1
	if vm_panicked "$log"; then
		# What init said last, then the panic line.
		grep -E -B12 -m1 'Kernel panic|Attempted to kill init' "$log" | vm_diag
		return 1
	fi
	if ! vm_reached_root "$log"; then
		echo "did not reach the root file system's init; last console lines:" | vm_diag
		tail -15 "$log" | vm_diag
		return 1
	fi
}

# vm_hung_disk TAG STEP SECTION WHAT WHERE: the checks of a boot with a
# disk that never answers (vm_devices hung or hungscsi, set up by the
# caller), sequentially and with fastboot, 13 TAP lines: the root's init
# is reached; the log names the one abandoned call, in STEP, after 3 s +
# 2 s (asyncprobe.timeout=3); every other disk has all its links and the
# hung one (serial AP-HUNG) none; the summary counts it and says
# degraded; the manifest's SECTION ("controllers", "devices") has it
# abandoned in STEP, with its abandoned_ms; and both modes' link logs are
# identical, cookies included.  WHAT names the abandoned device in the
# test names, WHERE (may be empty) says where the hung disk is.  Logs go
# to $VM_OUT/TAG-MODE.log*.
vm_hung_disk() {
	local tag=$1 step=$2 section=$3 what=$4 where=$5 mode extra log line after missing n summary
	VM_KILL_AT_DONE=1
	for mode in sequential fastboot; do
		extra=
		[ $mode = sequential ] || extra=fastboot
		log=$VM_OUT/$tag-$mode.log
		# the hung read keeps QEMU from powering off: the limit ends it
		vm_boot "$tag-$mode" "$VM_INITRD_AP" \
			"root=UUID=$VM_ROOT_UUID asyncprobe.timeout=3 quiet aptest.dump $extra" 300
		vm_check_root "$log"
		vm_ok $? "$mode: reaches the root's init with a disk that never answers$where"
		line=$(grep -m1 -E 'asyncprobe.*: abandoned, no answer after' "$log")
		echo "$line" | vm_diag
		after=$(sed -nE 's/.*no answer after ([0-9.]+) s .*/\1/p' <<<"$line")
		[ -n "$line" ] && grep -q "$step" <<<"$line" &&
			awk -v a="${after:-0}" 'BEGIN { exit !(a >= 5.0) }'
		vm_ok $? "$mode: the log names the abandoned $what, its step, and it waited 3 s + 2 s (${after:-none} s)"
		vm_links "$log" >"$log.links"
		vm_expected_links "${VM_DEV_NAMES[@]}" >"$log.expected"
		missing=$(LC_ALL=C comm -23 "$log.expected" "$log.links")
		[ -z "$missing" ] || { echo "missing:"; echo "$missing"; } | vm_diag
		vm_ok "$([ -z "$missing" ]; echo $?)" "$mode: the other disks' links are all there (SATA, virtio-scsi, NVMe)"
		n=$(grep -c ' SER:AP-HUNG' "$log.links")
		vm_ok "$([ "$n" -eq 0 ]; echo $?)" "$mode: no link to the hung disk ($n)"
		summary=$(grep -oE 'asyncprobe.*[0-9]+ controllers, .*' "$log" | tail -1)
		echo "$summary" | vm_diag
		grep -qE 'asyncprobe.*1 device abandoned' "$log" && grep -q 'degraded' <<<"$summary"
		vm_ok $? "$mode: the summary counts the abandoned device and says degraded"
		vm_extract "$log" manifest.json "$log.json"
		python3 - "$log.json" "$section" "$step" <<'PY' 2>&1 | vm_diag
import json, sys
m = json.load(open(sys.argv[1]))
s = m["summary"]
bad = [d for k in ("controllers", "devices") for d in m.get(k, [])
       if str(d.get("status", "")).startswith("abandoned")]
assert s["abandoned"] == 1, s
assert s["exit_status"] != 0, s
assert len(bad) == 1 and sys.argv[3] in bad[0]["status"], bad
assert bad[0] in m[sys.argv[2]], (sys.argv[2], bad)
assert "abandoned_ms" in bad[0]["time"], bad[0]
print("abandoned:", bad[0]["name"], bad[0]["status"], bad[0]["time"])
PY
		vm_ok "${PIPESTATUS[0]}" "$mode: the manifest marks the $what abandoned and counts it"
		# the link log: cookie, action, name (by-diskseq numbers differ between boots)
		python3 -c 'import json, sys
for l in json.load(open(sys.argv[1]))["links"]:
    if "/by-diskseq/" not in l["name"]:
        print(l["cookie"], l["action"], l["name"])' "$log.json" >"$log.linklog" 2>/dev/null
	done
	n=$(wc -l <"$VM_OUT/$tag-sequential.log.linklog")
	diff "$VM_OUT/$tag-sequential.log.linklog" "$VM_OUT/$tag-fastboot.log.linklog" | head -20 | vm_diag
	cmp -s "$VM_OUT/$tag-sequential.log.linklog" "$VM_OUT/$tag-fastboot.log.linklog" && [ "$n" -gt 0 ]
	vm_ok $? "the link logs of both modes are identical, cookies included ($n links)"
}
