/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The shared helpers: util.c (prefixes, milliseconds, peak RSS, output
 * files that report a failed write), utf8.c (the one UTF-8 decoder) and
 * json.c (the one JSON string escaper of the manifest and the trace).
 * JSON output is checked byte for byte against the rules in base.h.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"

/* What ap_json_string() writes for @s, as a new string. */
static char *json_of(const char *s)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	assert_non_null(f);
	ap_json_string(f, s);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void check_json(const char *in, const char *want)
{
	char *got = json_of(in);

	assert_string_equal(got, want);
	free(got);
}

static void test_json_strings(void **state)
{
	(void)state;
	check_json(NULL, "null");
	check_json("", "\"\"");
	check_json("plain sda1", "\"plain sda1\"");
	check_json("q\"b\\", "\"q\\\"b\\\\\"");
	/* every control character and DEL as \u00XX, never raw */
	check_json("a\nb\tc\r\x01\x1f\x7f", "\"a\\u000ab\\u0009c\\u000d\\u0001\\u001f\\u007f\"");
	/* valid UTF-8 is copied, 2, 3 and 4 bytes */
	check_json("caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80\"");
	/* a stray byte is the text \xNN, escaped for JSON */
	check_json("a\xff" "b", "\"a\\\\xffb\"");
	check_json("\xc3(", "\"\\\\xc3(\"");                  /* cut sequence */
	check_json("\xc0\xaf", "\"\\\\xc0\\\\xaf\"");           /* overlong '/' */
	check_json("\xed\xa0\x80", "\"\\\\xed\\\\xa0\\\\x80\"");  /* UTF-16 surrogate */
	check_json("\xf4\x90\x80\x80", "\"\\\\xf4\\\\x90\\\\x80\\\\x80\"");  /* past U+10FFFF */
	check_json("\xe2\x82", "\"\\\\xe2\\\\x82\"");           /* cut by the end */
}

static void test_json_chars(void **state)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	(void)state;
	assert_non_null(f);
	ap_json_chars(f, NULL);         /* nothing */
	ap_json_chars(f, "x\"\n\xfe");
	assert_int_equal(fclose(f), 0);
	assert_string_equal(buf, "x\\\"\\u000a\\\\xfe");
	free(buf);
}

static void test_utf8_decode(void **state)
{
	uint32_t cp = 0;

	(void)state;
	assert_int_equal(ap_utf8_decode("A", &cp), 1);
	assert_int_equal(cp, 'A');
	assert_int_equal(ap_utf8_decode("", &cp), 1);
	assert_int_equal(cp, 0);
	assert_int_equal(ap_utf8_decode("\xc3\xa9", &cp), 2);
	assert_int_equal(cp, 0xe9);
	assert_int_equal(ap_utf8_decode("\xe2\x82\xac", &cp), 3);
	assert_int_equal(cp, 0x20ac);
	assert_int_equal(ap_utf8_decode("\xf4\x8f\xbf\xbf", &cp), 4);
	assert_int_equal(cp, 0x10ffff);
	assert_int_equal(ap_utf8_decode("\xef\xbf\xbe", &cp), 3);    /* a non-character is UTF-8 */
	assert_true(ap_unichar_is_noncharacter(cp));
	assert_true(ap_unichar_is_noncharacter(0xfdd0));
	assert_true(ap_unichar_is_noncharacter(0x10ffff));
	assert_false(ap_unichar_is_noncharacter(0xfffd));
	assert_int_equal(ap_utf8_decode("\x80", &cp), 0);
	assert_int_equal(ap_utf8_decode("\xc1\xbf", &cp), 0);
	assert_int_equal(ap_utf8_decode("\xe0\x9f\xbf", &cp), 0);
	assert_int_equal(ap_utf8_decode("\xed\xbf\xbf", &cp), 0);
	assert_int_equal(ap_utf8_decode("\xf0\x8f\xbf\xbf", &cp), 0);
	assert_int_equal(ap_utf8_decode("\xf5\x80\x80\x80", &cp), 0);
	assert_int_equal(ap_utf8_decode("\xf8\x88\x80\x80\x80", &cp), 0);
	assert_int_equal(ap_utf8_decode("\xe2\x82", &cp), 0);
}

