/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Step 1 of loading a module (modules.c has the theory of operation): the
 * load plan libkmod prints with KMOD_PROBE_DRY_RUN - dependencies,
 * softdeps and install commands in modprobe's order, with their options -
 * collected under the context's mutex.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <libkmod.h>

#include "base/base.h"
#include "internal.h"

/*
 * libkmod's print_action has no user pointer: the plan being built is a
 * global, guarded by its own lock (there may be more than one context).
 */
static pthread_mutex_t collecting_lock = PTHREAD_MUTEX_INITIALIZER;
static struct plan *collecting;

static char *substitute_opts(const char *cmd, const char *opts)
{
	const char *var = "$CMDLINE_OPTS", *p;
	size_t lv = strlen(var), lo = strlen(opts), cap = strlen(cmd) + 1, n = 0;
	char *out;

	for (p = cmd; (p = strstr(p, var)); p += lv)
		cap += lo;
	out = malloc(cap);
	if (!out)
		return NULL;
	for (p = cmd; *p;) {
		if (strncmp(p, var, lv) == 0) {
			memcpy(out + n, opts, lo);
			n += lo;
			p += lv;
		} else {
			out[n++] = *p++;
		}
	}
	out[n] = '\0';
	return out;
}

static void collect_action(struct kmod_module *mod, bool install, const char *options)
{
	struct plan *p = collecting;
	struct action *a, *v;
	const char *name = kmod_module_get_name(mod);
	struct kmod_list *l;

	if (!p)
		return;
	/* softdeps can bring a module twice; once is enough */
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->v[i].name, name) == 0)
			return;
	v = realloc(p->v, (p->n + 1) * sizeof(*v));
	if (!v)
		return;
	p->v = v;
	a = &v[p->n];
	memset(a, 0, sizeof(*a));
	a->name = strdup(name);
	a->options = strdup(options ? options : "");
	if (install) {
		const char *cmd = kmod_module_get_install_commands(mod);

		a->command = cmd ? substitute_opts(cmd, a->options ? a->options : "") : NULL;
	} else {
		const char *path = kmod_module_get_path(mod);

		a->path = path ? strdup(path) : NULL;
	}
	a->mod = kmod_module_ref(mod);
	a->required = mod == p->top;
	kmod_list_foreach(l, p->deps) {
		struct kmod_module *d = kmod_module_get_module(l);

		if (strcmp(kmod_module_get_name(d), name) == 0)
			a->required = true;
		kmod_module_unref(d);
	}
	p->n++;
}

void modules_plan_clear(struct plan *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		free(p->v[i].name);
		free(p->v[i].path);
		free(p->v[i].options);
		free(p->v[i].command);
		kmod_module_unref(p->v[i].mod);
	}
	free(p->v);
	if (p->deps)
		kmod_module_unref_list(p->deps);
	memset(p, 0, sizeof(*p));
}

/*
 * Build the load plan of @mod (under m->lock).  Returns 0, a positive
 * KMOD_PROBE_APPLY_BLACKLIST when blacklisted, or -errno.
 */
int modules_plan_build(struct ap_modules *m, struct kmod_module *mod, struct plan *p)
{
	int r;

	memset(p, 0, sizeof(*p));
	p->top = mod;
	p->deps = kmod_module_get_dependencies(mod);
	pthread_mutex_lock(&collecting_lock);
	collecting = p;
	r = kmod_module_probe_insert_module(mod, KMOD_PROBE_DRY_RUN | KMOD_PROBE_IGNORE_LOADED |
					    KMOD_PROBE_APPLY_BLACKLIST,
					    NULL, NULL, NULL, collect_action);
	collecting = NULL;
	pthread_mutex_unlock(&collecting_lock);
	return r;
}
