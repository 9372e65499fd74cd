/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Kernel command line (cmdline.c). */
#ifndef ASYNCPROBE_CMDLINE_H
#define ASYNCPROBE_CMDLINE_H

#include <stdbool.h>

/*
 * Read the kernel command line (/proc/cmdline, or the file named by the
 * environment variable ASYNCPROBE_CMDLINE for tests).  Returns 0 or -errno;
 * *ret is malloc'ed.
 */
int ap_cmdline_read(char **ret);

/*
 * Look @key up in @cmdline as the kernel does (last occurrence wins,
 * double quotes group).  Returns true when present; *ret_value (if not
 * NULL) gets a malloc'ed copy of the value after '=', or NULL for a bare
 * flag.
 */
bool ap_cmdline_get(const char *cmdline, const char *key, char **ret_value);

#endif
