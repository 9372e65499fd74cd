/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What modules.c, modules-plan.c (step 1: the load plan) and
 * modules-insert.c (step 2: carrying it out) share; the theory of
 * operation is modules.c's.  modules.c calls the other two, and they
 * call neither modules.c nor each other.
 */
#ifndef ASYNCPROBE_MODULES_INTERNAL_H
#define ASYNCPROBE_MODULES_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include <libkmod.h>

struct ap_modules {
	pthread_mutex_t lock;   /* guards ctx and everything libkmod hands out */
	struct kmod_ctx *ctx;
	char *dir;
	bool foreign;           /* not the running kernel's tree */
	bool dry_run;
	char **blacklist;       /* from modprobe.blacklist= */
	size_t n_blacklist;
	char **soft_failed;     /* soft dependencies that failed once: not retried */
	size_t n_soft_failed;
	char **touched;         /* lock: modules this run began to insert */
	size_t n_touched;
	int async_probe;        /* atomic: 1 pass async_probe, 0 do not (see the top) */
	int kernel_decompress;  /* atomic: 0 the kernel refused a compressed file once */
	struct resolved **resolved; /* lock: what each modalias resolved to (step 1) */
	size_t n_resolved;
};

/* One step of a load plan. */
struct action {
	char *name;
	char *path;             /* NULL for an install command */
	char *options;
	char *command;          /* install command, $CMDLINE_OPTS substituted */
	struct kmod_module *mod;
	bool required;          /* the module or a hard dependency (not a softdep) */
};

struct plan {
	struct action *v;
	size_t n;
	struct kmod_module *top;
	struct kmod_list *deps;
};

/*
 * Step 1's outcome for one module a modalias resolved to, kept for the
 * next request of the same modalias: everything in it depends only on the
 * module tree and the configuration, not on what is loaded.
 */
struct resolved_module {
	char *name;
	int result;             /* enum ap_modresult */
	int error;
	char **chain;
	size_t n_chain;
	struct plan plan;       /* read without the lock by step 2, never changed */
};

struct resolved {
	char *modalias;
	struct resolved_module *v;
	size_t n;
};

/* ------------------------------------------------------ modules-plan.c */

/*
 * Build the load plan of @mod (under m->lock).  Returns 0, a positive
 * KMOD_PROBE_APPLY_BLACKLIST when blacklisted, or -errno.
 */
int modules_plan_build(struct ap_modules *m, struct kmod_module *mod, struct plan *p);
void modules_plan_clear(struct plan *p);

/* ---------------------------------------------------- modules-insert.c */

/* Module names compare with '-' and '_' equal, as the kernel does. */
bool modules_name_eq(const char *a, const char *b);
/*
 * Whether the soft dependency @name failed before in this context; with
 * @record, remember that it did (under m->lock).
 */
bool modules_soft_failed(struct ap_modules *m, const char *name, bool record);
/* Linux 5.17 and later know finit_module()'s MODULE_INIT_COMPRESSED_FILE. */
bool ap_kernel_knows_compressed_file(void);
/*
 * Carry out one action, without m->lock: 0 (also for "already there") or
 * -errno; *inserted when this call inserted it.  @own_probe: the device's
 * own driver, which keeps its probe synchronous (no async_probe).
 */
int modules_action_run(struct ap_modules *m, struct action *a, bool *inserted, bool own_probe);

#endif
