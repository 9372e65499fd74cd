/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where the progress line may be drawn (ap_log_is_user_terminal()): on a
 * pseudo-terminal, not into a pipe or a file, never on /dev/console or a
 * serial line, and not on a terminal the kernel's console list names.
 * Devices are only opened and looked at (O_NOCTTY), never written to.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <libudev.h>

#include "base/base.h"

static char active[] = "/tmp/test-terminal-XXXXXX";

static void write_active(const char *content)
{
	FILE *f = fopen(active, "we");

	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static void test_pipe_and_file(void **state)
{
	int p[2];
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	assert_int_equal(pipe(p), 0);
	assert_false(ap_log_is_user_terminal(p[1], NULL));
	assert_true(fd >= 0);
	assert_false(ap_log_is_user_terminal(fd, NULL));
	assert_false(ap_log_is_user_terminal(-1, NULL));
	close(p[0]);
	close(p[1]);
	close(fd);
}

static void test_pty(void **state)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC), s;
	const char *name;

	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 || !(name = ptsname(m))) {
		print_message("# no pseudo-terminals here\n");
		skip();
	}
	s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	assert_true(s >= 0);
	assert_true(ap_log_is_user_terminal(s, NULL));
	/* an unreadable console list changes nothing; nor does one naming others */
	assert_true(ap_log_is_user_terminal(s, "/nonexistent/active"));
	write_active("tty0 ttyS0\n");
	assert_true(ap_log_is_user_terminal(s, active));
	close(s);
	close(m);
}

/* /dev/ptmx (5:2) is a terminal that /sys/class/tty/ptmx/dev names. */
static void test_console_list(void **state)
{
	int fd = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);

	if (fd < 0 || access("/sys/class/tty/ptmx/dev", R_OK) < 0 || !isatty(fd)) {
		print_message("# no /dev/ptmx or /sys/class/tty/ptmx\n");
		skip();
	}
	write_active("tty0 ttyS0\n");
	assert_true(ap_log_is_user_terminal(fd, active));
	write_active("ttyS0 ptmx\n");
	assert_false(ap_log_is_user_terminal(fd, active));
	close(fd);
}

static void test_console_devices(void **state)
{
	static const char *const devs[] = { "/dev/console", "/dev/ttyS0" };
	size_t i;
	int seen = 0;

	for (i = 0; i < 2; i++) {
		int fd = open(devs[i], O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);

		if (fd < 0 || !isatty(fd)) {
			print_message("# %s: not a terminal here\n", devs[i]);
			if (fd >= 0)
				close(fd);
			continue;
		}
		seen++;
		if (ap_log_is_user_terminal(fd, NULL))
			print_message("# %s taken for a user's terminal\n", devs[i]);
		assert_false(ap_log_is_user_terminal(fd, NULL));
		close(fd);
	}
	if (!seen)
		skip();
}

static int setup(void **state)
{
	int fd = mkstemp(active);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	unlink(active);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pipe_and_file),
		cmocka_unit_test(test_pty),
		cmocka_unit_test(test_console_list),
		cmocka_unit_test(test_console_devices),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
