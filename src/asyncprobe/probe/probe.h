/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The probe layer: libblkid probing (probe.c), by-id identity data
 * (identity.c, path-id.c) and udev-compatible link names (naming.c).
 * See asyncprobe(8), NAMING, and shared/docs/udev-naming.md.
 */
#ifndef ASYNCPROBE_PROBE_H
#define ASYNCPROBE_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

/* -------------------------------------------------------------- naming.c */

struct udev_device;

/*
 * What libblkid said about one block device (probe.c fills it; raw values,
 * not encoded; NULL where blkid reported nothing).  Every string is
 * malloc()ed and owned by the struct: ap_fsinfo_clear() frees them.
 */
struct ap_fsinfo {
	char *type;              /* TYPE */
	char *usage;             /* USAGE: filesystem, raid, crypto, other */
	char *uuid;              /* UUID */
	char *uuid_sub;          /* UUID_SUB */
	char *label;             /* LABEL (raw bytes, may be anything) */
	char *version;           /* VERSION */
	char *pttype;            /* PTTYPE: gpt, dos, ... (disks) */
	char *ptuuid;            /* PTUUID */
	char *part_entry_scheme; /* PART_ENTRY_SCHEME (partitions) */
	char *part_entry_uuid;   /* PART_ENTRY_UUID */
	char *part_entry_name;   /* PART_ENTRY_NAME (GPT) */
	char *part_entry_type;   /* PART_ENTRY_TYPE */
	unsigned int part_entry_number;
	bool ambivalent;         /* conflicting signatures: no fs values */
	int error;               /* 0, or -errno when probing failed */
};
/* Frees every string and zeroes @fs (NULL-safe). */
void ap_fsinfo_clear(struct ap_fsinfo *fs);

/* A list of link names relative to the dev dir ("disk/by-id/ata-..."). */
struct ap_namelist {
	char **names;
	size_t n;
	size_t allocated;
};
int ap_namelist_add(struct ap_namelist *l, const char *name);
void ap_namelist_free(struct ap_namelist *l);

/*
 * Every persistent name udev (systemd 252, Debian 12 rules) would give
 * @dev (a block disk or partition), from sysfs, SG_IO identity data and
 * @fs, in the order of 60-persistent-storage.rules.  Names are returned as
 * udev would form them; ap_links_publish() checks each with
 * ap_link_name_valid() and records unsafe ones as AP_LINK_REJECTED, so a
 * hostile label shows up in the creation log instead of vanishing.
 * @fs may be NULL (no blkid data).  The identity of a whole disk (ATA
 * IDENTIFY, VPD pages, path_id) is computed once and cached by device
 * number, so its partitions reuse it.  Thread-safe for distinct devices.
 * Returns 0 or -errno; on error *ret is empty.
 */
int ap_names_for_device(struct udev_device *dev, const struct ap_fsinfo *fs,
			struct ap_namelist *ret);

/*
 * True if @name (relative to the dev dir) is a link asyncprobe may create:
 * "disk/by-<id|path|uuid|label|partuuid|partlabel|diskseq>/" followed by
 * one or more components, none empty, ".", "..", longer than NAME_MAX or
 * holding a control byte (0x01-0x1f, 0x7f).  A '/' left in a by-id value
 * (a virtio serial "a/b") makes a subdirectory, as udev does.
 */
bool ap_link_name_valid(const char *name);

/* --------------------------------------------------------------- probe.c */

/*
 * Probe @devnode with libblkid (superblocks with LABEL, UUID, TYPE, USAGE,
 * VERSION; partition table and PART_ENTRY_* details) using safeprobe
 * semantics.  Fills @fs (raw values).  Returns 0 when something was found,
 * 1 when nothing, negative errno on failure (also stored in fs->error).
 */
int ap_probe_device(const char *devnode, struct ap_fsinfo *fs);

/* The file system type ap_probe_device() finds on @devnode (malloc'ed), or NULL. */
char *ap_probe_fstype(const char *devnode);

/* ------------------------------------------------- identity.c, path-id.c */

