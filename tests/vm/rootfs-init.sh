#!/bin/sh
# /sbin/init of the VM tests' root filesystem (busybox).  It reports what the
# booted system sees on the console, one marker line each, and powers off:
#
#   @@AP uptime SECONDS            /proc/uptime when this init started
#   @@AP cmdline ...               the kernel command line
#   @@AP probe-wait N              tenths of a second this init waited for
#                                  asyncprobe's probe process to finish
#   @@AP block NAME IDENT          every block device; IDENT names the
#                                  physical disk by serial (SER:...), or by
#                                  size where it has none, plus -partN
#   @@AP root NAME IDENT           the device mounted on /
#   @@AP link NAME TARGET IDENT    every /dev/disk/by-*/NAME, its link text
#                                  and the device behind it
#   @@AP run FILE BYTES            files under /run/asyncprobe
#   @@AP begin FILE / @@AP end FILE   base64 of each /run/asyncprobe/FILE
#                                  (only with "aptest.dump" on the command line)
#   @@AP kmsg LINE                 asyncprobe's lines in the kernel log
#   @@AP kmsg-dropped LINE         the kernel's "N output lines suppressed" notes
#   @@AP devkmsg VALUE             /proc/sys/kernel/printk_devkmsg
#   @@AP proc PID COMM STATES      every asyncprobe process still there (the
#                                  initramfs's probe run), with the state
#                                  letter of each of its threads (D: stuck
#                                  in the kernel)
#   @@AP done                      last line before power-off
#   @@AP scale disks=N ...         only this line and the manifest's
#   @@AP scale-summary {...}       summary object, then power-off, with
#                                  "aptest.scale" on the command line (the
#                                  scale benchmark: thousands of links would
#                                  take minutes on a TCG serial console)
#   @@AP scale-trace {...}         and the trace's summary ("otherData"),
#                                  with aptest.dump and asyncprobe.trace=1
#
# The harness (lib.sh) parses these lines; nothing here depends on which
# initramfs booted the system.
PATH=/bin:/sbin:/usr/bin:/usr/sbin
export PATH

[ -r /proc/uptime ] || mount -t proc proc /proc
read -r up _ </proc/uptime
[ -d /sys/class ] || mount -t sysfs sysfs /sys
[ -e /dev/null ] || mount -t devtmpfs devtmpfs /dev
exec </dev/null >/dev/console 2>&1
dmesg -n 1 2>/dev/null
echo "@@AP uptime $up"
echo "@@AP cmdline $(cat /proc/cmdline)"

# asyncprobe's /init starts this init once the root is mounted, while its
# probe process may still be making the other disks' links; it appends
# probe_finished_ms to init.log when the run is over.  Everything below
# looks at the whole run, so wait for that line (at most 300 s; a boot
# with asyncprobe.wait_all=1 or another initramfs does not wait).
if [ -f /run/asyncprobe/init.log ]; then
	i=0
	while ! grep -q '^probe_finished_ms=' /run/asyncprobe/init.log && [ "$i" -lt 3000 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	echo "@@AP probe-wait $i"
fi

# The scale benchmark (tests/bench/scale.sh): SCSI disks, the disks that
# have a by-id link, links per directory, and asyncprobe's own figures from
# its manifest.  The same line as tests/bench/scale-udev-init.sh prints.
case " $(cat /proc/cmdline) " in
*" aptest.scale "*)
	disks=$(ls /sys/block | grep -c '^sd')
	byid=$(ls -l /dev/disk/by-id/ 2>/dev/null | sed -n 's|.*/\(sd[a-z]*\)$|\1|p' | sort -u | wc -l)
	n() { ls "/dev/disk/$1" 2>/dev/null | wc -l; }
	m=$(sed -n 's/.*"elapsed_ms":\([0-9.]*\),"peak_rss_kib":\([-0-9]*\)}.*/elapsed_ms=\1 peak_rss_kib=\2/p' \
		/run/asyncprobe/manifest.json 2>/dev/null | tail -1)
	echo "@@AP scale disks=$disks byid_disks=$byid by_id=$(n by-id) by_path=$(n by-path) by_uuid=$(n by-uuid) $m"
	s=$(sed -n 's/^ *"summary": *//p' /run/asyncprobe/manifest.json 2>/dev/null | tail -1)
	echo "@@AP scale-summary $s"
	# with aptest.dump and asyncprobe.trace=1: the trace's summary (its
	# "otherData" line); the whole trace is too long for the console
	case " $(cat /proc/cmdline) " in
	*" aptest.dump "*)
		echo "@@AP scale-trace $(sed -n 's/^"otherData"://p' /run/asyncprobe/trace.json 2>/dev/null)"
		# the processors' time so far (user nice system idle iowait ...,
		# in clock ticks) and PID 1's own and its reaped children's
		# (utime stime cutime cstime): what the boot spent where
		echo "@@AP scale-cpu $(head -n 1 /proc/stat) pid1 $(cut -d ' ' -f 14-17 /proc/1/stat)" ;;
	esac
	echo "@@AP done"
	poweroff -f
	;;
