/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * udev's string cleaning and encoding (udev-string.c), a leaf both
 * identity.c (ata_id/scsi_id/usb_id values, $attr{} values) and naming.c
 * (SYMLINK+= steps) use: the whitespace step, the replace step, udev's
 * valid-character test, $attr{} cleaning, and blkid_encode_string() as
 * udev's blkid builtin calls it.  See shared/docs/udev-naming.md.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <blkid.h>

#include "base/base.h"

int ap_utf8_encoded_valid_unichar(const char *str)
{
	uint32_t cp;
	size_t len = ap_utf8_decode(str, &cp);

	/* udev also refuses the non-characters */
	if (!len || ap_unichar_is_noncharacter(cp))
		return -EINVAL;
	return (int)len;
}

size_t ap_udev_replace_whitespace(const char *str, char *to, size_t len)
{
	bool is_space = false;
	size_t i, j;

	/* udev skips only these four as leading whitespace */
	i = strspn(str, " \t\n\r");
	for (j = 0; j < len && i < len && str[i] != '\0'; i++) {
		if (isspace((unsigned char)str[i])) {
			is_space = true;
			continue;
		}
		if (is_space) {
			if (j + 1 >= len)
				break;
			to[j++] = '_';
			is_space = false;
		}
		to[j++] = str[i];
	}
	to[j] = '\0';
	return j;
}

static bool allowed_char(char c, const char *allow)
{
	if ((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))
		return true;
	if (c != '\0' && strchr("#+-.:=@_", c))
		return true;
	return allow && c != '\0' && strchr(allow, c);
}

size_t ap_udev_replace_chars(char *str, const char *allow)
{
	size_t i = 0, replaced = 0;

	while (str[i] != '\0') {
		int len;

		if (allowed_char(str[i], allow)) {
			i++;
			continue;
		}
		/* "\x" is kept: it is how encoded values spell a byte */
		if (str[i] == '\\' && str[i + 1] == 'x') {
			i += 2;
			continue;
		}
		len = ap_utf8_encoded_valid_unichar(str + i);
		if (len > 1) {
			i += (size_t)len;
			continue;
		}
		if (isspace((unsigned char)str[i]) && allow && strchr(allow, ' ')) {
			str[i] = ' ';
			i++;
			replaced++;
			continue;
		}
		str[i] = '_';
		i++;
		replaced++;
	}
	return replaced;
}

char *ap_udev_attr_clean(const char *value)
{
	char *s;
	size_t n;

	/* udev copies into a UDEV_NAME_SIZE (512) buffer first */
	n = strnlen(value, 511);
	s = strndup(value, n);
	if (!s)
		return NULL;
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	ap_udev_replace_chars(s, "/ $%?,");
	return s;
}

char *ap_blkid_encode(const char *raw, bool after_safe)
{
	char s[257];

	memset(s, 0, sizeof(s));
	if (after_safe)
		blkid_safe_string(raw, s, 256);
	/* the return value is ignored by udev as well: see the header */
	(void)blkid_encode_string(raw, s, 256);
	s[256] = '\0';
	return strdup(s);
}
