#!/bin/sh
# /init of the image-drivers test: the busybox stand-in for asyncprobe's
# engine.  It loads drivers for every modalias in sysfs until no new ones
# appear (virtio devices show up only once virtio_pci is loaded), using the
# image's own module indexes, then mounts root= (LABEL=, UUID=, /dev/...)
# with findfs and switches to it.
/usr/bin/busybox --install -s /usr/bin
export PATH=/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# The file systems first: their crypto helpers (crc32c) are loaded by the
# kernel through /sbin/modprobe otherwise, which this image does not have.
modprobe -a crc32c_generic crc32c-intel ext4 vfat nls_cp437 nls_ascii 2>/dev/null
prev=
for pass in 1 2 3 4 5 6 7 8 9 10; do
	cur=$(find /sys/devices -name modalias -exec cat {} + 2>/dev/null | sort -u)
	[ "$cur" != "$prev" ] || break
	prev=$cur
	echo "$cur" | xargs modprobe -a -q 2>/dev/null
	sleep 0.3
done
modprobe -a sd_mod 2>/dev/null
root=$(sed -n 's/.*root=\([^ ]*\).*/\1/p' /proc/cmdline)
i=0
until dev=$(findfs "$root" 2>/dev/null); do
	i=$((i + 1))
	if [ $i -ge 100 ]; then
		echo "modalias-init: $root not found"
		poweroff -f
	fi
	sleep 0.1
done
# Give the slower controllers the same chance as the root's.
sleep 1
mount -o ro "$dev" /newroot || poweroff -f
for m in dev proc sys; do mount --move /$m /newroot/$m; done
exec switch_root /newroot /sbin/init
