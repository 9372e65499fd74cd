/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The defaults of struct ap_config (base.h). */
#include <string.h>

#include "base/base.h"

void ap_config_defaults(struct ap_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->dev_dir = "/dev";
	cfg->fastboot = -1;
	cfg->device_timeout_ms = 10000;
	cfg->log_target = AP_LOG_AUTO;
}
