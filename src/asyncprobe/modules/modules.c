/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Driver loading through libkmod: the context, the blacklists, loading
 * a modalias or a name, and the plan printed by --resolve-modalias.  Step
 * 1 below is modules-plan.c, step 2 modules-insert.c (with the async_probe
 * and scan=sync rules); internal.h has what they share.
 *
 * A libkmod context is not thread-safe, and init_module() can sleep for
 * seconds (a SCSI host scan runs inside it).  So each request is done in
 * two steps:
 *
 *   1. Under the mutex: resolve the modalias (kmod_module_new_from_lookup),
 *      apply the blacklists, and ask libkmod for the load plan with
 *      KMOD_PROBE_DRY_RUN | KMOD_PROBE_IGNORE_LOADED - dependencies,
 *      softdeps and install commands in modprobe's order, with the options
 *      from modprobe.d and the kernel command line - recording the path of
 *      each module.
 *   2. Without the mutex: carry the plan out, skipping what is already
 *      live, with finit_module() on each file, in a child process (see
 *      finit_module_child()), and install commands through /bin/sh, as
 *      modprobe runs them.  Distinct modules load in parallel;
 *      the kernel serializes two loads of the same module and makes the
 *      later one wait and fail with EEXIST, which is success here.
 *
 * A compressed module goes to finit_module() with
 * MODULE_INIT_COMPRESSED_FILE; a kernel that cannot decompress it (built
 * without CONFIG_MODULE_DECOMPRESS, as Debian 12's, answers EOPNOTSUPP;
 * kernels before 5.17 do not know the flag) gets it from
 * kmod_module_insert_module() in a child process, which decompresses it
 * and calls init_module() (the mutex is held across the fork only).  The
 * first EOPNOTSUPP is remembered: later compressed modules go to libkmod
 * at once.  EINVAL (a kernel that decompresses another method only) sends
 * that one module to libkmod.
 *
 * async_probe.  Linux ends the insertion of a module that did not ask for
 * async_probe (kernel/module/main.c, do_init_module()) with
 * async_synchronize_full(): a wait for every asynchronous call in the
 * system, sd's probes of all disks and every SCSI host scan included.  One
 * disk that does not answer then holds every later insertion, whatever
 * the driver: sd_mod's, ext4's.  With async_probe the insertion returns
 * once the module's init function has; but drivers with the default probe
 * type then also probe asynchronously (driver_allows_async_probing()),
 * and that is not always better: libata's port probe synchronizes on its
 * cookie in that same global domain (async_port_probe()), so a controller
 * driver whose probe hangs there (virtio_blk reading a dead disk's
 * partition table) would keep every later SATA port from being scanned,
 * while in init_module() it only holds its own insertion (and this run
 * abandons it).  Hence the rule: every module gets async_probe except the
 * module a controller's modalias resolves to (the driver whose probe runs
 * for that device); so dependencies, SCSI upper-level drivers (modalias
 * "scsi:...": sd, sr probe asynchronously anyway) and file system modules
 * (ap_modules_insert_options(), init.c) never wait for other devices'
 * probes, and a controller's insertion still returns after its own probe
 * and what that started (the engine checks that itself too: engine-wait.c,
 * "Waiting for a driver").  The kernel parses the parameter for every module
 * (unknown_module_param_cb) since Linux 4.2; 3.16 to 4.1 ignore it with a
 * warning in the kernel log, older kernels refuse the module (ENOENT,
 * "Unknown parameter").  So it is passed on 4.2 and later only, and if an
 * insertion with it fails with ENOENT or EINVAL and succeeds without it,
 * it is never passed again.  A module whose options (modprobe.d, the
 * kernel command line) name async_probe already, with any value, keeps
 * them as they are.
 *
 * The root's controller.  In a fastboot run that knows the root's place
 * (root first), every controller's own driver gets async_probe too
 * (ap_modules_set_async_own(), run_controller(), root_first_async()).
 * The root's, because the barrier at the end of its insertion waited for
 * every other driver's asynchronous work (an NVMe controller's reset and
 * namespace scan, the SCSI scans): under TCG the root's ahci insertion
 * took 1.1-1.7 s, with async_probe 0.3-0.6 s.  The others', because they
 * go in after the root's controller has probed (engine-root.c), and by
 * then the root's SCSI device may have loaded sd_mod: sd's asynchronous
 * probe of a disk that hangs, found by their bus scan, would hold their
 * insertion's barrier, and with it their healthy disks.  What the barrier
 * did for a controller's call, the engine does itself: it waits for the
 * probe's "bind" (a SCSI HBA scans inside its probe, see scan=sync below)
 * and for libata's ports to have classified their devices and added their
 * SCSI devices (engine-wait.c, pred_ata_ports_done()).  The price is the
 * one root first already pays: a later libata controller's port probe
 * waits for the asynchronous calls scheduled before it, a hung disk's sd
 * probe included, and such a controller's disks are abandoned; the root's
 * ports probe before sd_mod is loaded.
 *
 * scsi_mod gets scan=sync unless its options name scan= (the user's
 * scsi_mod.scan= wins): a SCSI host is then scanned inside its driver's
 * probe, which runs asynchronously thanks to async_probe, so the "bind"
 * uevent of the HBA says its scan is complete (ap_modules_scsi_scan_sync()).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* asprintf */
