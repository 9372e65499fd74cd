/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Without libFuzzer: feed every file named on the command line (or every
 * file in a directory named there) to LLVMFuzzerTestOneInput once.  make
 * check runs the seed corpus this way, so the targets and their
 * invariants are exercised in every build.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (!buf || (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)) {
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned runs = 0;

	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		if (S_ISDIR(st.st_mode)) {
			DIR *d = opendir(argv[i]);
			struct dirent *de;

			if (!d)
				return 1;
			while ((de = readdir(d))) {
				char p[4096];

				if (de->d_name[0] == '.')
					continue;
				snprintf(p, sizeof(p), "%s/%s", argv[i], de->d_name);
				if (run_file(p) < 0)
					return 1;
				runs++;
			}
			closedir(d);
		} else {
			if (run_file(argv[i]) < 0)
				return 1;
			runs++;
		}
	}
	/* and a few inputs no seed has */
	LLVMFuzzerTestOneInput((const uint8_t *)"", 0);
	LLVMFuzzerTestOneInput((const uint8_t *)"\0\0\0", 3);
	printf("%u inputs\n", runs + 2);
	return 0;
}
