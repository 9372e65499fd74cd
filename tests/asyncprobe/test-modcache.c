/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A modalias is resolved once per run (modules.c, resolve()): requests for
 * one alias, the first and the later ones, from several threads at once,
 * must all report what one request alone reports.  Run by modindex.sh on a
 * real module tree, in dry run: test-modcache MODULES_DIR ALIAS...
 * Prints one line per check, "ok" or "not ok", and exits 1 on a failure.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "device/device.h"
#include "modules/modules.h"
#include "probe/probe.h"

#define THREADS 4
#define ROUNDS 3

struct result {
	struct ap_modload *loads;
	size_t n;
	int failed;
};

struct job {
	struct ap_modules *m;
	const char *alias;
	struct result r[ROUNDS];
};

static int failures;

static void *worker(void *arg)
{
	struct job *j = arg;

	for (int i = 0; i < ROUNDS; i++)
		j->r[i].failed = ap_modules_load_alias(j->m, j->alias, "test", &j->r[i].loads,
						       &j->r[i].n);
	return NULL;
}

static void describe(const struct result *r, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = '\0';
	used += (size_t)snprintf(buf + used, size - used, "failed %d:", r->failed);
	for (size_t i = 0; i < r->n && used < size; i++) {
		used += (size_t)snprintf(buf + used, size - used, " %s=%s[", r->loads[i].module,
					 ap_modresult_to_string(r->loads[i].result));
		for (size_t k = 0; k < r->loads[i].n_chain && used < size; k++)
			used += (size_t)snprintf(buf + used, size - used, "%s%s", k ? " " : "",
						 r->loads[i].chain[k]);
		if (used < size)
			used += (size_t)snprintf(buf + used, size - used, "]");
	}
}

int main(int argc, char **argv)
{
	char config[] = "/tmp/ap-modcache.XXXXXX";
	struct ap_modules *m = NULL;
	int r;

	if (argc < 3) {
		fprintf(stderr, "usage: %s MODULES_DIR ALIAS...\n", argv[0]);
		return 2;
	}
	/* an empty modprobe.d: the host's configuration is not this test's */
	if (!mkdtemp(config)) {
		perror("mkdtemp");
		return 2;
	}
	r = ap_modules_new(&m, NULL, argv[1], NULL, config, true);
	if (r < 0) {
		fprintf(stderr, "cannot open the module tree %s: %s\n", argv[1], strerror(-r));
		rmdir(config);
		return 2;
	}
	for (int a = 2; a < argc; a++) {
		struct job jobs[THREADS];
		pthread_t t[THREADS];
		char first[2048], other[2048];
		bool agree;

		for (int i = 0; i < THREADS; i++) {
			memset(&jobs[i], 0, sizeof(jobs[i]));
			jobs[i].m = m;
			jobs[i].alias = argv[a];
			if (pthread_create(&t[i], NULL, worker, &jobs[i]) != 0) {
				perror("pthread_create");
				return 2;
			}
		}
		for (int i = 0; i < THREADS; i++)
			pthread_join(t[i], NULL);
		describe(&jobs[0].r[0], first, sizeof(first));
		agree = true;
		for (int i = 0; i < THREADS; i++)
			for (int k = 0; k < ROUNDS; k++) {
				describe(&jobs[i].r[k], other, sizeof(other));
				if (strcmp(first, other) != 0) {
					agree = false;
					printf("# thread %d, request %d: %s\n", i, k + 1, other);
				}
			}
		printf("%s - %s: %d requests from %d threads agree: %s\n", agree ? "ok" : "not ok",
		       argv[a], THREADS * ROUNDS, THREADS, first);
		failures += !agree;
		for (int i = 0; i < THREADS; i++)
			for (int k = 0; k < ROUNDS; k++) {
				for (size_t x = 0; x < jobs[i].r[k].n; x++)
					ap_modload_clear(&jobs[i].r[k].loads[x]);
				free(jobs[i].r[k].loads);
			}
	}
	ap_modules_free(m);
	rmdir(config);
	return failures ? 1 : 0;
}
