/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * UTF-8 decoding (see base.h): one strict decoder, so that the manifest,
 * the trace writers and the udev string cleaning agree on what is text and
 * what is a stray byte.
 */
#include "base/base.h"

size_t ap_utf8_decode(const char *str, uint32_t *ret_cp)
{
	const unsigned char *s = (const unsigned char *)str;
	uint32_t cp;
	size_t len, i;

	if (s[0] < 0x80) {
		*ret_cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;       /* a continuation byte, 0xc0/0xc1 (overlong), or past U+10FFFF */
	}
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)      /* also stops at the NUL */
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	*ret_cp = cp;
	return len;
}

bool ap_unichar_is_noncharacter(uint32_t cp)
{
	return (cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) == 0xfffe;
}
