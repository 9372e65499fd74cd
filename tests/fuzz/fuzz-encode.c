/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The link-name encoders: udev's whitespace and replace steps, $attr{}
 * cleaning and blkid_encode_string as udev uses it, on arbitrary bytes
 * (the input up to its first NUL).  Invariants checked:
 *   - the replace step leaves only allowed bytes, "\x", valid UTF-8, or
 *     the extra allowed characters, and never changes the length;
 *   - the whitespace step leaves no blank at all;
 *   - blkid encoding without a prior safe string gives only the allowed
 *     set, "\xhh" and UTF-8 that libblkid accepts (never '/', never a
 *     control byte), at most 256 bytes;
 *   - "disk/by-label/<encoded>" is either refused by ap_link_name_valid()
 *     or is one component that is not "." or "..".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "probe/probe.h"
#include "links/links.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

static bool plain(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c && strchr("#+-.:=@_", c));
}

static void check_replaced(const char *s, const char *allow)
{
	for (size_t i = 0; s[i];) {
		int n;

		if (plain((unsigned char)s[i]) || (allow && strchr(allow, s[i]))) {
			i++;
			continue;
		}
		if (s[i] == '\\' && s[i + 1] == 'x') {
			i += 2;
			continue;
		}
		n = ap_utf8_encoded_valid_unichar(s + i);
		fuzz_assert(n > 1);
		i += (size_t)n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const allows[] = { NULL, "/ $%?,", "/ ", "/" };
	char *in, *buf, *enc, *name;
	size_t len;

	if (size > 4096)
		return 0;
	in = malloc(size + 1);
	if (!in)
		return 0;
	memcpy(in, data, size);
	in[size] = '\0';
	len = strlen(in);
	buf = malloc(len + 1);

	for (size_t a = 0; a < sizeof(allows) / sizeof(allows[0]); a++) {
		memcpy(buf, in, len + 1);
		ap_udev_replace_chars(buf, allows[a]);
		fuzz_assert(strlen(buf) == len);
		check_replaced(buf, allows[a]);
	}

	ap_udev_replace_whitespace(in, buf, len);
	fuzz_assert(strlen(buf) <= len);
	if (buf[0]) {
		size_t n = strlen(buf);

		/* every blank is gone: dropped at the ends, '_' inside */
		for (size_t i = 0; i < n; i++)
			fuzz_assert(!isspace((unsigned char)buf[i]));
	}
	free(buf);

	buf = ap_udev_attr_clean(in);
	fuzz_assert(buf);
	check_replaced(buf, "/ $%?,");
	free(buf);

	enc = ap_blkid_encode(in, false);
	fuzz_assert(enc);
	fuzz_assert(strlen(enc) <= 256);
	fuzz_assert(!strchr(enc, '/'));
	for (size_t i = 0; enc[i]; i++)
		fuzz_assert((unsigned char)enc[i] >= 0x20 && enc[i] != 0x7f);
	free(enc);

	for (int safe = 0; safe < 2; safe++) {
		enc = ap_blkid_encode(in, safe);
		fuzz_assert(enc);
		if (asprintf(&name, "disk/by-label/%s", enc) >= 0) {
			if (ap_link_name_valid(name)) {
				fuzz_assert(!strchr(enc, '/') || safe);
				fuzz_assert(strcmp(enc, ".") != 0 && strcmp(enc, "..") != 0);
				fuzz_assert(strlen(enc) <= 255 && enc[0]);
			}
			free(name);
		}
		free(enc);
	}
	free(in);
	return 0;
}
