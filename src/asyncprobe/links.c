/* SPDX-License-Identifier: GPL-2.0-or-later */
/* STUB: to be replaced by the links work (issue 4). */
#include <errno.h>

#include "asyncprobe.h"
#include "names.h"

struct ap_links { int dummy; };

struct ap_links *ap_links_new(const char *dev_dir, bool dry_run)
{
	return calloc(1, sizeof(struct ap_links));
}

struct ap_links *ap_links_free(struct ap_links *l)
{
	free(l);
	return NULL;
}

int ap_links_publish(struct ap_links *l, async_cookie_t cookie, const char *devname,
		     const char *parent_devname, const struct ap_namelist *names)
{
	return 0;
}

size_t ap_links_log_size(struct ap_links *l)
{
	return 0;
}

const struct ap_link_event *ap_links_log_get(struct ap_links *l, size_t i)
{
	return NULL;
}

const char *ap_link_action_to_string(enum ap_link_action a)
{
	return "?";
}
