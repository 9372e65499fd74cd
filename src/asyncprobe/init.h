/* SPDX-License-Identifier: GPL-2.0-or-later */
/* PID 1 mode (init.c). */
#ifndef ASYNCPROBE_INIT_H
#define ASYNCPROBE_INIT_H

/*
 * Run as the initramfs's /init: mount the API filesystems, read the kernel
 * command line into ap_cfg, run the engine, wait for the root device, mount
 * it, switch root and exec init.  Returns only on failure outside PID 1;
 * as PID 1 it never returns.  ap_cfg holds the command-line options.
 */
int ap_init_main(int argc, char **argv);

#endif
