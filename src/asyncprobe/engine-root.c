/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Root first (engine.c, "Root first"): reading the root's by-path name
 * (asyncprobe.root_path=, --root-path, the image's record) and moving the
 * root's controller, device, disk and partition to the front of their
 * siblings before a node's children go into the order.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "engine-internal.h"
#include "coldplug.h"
#include "identity.h"

/* "dddd:bb:dd.f" at @s, ending there or with a '-'. */
static bool at_pci_address(const char *s)
{
	static const char pattern[] = "hhhh:hh:hh.h";
	size_t i;

	for (i = 0; i < sizeof(pattern) - 1; i++) {
		if (pattern[i] == 'h' ? !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))
				      : s[i] != pattern[i])
			return false;
	}
	return s[i] == '\0' || s[i] == '-';
}

/*
 * Root first: the root device's /dev/disk/by-path name in the
 * configuration (asyncprobe.root_path= on the kernel command line, else
 * --root-path, else in the initramfs what asyncprobe-mkinitramfs recorded:
 * ap_config_apply_kernel(), init-bootparams.c).  The PCI address in it
 * (udev's by-path names hold the storage controller's, the closest PCI
 * device) picks the controllers that come first in the order; "none" or
 * nothing: none.
 */
void root_first_setup(struct ap_engine *e)
{
	const char *name = e->cfg.root_path, *p;
	const char *src = e->cfg.root_path_source ? e->cfg.root_path_source : "--root-path";

	if (!name || !*name || strcmp(name, "none") == 0)
		return;
	if (strncmp(name, "/dev/", 5) == 0)
		name += 5;
	if (strncmp(name, "disk/by-path/", 13) == 0)
		name += 13;
	e->root_path = strdup(name);
	if (!e->root_path)
		return;
	for (p = name; (p = strstr(p, "pci-")); p += 4)
		if ((p == name || p[-1] == '-') && at_pci_address(p + 4)) {
			memcpy(e->root_pci, p + 4, 12);
			e->root_pci[12] = '\0';
			break;
		}
	if (!e->root_pci[0])
		log_warning("%s=%s: no PCI address in this by-path name; the order is unchanged",
			    src, name);
	else
		log_info("%s=%s: the root's controller %s comes first", src, name, e->root_pci);
}

/* Is @syspath the root's PCI device or below it? */
static bool on_root_controller(const struct ap_engine *e, const char *syspath)
{
	const char *p = syspath;
	size_t len = strlen(e->root_pci);

	while ((p = strstr(p, e->root_pci))) {
		if (p > syspath && p[-1] == '/' && (p[len] == '/' || p[len] == '\0'))
			return true;
		p += len;
	}
	return false;
}

/* Move the entries @first marks to the front of @l, keeping both groups' order. */
static void stable_front(struct ap_found_list *l, const bool *first)
{
	struct ap_found *v = malloc(l->n * sizeof(*v));
	size_t i, k = 0;

	if (!v)
		return;
	for (i = 0; i < l->n; i++)
		if (first[i])
			v[k++] = l->v[i];
	for (i = 0; i < l->n; i++)
		if (!first[i])
			v[k++] = l->v[i];
	memcpy(l->v, v, l->n * sizeof(*v));
	free(v);
}

/*
 * Is the by-path value @name the root's, or one the root's continues
 * ("pci-X-ata-2.0" for "pci-X-ata-2.0-part1", never "pci-X-ata-2" for
 * "pci-X-ata-2.0": names continue at a '-')?  @exact: equal only.  A root
 * named by its "virtio-pci-..." alias is compared without "virtio-".
 */
static bool root_path_has(const struct ap_engine *e, const char *name, bool exact)
{
	const char *r = e->root_path;
	size_t len;

	if (!name)
		return false;
	if (strncmp(r, "virtio-", 7) == 0 && strncmp(name, "virtio-", 7) != 0)
		r += 7;
	len = strlen(name);
	return strncmp(r, name, len) == 0 && (r[len] == '\0' || (!exact && r[len] == '-'));
}

/*
 * Is @f (a child of a node on the root's controller) on the root's chain?
 * Its by-path value, as path_id gives it for a SCSI device, a virtio
 * device, a disk or an NVMe namespace (a partition: its disk's plus
 * "-partN"), is the root's name or a beginning of it.
 */
static bool on_root_chain(const struct ap_engine *e, struct udev *udev, const struct ap_found *f)
{
	struct udev_device *d = udev_device_new_from_syspath(udev, f->syspath), *of = d;
	_cleanup_free_ char *path = NULL, *compat = NULL;
	bool hit = false;

	if (!d)
		return false;
	if (f->kind == AP_KIND_PARTITION)
		of = udev_device_get_parent(d); /* path_id reads a namespace's nsid where it starts */
	if (of && ap_path_id(of, &path, &compat) == 0) {
		if (f->kind == AP_KIND_PARTITION) {
			const char *names[] = { path, compat };
			char part[PATH_MAX];

			for (size_t i = 0; i < 2 && !hit; i++)
				hit = names[i] && snprintf(part, sizeof(part), "%s-part%u", names[i],
							   f->partnum) < (int)sizeof(part) &&
				      root_path_has(e, part, true);
		} else {
			hit = root_path_has(e, path, false) || root_path_has(e, compat, false);
		}
	}
	udev_device_unref(d);
	return hit;
}

bool root_chain_node(struct ap_engine *e, struct udev *udev, const struct ap_node *n)
{
	struct ap_found f = { .syspath = n->syspath, .kind = n->kind };

	return e->root_pci[0] && on_root_controller(e, n->syspath) && on_root_chain(e, udev, &f);
}

/*
 * Root first, applied to @n's list of children (sorted by topology)
 * before they are put into the order.  Discovery's list: the controllers
 * at the root's PCI address first.  Below them: the child on the root's
 * chain (its SCSI device or virtio device, its disk, its partition) before
 * its siblings.  Both moves are stable, so every other device keeps its
 * place relative to the rest; the result depends on the tree and the root
 * path alone.
 */
void root_first_sort(struct ap_engine *e, struct udev *udev, struct ap_node *n)
{
	struct ap_found_list *l = &n->found;
	_cleanup_free_ bool *first = NULL;
	size_t i, k = 0;

	if (!e->root_pci[0] || !l->n)
		return;
	if (!n->discovery && !on_root_controller(e, n->syspath))
		return;
	first = calloc(l->n, sizeof(*first));
	if (!first)
		return;
	for (i = 0; i < l->n; i++) {
		first[i] = n->discovery ? on_root_controller(e, l->v[i].syspath)
					: on_root_chain(e, udev, &l->v[i]);
		k += first[i];
	}
	if (!k) {
		if (n->discovery)
			log_notice("root path %s: no controller at %s (a disk moved, or another machine's "
				   "image): the order is unchanged", e->root_path, e->root_pci);
		return;
	}
	if (!n->discovery)
		for (i = 0; i < l->n; i++)
			if (first[i])
				log_debug("%s: %s is on the root's chain (%s), it comes first",
					  node_label(n), l->v[i].syspath, e->root_path);
	stable_front(l, first);
}
