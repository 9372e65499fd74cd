/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The trace recorder and its writers (src/asyncprobe/trace-*.c).
 *
 * Events are fed through ap_trace_record_event(), the hook libasync calls,
 * in synthetic sequences whose figures are known; real calls go through
 * libasync (with the hook's events once the concurrent core is in; the
 * sequential stub gives none, and the test that needs them says so).  The
 * files are validated by check-trace.py (python3): JSON parsed, slices
 * nesting per track, SVG well-formed with one bar per call in cookie order,
 * labels compared with what hostile bytes must turn into.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "output/output.h"

extern char **environ;

static char tmpdir[] = "/tmp/test-trace.XXXXXX";
static uint64_t base;

static const char *tmp(const char *name)
{
	static char buf[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", tmpdir, name);
	return buf[i];
}

/* Run check-trace.py; its exit status. */
static int checker(const char *format, const char *file, const char *expect, ...)
{
	const char *srcdir = getenv("top_srcdir");
	const char *argv[16];
	char script[1024];
	const char *a;
	va_list ap;
	int n = 0, status;
	pid_t pid;

	snprintf(script, sizeof(script), "%s/tests/trace/check-trace.py", srcdir ? srcdir : ".");
	argv[n++] = "python3";
	argv[n++] = script;
	argv[n++] = format;
	argv[n++] = file;
	if (expect) {
		argv[n++] = "--expect";
		argv[n++] = expect;
	}
	va_start(ap, expect);
	while ((a = va_arg(ap, const char *)) && n < 15)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	fflush(stdout);
	if (posix_spawnp(&pid, "python3", NULL, NULL, (char **)argv, environ) != 0)
		return -1;
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

#define CHECK_OK(...) assert_int_equal(checker(__VA_ARGS__, NULL), 0)
#define CHECK_FAILS(...) assert_int_equal(checker(__VA_ARGS__, NULL), 1)

/* Expectation file lines, labels as hex so any byte survives. */
static void put_hex(FILE *f, const char *s)
{
	if (!*s) {
		fputs(" -", f);
		return;
	}
	fputc(' ', f);
	for (; *s; s++)
		fprintf(f, "%02x", (unsigned char)*s);
}

static void expect_call(FILE *f, uint64_t cookie, const char *kind, const char *label)
{
	fprintf(f, "call %" PRIu64, cookie);
	put_hex(f, kind);
	put_hex(f, label);
	fputc('\n', f);
}

static void expect_mark(FILE *f, const char *what)
{
	fputs("mark", f);
	put_hex(f, what);
	fputc('\n', f);
}

static void ev(enum async_trace_type type, async_cookie_t cookie, async_cookie_t target,
	       uint64_t t_us, unsigned int worker, bool inl)
{
	struct async_trace_event e = {
		.type = type, .cookie = cookie, .target = target,
		.time_ns = base + t_us * 1000, .worker = worker, .inline_call = inl,
	};

	ap_trace_record_event(&e);
}

static void phase(async_cookie_t cookie, const char *name, uint64_t t0_us, uint64_t t1_us)
{
	ap_trace_phase(cookie, name, base + t0_us * 1000, base + t1_us * 1000);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static int setup(void **state)
{
	ap_trace_reset();
	ap_trace_enable();
	base = ap_now_ns();
	return 0;
}

static int teardown(void **state)
{
	ap_trace_reset();
	return 0;
}

/* ------------------------------------------------------------------ tests */

static void test_disabled(void **state)
{
	struct ap_trace_summary s;

	ap_trace_reset();
	assert_false(ap_trace_enabled());
	base = ap_now_ns();
	ap_trace_label(1, "disk", "sda");
	phase(1, "probe", 0, 10);
	ap_trace_mark(0, "root found", base);
	ev(ASYNC_TRACE_START, 1, 0, 0, 1, false);
	assert_int_equal(ap_trace_get_summary(&s), 0);
	assert_int_equal(s.calls, 0);
	assert_int_equal(s.events, 0);
	assert_int_equal(s.phases, 0);

	/* writing nothing still gives valid, empty files */
	assert_int_equal(ap_trace_write_chrome(tmp("empty.json")), 0);
	assert_int_equal(ap_trace_write_svg(tmp("empty.svg"), NULL), 0);
	CHECK_OK("chrome", tmp("empty.json"), NULL, "--calls", "0");
	CHECK_OK("svg", tmp("empty.svg"), NULL, "--calls", "0");
}

/*
 * A known run: main schedules c1..c3; c1 and c2 start on workers 1 and 2,
 * c3 waits for a free worker; c2 waits for c1 before its links; c3 runs
 * c4 inline; main waits for everything.  Times in microseconds.
 */
static void feed_known_run(void)
{
	ap_trace_label(1, "controller", "0000:00:1f.2 ahci");
	ap_trace_label(2, "disk", "sda");
	ap_trace_label(3, "disk", "sdb");
	ap_trace_label(4, "partition", "sdb1");
	ev(ASYNC_TRACE_SCHEDULE, 1, 0, 10, 0, false);
	ev(ASYNC_TRACE_SCHEDULE, 2, 0, 11, 0, false);
	ev(ASYNC_TRACE_SCHEDULE, 3, 0, 12, 0, false);
	ev(ASYNC_TRACE_SYNC_BEGIN, 0, ASYNC_COOKIE_MAX, 15, 0, false);
	ev(ASYNC_TRACE_START, 1, 0, 20, 1, false);
	ev(ASYNC_TRACE_START, 2, 0, 25, 2, false);
	phase(1, "modprobe", 30, 200);
	phase(2, "probe", 30, 300);
	/* runs past the end of c1: must be clamped into it */
	phase(1, "wait", 200, 470);
	ev(ASYNC_TRACE_SYNC_BEGIN, 2, 2, 300, 2, false);
	ev(ASYNC_TRACE_END, 1, 0, 450, 1, false);
	ev(ASYNC_TRACE_SYNC_END, 2, 2, 450, 2, false);
	/* overlaps the wait without nesting: the JSON must still nest */
	phase(2, "links", 440, 500);
	ev(ASYNC_TRACE_START, 3, 0, 460, 1, false);
	ev(ASYNC_TRACE_SCHEDULE, 4, 0, 470, 1, true);
	ev(ASYNC_TRACE_START, 4, 0, 471, 1, true);
	phase(4, "probe", 472, 479);
	ev(ASYNC_TRACE_END, 4, 0, 480, 1, true);
	ev(ASYNC_TRACE_END, 2, 0, 510, 2, false);
	ap_trace_mark(0, "root found", base + 520 * 1000);
	ev(ASYNC_TRACE_END, 3, 0, 600, 1, false);
	ev(ASYNC_TRACE_SYNC_END, 0, ASYNC_COOKIE_MAX, 610, 0, false);
}

static void write_known_expect(const char *path)
{
	FILE *f = fopen(path, "we");

	assert_non_null(f);
	expect_call(f, 1, "controller", "0000:00:1f.2 ahci");
	expect_call(f, 2, "disk", "sda");
	expect_call(f, 3, "disk", "sdb");
	expect_call(f, 4, "partition", "sdb1");
	fputs("waits 2\nworkers 2\n", f);
	/* modprobe, wait, probe, links, sync-wait as hex */
	fputs("phase 6d6f6470726f6265 1\nphase 77616974 1\nphase 70726f6265 2\n"
	      "phase 6c696e6b73 1\nphase 73796e632d77616974 1\n", f);
	expect_mark(f, "root found");
	fclose(f);
}

static void test_known_run(void **state)
{
	struct ap_trace_summary s;

	feed_known_run();
	assert_int_equal(ap_trace_get_summary(&s), 0);
	assert_int_equal(s.calls, 4);
	assert_int_equal(s.started, 4);
	assert_int_equal(s.finished, 4);
	assert_int_equal(s.inline_calls, 1);
	assert_int_equal(s.workers, 2);
	assert_int_equal(s.events, 16);
	assert_int_equal(s.phases, 5);
	assert_int_equal(s.waits, 2);
	/* (450 - 300) + (610 - 15) us */
	assert_int_equal(s.wait_ns, 745000);
	/* c1 10, c2 14, c3 448, c4 1 us */
	assert_int_equal(s.queued_ns, 473000);
	assert_int_equal(s.peak_running, 2);
	assert_int_equal(s.peak_queued, 3);
	/* what held up the end: c3 queued behind c1 (448 us) and its run (140 us) */
	assert_int_equal(s.critical_ns - (base - s.base_ns), 600000);
	assert_int_equal(s.critical_calls, 1);
	assert_int_equal(s.dropped, 0);
	assert_true(s.base_ns <= base);
	assert_int_equal(s.span_ns - (base - s.base_ns), 610000);

	assert_int_equal(ap_trace_write_chrome(tmp("known.json")), 0);
	assert_int_equal(ap_trace_write_svg(tmp("known.svg"), "known run"), 0);
	write_known_expect(tmp("known.expect"));
	CHECK_OK("chrome", tmp("known.json"), tmp("known.expect"), "--calls", "4");
	CHECK_OK("svg", tmp("known.svg"), tmp("known.expect"), "--calls", "4");
}

/*
 * c3 waits for c2, which waits for c1, the slow one: the critical path is
 * c1's 100 us, then the 5 us each of c2 and c3 spend after their waits.
 */
static void test_critical_path(void **state)
{
	struct ap_trace_summary s;
	char *json;
	int i;

	for (i = 1; i <= 3; i++) {
		ev(ASYNC_TRACE_SCHEDULE, i, 0, 0, 0, false);
		ev(ASYNC_TRACE_START, i, 0, 0, i, false);
	}
	ev(ASYNC_TRACE_SYNC_BEGIN, 3, 3, 5, 3, false);
	ev(ASYNC_TRACE_SYNC_BEGIN, 2, 2, 10, 2, false);
	ev(ASYNC_TRACE_END, 1, 0, 100, 1, false);
	ev(ASYNC_TRACE_SYNC_END, 2, 2, 101, 2, false);
	ev(ASYNC_TRACE_END, 2, 0, 105, 2, false);
	ev(ASYNC_TRACE_SYNC_END, 3, 3, 106, 3, false);
	ev(ASYNC_TRACE_END, 3, 0, 110, 3, false);
	assert_int_equal(ap_trace_get_summary(&s), 0);
	assert_int_equal(s.critical_ns - (base - s.base_ns), 110000);
	assert_int_equal(s.critical_calls, 3);
	assert_int_equal(ap_trace_write_chrome(tmp("crit.json")), 0);
	json = slurp(tmp("crit.json"));
	/* longest first, and each wait names the call that released it */
	assert_non_null(strstr(json, "\"critical_path\":[{\"cookie\":1,"));
	assert_non_null(strstr(json, "\"ms\":0.005"));
	assert_non_null(strstr(json, "\"target\":2,\"released_by\":1"));
	assert_non_null(strstr(json, "\"target\":3,\"released_by\":2"));
	free(json);
	CHECK_OK("chrome", tmp("crit.json"), NULL, "--calls", "3");
}

/* The checker itself must catch a wrong expectation (or it proves nothing). */
static void test_checker_rejects(void **state)
{
	FILE *f;

	feed_known_run();
	assert_int_equal(ap_trace_write_chrome(tmp("rej.json")), 0);
	assert_int_equal(ap_trace_write_svg(tmp("rej.svg"), NULL), 0);
	f = fopen(tmp("rej.expect"), "we");
	assert_non_null(f);
	expect_call(f, 1, "controller", "0000:00:1f.2 ahci");
	expect_call(f, 2, "disk", "sdz");       /* wrong */
	expect_call(f, 3, "disk", "sdb");
	expect_call(f, 4, "partition", "sdb1");
	fclose(f);
	CHECK_FAILS("chrome", tmp("rej.json"), tmp("rej.expect"));
	CHECK_FAILS("svg", tmp("rej.svg"), tmp("rej.expect"));
	CHECK_FAILS("chrome", tmp("rej.json"), NULL, "--calls", "5");
	/* a file that is not JSON, an SVG cut short */
	f = fopen(tmp("bad.json"), "we");
	assert_non_null(f);
	fputs("{\"traceEvents\":[{\"ph\":\"X\",", f);
	fclose(f);
	CHECK_FAILS("chrome", tmp("bad.json"), NULL);
	assert_int_equal(truncate(tmp("rej.svg"), 2000), 0);
	CHECK_FAILS("svg", tmp("rej.svg"), NULL);
}

static const char *const hostile[] = {
	"<script>&\"'",
	"tab\there\nnewline\r",
	"bad \xff\xfe bytes \xc3(",
	"surrogate \xed\xa0\x80 overlong \xc0\xaf \xe0\x80\x80 too big \xf4\x90\x80\x80",
	"cut \xe2\x82",
	"\xc3\x9c" "n" "\xc3\xaf" "c" "\xc3\xb8" "d" "\xc3\xa9" " \xe2\x9c\x93 \xf0\x9f\x98\x80",
	"back\\slash \"quoted\" \\u0041 \\x41",
	"del \x7f and \x01\x1f",
	"nonchar \xef\xbf\xbe\xef\xbf\xbf",
	"]]> <!-- --> <![CDATA[ x ]]> &amp; &#0;",
	"",
	"a-very-long-label-0123456789-0123456789-0123456789-0123456789-0123456789-0123456789-0123456789-0123456789-end",
};

static void test_hostile_labels(void **state)
{
	size_t n = sizeof(hostile) / sizeof(hostile[0]), i;
	char *svg;
	FILE *f;

	for (i = 0; i < n; i++) {
		ap_trace_label(i + 1, i % 2 ? "disk" : "k&<\"'>\xff", hostile[i]);
		ev(ASYNC_TRACE_SCHEDULE, i + 1, 0, 10 * i, 0, false);
		ev(ASYNC_TRACE_START, i + 1, 0, 10 * i + 1, 1, false);
		phase(i + 1, hostile[i][0] ? hostile[i] : "x", 10 * i + 2, 10 * i + 5);
		ev(ASYNC_TRACE_END, i + 1, 0, 10 * i + 9, 1, false);
	}
	ap_trace_mark(0, "</svg> \xff \"mark\"", base + 5000);
	ap_trace_meta("kernel", "<6.1.0&\"'\xfe>");
	assert_int_equal(ap_trace_write_chrome(tmp("hostile.json")), 0);
	assert_int_equal(ap_trace_write_svg(tmp("hostile.svg"), "<title> & \"title\" \xff"), 0);

	/* nothing of the markup gets through raw */
	svg = slurp(tmp("hostile.svg"));
	assert_null(strstr(svg, "<script>"));
	assert_null(strstr(svg, "]]>"));
	assert_null(strstr(svg, "&#0;"));
	assert_null(strstr(svg, "<title> &"));
	assert_non_null(strstr(svg, "&lt;script&gt;&amp;&quot;&apos;"));
	free(svg);

	f = fopen(tmp("hostile.expect"), "we");
	assert_non_null(f);
	for (i = 0; i < n; i++)
		expect_call(f, i + 1, i % 2 ? "disk" : "k&<\"'>\xff", hostile[i]);
	expect_mark(f, "</svg> \xff \"mark\"");
	fclose(f);
	CHECK_OK("chrome", tmp("hostile.json"), tmp("hostile.expect"));
	CHECK_OK("svg", tmp("hostile.svg"), tmp("hostile.expect"));
}

/* What an engine on the sequential stub leaves: labels and phases only. */
static void test_phases_only(void **state)
{
	struct ap_trace_summary s;
	FILE *f;
	int i;

	ap_trace_label(1, "discover", "udev");
	phase(0, "enumerate", 0, 100);
	phase(1, "probe", 100, 200);
	for (i = 2; i <= 5; i++) {
		char name[8];

		snprintf(name, sizeof(name), "sd%c", 'a' + i - 2);
		ap_trace_label(i, "disk", name);
		phase(i, "probe", 200 + 50 * i, 240 + 50 * i);
		phase(i, "links", 240 + 50 * i, 245 + 50 * i);
	}
	/* a phase for a cookie nobody labelled is still a call */
	phase(9, "mystery", 600, 601);
	assert_int_equal(ap_trace_get_summary(&s), 0);
	assert_int_equal(s.calls, 6);
	assert_int_equal(s.started, 0);
	assert_int_equal(s.events, 0);
	assert_int_equal(s.phases, 11);
	assert_int_equal(s.peak_running, 1);
	assert_int_equal(ap_trace_write_chrome(tmp("ph.json")), 0);
	assert_int_equal(ap_trace_write_svg(tmp("ph.svg"), NULL), 0);
	f = fopen(tmp("ph.expect"), "we");
	assert_non_null(f);
	expect_call(f, 1, "discover", "udev");
	expect_call(f, 2, "disk", "sda");
	expect_call(f, 3, "disk", "sdb");
	expect_call(f, 4, "disk", "sdc");
	expect_call(f, 5, "disk", "sdd");
	expect_call(f, 9, "", "");
	fclose(f);
	CHECK_OK("chrome", tmp("ph.json"), tmp("ph.expect"));
	CHECK_OK("svg", tmp("ph.svg"), tmp("ph.expect"));
}

static void test_unfinished(void **state)
{
	struct ap_trace_summary s;
	char *json;

	ap_trace_label(1, "disk", "stuck");
	ev(ASYNC_TRACE_SCHEDULE, 1, 0, 0, 0, false);
	ev(ASYNC_TRACE_START, 1, 0, 5, 3, false);
	ev(ASYNC_TRACE_SYNC_BEGIN, 1, 1, 10, 3, false);
	ev(ASYNC_TRACE_SCHEDULE, 2, 0, 20, 0, false);      /* never started */
	ev(ASYNC_TRACE_SYNC_BEGIN, 0, ASYNC_COOKIE_MAX, 30, 0, false);
	ap_trace_mark(0, "timeout", base + 1000 * 1000);
	assert_int_equal(ap_trace_get_summary(&s), 0);
	assert_int_equal(s.calls, 2);
	assert_int_equal(s.started, 1);
	assert_int_equal(s.finished, 0);
	assert_int_equal(s.waits, 2);
	assert_int_equal(s.peak_queued, 1);
	assert_int_equal(ap_trace_write_chrome(tmp("unf.json")), 0);
	assert_int_equal(ap_trace_write_svg(tmp("unf.svg"), NULL), 0);
	json = slurp(tmp("unf.json"));
	assert_non_null(strstr(json, "\"unfinished\":true"));
	assert_non_null(strstr(json, "\"sync-wait full\""));
	free(json);
	/* c2 never ran: a bar (its schedule) but no call slice */
	CHECK_OK("chrome", tmp("unf.json"), NULL, "--calls", "1");
	CHECK_OK("svg", tmp("unf.svg"), NULL, "--calls", "2");
}

/* 3000 calls on 16 workers: every bar there, in order, rows readable. */
static void test_many_calls(void **state)
{
	enum { N = 3000, W = 16 };
	struct ap_trace_summary s;
	FILE *f;
	int i;

	f = fopen(tmp("many.expect"), "we");
	assert_non_null(f);
	for (i = 1; i <= N; i++) {
		uint64_t t = (uint64_t)((i - 1) / W) * 100;
		unsigned int w = (unsigned int)((i - 1) % W) + 1;
		char name[16];

		snprintf(name, sizeof(name), "sd%d", i);
		ap_trace_label(i, "disk", name);
		expect_call(f, i, "disk", name);
		ev(ASYNC_TRACE_SCHEDULE, i, 0, t, 0, false);
		ev(ASYNC_TRACE_START, i, 0, t + 1, w, false);
		phase(i, "probe", t + 2, t + 60);
		ev(ASYNC_TRACE_SYNC_BEGIN, i, i, t + 60, w, false);
		ev(ASYNC_TRACE_SYNC_END, i, i, t + 70, w, false);
		phase(i, "links", t + 70, t + 80);
		ev(ASYNC_TRACE_END, i, 0, t + 90, w, false);
	}
	fprintf(f, "waits %d\nworkers %d\n", N, W);
	fclose(f);
	assert_int_equal(ap_trace_get_summary(&s), 0);
	assert_int_equal(s.calls, N);
	assert_int_equal(s.finished, N);
	assert_int_equal(s.workers, W);
	assert_int_equal(s.peak_running, W);
	assert_int_equal(ap_trace_write_chrome(tmp("many.json")), 0);
	assert_int_equal(ap_trace_write_svg(tmp("many.svg"), NULL), 0);
	CHECK_OK("chrome", tmp("many.json"), tmp("many.expect"), "--calls", "3000");
	CHECK_OK("svg", tmp("many.svg"), tmp("many.expect"), "--calls", "3000", "--min-height", "30000");
}

/* Many threads recording at once, as libasync's workers do. */
enum { THREADS = 8, PER_THREAD = 2000 };

static void *emitter(void *arg)
{
	unsigned int w = (unsigned int)(uintptr_t)arg;
	int k;

	for (k = 0; k < PER_THREAD; k++) {
		async_cookie_t c = (async_cookie_t)(w - 1) * PER_THREAD + (async_cookie_t)k + 1;
		uint64_t t = (uint64_t)k * 10;
		char name[24];

		ev(ASYNC_TRACE_SCHEDULE, c, 0, t, w, false);
		ev(ASYNC_TRACE_START, c, 0, t + 1, w, false);
		snprintf(name, sizeof(name), "t%u-%d", w, k);
		ap_trace_label(c, "disk", name);
		ev(ASYNC_TRACE_SYNC_BEGIN, c, c, t + 2, w, false);
		ev(ASYNC_TRACE_SYNC_END, c, c, t + 3, w, false);
		phase(c, "probe", t + 4, t + 6);
		if (k % 500 == 0)
			ap_trace_mark(c, "progress", base + (t + 5) * 1000);
		ev(ASYNC_TRACE_END, c, 0, t + 8, w, false);
	}
	return NULL;
}

static void test_concurrent_recording(void **state)
{
	pthread_t th[THREADS];
	struct ap_trace_summary s;
	uintptr_t i;

	for (i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, emitter, (void *)(i + 1)), 0);
	/* writing while they record must be safe too */
	assert_int_equal(ap_trace_get_summary(&s), 0);
	assert_int_equal(ap_trace_write_chrome(tmp("conc-mid.json")), 0);
	for (i = 0; i < THREADS; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);

	assert_int_equal(ap_trace_get_summary(&s), 0);
	assert_int_equal(s.calls, THREADS * PER_THREAD);
	assert_int_equal(s.events, THREADS * PER_THREAD * 5);
	assert_int_equal(s.finished, THREADS * PER_THREAD);
	assert_int_equal(s.waits, THREADS * PER_THREAD);
	assert_int_equal(s.phases, THREADS * PER_THREAD);
	assert_int_equal(s.workers, THREADS);
	assert_int_equal(s.dropped, 0);
	assert_int_equal(ap_trace_write_chrome(tmp("conc.json")), 0);
	assert_int_equal(ap_trace_write_svg(tmp("conc.svg"), NULL), 0);
	CHECK_OK("chrome", tmp("conc-mid.json"), NULL);
	CHECK_OK("chrome", tmp("conc.json"), NULL, "--calls", "16000", "--min-workers", "8");
	CHECK_OK("svg", tmp("conc.svg"), NULL, "--calls", "16000");
}

/* Real calls through libasync, labelled and phased from inside. */
enum { REAL_CALLS = 64 };

static void real_call(void *data, async_cookie_t cookie)
{
	uint64_t t0 = ap_now_ns(), t1;
	char name[16];

	snprintf(name, sizeof(name), "sd%" PRIu64, cookie);
	ap_trace_label(cookie, "disk", name);
	usleep(200);
	t1 = ap_now_ns();
	ap_trace_phase(cookie, "probe", t0, t1);
	async_synchronize_cookie(cookie);
	ap_trace_phase(cookie, "links", ap_now_ns(), ap_now_ns());
}

static async_cookie_t run_real_calls(FILE *expect)
{
	async_cookie_t first = 0, c = 0;
	int i;

	async_set_enabled(true);
	for (i = 0; i < REAL_CALLS; i++) {
		c = async_schedule(real_call, NULL);
		if (!first)
			first = c;
	}
	async_synchronize_full();
	async_set_enabled(false);
	/* join the workers, or sanitizers report them leaked */
	assert_int_equal(async_quiesce(), 0);
	assert_int_equal(c - first + 1, REAL_CALLS);
	for (c = first; expect && c < first + REAL_CALLS; c++) {
		char name[16];

		snprintf(name, sizeof(name), "sd%" PRIu64, c);
		expect_call(expect, c, "disk", name);
	}
	return first;
}

static void test_real_calls(void **state)
{
	struct ap_trace_summary s;
	FILE *f = fopen(tmp("real.expect"), "we");

	assert_non_null(f);
	run_real_calls(f);
	fclose(f);
	assert_int_equal(ap_trace_get_summary(&s), 0);
	assert_int_equal(s.calls, REAL_CALLS);
	assert_int_equal(s.phases, 2 * REAL_CALLS);
	assert_int_equal(ap_trace_write_chrome(tmp("real.json")), 0);
	assert_int_equal(ap_trace_write_svg(tmp("real.svg"), NULL), 0);
	CHECK_OK("chrome", tmp("real.json"), tmp("real.expect"));
	CHECK_OK("svg", tmp("real.svg"), tmp("real.expect"));
}

/*
 * The hook's events for real calls: needs libasync's concurrent core, so
 * main() leaves it out on the sequential stub (cmocka's skip() reads as a
 * failure to automake's TAP driver).
 */
static void test_real_hook_events(void **state)
{
	struct ap_trace_summary s;
	FILE *f;

	run_real_calls(NULL);
	assert_int_equal(ap_trace_get_summary(&s), 0);
	assert_int_equal(s.calls, REAL_CALLS);
	assert_int_equal(s.started, REAL_CALLS);
	assert_int_equal(s.finished, REAL_CALLS);
	assert_true(s.events >= 3 * REAL_CALLS);
	assert_true(s.workers >= 1);
	/*
	 * Every synchronize call is a begin/end pair: one per call, the full
	 * one, and whatever async_quiesce() does; the JSON has them all.
	 */
	assert_true(s.waits >= REAL_CALLS + 1);
	assert_int_equal(s.phases, 2 * REAL_CALLS);
	assert_int_equal(s.dropped, 0);
	assert_int_equal(ap_trace_write_chrome(tmp("hook.json")), 0);
	assert_int_equal(ap_trace_write_svg(tmp("hook.svg"), NULL), 0);
	f = fopen(tmp("hook.expect"), "we");
	assert_non_null(f);
	fprintf(f, "waits %" PRIu64 "\n", s.waits);
	fclose(f);
	CHECK_OK("chrome", tmp("hook.json"), tmp("hook.expect"), "--calls", "64", "--min-workers", "1");
	CHECK_OK("svg", tmp("hook.svg"), NULL, "--calls", "64");
}

static void test_reset_and_again(void **state)
{
	struct ap_trace_summary s;

	feed_known_run();
	ap_trace_meta("mode", "first");
	ap_trace_reset();
	assert_false(ap_trace_enabled());
	assert_int_equal(ap_trace_get_summary(&s), 0);
	assert_int_equal(s.calls, 0);
	ap_trace_enable();
	assert_true(ap_trace_enabled());
	base = ap_now_ns();
	ev(ASYNC_TRACE_START, 7, 0, 1, 1, false);
	ev(ASYNC_TRACE_END, 7, 0, 2, 1, false);
	assert_int_equal(ap_trace_get_summary(&s), 0);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.events, 2);
}

static void test_meta_and_mode(void **state)
{
	char *json;

	ev(ASYNC_TRACE_START, 1, 0, 1, 1, false);
	ev(ASYNC_TRACE_END, 1, 0, 2, 1, false);
	ap_trace_meta("mode", "old");
	ap_trace_meta("mode", "fastboot (test)");
	ap_trace_meta("disks", "1");
	assert_int_equal(ap_trace_write_chrome(tmp("meta.json")), 0);
	json = slurp(tmp("meta.json"));
	assert_non_null(strstr(json, "\"mode\":\"fastboot (test)\""));
	assert_null(strstr(json, "\"old\""));
	assert_non_null(strstr(json, "\"disks\":\"1\""));
	assert_non_null(strstr(json, "\"peak_rss_kib\":"));
	free(json);
}

static void test_write_errors(void **state)
{
	ev(ASYNC_TRACE_START, 1, 0, 1, 1, false);
	assert_int_equal(ap_trace_write_chrome(tmp("no/such/dir.json")), -ENOENT);
	assert_int_equal(ap_trace_write_svg(tmp("no/such/dir.svg"), NULL), -ENOENT);
	assert_int_equal(ap_trace_write_chrome(NULL), -EINVAL);
	assert_int_equal(ap_trace_write_svg(NULL, NULL), -EINVAL);
	/* a full disk is reported, not ignored */
	if (access("/dev/full", W_OK) == 0) {
		int r = ap_trace_write_chrome("/dev/full");

		assert_true(r == -ENOSPC || r == -EIO);
		r = ap_trace_write_svg("/dev/full", NULL);
		assert_true(r == -ENOSPC || r == -EIO);
	}
}

static int group_setup(void **state)
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
	char cmd[sizeof(tmpdir) + 16];

	if (getenv("TRACE_TEST_KEEP")) {
		printf("# files kept in %s\n", tmpdir);
		return 0;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_disabled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_known_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_critical_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_checker_rejects, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_labels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_phases_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unfinished, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_recording, setup, teardown),
		cmocka_unit_test_setup_teardown(test_real_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reset_and_again, setup, teardown),
		cmocka_unit_test_setup_teardown(test_meta_and_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_errors, setup, teardown),
		/* last, so it can be left out */
		cmocka_unit_test_setup_teardown(test_real_hook_events, setup, teardown),
	};

	/* Every check reads the files back with python3 (tests/install-deps.sh). */
	if (system("python3 -c 'import json, xml.etree.ElementTree' >/dev/null 2>&1") != 0) {
		printf("1..0 # SKIP python3 (json, xml.etree) is needed to validate the files\n");
		return 0;
	}
	/*
	 * Every test runs, test_real_hook_events included: a libasync that
	 * runs calls synchronously or emits no trace events fails it.
	 */
	return cmocka_run_group_tests_name("trace", tests, group_setup, group_teardown);
}
