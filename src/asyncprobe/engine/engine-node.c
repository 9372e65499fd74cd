/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Nodes (see internal.h): registering a device once, by syspath
 * (an open-addressing index), its plain-data description from udev, the
 * step a call is in (for the hang rule, engine-settle.c), its failure and
 * its freeing.  The lowest of the engine's files: it calls none of them.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "base/base.h"

const char *eng_node_label(const struct ap_node *n)
{
	if (n->discovery)
		return "discovery";
	return n->devname ? n->devname : n->sysname ? n->sysname : "?";
}

/* A call begins a step: what the hang rule and the log call it. */
void eng_node_step(struct ap_node *n, const char *phase)
{
	pthread_mutex_lock(&n->e->lock);
	if (!n->abandoned) {    /* frozen at what it hung in */
		n->phase = phase;
		n->t_progress = ap_now_ns();
	}
	pthread_mutex_unlock(&n->e->lock);
}

void eng_node_free(struct ap_node *n)
{
	size_t i;

	if (!n)
		return;
	free(n->syspath);
	free(n->sysname);
	free(n->subsystem);
	free(n->modalias);
	free(n->driver);
	free(n->devname);
	free(n->devnode);
	free(n->error_what);
	ap_fsinfo_clear(&n->fs);
	for (i = 0; i < n->n_loads; i++)
		ap_modload_clear(&n->loads[i]);
	free(n->loads);
	free(n->children);
	ap_found_list_free(&n->found);
	ap_namelist_free(&n->names);
	free(n);
}

/* Fill the plain-data description of a node from its udev device. */
void eng_node_describe(struct ap_node *n, struct udev_device *dev)
{
	free(n->sysname);
	n->sysname = ap_strdup_or_null(udev_device_get_sysname(dev), NULL);
	free(n->subsystem);
	n->subsystem = ap_strdup_or_null(udev_device_get_subsystem(dev), NULL);
	free(n->modalias);
	n->modalias = ap_strdup_or_null(ap_device_modalias(dev), NULL);
	free(n->driver);
	n->driver = ap_strdup_or_null(udev_device_get_driver(dev), NULL);
	/*
	 * Only a block device's uevent file is read here (for DEVNAME): a
	 * SCSI device's cannot be while its upper driver probes it.
	 */
	if (n->kind == AP_KIND_DISK || n->kind == AP_KIND_PARTITION) {
		const char *devnode = udev_device_get_devnode(dev);
		const char *dn = udev_device_get_property_value(dev, "DEVNAME");

		free(n->devnode);
		n->devnode = ap_strdup_or_null(devnode, NULL);
		free(n->devname);
		if (dn && dn[0] != '/')
			n->devname = strdup(dn);
		else if (devnode && strncmp(devnode, "/dev/", 5) == 0)
			n->devname = strdup(devnode + 5);
		else
			n->devname = ap_strdup_or_null(udev_device_get_sysname(dev), NULL);
		if (n->kind == AP_KIND_PARTITION) {
			const char *p = udev_device_get_sysattr_value(dev, "partition");

			n->partnum = p ? (unsigned int)strtoul(p, NULL, 10) : 0;
		}
	}
}

bool eng_node_describe_scsi(struct ap_node *n)
{
	char modalias[256], link[256];
	const char *sysname = strrchr(n->syspath, '/');

	if (n->kind != AP_KIND_SCSI || !sysname ||
	    !ap_read_attr(n->syspath, "modalias", modalias, sizeof(modalias)) || !*modalias ||
	    !ap_link_name(n->syspath, "subsystem", link, sizeof(link)))
		return false;
	free(n->sysname);
	n->sysname = strdup(sysname + 1);
	free(n->subsystem);
	n->subsystem = strdup(link);
	free(n->modalias);
	n->modalias = strdup(modalias);
	eng_node_read_driver(n);
	return true;
}

/* The driver bound to @n's device now, from its "driver" link. */
void eng_node_read_driver(struct ap_node *n)
{
	char drv[256];

	free(n->driver);
	n->driver = ap_link_name(n->syspath, "driver", drv, sizeof(drv)) ? strdup(drv) : NULL;
}

/*
 * The syspath index: every registration looked its path up by walking all
 * nodes, quadratic in the devices (100,000 string compares for 446 nodes,
 * about 2 million at 1024 disks).  FNV-1a, linear probing; nodes are only
 * removed all at once, in ap_engine_free().
 */
size_t eng_node_path_hash(const char *s)
{
	return (size_t)ap_hash_string(s);
}

struct ap_node **eng_node_path_slot_locked(struct ap_engine *e, const char *syspath)
{
	size_t mask = e->by_path_size - 1, i = eng_node_path_hash(syspath) & mask;

	while (e->by_path[i] && strcmp(e->by_path[i]->syspath, syspath) != 0)
		i = (i + 1) & mask;
	return &e->by_path[i];
}

/* Room for one more node in the index.  Returns 0 or -ENOMEM. */
static int path_index_grow_locked(struct ap_engine *e)
{
	struct ap_node **old = e->by_path;
	size_t old_size = e->by_path_size, i;

	if (old && (e->n_nodes + 1) * 2 <= old_size)
		return 0;
	e->by_path_size = old_size ? old_size * 2 : 128;
	e->by_path = calloc(e->by_path_size, sizeof(*e->by_path));
	if (!e->by_path) {
		e->by_path = old;
		e->by_path_size = old_size;
		return -ENOMEM;
	}
	for (i = 0; i < old_size; i++)
		if (old[i])
			*eng_node_path_slot_locked(e, old[i]->syspath) = old[i];
	free(old);
	return 0;
}

struct ap_node *eng_node_find_locked(struct ap_engine *e, const char *syspath)
{
	return e->by_path ? *eng_node_path_slot_locked(e, syspath) : NULL;
}

/*
 * Register a device (dedup by syspath).  Returns the new node, or NULL when
 * it is known already (or on OOM).  Engine lock held by the caller.
 */
struct ap_node *eng_node_register_locked(struct ap_engine *e, const char *syspath,
					    enum ap_kind kind, struct ap_node *parent)
{
	struct ap_node *n;

	if (eng_node_find_locked(e, syspath))
		return NULL;
	if (path_index_grow_locked(e) < 0)
		return NULL;
	if (e->n_nodes == e->allocated) {
		size_t na = e->allocated ? e->allocated * 2 : 64;
		struct ap_node **v = realloc(e->nodes, na * sizeof(*v));

		if (!v)
			return NULL;
		e->nodes = v;
		e->allocated = na;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->syspath = strdup(syspath);
	if (!n->syspath) {
		free(n);
		return NULL;
	}
	n->e = e;
	n->kind = kind;
	n->parent = parent;
	e->nodes[e->n_nodes++] = n;
	*eng_node_path_slot_locked(e, n->syspath) = n;
	return n;
}

void eng_node_fail(struct ap_node *n, int error, const char *what)
{
	if (n->error)
		return;
	n->error = error;
	n->error_what = strdup(what);
}
