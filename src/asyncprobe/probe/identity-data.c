/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The byte-level parsers behind by-id names: ATA IDENTIFY words and strings,
 * the T10 designator libata's SAT puts in VPD page 0x83, and scsi_id's
 * reading of VPD pages 0x83 and 0x80.  Pure functions of their input,
 * exported and tested on their own (tests/naming, tests/fuzz); identity.c
 * feeds them from sysfs and SG_IO.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>



#include "base/base.h"
#include "probe/probe.h"

#include "internal.h"

/* ------------------------------------------------------------- ATA */

static int ata_serial_join(const char *model, const char *serial, char **ret)
{
	char *s;

	if (serial[0] != '\0') {
		if (asprintf(&s, "%s_%s", model, serial) < 0)
			return -ENOMEM;
	} else {
		s = strdup(model);
		if (!s)
			return -ENOMEM;
	}
	*ret = s;
	return 0;
}

int ap_ata_identity_from_strings(const char *model40, const char *serial20, char **ret_serial)
{
	_cleanup_free_ char *model = NULL, *serial = NULL;

	model = probe_clean_id_string(model40, 40);
	serial = probe_clean_id_string(serial20, 20);
	if (!model || !serial)
		return -ENOMEM;
	if (model[0] == '\0' && serial[0] == '\0')
		return -ENODATA;
	return ata_serial_join(model, serial, ret_serial);
}

/* IDENTIFY strings: two characters per word, the high byte first */
static void ata_words_string(const uint16_t *w, unsigned first, char *dest, size_t len)
{
	for (size_t i = 0; i < len / 2; i++) {
		dest[2 * i] = (char)(w[first + i] >> 8);
		dest[2 * i + 1] = (char)(w[first + i] & 0xff);
	}
	dest[len] = '\0';
}

int ap_ata_identity_from_words(const uint16_t words[256], char **ret_serial, char **ret_wwn)
{
	char model[41], serial[21];
	char *wwn = NULL;
	int r;

	ata_words_string(words, 27, model, 40);
	ata_words_string(words, 10, serial, 20);
	r = ap_ata_identity_from_strings(model, serial, ret_serial);
	if (r < 0)
		return r;
	/* words 108-111: an NAA 5 (IEEE registered) WWN, nothing else */
	if (ret_wwn) {
		if ((words[108] & 0xf000) == 0x5000) {
			uint64_t v = ((uint64_t)words[108] << 48) | ((uint64_t)words[109] << 32) |
				     ((uint64_t)words[110] << 16) | words[111];
			if (asprintf(&wwn, "0x%" PRIx64, v) < 0) {
				free(*ret_serial);
				*ret_serial = NULL;
				return -ENOMEM;
			}
		}
		*ret_wwn = wwn;
	}
	return 0;
}

int ap_ata_parse_sysfs_id(const char *text, uint16_t words[256])
{
	const char *p = text;
	unsigned n = 0;

	while (n < 256) {
		char *end;
		unsigned long v;

		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		errno = 0;
		v = strtoul(p, &end, 16);
		if (end == p || errno || v > 0xffff)
			return -EINVAL;
		words[n++] = (uint16_t)v;
		p = end;
	}
	return n == 256 ? 0 : -EINVAL;
}


/* Model and serial from the T10 vendor designator "ATA     " + model + serial. */
int ap_ata_identity_from_pg83(const uint8_t *pg, size_t len, char **ret_serial, char **ret_wwn)
{
	size_t total, j;
	char *wwn = NULL, *serial = NULL;

	if (len < 4 || pg[1] != 0x83)
		return -ENODATA;
	total = ((size_t)pg[2] << 8 | pg[3]) + 4;
	if (total > len)
		total = len;
	for (j = 4; j + 4 <= total; j += 4 + (size_t)pg[j + 3]) {
		const uint8_t *d = pg + j;
		size_t dlen = d[3];

		if (j + 4 + dlen > total)
			break;
		if ((d[1] & 0x30) != 0)  /* not the logical unit */
			continue;
		if ((d[1] & 0x0f) == 1 && dlen >= 8 + 40 + 20 && !serial &&
		    memcmp(d + 4, "ATA     ", 8) == 0) {
			char model[41], ser[21];
			int r;

			memcpy(model, d + 12, 40);
			model[40] = '\0';
			memcpy(ser, d + 52, 20);
			ser[20] = '\0';
			r = ap_ata_identity_from_strings(model, ser, &serial);
			if (r < 0 && r != -ENODATA) {
				free(wwn);
				return r;
			}
		} else if ((d[1] & 0x0f) == 3 && (d[0] & 0x0f) == 1 && dlen == 8 &&
			   (d[4] >> 4) == 5 && !wwn) {
			/* libata's NAA designator is IDENTIFY words 108-111 */
			if (asprintf(&wwn, "0x%02x%02x%02x%02x%02x%02x%02x%02x", d[4], d[5], d[6],
				     d[7], d[8], d[9], d[10], d[11]) < 0) {
				free(serial);
				return -ENOMEM;
			}
		}
	}
	if (!serial) {
		free(wwn);
		return -ENODATA;
	}
	*ret_serial = serial;
	if (ret_wwn)
		*ret_wwn = wwn;
	else
		free(wwn);
	return 0;
}

/* ------------------------------------------------------------- SCSI */

enum {
	ID_VENDOR_SPECIFIC = 0,
	ID_T10_VENDOR = 1,
	ID_EUI_64 = 2,
	ID_NAA = 3,
};
enum { CS_BINARY = 1, CS_ASCII = 2 };
enum { NAA_DONT_CARE = 0xff, NAA_IEEE_REG = 5, NAA_IEEE_REG_EXT = 6 };

