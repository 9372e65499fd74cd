/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel command-line parser (cmdline.c) on arbitrary bytes (the input
 * up to its first NUL, as /proc/cmdline can hold anything a boot loader
 * passed).  Invariants checked:
 *   - ap_cmdline_foreach visits only keys with no '=' but a leading one
 *     (the kernel's next_arg() keeps "=x" whole; double quotes may put
 *     blanks in a key), and never more words than there are bytes;
 *   - ap_cmdline_get("root") agrees with the root= that
 *     ap_bootparams_parse kept (the last root=VALUE wins in both);
 *   - whatever root= says, the path derived for it either is refused or
 *     stays in one directory: no "." or ".." component, no leading '/',
 *     and for UUID/LABEL/PARTUUID/PARTLABEL exactly "disk/by-*" plus one
 *     component;
 *   - durations parse to a value or a clean error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "boot/boot.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* the parser warns about bad values; keep the fuzzer's output quiet */
	ap_log_open(AP_LOG_STDERR, -1);
	return 0;
}

struct walk {
	size_t visits;
	size_t len;
};

static int visit(const char *key, const char *value, void *userdata)
{
	struct walk *w = userdata;

	fuzz_assert(key);
	/* as in the kernel's next_arg(), only a leading '=' stays in a key */
	fuzz_assert(!key[0] || !strchr(key + 1, '='));
	(void)value;
	w->visits++;
	fuzz_assert(w->visits <= w->len + 1);
	return 0;
}

static void check_path(const struct ap_root_spec *spec, const char *path)
{
	const char *p = path;
	size_t slashes = 0;

	fuzz_assert(path[0] && path[0] != '/');
	while (*p) {
		const char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);

		fuzz_assert(n > 0);
		fuzz_assert(!(n == 1 && p[0] == '.'));
		fuzz_assert(!(n == 2 && p[0] == '.' && p[1] == '.'));
		if (!*end)
			break;
		slashes++;
		p = end + 1;
	}
	if (spec->kind == AP_ROOT_UUID || spec->kind == AP_ROOT_LABEL ||
	    spec->kind == AP_ROOT_PARTUUID || spec->kind == AP_ROOT_PARTLABEL) {
		fuzz_assert(strncmp(path, "disk/by-", 8) == 0);
		fuzz_assert(slashes == 2);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ap_bootparams bp = { 0 };
	struct walk w = { 0, 0 };
	char *s, *root = NULL, *path = NULL;
	unsigned int ms;
	bool have_root;

	s = strndup((const char *)data, size);
	if (!s)
		return 0;
	w.len = strlen(s);

	(void)ap_cmdline_foreach(s, visit, &w);

	have_root = ap_cmdline_get(s, "root", &root);
	if (ap_bootparams_parse(s, &bp) == 0) {
		/*
		 * The last root=VALUE wins in both; a bare "root" word is a flag
		 * for ap_cmdline_get but no root for the boot parameters.
		 */
		if (bp.root)
			fuzz_assert(have_root);
		if (root)
			fuzz_assert(bp.root && strcmp(root, bp.root) == 0);
		if (bp.root && bp.root_error == 0 &&
		    ap_root_spec_devpath(&bp.root_spec, &path) == 0) {
			check_path(&bp.root_spec, path);
			free(path);
		}
		ap_bootparams_clear(&bp);
	}
	free(root);

	if (ap_parse_seconds_ms(s, &ms) == 0)
		fuzz_assert(strspn(s, "0123456789.") > 0);
	free(s);
	return 0;
}
