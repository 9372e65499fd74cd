/* SPDX-License-Identifier: GPL-2.0-or-later */
/* STUB: main(); to be replaced by the coldplug work (issue 3). */
#include <string.h>

#include "asyncprobe.h"
#include "engine.h"

struct ap_config ap_cfg;

void ap_config_defaults(struct ap_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->dev_dir = "/dev";
	cfg->fastboot = -1;
	cfg->device_timeout_ms = 10000;
}

int main(int argc, char **argv)
{
	struct ap_engine *e = NULL;
	int r;

	ap_config_defaults(&ap_cfg);
	ap_log_open(AP_LOG_STDERR, 0);
	r = ap_engine_start(&e);
	if (r < 0)
		return AP_EXIT_SYSTEM;
	r = ap_engine_finish(e);
	ap_engine_free(e);
	return r;
}
