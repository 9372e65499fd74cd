/* SPDX-License-Identifier: GPL-2.0-or-later */
/* STUB: to be replaced by the initramfs work (issue 5). */
#include <errno.h>
#include <string.h>

#include "asyncprobe.h"
#include "cmdline.h"

int ap_cmdline_read(char **ret)
{
	*ret = strdup("");
	return *ret ? 0 : -ENOMEM;
}

bool ap_cmdline_get(const char *cmdline, const char *key, char **ret_value)
{
	if (ret_value)
		*ret_value = NULL;
	return false;
}
