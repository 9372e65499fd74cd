#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A hung disk on an earlier controller (issue 15, item 5): a SCSI disk
# whose every read takes an hour (QEMU null-co, latency-ns) on the
# virtio-scsi controller, whose PCI address is below the root's AHCI
# controller (00:1f.2).  sd probes its disks asynchronously and reads the
# partition table in that probe, so the hung disk's probe never returns.
# Linux ends every module insertion that did not ask for async_probe with
# a wait for all asynchronous work (do_init_module()): sd_mod's insertion,
# and every later one (ext4's), would never return, and the root's SCSI
# device would be given up although its block device was there.
# asyncprobe inserts every module with async_probe and waits for each
# device's own probe ("bind"), so, sequentially and with fastboot
# (asyncprobe.timeout=3): the root mounts and init starts, only the hung
# disk's SCSI device call is abandoned (logged with its step), every other
# disk has all its links, the summary and the manifest count it and say
# degraded, and the link logs of both modes are identical.
. "$top_srcdir/tests/vm/lib.sh"
vm_setup
vm_plan 13
vm_initrd_asyncprobe || vm_bail "building the initramfs failed"
vm_devices hungscsi
vm_hung_disk hung-earlier 'waiting for its block device' devices 'SCSI device' ' on an earlier controller'
exit 0
