/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The manifest (--json): what a run found and did, as one JSON object.
 *
 * It is written from the read-only snapshot of output.h, in cookie
 * order: "run" (the settings; everything that differs between modes is
 * there or in a "time" object), "controllers", "modules" (each load of
 * each call), "devices" (SCSI devices, disks, partitions with their
 * blkid values), "links" (the creation log) and "summary" (the counts,
 * the exit status, the elapsed time and the peak RSS).  Times are
 * milliseconds from the start of the run.  Strings go through json.c.
 */
#include <errno.h>
#include <string.h>

#include "base/base.h"
#include "output/output.h"

void ap_manifest_count(const struct ap_manifest *m, struct ap_counts *c)
{
	const struct ap_manifest_node *v = m->nodes;
	size_t i, j, k;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < m->n_nodes; i++) {
		const struct ap_manifest_node *n = &v[i];

		c->stopped += n->stopped;
		if (n->discovery) {
			c->abandoned += n->abandoned && !n->stopped;
			continue;
		}
		if (n->kind == AP_KIND_CONTROLLER)
			c->controllers++;
		else if (n->kind == AP_KIND_DISK || n->kind == AP_KIND_PARTITION)
			c->devices++;
		if (n->abandoned) {
			/* the rest is its running call's */
			c->abandoned += !n->stopped;
			continue;
		}
		if (n->error)
			c->errors++;
		c->links_failed += (unsigned int)(n->links_failed > 0 ? n->links_failed : 0);
		for (j = 0; j < n->n_loads; j++) {
			bool seen = false;

			if (n->loads[j].result == AP_MOD_NONE) {      /* per device, not per name */
				c->mod_none++;
				continue;
			}

			/* count each module name once */
			for (k = 0; k < i && !seen; k++) {
				size_t l;

				if (v[k].abandoned)
					continue;
				for (l = 0; l < v[k].n_loads; l++)
					if (strcmp(v[k].loads[l].module, n->loads[j].module) == 0 &&
					    v[k].loads[l].result == n->loads[j].result)
						seen = true;
			}
			for (k = 0; k < j && !seen; k++)
				if (strcmp(n->loads[k].module, n->loads[j].module) == 0)
					seen = true;
			if (seen)
				continue;
			if (n->loads[j].result == AP_MOD_OK)
				c->mod_ok++;
			else if (n->loads[j].result == AP_MOD_FAILED)
				c->mod_failed++;
		}
	}
	for (i = 0; i < m->n_links; i++) {
		const struct ap_link_event *ev = m->links[i];

		if (ev && (ev->action == AP_LINK_CREATED || ev->action == AP_LINK_REPLACED ||
			   ev->action == AP_LINK_UNCHANGED))
			c->links++;
	}
}

int ap_counts_exit_status(const struct ap_counts *c)
{
	if (c->stop_signal)
		return 128 + c->stop_signal;
	return c->mod_failed || c->mod_none || c->errors || c->links_failed || c->abandoned
	       ? AP_EXIT_DEGRADED : AP_EXIT_OK;
}

static void json_fs(FILE *f, const struct ap_fsinfo *fs)
{
	static const char *const keys[] = {
		"type", "usage", "uuid", "uuid_sub", "label", "version", "pttype", "ptuuid",
		"part_entry_scheme", "part_entry_uuid", "part_entry_name", "part_entry_type",
	};
	const char *vals[] = {
		fs->type, fs->usage, fs->uuid, fs->uuid_sub, fs->label, fs->version, fs->pttype,
		fs->ptuuid, fs->part_entry_scheme, fs->part_entry_uuid, fs->part_entry_name,
		fs->part_entry_type,
	};
	bool first = true;
	size_t i;

	fputs("{", f);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (!vals[i])
			continue;
		fprintf(f, "%s\"%s\":", first ? "" : ",", keys[i]);
		ap_json_string(f, vals[i]);
		first = false;
	}
	if (fs->part_entry_number)
		fprintf(f, "%s\"part_entry_number\":%u", first ? "" : ",", fs->part_entry_number), first = false;
	if (fs->ambivalent)
		fprintf(f, "%s\"ambivalent\":true", first ? "" : ",");
	fputs("}", f);
}

/* "abandoned while probing": the status of a call given up on */
static void json_abandoned(FILE *f, const struct ap_manifest_node *n)
{
	char buf[128];

	snprintf(buf, sizeof(buf), "%s while %s", n->stopped ? "stopped" : "abandoned",
		 n->phase ? n->phase : "running");
	ap_json_string(f, buf);
}

/* A node a stop request left alone (not abandoned): see engine.c, "A stop request". */
static const char *stopped_status(const struct ap_manifest_node *n)
{
	return n->dropped_at_sync ? "stopped before publishing" : "stopped before probing";
}

/*
 * The peak RSS is in the summary's "time" object: like the times, it
 * differs from run to run and is left out where manifests are compared.
 */