static void test_prefix_and_time(void **state)
{
	uint64_t t0;

	(void)state;
	assert_true(ap_startswith("nvme0n1", "nvme"));
	assert_true(ap_startswith("sd", "sd"));
	assert_true(ap_startswith("x", ""));
	assert_false(ap_startswith("s", "sd"));
	assert_false(ap_startswith(NULL, "sd"));
	assert_true(ap_ms_between(1000000, 3500000) == 2.5);
	assert_true(ap_ms_between(3500000, 1000000) == 0.0);
	t0 = ap_now_ns();
	assert_true(ap_now_ns() >= t0);
	assert_true(ap_ms_since(t0) < 60000);
	assert_int_equal(ap_ms_since(t0 + 60000000000ULL), 0);     /* the future: 0 */
}

static void test_peak_rss(void **state)
{
	long kib = ap_peak_rss_kib();
	char *big;

	(void)state;
	assert_true(kib > 0);
	/* touching 8 MiB more raises the high-water mark */
	big = malloc(8 << 20);
	assert_non_null(big);
	memset(big, 1, 8 << 20);
	assert_true(ap_peak_rss_kib() >= kib + 4096);
	free(big);
}

static void test_out_files(void **state)
{
	char path[] = "/tmp/test-util.XXXXXX";
	int err = 0, fd;
	FILE *f;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	f = ap_out_open(path, &err);
	assert_non_null(f);
	fputs("ok\n", f);
	assert_int_equal(ap_out_close(f), 0);
	unlink(path);

	assert_null(ap_out_open("/nonexistent-dir/x", &err));
	assert_int_equal(err, -ENOENT);

	/* a full disk: the write only fails when flushed, and that is reported */
	f = ap_out_open("/dev/full", &err);
	if (!f)
		skip();
	fputs("lost\n", f);
	assert_int_equal(ap_out_close(f), -ENOSPC);
}

/* ap_escape(): the three renderings the log, the link registry and the
 * claims rules use, cut short only between whole escapes. */
static void test_escape(void **state)
{
	char buf[64], small[12];
	char *mem = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_string_equal(ap_escape("a\tb\x7f\xc3\xa9 c\\", buf, sizeof(buf), AP_ESCAPE_CONTROLS),
			    "a\\x09b\\x7f\xc3\xa9 c\\");
	assert_string_equal(ap_escape("a b\xc3\xa9\\", buf, sizeof(buf), AP_ESCAPE_UDEV),
			    "a\\x20b\\xc3\\xa9\\x5c");
	assert_string_equal(ap_escape("a\\b", buf, sizeof(buf), AP_ESCAPE_UDEV), "a\\b");
	/* 12 bytes: a byte goes in while 5 are left (an escape and the NUL), then "..." */
	assert_string_equal(ap_escape("abcdefghijkl", small, sizeof(small), AP_ESCAPE_ELLIPSIS),
			    "abcdefg...");
	assert_string_equal(ap_escape("abcdefghijkl", small, sizeof(small), AP_ESCAPE_CONTROLS),
			    "abcdefg");
	/* an escape is written whole or not at all; no "..." where it has no room */
	assert_string_equal(ap_escape("abcdef\x01zzz", small, sizeof(small), AP_ESCAPE_ELLIPSIS),
			    "abcdef\\x01");
	f = open_memstream(&mem, &len);
	assert_non_null(f);
	ap_escape_file(f, "x y\\", AP_ESCAPE_UDEV);
	fclose(f);
	assert_string_equal(mem, "x\\x20y\\x5c");
	free(mem);
}

static void test_log_target(void **state)
{
	(void)state;
	assert_int_equal(ap_log_resolve_target(AP_LOG_STDERR), AP_LOG_STDERR);
	assert_int_equal(ap_log_resolve_target(AP_LOG_KMSG), AP_LOG_KMSG);
	/* not PID 1; kmsg only where an initramfs says so */
	assert_int_equal(ap_log_resolve_target(AP_LOG_AUTO),
			 access("/etc/initrd-release", F_OK) == 0 ? AP_LOG_KMSG : AP_LOG_STDERR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_strings),
		cmocka_unit_test(test_json_chars),
		cmocka_unit_test(test_utf8_decode),
		cmocka_unit_test(test_prefix_and_time),
		cmocka_unit_test(test_peak_rss),
		cmocka_unit_test(test_out_files),
		cmocka_unit_test(test_log_target),
		cmocka_unit_test(test_escape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
