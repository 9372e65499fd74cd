#!/usr/bin/env bash
# Debian 12 packages needed to build, test and benchmark asyncprobe.
set -eu
export DEBIAN_FRONTEND=noninteractive
pkgs=(
	# build
	build-essential autoconf automake libtool pkg-config
	libudev-dev libblkid-dev libkmod-dev libsystemd-dev
	# unit tests
	libcmocka-dev umockdev libumockdev-dev
	# trace tests validate JSON and SVG with python3 (json, xml.etree)
	python3
	# benchmark peers
	libuv1-dev libglib2.0-dev
	# fuzzing
	clang libclang-rt-14-dev
	# images and VM tests
	qemu-system-x86 qemu-utils busybox-static fdisk e2fsprogs dosfstools
	util-linux cpio zstd xz-utils kmod udev systemd
	# udev-parity VM test: Debian's own initrd for the same kernel
	initramfs-tools
	# tests/vm/install-host.sh: an installed kernel, as on a real Debian
	# system (/lib/modules/VERSION, /boot/vmlinuz-VERSION)
	linux-image-amd64
	# tests/vm/debian-system.sh: an installed Debian 12 as the test subject
	debootstrap
	valgrind python3
	# lint of the dracut and initramfs-tools scripts (tests/init/scripts.sh)
	shellcheck
	# manual pages format without warnings (tests/man/manpages.sh)
	groff-base
	# the Debian packages (tests/deb/build-deb.sh: dpkg-buildpackage, lintian;
	# GRUB's tools go into its chroot, not onto this host)
	debhelper lintian
	# line coverage of the unit tests (tests/coverage.sh)
	gcovr
)
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: run as root (apt-get)" >&2
	exit 1
fi
apt-get update -q
apt-get install -y -q --no-install-recommends "${pkgs[@]}" >/tmp/asyncprobe-apt.log 2>&1 || {
	tail -30 /tmp/asyncprobe-apt.log >&2
	exit 1
}
echo "install-deps: ${#pkgs[@]} packages present"