static void json_time(FILE *f, const struct ap_manifest *m, const struct ap_manifest_node *n)
{
	if (n->stopped && !n->abandoned) {
		fputs(",\"time\":{}", f);       /* it did not run to the end */
		return;
	}
	if (n->abandoned) {
		/* the other times are its running call's */
		fprintf(f, ",\"time\":{\"spawn_ms\":%.3f,\"start_ms\":%.3f,\"abandoned_ms\":%.3f,"
			"\"call\":%llu}", ap_ms_between(m->t0, n->t_spawn),
			ap_ms_between(m->t0, n->t_start), ap_ms_between(m->t0, n->t_abandoned), n->call);
		return;
	}
	fprintf(f, ",\"time\":{\"spawn_ms\":%.3f,\"start_ms\":%.3f,\"sync_ms\":%.3f,"
		"\"end_ms\":%.3f,\"sync_wait_ms\":%.3f,\"call\":%llu}",
		ap_ms_between(m->t0, n->t_spawn), ap_ms_between(m->t0, n->t_start),
		ap_ms_between(m->t0, n->t_sync0), ap_ms_between(m->t0, n->t_end),
		ap_ms_between(n->t_sync0, n->t_sync1), n->call);
}

/* The top-level arrays: "  \"name\": [", an entry a line, "\n  ],". */
struct section {
	FILE *f;
	bool empty;
};

static struct section section_begin(FILE *f, const char *name)
{
	fprintf(f, "  \"%s\": [", name);
	return (struct section){ .f = f, .empty = true };
}

/* Starts an entry: the separator and the indentation. */
static void section_entry(struct section *s)
{
	fputs(s->empty ? "\n    " : ",\n    ", s->f);
	s->empty = false;
}

static void section_end(struct section *s)
{
	fputs(s->empty ? "],\n" : "\n  ],\n", s->f);
}

static void write_run(FILE *f, const struct ap_manifest *m)
{
	fprintf(f, "{\n  \"asyncprobe\": \"%s\",\n", PACKAGE_VERSION);
	/* everything that differs between modes is on this line or in "time" */
	fprintf(f, "  \"run\": {\"fastboot\":%s,\"dry_run\":%s,\"modules_dir\":",
		m->fastboot ? "true" : "false", m->dry_run ? "true" : "false");
	ap_json_string(f, m->modules_dir);
	fputs(",\"dev_dir\":", f);
	ap_json_string(f, m->dev_dir);
	fputs(",\"chaos\":", f);
	ap_json_string(f, m->chaos);
	fputs("},\n", f);
}

static void write_controllers(FILE *f, const struct ap_manifest *m)
{
	struct section sec;
	size_t i;

	sec = section_begin(f, "controllers");
	for (i = 0; i < m->n_nodes; i++) {
		const struct ap_manifest_node *n = &m->nodes[i];

		if (n->discovery || n->kind != AP_KIND_CONTROLLER)
			continue;
		section_entry(&sec);
		fprintf(f, "{\"cookie\":%llu,\"parent\":%llu,\"name\":",
			(unsigned long long)n->cookie, (unsigned long long)n->parent);
		ap_json_string(f, n->sysname);
		fputs(",\"subsystem\":", f);
		ap_json_string(f, n->subsystem);
		fputs(",\"syspath\":", f);
		ap_json_string(f, n->syspath);
		fputs(",\"modalias\":", f);
		ap_json_string(f, n->modalias);
		fputs(",\"driver\":", f);
		ap_json_string(f, n->abandoned ? NULL : n->driver);
		fprintf(f, ",\"hotplug\":%s", n->hotplug ? "true" : "false");
		if (n->abandoned) {
			fputs(",\"status\":", f);
			json_abandoned(f, n);
		} else if (n->stopped) {
			fputs(",\"status\":", f);
			ap_json_string(f, stopped_status(n));
		}
		json_time(f, m, n);
		fputs("}", f);
	}
	section_end(&sec);
}

static void write_modules(FILE *f, const struct ap_manifest *m)
{
	struct section sec;
	size_t i, j, k;

	sec = section_begin(f, "modules");
	for (i = 0; i < m->n_nodes; i++) {
		const struct ap_manifest_node *n = &m->nodes[i];

		/* an abandoned call's loads are still its own: see its status */
		for (j = 0; !n->abandoned && j < n->n_loads; j++) {
			const struct ap_modload *l = &n->loads[j];

			section_entry(&sec);
			fprintf(f, "{\"cookie\":%llu,\"device\":", (unsigned long long)n->cookie);
			ap_json_string(f, n->sysname);
			fputs(",\"modalias\":", f);
			ap_json_string(f, n->modalias);
			fputs(",\"module\":", f);
			ap_json_string(f, l->module);
			fprintf(f, ",\"result\":\"%s\"", ap_modresult_to_string(l->result));
			if (l->error)
				fprintf(f, ",\"error\":\"%s\"", strerror(-l->error));
			fputs(",\"chain\":[", f);
			for (k = 0; k < l->n_chain; k++) {
				fputs(k ? "," : "", f);
				ap_json_string(f, l->chain[k]);
			}
			fprintf(f, "],\"time\":{\"inserted\":%s,\"ms\":%.3f}}",
				l->inserted ? "true" : "false", ap_ms_between(l->t0_ns, l->t1_ns));
		}
	}
	section_end(&sec);
}