#endif
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <libkmod.h>

#include "base/base.h"
#include "device/device.h"
#include "modules/modules.h"
#include "internal.h"

const char *ap_modresult_to_string(enum ap_modresult r)
{
	static const char *const names[_AP_MOD_MAX] = {
		[AP_MOD_OK] = "ok",
		[AP_MOD_BUILTIN] = "builtin",
		[AP_MOD_DRY_RUN] = "dry-run",
		[AP_MOD_BLACKLISTED] = "blacklisted",
		[AP_MOD_FAILED] = "failed",
		[AP_MOD_NONE] = "none",
	};

	return r >= 0 && r < _AP_MOD_MAX ? names[r] : "?";
}

static void kmod_log_to_ap(void *data, int priority, const char *file, int line,
			   const char *fn, const char *format, va_list args)
{
	char buf[512];
	size_t n;

	vsnprintf(buf, sizeof(buf), format, args);
	n = strlen(buf);
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	/* libkmod's own errors are reported by us with context; keep its text at debug */
	ap_log(AP_LOG_DEBUG, "libkmod: %s", buf);
}

/* The only version directory below @root/lib/modules (or usr/lib/modules). */
static char *single_version_dir(const char *root)
{
	static const char *const subdirs[] = { "lib/modules", "usr/lib/modules" };
	char *found = NULL;
	size_t i;

	for (i = 0; i < 2; i++) {
		char path[PATH_MAX];
		struct dirent *de;
		DIR *d;

		snprintf(path, sizeof(path), "%s/%s", root, subdirs[i]);
		d = opendir(path);
		if (!d)
			continue;
		while ((de = readdir(d))) {
			char sub[PATH_MAX + 256];

			if (de->d_name[0] == '.')
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
			if (!ap_dir_exists(sub))
				continue;
			if (found) {
				/* more than one: ambiguous */
				free(found);
				closedir(d);
				return NULL;
			}
			found = strdup(sub);
		}
		closedir(d);
		if (found)
			return found;
	}
	return found;
}

