/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * JSON output helpers (see base.h for the string rules): one escaper for
 * every JSON file asyncprobe writes.
 */
#include "base/base.h"

void ap_json_chars(FILE *f, const char *str)
{
	const char *s = str ? str : "";
	uint32_t cp;
	size_t len;

	while (*s) {
		len = ap_utf8_decode(s, &cp);
		if (!len) {
			fprintf(f, "\\\\x%02x", (unsigned char)*s);
			s++;
			continue;
		}
		if (cp == '"' || cp == '\\')
			fprintf(f, "\\%c", (char)cp);
		else if (cp < 0x20 || cp == 0x7f)
			fprintf(f, "\\u%04x", (unsigned int)cp);
		else
			fwrite(s, 1, len, f);
		s += len;
	}
}

void ap_json_string(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	ap_json_chars(f, s);
	fputc('"', f);
}