/*
 * By-id identity data of a whole disk (identity.c): what ata_id, scsi_id,
 * usb_id, path_id and the nvme/virtio rules give it, from sysfs VPD pages
 * and ATA IDENTIFY via SG_IO, and the cache that lets its partitions reuse
 * it.  naming.c turns it into link names.
 */

struct udev_device;

/* What ata_id, scsi_id, usb_id, path_id and the nvme/virtio rules give a disk. */
struct ap_identity {
	char *bus;          /* ID_BUS: "ata", "scsi", "usb", "cciss" */
	char *serial;       /* ID_SERIAL, cleaned (by-id/<bus>-<serial>) */
	char *wwn;          /* ID_WWN_WITH_EXTENSION ("0x..."), or NULL */
	char *usb_serial;   /* ID_USB_SERIAL (by-id/usb-...) */
	char *nvme_wwid;    /* $attr{wwid}, cleaned */
	char *nvme_model;   /* $attr{model}, cleaned */
	char *nvme_serial;  /* $attr{serial}, cleaned (ID_SERIAL_SHORT) */
	char *nvme_nsid;    /* $attr{nsid}, cleaned */
	char *virtio_serial;/* $attr{serial} of a vd* disk, cleaned */
	char *mmc_name;     /* mmcblk: ID_NAME */
	char *mmc_serial;   /* mmcblk: ID_SERIAL */
	char *path;         /* ID_PATH */
	char *path_ata_compat; /* ID_PATH_ATA_COMPAT */
	char *diskseq;      /* diskseq attribute */
	const char *source; /* where the ATA identity came from (debug) */
};
void ap_identity_clear(struct ap_identity *id);

/* Fill @id for the whole disk @disk.  Returns 0 or -errno (-ENOMEM only). */
int ap_identity_for_disk(struct udev_device *disk, struct ap_identity *id);

/*
 * udev's path_id for @dev, a disk or any device above one (a SCSI device,
 * a virtio device, an NVMe namespace): ID_PATH and ID_PATH_ATA_COMPAT, or
 * NULL where path_id gives none.  Returns 0 or -ENOMEM.
 */
int ap_path_id(struct udev_device *dev, char **ret_path, char **ret_compat);

/* ATA IDENTIFY data -> ata_id's ID_SERIAL and ID_WWN_WITH_EXTENSION. */
int ap_ata_identity_from_words(const uint16_t words[256], char **ret_serial, char **ret_wwn);
/* The "id" attribute of /sys/class/ata_device/devX.Y (hex words). */
int ap_ata_parse_sysfs_id(const char *text, uint16_t words[256]);
/* HDIO_GET_IDENTITY-style strings (already in character order). */
int ap_ata_identity_from_strings(const char *model40, const char *serial20, char **ret_serial);

/*
 * scsi_id's answer from raw VPD pages (header included, as sysfs
 * vpd_pg83/vpd_pg80 hold them); @vendor/@model are the INQUIRY strings.
 * ret_serial is ID_SERIAL (cleaned), ret_wwn ID_WWN_WITH_EXTENSION or
 * NULL.  Returns 0, -ENODATA when the page gives no identifier, -ENOMEM.
 */
int ap_scsi_id_from_pg83(const uint8_t *pg, size_t len, const char *vendor, const char *model,
			 char **ret_serial, char **ret_wwn);
int ap_scsi_id_from_pg80(const uint8_t *pg, size_t len, const char *vendor, const char *model,
			 char **ret_serial);
/* The T10 designator of an ATA disk behind libata's SAT (ATA + model + serial). */
int ap_ata_identity_from_pg83(const uint8_t *pg, size_t len, char **ret_serial, char **ret_wwn);

/*
 * The identity of @disk from the cache (keyed by device number, syspath
 * and diskseq), or computed by ap_identity_for_disk() outside the cache
 * lock and cached.  *ret is the caller's copy.  0 or -errno (-ENOMEM).
 */
int ap_identity_get(struct udev_device *disk, struct ap_identity *ret);

/* Forget cached disk identities (tests; a disk that was replaced). */
void ap_identity_cache_flush(void);

#endif /* ASYNCPROBE_PROBE_H */