int ap_modules_new(struct ap_modules **ret, const char *basedir, const char *modules_dir,
		   const char *kver, const char *config, bool dry_run)
{
	const char *config_paths[] = { config, NULL };
	struct ap_modules *m;
	struct utsname u;
	char path[PATH_MAX];
	const char *base;
	int r;

	if (uname(&u) < 0)
		return -errno;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	pthread_mutex_init(&m->lock, NULL);
	m->dry_run = dry_run;

	if (modules_dir) {
		m->dir = strdup(modules_dir);
	} else {
		snprintf(path, sizeof(path), "%s/lib/modules/%s", basedir ? basedir : "",
			 kver ? kver : u.release);
		if (!ap_dir_exists(path) && basedir && !kver) {
			m->dir = single_version_dir(basedir);
			if (m->dir)
				log_notice("no modules for the running kernel %s below %s: using %s",
					   u.release, basedir, m->dir);
		}
		if (!m->dir)
			m->dir = strdup(path);
	}
	if (!m->dir) {
		r = -ENOMEM;
		goto fail;
	}
	if (!ap_dir_exists(m->dir)) {
		log_warning("no module tree at %s", m->dir);
		r = -ENOENT;
		goto fail;
	}
	snprintf(path, sizeof(path), "%s/modules.dep.bin", m->dir);
	if (access(path, F_OK) < 0) {
		snprintf(path, sizeof(path), "%s/modules.dep", m->dir);
		if (access(path, F_OK) < 0) {
			log_warning("no module index in %s (modules.dep.bin missing; run depmod)",
				    m->dir);
			r = -ENOENT;
			goto fail;
		}
	}
	base = strrchr(m->dir, '/');
	base = base ? base + 1 : m->dir;
	m->foreign = strcmp(base, u.release) != 0;
	m->async_probe = ap_kernel_has_async_probe();
	m->kernel_decompress = ap_kernel_knows_compressed_file();
	if (!m->async_probe)
		log_info("kernel %s predates async_probe (Linux 4.2): every insertion waits for "
			 "all asynchronous probes in the kernel", u.release);

	if (config && access(config, R_OK) < 0) {
		r = -errno;
		log_error("cannot read modprobe configuration %s: %m", config);
		r = r == -ENOENT ? -ENOENT : r;
		goto fail;
	}
	m->ctx = kmod_new(m->dir, config ? config_paths : NULL);
	if (!m->ctx) {
		r = -ENOMEM;
		log_error("libkmod: cannot open module tree %s", m->dir);
		goto fail;
	}
	kmod_set_log_fn(m->ctx, kmod_log_to_ap, NULL);
	kmod_set_log_priority(m->ctx, ap_log_enabled(AP_LOG_DEBUG) ? AP_LOG_DEBUG : AP_LOG_ERR);
	r = kmod_load_resources(m->ctx);
	if (r < 0) {
		log_error("libkmod: cannot load the module index of %s: %s", m->dir, strerror(-r));
		goto fail;
	}
	if (m->foreign)
		log_info("module tree %s is not the running kernel's (%s): loaded state ignored",
			 m->dir, u.release);
	*ret = m;
	return 0;
fail:
	ap_modules_free(m);
	return r;
}

static void resolved_free(struct resolved *res);

struct ap_modules *ap_modules_free(struct ap_modules *m)
{
	if (!m)
		return NULL;
	/* the kept plans hold kmod_module references: before the context */
	for (size_t i = 0; i < m->n_resolved; i++)
		resolved_free(m->resolved[i]);
	free(m->resolved);
	if (m->ctx)
		kmod_unref(m->ctx);
	ap_strv_free(m->blacklist, m->n_blacklist);
	ap_strv_free(m->soft_failed, m->n_soft_failed);
	ap_strv_free(m->touched, m->n_touched);
	free(m->dir);
	pthread_mutex_destroy(&m->lock);
	free(m);
	return NULL;
}

const char *ap_modules_dir(struct ap_modules *m)
{
	return m ? m->dir : NULL;
}

bool ap_modules_foreign(struct ap_modules *m)
{
	return m && m->foreign;
}

void ap_modules_blacklist(struct ap_modules *m, const char *comma_list)
{
	const char *p = comma_list;

	while (p && *p) {
		size_t n = strcspn(p, ",");
		char **v;

		if (n > 0) {
			v = realloc(m->blacklist, (m->n_blacklist + 1) * sizeof(*v));
			if (!v)
				return;
			m->blacklist = v;
			v[m->n_blacklist] = strndup(p, n);
			if (v[m->n_blacklist])
				m->n_blacklist++;
		}
		p += n;
		if (*p == ',')
			p++;
	}
}

static bool cmdline_blacklisted(struct ap_modules *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->n_blacklist; i++)
		if (modules_name_eq(m->blacklist[i], name))
			return true;
	return false;
}

void ap_modload_clear(struct ap_modload *l)
{
	free(l->module);
	ap_strv_free(l->chain, l->n_chain);
	memset(l, 0, sizeof(*l));
}

static struct ap_modload *loads_add(struct ap_modload **loads, size_t *n, const char *name)
{
	struct ap_modload *v = realloc(*loads, (*n + 1) * sizeof(*v));

	if (!v)
		return NULL;
	*loads = v;
	memset(&v[*n], 0, sizeof(v[*n]));
	v[*n].module = strdup(name);
	return &v[(*n)++];
}

static int load_alias(struct ap_modules *m, const char *modalias, const char *who,
		      struct ap_modload **loads, size_t *n_loads, bool device);

