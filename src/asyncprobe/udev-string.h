/* SPDX-License-Identifier: GPL-2.0-or-later */
/* udev's string cleaning and encoding (udev-string.c): a leaf, it calls no other asyncprobe file but utf8.c. */
#ifndef ASYNCPROBE_UDEV_STRING_H
#define ASYNCPROBE_UDEV_STRING_H

#include <stdbool.h>
#include <stddef.h>

/*
 * udev's whitespace step (udev_replace_whitespace): copy at most @len
 * bytes of @str (stopping at NUL) to @to, dropping leading " \t\n\r" and
 * trailing whitespace and turning each inner run of isspace() bytes into
 * one '_'.  @to needs @len + 1 bytes; may equal @str.  Returns the length.
 */
size_t ap_udev_replace_whitespace(const char *str, char *to, size_t len);

/*
 * udev's replace step (udev_replace_chars): in place, every byte outside
 * [0-9A-Za-z#+-.:=@_], @allow, a "\x" pair or a valid multi-byte UTF-8
 * sequence becomes '_' (whitespace becomes ' ' if @allow has a space).
 * Returns the number of bytes replaced.
 */
size_t ap_udev_replace_chars(char *str, const char *allow);

/* Length (1-6) of the valid UTF-8 sequence at @s by udev's rules, or -EINVAL. */
int ap_utf8_encoded_valid_unichar(const char *s);

/*
 * A $attr{} value as udev substitutes it: trailing whitespace removed, then
 * the replace step with " /$%?," also allowed.  Returns a new string or NULL.
 */
char *ap_udev_attr_clean(const char *value);

/*
 * blkid_encode_string() into a 256-byte buffer as udev's blkid builtin
 * does (ID_FS_UUID_ENC, ID_FS_LABEL_ENC, ID_PART_ENTRY_NAME).  On overflow
 * libblkid stops early; like udev, whatever the buffer then holds is used:
 * for labels and UUIDs that is the blkid_safe_string() text udev wrote
 * there first (@after_safe = true), otherwise the zeroed remainder.
 * Returns a new string or NULL.
 */
char *ap_blkid_encode(const char *raw, bool after_safe);

#endif