static void write_device_status(FILE *f, const struct ap_manifest_node *n)
{
	fputs(",\"status\":", f);
	if (n->abandoned) {
		json_abandoned(f, n);
	} else if (n->stopped) {
		ap_json_string(f, stopped_status(n));
	} else if (n->error) {
		fputs("\"", f);
		fprintf(f, "%s: %s", n->error_what ? n->error_what : "error", strerror(-n->error));
		fputs("\"", f);
	} else {
		fputs("\"ok\"", f);
	}
}

static void write_devices(FILE *f, const struct ap_manifest *m)
{
	static const struct ap_fsinfo none;
	struct section sec;
	size_t i;

	sec = section_begin(f, "devices");
	for (i = 0; i < m->n_nodes; i++) {
		const struct ap_manifest_node *n = &m->nodes[i];

		if (n->discovery || n->kind == AP_KIND_CONTROLLER)
			continue;
		section_entry(&sec);
		fprintf(f, "{\"cookie\":%llu,\"parent\":%llu,\"kind\":\"%s\",\"name\":",
			(unsigned long long)n->cookie,
			(unsigned long long)n->parent, ap_kind_to_string(n->kind));
		ap_json_string(f, n->devname ? n->devname : n->sysname);
		fputs(",\"syspath\":", f);
		ap_json_string(f, n->syspath);
		if (n->kind == AP_KIND_SCSI) {
			fputs(",\"driver\":", f);
			ap_json_string(f, n->abandoned ? NULL : n->driver);
		}
		if (n->kind == AP_KIND_PARTITION)
			fprintf(f, ",\"partition\":%u", n->partnum);
		if (n->kind == AP_KIND_DISK || n->kind == AP_KIND_PARTITION) {
			fputs(",\"fs\":", f);
			json_fs(f, n->abandoned || !n->fs ? &none : n->fs);
		}
		fprintf(f, ",\"hotplug\":%s", n->hotplug ? "true" : "false");
		write_device_status(f, n);
		json_time(f, m, n);
		fputs("}", f);
	}
	section_end(&sec);
}

static void write_links(FILE *f, const struct ap_manifest *m)
{
	struct section sec;
	size_t i;

	sec = section_begin(f, "links");
	for (i = 0; i < m->n_links; i++) {
		const struct ap_link_event *ev = m->links[i];

		if (!ev)
			continue;
		section_entry(&sec);
		fprintf(f, "{\"cookie\":%llu,\"action\":\"%s\",\"name\":",
			(unsigned long long)ev->cookie, ap_link_action_to_string(ev->action));
		ap_json_string(f, ev->name);
		fputs(",\"target\":", f);
		ap_json_string(f, ev->target);
		fputs(",\"owner\":", f);
		ap_json_string(f, ev->owner);
		if (ev->error)
			fprintf(f, ",\"error\":\"%s\"", strerror(-ev->error));
		fputs("}", f);
	}
	section_end(&sec);
}

static void write_summary(FILE *f, const struct ap_manifest *m)
{
	const struct ap_counts *c = &m->counts;

	fprintf(f, "  \"summary\": {\"controllers\":%u,\"devices\":%u,\"links\":%u,"
		"\"links_failed\":%u,\"modules_loaded\":%u,\"modules_failed\":%u,"
		"\"modules_missing\":%u,\"errors\":%u,\"abandoned\":%u,\"stopped\":%u,"
		"\"exit_status\":%d,\"time\":{\"elapsed_ms\":%.3f,\"peak_rss_kib\":%ld}}\n}\n",
		c->controllers, c->devices, c->links, c->links_failed, c->mod_ok, c->mod_failed,
		c->mod_none, c->errors, c->abandoned, c->stopped, ap_counts_exit_status(c),
		ap_ms_between(m->t0, m->t1), ap_peak_rss_kib());
}

int ap_manifest_write(const struct ap_manifest *m, const char *path)
{
	FILE *f;
	int r = 0;

	f = ap_out_open(path, &r);
	if (!f) {
		log_error("cannot write %s: %s", path, strerror(-r));
		return r;
	}
	write_run(f, m);
	write_controllers(f, m);
	write_modules(f, m);
	write_devices(f, m);
	write_links(f, m);
	write_summary(f, m);
	r = ap_out_close(f);
	if (r < 0)
		log_error("cannot write %s: %s", strcmp(path, "-") == 0 ? "the manifest to stdout" : path,
			  strerror(-r));
	return r;
}