/* scsi_id's preference order */
static const struct {
	uint8_t type, naa, codeset;
} id_search[] = {
	{ ID_NAA, NAA_IEEE_REG_EXT, CS_BINARY },
	{ ID_NAA, NAA_IEEE_REG_EXT, CS_ASCII },
	{ ID_NAA, NAA_IEEE_REG, CS_BINARY },
	{ ID_NAA, NAA_IEEE_REG, CS_ASCII },
	{ ID_NAA, NAA_DONT_CARE, CS_BINARY },
	{ ID_NAA, NAA_DONT_CARE, CS_ASCII },
	{ ID_EUI_64, NAA_DONT_CARE, CS_BINARY },
	{ ID_EUI_64, NAA_DONT_CARE, CS_ASCII },
	{ ID_T10_VENDOR, NAA_DONT_CARE, CS_BINARY },
	{ ID_T10_VENDOR, NAA_DONT_CARE, CS_ASCII },
	{ ID_VENDOR_SPECIFIC, NAA_DONT_CARE, CS_BINARY },
	{ ID_VENDOR_SPECIFIC, NAA_DONT_CARE, CS_ASCII },
};

static const char hexdig[] = "0123456789abcdef";

/* vendor(8) + model(16), padded with spaces as the INQUIRY data is */
static void vendor_model(char *out, const char *vendor, const char *model)
{
	snprintf(out, 25, "%-8.8s%-16.16s", vendor ? vendor : "", model ? model : "");
}

/* ID_SERIAL from scsi_id's raw serial: whitespace step, replace step */
static int scsi_finish(const char *raw, char **ret_serial)
{
	char *s = probe_clean_id_string(raw, strlen(raw));

	if (!s)
		return -ENOMEM;
	if (s[0] == '\0') {
		free(s);
		return -ENODATA;
	}
	*ret_serial = s;
	return 0;
}

int ap_scsi_id_from_pg83(const uint8_t *pg, size_t len, const char *vendor, const char *model,
			 char **ret_serial, char **ret_wwn)
{
	size_t total;

	if (len < 4 || pg[1] != 0x83)
		return -ENODATA;
	total = ((size_t)pg[2] << 8 | pg[3]) + 4;
	if (total > len)
		total = len;

	if (len > 6 && pg[6] != 0) {
		/* SCSI-2 style answer (old EMC Symmetrix): a bare binary WWN */
		char raw[2 + 2 * 255 + 1];
		size_t j = 0;

		raw[j++] = hexdig[ID_NAA];
		for (size_t i = 0; i < pg[3] && 4 + i < len; i++) {
			raw[j++] = hexdig[pg[4 + i] >> 4];
			raw[j++] = hexdig[pg[4 + i] & 0xf];
		}
		raw[j] = '\0';
		if (ret_wwn)
			*ret_wwn = NULL;
		return scsi_finish(raw, ret_serial);
	}

	for (size_t k = 0; k < sizeof(id_search) / sizeof(id_search[0]); k++) {
		for (size_t j = 4; j + 4 <= total; j += 4 + (size_t)pg[j + 3]) {
			const uint8_t *d = pg + j;
			size_t dlen = d[3];
			char raw[1 + 24 + 2 * 255 + 1];
			size_t n = 0, start;
			int r;

			if (j + 4 + dlen > total)
				break;
			if ((d[1] & 0x30) != 0)
				continue;  /* associated with a port, not the unit */
			if ((d[1] & 0x0f) != id_search[k].type)
				continue;
			if (id_search[k].naa != NAA_DONT_CARE && id_search[k].naa != (d[4] >> 4))
				continue;
			if ((d[0] & 0x0f) != id_search[k].codeset)
				continue;

			raw[n++] = hexdig[id_search[k].type];
			if (id_search[k].type == ID_VENDOR_SPECIFIC) {
				vendor_model(raw + n, vendor, model);
				n += strlen(raw + n);
			}
			start = n;
			for (size_t i = 0; i < dlen; i++) {
				if (id_search[k].codeset == CS_ASCII) {
					raw[n++] = (char)d[4 + i];
				} else {
					raw[n++] = hexdig[d[4 + i] >> 4];
					raw[n++] = hexdig[d[4 + i] & 0xf];
				}
			}
			raw[n] = '\0';

			r = scsi_finish(raw, ret_serial);
			if (r < 0)
				return r;
			if (ret_wwn) {
				*ret_wwn = NULL;
				if (id_search[k].type == ID_NAA) {
					/* ID_WWN is 16 digits; the rest (NAA 6) is the extension */
					char w[2 + 32 + 1];

					snprintf(w, sizeof(w), "0x%.32s", raw + start);
					*ret_wwn = strdup(w);
					if (!*ret_wwn) {
						free(*ret_serial);
						*ret_serial = NULL;
						return -ENOMEM;
					}
				}
			}
			return 0;
		}
	}
	return -ENODATA;
}

int ap_scsi_id_from_pg80(const uint8_t *pg, size_t len, const char *vendor, const char *model,
			 char **ret_serial)
{
	char raw[1 + 24 + 255 + 1];
	size_t n = 0, slen;

	if (len < 4 || pg[1] != 0x80)
		return -ENODATA;
	slen = pg[3];
	if (4 + slen > len)
		slen = len - 4;
	raw[n++] = 'S';
	vendor_model(raw + n, vendor, model);
	n += strlen(raw + n);
	for (size_t i = 0; i < slen; i++)
		raw[n++] = (char)pg[4 + i];
	raw[n] = '\0';
	/* a NUL inside the serial ends it, as in scsi_id's C strings */
	return scsi_finish(raw, ret_serial);
}
