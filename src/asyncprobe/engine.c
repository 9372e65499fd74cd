/* SPDX-License-Identifier: GPL-2.0-or-later */
/* STUB: to be replaced by the coldplug work (issue 3). */
#include <errno.h>

#include "engine.h"

struct ap_engine { int dummy; };

int ap_engine_start(struct ap_engine **ret)
{
	*ret = calloc(1, sizeof(struct ap_engine));
	return *ret ? 0 : -ENOMEM;
}

int ap_engine_wait_path(struct ap_engine *e, const char *relpath, unsigned int timeout_ms)
{
	return -ENOENT;
}

int ap_engine_finish(struct ap_engine *e)
{
	return AP_EXIT_OK;
}

struct ap_engine *ap_engine_free(struct ap_engine *e)
{
	free(e);
	return NULL;
}

void ap_engine_dump_state(struct ap_engine *e, FILE *f)
{
}