esac

# One word that names a physical disk whatever its kernel name: its serial
# from sysfs (virtio-blk: serial, NVMe: device/serial, SCSI and ATA: VPD
# page 0x80), else its size in sectors.
disk_ident() {
	d=/sys/block/$1
	s=
	for f in "$d/serial" "$d/device/serial"; do
		if [ -z "$s" ] && [ -r "$f" ]; then
			s=$(tr -d '\000' <"$f")
		fi
	done
	if [ -z "$s" ] && [ -r "$d/device/vpd_pg80" ]; then
		s=$(tail -c +5 "$d/device/vpd_pg80" | tr -d '\000')
	fi
	s=$(echo "$s" | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' -e 's/[[:space:]]/_/g')
	if [ -n "$s" ]; then
		echo "SER:$s"
	else
		echo "SIZE:$(cat "$d/size")"
	fi
}

block_ident() {
	b=/sys/class/block/$1
	if [ -r "$b/partition" ]; then
		parent=$(basename "$(dirname "$(readlink -f "$b")")")
		echo "$(disk_ident "$parent")-part$(cat "$b/partition")"
	else
		disk_ident "$1"
	fi
}

for b in /sys/class/block/*; do
	n=${b##*/}
	case $n in loop*|ram*|zram*) continue ;; esac
	echo "@@AP block $n $(block_ident "$n")"
done

# The device mounted on /, by its device number.
dev=$(stat -c %d /)
rootdev=$(((dev >> 8) & 0xfff)):$(((dev & 0xff) | ((dev >> 12) & 0xfff00)))
rootname=
[ ! -e "/sys/dev/block/$rootdev" ] || rootname=$(basename "$(readlink -f "/sys/dev/block/$rootdev")")
echo "@@AP root ${rootname:-?} $( [ -n "$rootname" ] && block_ident "$rootname")"

for l in /dev/disk/by-*/*; do
	[ -L "$l" ] || continue
	t=$(readlink "$l")
	r=$(readlink -f "$l")
	echo "@@AP link ${l#/dev/disk/} $t $(block_ident "${r##*/}")"
done

if [ -d /run/asyncprobe ]; then
	for f in /run/asyncprobe/*; do
		[ -f "$f" ] || continue
		echo "@@AP run ${f##*/} $(wc -c <"$f")"
	done
	# The contents only when asked: a serial console under TCG takes
	# seconds for every few ten kilobytes.
	dump=
	case " $(cat /proc/cmdline) " in
	*" aptest.dump "*) dump=1 ;;
	esac
	for f in /run/asyncprobe/*; do
		[ -n "$dump" ] && [ -f "$f" ] || continue
		echo "@@AP begin ${f##*/}"
		base64 "$f"
		echo "@@AP end ${f##*/}"
	done
fi

# What asyncprobe said in the kernel log (it logs to /dev/kmsg as PID 1;
# "quiet" keeps it off the console but not out of the buffer).
dmesg | grep 'asyncprobe\[' | sed 's/^/@@AP kmsg /'
# Lines the kernel's /dev/kmsg rate limit dropped, and that limit's
# setting now (asyncprobe lifts it for its run and puts it back).
dmesg | grep 'output lines suppressed due to ratelimiting' | sed 's/^/@@AP kmsg-dropped /'
echo "@@AP devkmsg $(cat /proc/sys/kernel/printk_devkmsg 2>/dev/null || echo -)"

for p in /proc/[0-9]*; do
	read -r comm <"$p/comm" 2>/dev/null || continue
	case $comm in asyncprobe*) ;; *) continue ;; esac
	states=
	for t in "$p"/task/*/stat; do
		# the state follows the ")" that ends the command name
		st=$(sed 's/.*) \([A-Za-z]\).*/\1/' "$t" 2>/dev/null)
		states="$states${st:-?}"
	done
	echo "@@AP proc ${p#/proc/} $comm $states"
done

echo "@@AP done"
sync
poweroff -f