/*
 * Step 1 for @mod, one of the modules an alias resolves to (under
 * m->lock): blacklisted, built in, or its load plan in rm->plan.
 */
static void plan_module(struct ap_modules *m, struct kmod_module *mod, struct resolved_module *rm)
{
	const char *name = kmod_module_get_name(mod);
	struct plan *p = &rm->plan;
	size_t j;
	int r;

	if (cmdline_blacklisted(m, name)) {
		rm->result = AP_MOD_BLACKLISTED;
	} else if (kmod_module_get_initstate(mod) == KMOD_MODULE_BUILTIN) {
		rm->result = AP_MOD_BUILTIN;
	} else {
		r = modules_plan_build(m, mod, p);
		if (r == KMOD_PROBE_APPLY_BLACKLIST) {
			rm->result = AP_MOD_BLACKLISTED;
		} else if (r < 0) {
			rm->result = AP_MOD_FAILED;
			rm->error = r;
		} else {
			rm->chain = calloc(p->n ? p->n : 1, sizeof(char *));
			for (j = 0; rm->chain && j < p->n; j++)
				if ((rm->chain[rm->n_chain] = strdup(p->v[j].name)))
					rm->n_chain++;
			rm->result = m->dry_run ? AP_MOD_DRY_RUN : AP_MOD_OK;
		}
	}
}

static void resolved_free(struct resolved *res)
{
	size_t i;

	if (!res)
		return;
	for (i = 0; i < res->n; i++) {
		free(res->v[i].name);
		ap_strv_free(res->v[i].chain, res->v[i].n_chain);
		modules_plan_clear(&res->v[i].plan);
	}
	free(res->v);
	free(res->modalias);
	free(res);
}

/*
 * Step 1 for @modalias (under m->lock), once per run: the modules it
 * resolves to, each with its plan.  A scsi_debug host with a thousand
 * disks asks for "scsi:t-0x00" a thousand times, and a lookup with its
 * plan is thousands of system calls under TCG, all with the lock held.
 * The answer is kept in m->resolved, whose entries never change once
 * there: step 2 reads their plans without the lock.  NULL with *err set
 * when the lookup failed (not kept: the next request tries again).
 */
static struct resolved *resolve(struct ap_modules *m, const char *modalias, int *err)
{
	struct kmod_list *list = NULL, *l;
	struct resolved *res, **v;
	size_t i;
	int r;

	*err = 0;
	for (i = 0; i < m->n_resolved; i++)
		if (strcmp(m->resolved[i]->modalias, modalias) == 0)
			return m->resolved[i];
	r = kmod_module_new_from_lookup(m->ctx, modalias, &list);
	if (r < 0) {
		*err = r;
		return NULL;
	}
	res = calloc(1, sizeof(*res));
	if (!res || !(res->modalias = strdup(modalias)))
		goto oom;
	kmod_list_foreach(l, list) {
		struct kmod_module *mod = kmod_module_get_module(l);
		const char *name = kmod_module_get_name(mod);
		struct resolved_module *rv;
		bool dup = false;

		/* an alias can match one module through several patterns */
		for (i = 0; i < res->n; i++)
			dup = dup || strcmp(res->v[i].name, name) == 0;
		rv = dup ? res->v : realloc(res->v, (res->n + 1) * sizeof(*rv));
		if (!rv) {
			kmod_module_unref(mod);
			goto oom;
		}
		res->v = rv;
		if (!dup) {
			memset(&rv[res->n], 0, sizeof(rv[res->n]));
			rv[res->n].name = strdup(name);
			if (!rv[res->n].name) {
				kmod_module_unref(mod);
				goto oom;
			}
			plan_module(m, mod, &rv[res->n++]);
		}
		kmod_module_unref(mod);
	}
	kmod_module_unref_list(list);
	list = NULL;
	v = realloc(m->resolved, (m->n_resolved + 1) * sizeof(*v));
	if (!v)
		goto oom;
	m->resolved = v;
	m->resolved[m->n_resolved++] = res;
	return res;
oom:
	kmod_module_unref_list(list);
	resolved_free(res);
	*err = -ENOMEM;
	return NULL;
}

/*
 * Step 2 for @ld, without m->lock: report what step 1 decided, or carry
 * out its plan @p (@device as for load_alias()).
 */
