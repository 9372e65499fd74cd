/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * By-id identity data of a whole disk (identity.c): what ata_id, scsi_id,
 * usb_id, path_id and the nvme/virtio rules give it, from sysfs VPD pages
 * and ATA IDENTIFY via SG_IO, and the cache that lets its partitions reuse
 * it.  naming.c turns it into link names.
 */
#ifndef ASYNCPROBE_IDENTITY_H
#define ASYNCPROBE_IDENTITY_H

#include <stddef.h>
#include <stdint.h>

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

#endif
