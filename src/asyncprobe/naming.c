/* SPDX-License-Identifier: GPL-2.0-or-later */
/* STUB: to be replaced by the naming work (issue 4). */
#include <errno.h>
#include <string.h>

#include "asyncprobe.h"
#include "names.h"

void ap_fsinfo_clear(struct ap_fsinfo *fs)
{
	memset(fs, 0, sizeof(*fs));
}

int ap_namelist_add(struct ap_namelist *l, const char *name)
{
	return -ENOSYS;
}

void ap_namelist_free(struct ap_namelist *l)
{
	memset(l, 0, sizeof(*l));
}

int ap_names_for_device(struct udev_device *dev, const struct ap_fsinfo *fs,
			struct ap_namelist *ret)
{
	memset(ret, 0, sizeof(*ret));
	return 0;
}