static void insert_plan(struct ap_modules *m, struct ap_modload *ld, struct plan *p,
			const char *who, const char *modalias, bool device)
{
	size_t j;
	int r;

	if (ld->result == AP_MOD_BLACKLISTED) {
		log_dev_notice(who, "module %s is blacklisted, not loading it", ld->module);
	} else if (ld->result == AP_MOD_FAILED) {
		log_dev_error(who, "module %s: cannot resolve: %s", ld->module,
			      strerror(-ld->error));
	} else if (ld->result == AP_MOD_DRY_RUN) {
		char chain[1024] = "";

		for (j = 0; j < ld->n_chain; j++) {
			strncat(chain, " ", sizeof(chain) - strlen(chain) - 1);
			strncat(chain, ld->chain[j], sizeof(chain) - strlen(chain) - 1);
		}
		log_dev_notice(who, "would load %s:%s", ld->module, chain);
	} else if (ld->result == AP_MOD_OK) {
		ld->t0_ns = ap_now_ns();
		for (j = 0; j < p->n; j++) {
			bool ins;

			if (!p->v[j].required && modules_soft_failed(m, p->v[j].name, false))
				continue;
			/* a controller's own driver keeps its probe synchronous (see the top) */
			r = modules_action_run(m, &p->v[j], &ins,
					       device && strcmp(p->v[j].name, ld->module) == 0 &&
					       strncmp(modalias, "scsi:", 5) != 0);
			if (ins && strcmp(p->v[j].name, ld->module) == 0)
				ld->inserted = true;
			if (ins)
				log_dev_info(who, "inserted %s", p->v[j].name);
			if (r < 0 && p->v[j].required) {
				ld->result = AP_MOD_FAILED;
				ld->error = r;
				if (r == -ENOENT && p->v[j].path)
					log_dev_error(who,
						      "module %s: %s is missing (not in the image?)",
						      ld->module, p->v[j].path);
				else if (strcmp(p->v[j].name, ld->module) == 0)
					log_dev_error(who, "module %s failed to load: %s",
						      ld->module, strerror(-r));
				else
					log_dev_error(who,
						      "module %s: dependency %s failed to load: %s",
						      ld->module, p->v[j].name, strerror(-r));
				break;
			}
			if (r < 0 && !modules_soft_failed(m, p->v[j].name, true))
				log_dev_notice(who,
					       "module %s: soft dependency %s failed to load: %s, "
					       "ignoring it (not retried)", ld->module, p->v[j].name, strerror(-r));
		}
		ld->t1_ns = ap_now_ns();
	}
}


int ap_modules_load_alias(struct ap_modules *m, const char *modalias, const char *who,
			  struct ap_modload **loads, size_t *n_loads)
{
	return load_alias(m, modalias, who, loads, n_loads, true);
}

/*
 * @device: @modalias is a device's, and the module it resolves to is that
 * device's driver, which keeps its probe synchronous (see the top); else
 * (a file system, a character set) every module gets async_probe.
 */
static int load_alias(struct ap_modules *m, const char *modalias, const char *who,
		      struct ap_modload **loads, size_t *n_loads, bool device)
{
	struct resolved *res;
	size_t first = *n_loads, i, j;
	int r, failed = 0;

	pthread_mutex_lock(&m->lock);
	res = resolve(m, modalias, &r);
	pthread_mutex_unlock(&m->lock);
	if (!res) {
		log_dev_error(who, "cannot look up modalias %s: %s", modalias, strerror(-r));
		return 1;
	}
	if (res->n == 0) {
		log_dev_debug(who, "no module for %s", modalias);
		return 0;
	}
	for (i = 0; i < res->n; i++) {
		const struct resolved_module *rm = &res->v[i];
		struct ap_modload *ld = loads_add(loads, n_loads, rm->name);

		if (!ld || !ld->module) {
			if (ld)
				(*n_loads)--;
			return failed + (int)(res->n - i);
		}
		ld->t0_ns = ld->t1_ns = ap_now_ns();
		ld->result = rm->result;
		ld->error = rm->error;
		ld->chain = calloc(rm->n_chain ? rm->n_chain : 1, sizeof(char *));
		for (j = 0; ld->chain && j < rm->n_chain; j++)
			if ((ld->chain[ld->n_chain] = strdup(rm->chain[j])))
				ld->n_chain++;
	}

