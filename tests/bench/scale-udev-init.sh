#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of the udev side of the scale benchmark (tests/bench/scale.sh),
# appended as a second cpio archive to Debian's initramfs-tools initrd, so
# the kernel, systemd-udevd, udevadm, its rules and scsi_debug.ko are
# Debian's own; only initramfs-tools' /init is replaced.  It loads
# scsi_debug (its options come from the kernel command line, as modprobe
# reads them) while no udevd listens, then starts systemd-udevd and times
# what a coldplug costs: udevadm trigger --action=add, then udevadm settle.
# It prints one line in the format of tests/vm/rootfs-init.sh's
# "aptest.scale" line and powers off.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
mkdir -p /proc /sys /dev /run /tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /run
exec </dev/null >/dev/console 2>&1
up() { read -r u _ </proc/uptime; echo "$u"; }
echo "@@AP uptime $(up)"
t=$(up)
modprobe scsi_debug
echo "@@AP scsi_debug loaded in $(awk -v a="$t" -v b="$(up)" 'BEGIN { printf "%.2f", b - a }') s"
SYSTEMD_LOG_LEVEL=notice /lib/systemd/systemd-udevd --daemon --resolve-names=never
t0=$(up)
udevadm trigger --action=add
udevadm settle --timeout=1200
t1=$(up)
# udevd's own peak (the daemon: its parent is this init); its workers are
# separate processes, named (udev-worker) or systemd-udevd, counted apart
hwm=
workers=0
wsum=0
for st in /proc/[0-9]*/status; do
	name=$(sed -n 's/^Name:[[:space:]]*//p' "$st" 2>/dev/null)
	case $name in
	systemd-udevd|"(udev-worker)") ;;
	*) continue ;;
	esac
	pp=$(sed -n 's/^PPid:[[:space:]]*//p' "$st" 2>/dev/null)
	w=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "$st" 2>/dev/null)
	if [ "$pp" = 1 ]; then
		hwm=$w
	else
		workers=$((workers + 1))
		wsum=$((wsum + ${w:-0}))
	fi
done
disks=$(ls /sys/block | grep -c '^sd')
byid=$(ls -l /dev/disk/by-id/ 2>/dev/null | sed -n 's|.*/\(sd[a-z]*\)$|\1|p' | sort -u | wc -l)
n() { ls "/dev/disk/$1" 2>/dev/null | wc -l; }
echo "@@AP scale disks=$disks byid_disks=$byid by_id=$(n by-id) by_path=$(n by-path) by_uuid=$(n by-uuid) elapsed_ms=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", (b - a) * 1000 }') peak_rss_kib=${hwm:--1} workers=$workers workers_rss_kib=$wsum"
echo "@@AP done"
sync
echo o >/proc/sysrq-trigger
sleep 10
poweroff -f
