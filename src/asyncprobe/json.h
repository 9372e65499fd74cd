/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The small JSON writer (json.c) behind the manifest (manifest.c) and the
 * Chrome trace (trace-chrome.c): string literals straight to a FILE; the
 * numbers are plain printf formats beside them.
 *
 * Strings.  Valid UTF-8 is copied.  '"' and '\' are escaped, control
 * characters (U+0000-U+001F) and DEL become \u00XX.  A byte that is not
 * part of valid UTF-8 (a label in Latin-1, a truncated sequence) cannot be
 * written as itself, since JSON text is Unicode; it becomes the four
 * characters \xNN (in the file: "\\xNN"), the spelling udev and libblkid
 * use for such bytes in link names, so a reader sees which byte it was and
 * no byte is passed off as the character U+00NN.
 */
#ifndef ASYNCPROBE_JSON_H
#define ASYNCPROBE_JSON_H

#include <stdio.h>

/* The inside of a string literal for @s (nothing for NULL). */
void ap_json_chars(FILE *f, const char *s);

/* @s as a string literal, or null for NULL. */
void ap_json_string(FILE *f, const char *s);

#endif
