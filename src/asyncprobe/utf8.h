/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one UTF-8 decoder (utf8.c), for the JSON and XML writers and for
 * udev's replace step.
 */
#ifndef ASYNCPROBE_UTF8_H
#define ASYNCPROBE_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The UTF-8 sequence at @s: its length (1-4) with the code point in
 * *ret_cp, or 0 when the byte at @s does not start a valid sequence
 * (shortest form only, no UTF-16 surrogates, nothing above U+10FFFF; a
 * sequence cut short by the terminating NUL is invalid).  An ASCII byte,
 * NUL included, is a sequence of length 1.
 */
size_t ap_utf8_decode(const char *s, uint32_t *ret_cp);

/* U+FDD0..U+FDEF and every U+xxFFFE, U+xxFFFF: valid, but not for interchange. */
bool ap_unichar_is_noncharacter(uint32_t cp);

#endif
