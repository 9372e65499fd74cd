/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The libFuzzer entry points; fuzz-replay.c drives them without libFuzzer. */
#ifndef ASYNCPROBE_FUZZ_H
#define ASYNCPROBE_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* abort() with a message: a broken invariant is a crash for libFuzzer */
#define fuzz_assert(cond)                                                                  \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                           \
		}                                                                          \
	} while (0)

#endif
