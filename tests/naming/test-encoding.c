/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * udev's string cleaning and blkid's encoding, byte by byte.  The expected
 * values are derived from the rules in shared/docs/udev-naming.md:
 *
 *   allowed set     [0-9A-Za-z] and "#+-.:=@_", valid multi-byte UTF-8,
 *                   and a "\x" pair
 *   replace step    anything else becomes '_' (whitespace becomes ' '
 *                   where a space is allowed)
 *   blkid encoding  the allowed set raw, every other byte "\x%02x"
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "probe/probe.h"
#include "links/links.h"

static bool in_allowed_set(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c && strchr("#+-.:=@_", c));
}

static bool is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* every single byte through the replace step, with each allow list udev uses */
static void test_replace_every_byte(void **state)
{
	static const char *const allows[] = { NULL, "/ $%?,", "/ ", "/" };

	for (size_t a = 0; a < sizeof(allows) / sizeof(allows[0]); a++) {
		for (unsigned c = 1; c < 256; c++) {
			char s[4] = { (char)c, 'y', 0, 0 };
			char expect;
			size_t n;

			if (in_allowed_set((unsigned char)c) || (allows[a] && strchr(allows[a], (int)c)))
				expect = (char)c;
			else if (is_ws((unsigned char)c) && allows[a] && strchr(allows[a], ' '))
				expect = ' ';
			else if (c == '\\')
				expect = '_'; /* a backslash not followed by 'x' */
			else
				expect = '_'; /* includes every lone byte >= 0x80 */
			n = ap_udev_replace_chars(s, allows[a]);
			if (s[0] != expect)
				fail_msg("byte 0x%02x allow \"%s\": got 0x%02x, want 0x%02x", c,
					 allows[a] ? allows[a] : "", (unsigned char)s[0], (unsigned char)expect);
			assert_int_equal(n, expect == (char)c ? 0 : 1);
			assert_int_equal(s[1], 'y');
		}
	}
}

static void check_replace(const char *in, const char *allow, const char *want)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "%s", in);
	ap_udev_replace_chars(buf, allow);
	if (strcmp(buf, want) != 0)
		fail_msg("replace(\"%s\"): got \"%s\", want \"%s\"", in, buf, want);
}

static void test_replace_sequences(void **state)
{
	/* "\x" pairs survive, the two bytes after them are judged on their own */
	check_replace("a\\x20b", NULL, "a\\x20b");
	check_replace("a\\x!!", NULL, "a\\x__");
	check_replace("a\\y", NULL, "a_y");
	check_replace("end\\", NULL, "end_");
	/* valid UTF-8 is kept */
	check_replace("caf\xc3\xa9", NULL, "caf\xc3\xa9");
	check_replace("\xe2\x82\xac", NULL, "\xe2\x82\xac");
	check_replace("\xf0\x9f\x98\x80", NULL, "\xf0\x9f\x98\x80");
	/* invalid: lone lead, lone continuation, overlong, surrogate, too big, non-characters */
	check_replace("\xc3", NULL, "_");
	check_replace("\xa9", NULL, "_");
	check_replace("\xc0\xaf", NULL, "__");
	check_replace("\xed\xa0\x80", NULL, "___");
	check_replace("\xf4\x90\x80\x80", NULL, "____");
	check_replace("\xef\xbf\xbe", NULL, "___");
	check_replace("\xef\xb7\x90", NULL, "___");
	check_replace("\xc3\xc3\xa9", NULL, "_\xc3\xa9");
	/* five- and six-byte forms are outside Unicode */
	check_replace("\xf8\x88\x80\x80\x80", NULL, "_____");
	check_replace("a b/c", "/ ", "a b/c");
	check_replace("a\tb", "/ ", "a b");
	check_replace("a b/c", "/", "a_b/c");
	check_replace("a b/c", NULL, "a_b_c");
}

static void check_ws(const char *in, size_t len, const char *want)
{
	char buf[256];

	ap_udev_replace_whitespace(in, buf, len);
	if (strcmp(buf, want) != 0)
		fail_msg("whitespace(\"%s\", %zu): got \"%s\", want \"%s\"", in, len, buf, want);
}