	/* Step 2: insertion, without the lock; the plans are read only. */
	for (i = 0; i < res->n; i++) {
		struct ap_modload *ld = &(*loads)[first + i];

		insert_plan(m, ld, &res->v[i].plan, who, modalias, device);
		if (ld->result == AP_MOD_FAILED)
			failed++;
	}
	return failed;
}

int ap_modules_load_name(struct ap_modules *m, const char *name, const char *who,
			 bool quiet_missing, bool device)
{
	struct ap_modload *loads = NULL;
	size_t n = 0, i;
	int failed;

	failed = load_alias(m, name, who, &loads, &n, device);
	if (n == 0 && failed == 0 && !quiet_missing)
		log_dev_warning(who, "no module provides %s", name);
	for (i = 0; i < n; i++)
		ap_modload_clear(&loads[i]);
	free(loads);
	return failed ? -EIO : n ? 0 : -ENOENT;
}

int ap_modules_note_unbound(struct ap_modules *m, const char *modalias, const char *who,
			    const char *syspath, const char *driver,
			    struct ap_modload **loads, size_t *n_loads)
{
	struct ap_modload *ld;

	/*
	 * A module that was found but failed or is blacklisted has been
	 * reported already; one that loaded and did not bind is the driver's
	 * business (it may decline a device).  What is left: the image's
	 * module index has nothing for this alias (the module is not in the
	 * image, or modules.alias was built without it).
	 */
	if (driver || !modalias || !*modalias || *n_loads > 0 || !ap_modalias_is_storage(modalias))
		return 0;
	log_dev_warning(who, "no driver: no module in %s for %s (%s)",
			m && m->dir ? m->dir : "the module tree", modalias, syspath ? syspath : "?");
	ld = loads_add(loads, n_loads, "");
	if (ld && !ld->module) {
		(*n_loads)--;
	} else if (ld) {
		ld->result = AP_MOD_NONE;
		ld->error = -ENOENT;
	}
	return 1;
}

int ap_modules_show(struct ap_modules *m, const char *modalias, FILE *out)
{
	struct kmod_list *list = NULL, *l;
	int r, count = 0;
	size_t j;

	pthread_mutex_lock(&m->lock);
	r = kmod_module_new_from_lookup(m->ctx, modalias, &list);
	if (r < 0) {
		pthread_mutex_unlock(&m->lock);
		log_error("cannot look up %s: %s", modalias, strerror(-r));
		return r;
	}
	kmod_list_foreach(l, list) {
		struct kmod_module *mod = kmod_module_get_module(l);
		const struct kmod_list *o;
		struct plan p;
		bool dup = false;

		/* an alias can match one module through several patterns */
		kmod_list_foreach(o, list) {
			struct kmod_module *om;

			if (o == l)
				break;
			om = kmod_module_get_module(o);
			dup = dup || strcmp(kmod_module_get_name(om), kmod_module_get_name(mod)) == 0;
			kmod_module_unref(om);
		}
		if (dup) {
			kmod_module_unref(mod);
			continue;
		}
		if (kmod_module_get_initstate(mod) == KMOD_MODULE_BUILTIN) {
			fprintf(out, "builtin %s\n", kmod_module_get_name(mod));
			count++;
		} else {
			r = modules_plan_build(m, mod, &p);
			if (r == KMOD_PROBE_APPLY_BLACKLIST) {
				fprintf(out, "blacklisted %s\n", kmod_module_get_name(mod));
			} else if (r < 0) {
				log_error("%s: %s: %s", modalias, kmod_module_get_name(mod), strerror(-r));
			} else {
				for (j = 0; j < p.n; j++) {
					if (p.v[j].command)
						fprintf(out, "install %s\n", p.v[j].command);
					else
						fprintf(out, "insmod %s%s%s\n",
							p.v[j].path ? p.v[j].path : p.v[j].name,
							p.v[j].options && *p.v[j].options ? " " : "",
							p.v[j].options ? p.v[j].options : "");
				}
				count++;
			}
			modules_plan_clear(&p);
		}
		kmod_module_unref(mod);
	}
	kmod_module_unref_list(list);
	pthread_mutex_unlock(&m->lock);
	return count;
}
