/* SPDX-License-Identifier: GPL-2.0-or-later */
/* STUB: to be replaced by the initramfs work (issue 5). */
#include "asyncprobe.h"
#include "init.h"

int ap_init_main(int argc, char **argv)
{
	log_error("--init is not implemented yet");
	return AP_EXIT_SYSTEM;
}