static void test_whitespace(void **state)
{
	check_ws("  QEMU HARDDISK   ", 40, "QEMU_HARDDISK");
	check_ws("a  \t b", 40, "a_b");
	check_ws("", 40, "");
	check_ws("    ", 40, "");
	check_ws("abc", 2, "ab");
	check_ws("a\nb\r\n", 40, "a_b");
	/* udev's leading skip covers " \t\n\r" only: a leading \v is an inner run */
	check_ws("\vA", 40, "_A");
	check_ws("QM00005             ", 20, "QM00005");

	/* every byte as a separator between two letters */
	for (unsigned c = 1; c < 256; c++) {
		char in[4] = { 'a', (char)c, 'b', 0 }, want[4];

		if (is_ws((unsigned char)c))
			snprintf(want, sizeof(want), "a_b");
		else
			snprintf(want, sizeof(want), "%s", in);
		check_ws(in, 40, want);
	}
}

static void test_attr_clean(void **state)
{
	char *s;

	s = ap_udev_attr_clean("Samsung SSD 980 PRO 1TB                 \n");
	assert_string_equal(s, "Samsung SSD 980 PRO 1TB");
	free(s);
	s = ap_udev_attr_clean("a/b $%?,!\\(x)");
	assert_string_equal(s, "a/b $%?,___x_");
	free(s);
	s = ap_udev_attr_clean("");
	assert_string_equal(s, "");
	free(s);
}

/* blkid encoding of every single byte */
static void test_blkid_every_byte(void **state)
{
	for (unsigned c = 1; c < 256; c++) {
		char in[2] = { (char)c, 0 }, want[8];
		char *got;

		if (in_allowed_set((unsigned char)c))
			snprintf(want, sizeof(want), "%c", c);
		else
			snprintf(want, sizeof(want), "\\x%02x", c);
		got = ap_blkid_encode(in, true);
		assert_non_null(got);
		if (strcmp(got, want) != 0)
			fail_msg("blkid encode 0x%02x: got \"%s\", want \"%s\"", c, got, want);
		free(got);
	}
}

/*
 * The UTF-8 validity rule udev applies in its replace step must be the
 * one libblkid applies when encoding: otherwise a by-label name would be
 * changed a second time by the SYMLINK+= step.  Checked on every two-byte
 * and every three-byte sequence with an E0-EF lead, and a sweep of
 * four-byte ones.
 */
static void check_same(const unsigned char *seq, size_t len)
{
	char in[8] = { 0 };
	char *enc;
	int v;
	bool kept;

	memcpy(in, seq, len);
	enc = ap_blkid_encode(in, false);
	assert_non_null(enc);
	v = ap_utf8_encoded_valid_unichar(in);
	kept = strncmp(enc, in, len) == 0;
	/*
	 * One known difference: libblkid accepts the non-characters
	 * U+nFFFE, systemd does not, so udev's SYMLINK+= step turns each of
	 * their bytes into '_' after encoding (test-names checks that).
	 */
	if (kept && v < 0 && len >= 3 && (seq[len - 2] & 0x3f) == 0x3f && (seq[len - 1] & 0x3f) == 0x3e &&
	    (len == 3 ? seq[0] == 0xef : (seq[1] & 0x0f) == 0x0f)) {
		free(enc);
		return;
	}
	if ((v == (int)len) != kept)
		fail_msg("sequence %02x %02x %02x %02x: udev says %d, blkid %s it", seq[0], seq[1],
			 len > 2 ? seq[2] : 0, len > 3 ? seq[3] : 0, v, kept ? "keeps" : "escapes");
	free(enc);
}

static void test_utf8_agrees_with_blkid(void **state)
{
	unsigned char s[4];

	for (unsigned a = 0xc0; a < 0x100; a++)
		for (unsigned b = 1; b < 0x100; b++) {
			s[0] = (unsigned char)a;
			s[1] = (unsigned char)b;
			check_same(s, 2);
		}
	for (unsigned a = 0xe0; a < 0xf0; a++)
		for (unsigned b = 0x70; b < 0xd0; b++)
			for (unsigned c = 0x70; c < 0xd0; c++) {
				s[0] = (unsigned char)a;
				s[1] = (unsigned char)b;
				s[2] = (unsigned char)c;
				check_same(s, 3);
			}
	for (unsigned a = 0xf0; a < 0xf8; a++)
		for (unsigned b = 0x80; b < 0xc0; b += 3)
			for (unsigned c = 0x7f; c < 0xc1; c += 7)
				for (unsigned d = 0x7f; d < 0xc1; d += 5) {
					s[0] = (unsigned char)a;
					s[1] = (unsigned char)b;
					s[2] = (unsigned char)c;
					s[3] = (unsigned char)d;
					check_same(s, 4);
				}
}

