#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A hung disk (issue 7, item 3): a virtio disk whose every read takes an
# hour (QEMU's null-co driver with a large latency-ns).  virtio_blk's probe
# reads its partition table inside init_module(), so the call that loads
# the driver never returns; its cookie is lower than the SATA, SCSI and
# NVMe disks', so ordered publication would wait for it for ever.  With
# asyncprobe.timeout=3 the call must be abandoned after 3 s + 2 s in that
# step, sequentially and with fastboot: the boot reaches root on the SATA
# disk, every other disk has all its links, the log names the abandoned
# device and its step, the summary and the JSON manifest count it and call
# the run degraded, and the real init starts (exec ends the hung thread).
. "$top_srcdir/tests/vm/lib.sh"
vm_setup
vm_plan 13
vm_initrd_asyncprobe || vm_bail "building the initramfs failed"
vm_devices hung
vm_hung_disk hung 'loading its driver' controllers controller ''
exit 0
