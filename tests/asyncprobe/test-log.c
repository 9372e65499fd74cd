/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * asyncprobe's log takes libasync's warnings: after ap_log_open(), a
 * warning of the library (here: a call that synchronizes on everything,
 * itself included) is written by asyncprobe's logger, with its prefix and
 * priority label, and nothing reaches standard error the library's own
 * way ("libasync: ..." at the start of a line).  Standard error is a
 * temporary file for the test, so the log sink can be read back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"

static void sync_on_everything(void *data, async_cookie_t cookie)
{
	(void)data;
	(void)cookie;
	async_synchronize_full();       /* waits for the calls before it, and warns */
}

int main(void)
{
	char path[] = "/tmp/test-log.XXXXXX", line[1200];
	const char *want = "asyncprobe: warning: libasync: call ";
	int fd, saved, found = 0, raw = 0;
	async_cookie_t c;
	FILE *f;

	printf("1..2\n");
	fd = mkstemp(path);
	saved = dup(STDERR_FILENO);
	if (fd < 0 || saved < 0 || dup2(fd, STDERR_FILENO) < 0) {
		printf("Bail out! cannot redirect standard error: %m\n");
		return 1;
	}
	unlink(path);

	ap_log_open(AP_LOG_STDERR, -1);       /* quiet: warnings still shown */
	c = async_schedule(sync_on_everything, NULL);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);

	f = fdopen(fd, "r");
	if (!f) {
		printf("Bail out! fdopen: %m\n");
		return 1;
	}
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		printf("# stderr: %s", line);
		if (strncmp(line, want, strlen(want)) == 0 && strstr(line, "asked to wait for everything"))
			found++;
		if (strncmp(line, "libasync: ", 10) == 0)
			raw++;
	}
	fclose(f);
	printf("%s 1 - the warning about call %llu went through asyncprobe's log (lines: %d)\n",
	       found == 1 ? "ok" : "not ok", (unsigned long long)c, found);
	printf("%s 2 - nothing went to standard error libasync's own way (lines: %d)\n",
	       raw == 0 ? "ok" : "not ok", raw);
	ap_log_close();
	return 0;
}