static void check_enc(const char *in, const char *want)
{
	char *got = ap_blkid_encode(in, true);

	assert_non_null(got);
	if (strcmp(got, want) != 0)
		fail_msg("encode(\"%s\"): got \"%s\", want \"%s\"", in, got, want);
	free(got);
}

static void test_blkid_strings(void **state)
{
	check_enc("EFI System Partition", "EFI\\x20System\\x20Partition");
	check_enc("../../etc", "..\\x2f..\\x2fetc");
	check_enc("a\\b", "a\\x5cb");
	check_enc(".", ".");
	check_enc("..", "..");
	check_enc("", "");
	check_enc("caf\xc3\xa9 \xff", "caf\xc3\xa9\\x20\\xff");
	check_enc("\x01\x7f", "\\x01\\x7f");
}

/*
 * Labels too long for udev's 256-byte buffer: libblkid stops once fewer
 * than four bytes are left and udev uses the buffer as it is; whatever
 * comes out, it is one path component without '/' or a control byte, or
 * ap_link_name_valid() refuses it.
 */
static void test_blkid_long(void **state)
{
	char in[1025];
	char *got, name[600];

	memset(in, 'a', 1024);
	in[1024] = '\0';
	got = ap_blkid_encode(in, true);
	assert_non_null(got);
	assert_true(strlen(got) <= 255);
	assert_true(strlen(got) >= 252);
	for (size_t i = 0; got[i]; i++)
		assert_int_equal(got[i], 'a');
	free(got);

	for (unsigned c = 1; c < 256; c++) {
		memset(in, (int)c, 1024);
		got = ap_blkid_encode(in, true);
		assert_non_null(got);
		/* libblkid may write one byte past 255 (its last "\\xNN" + NUL) */
		assert_true(strlen(got) <= 256);
		snprintf(name, sizeof(name), "disk/by-label/%s", got);
		if (strchr(got, '/') || strcmp(got, ".") == 0 || strcmp(got, "..") == 0 || !got[0] ||
		    strlen(got) > 255)
			assert_false(ap_link_name_valid(name));
		free(got);
	}
}

static void test_name_valid(void **state)
{
	char longname[400];

	assert_true(ap_link_name_valid("disk/by-label/myroot"));
	assert_true(ap_link_name_valid("disk/by-label/..\\x2f..\\x2fetc"));
	assert_true(ap_link_name_valid("disk/by-id/virtio-ab/cd"));
	assert_true(ap_link_name_valid("disk/by-diskseq/10"));
	assert_true(ap_link_name_valid("disk/by-label/...")); /* an odd but harmless name */
	assert_false(ap_link_name_valid("disk/by-label/."));
	assert_false(ap_link_name_valid("disk/by-label/.."));
	assert_false(ap_link_name_valid("disk/by-label/"));
	assert_false(ap_link_name_valid("disk/by-label/a/../../x"));
	assert_false(ap_link_name_valid("disk/by-id/a//b"));
	assert_false(ap_link_name_valid("disk/by-id/a/"));
	assert_false(ap_link_name_valid("disk/by-label/a\tb"));
	assert_false(ap_link_name_valid("disk/by-label/a\x7f"));
	assert_false(ap_link_name_valid("disk/by-foo/a"));
	assert_false(ap_link_name_valid("disk/a"));
	assert_false(ap_link_name_valid("../etc/passwd"));
	assert_false(ap_link_name_valid("/etc/passwd"));
	assert_false(ap_link_name_valid(""));
	assert_false(ap_link_name_valid(NULL));
	memset(longname, 0, sizeof(longname));
	strcpy(longname, "disk/by-label/");
	memset(longname + strlen(longname), 'x', 256);
	assert_false(ap_link_name_valid(longname));
	longname[strlen("disk/by-label/") + 255] = '\0';
	assert_true(ap_link_name_valid(longname));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replace_every_byte),
		cmocka_unit_test(test_replace_sequences),
		cmocka_unit_test(test_whitespace),
		cmocka_unit_test(test_attr_clean),
		cmocka_unit_test(test_blkid_every_byte),
		cmocka_unit_test(test_utf8_agrees_with_blkid),
		cmocka_unit_test(test_blkid_strings),
		cmocka_unit_test(test_blkid_long),
		cmocka_unit_test(test_name_valid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
