/* SPDX-License-Identifier: GPL-2.0-or-later */
/* PID 1 and initrd-unit mode (init*.c; init.c has the theory of operation). */
#ifndef ASYNCPROBE_INIT_H
#define ASYNCPROBE_INIT_H

#include <stdbool.h>

/*
 * Run as the initramfs's /init: mount the API filesystems, read the kernel
 * command line into @cfg, run the engine, wait for the root device, mount
 * it, switch root and exec init.  Returns only on failure outside PID 1;
 * as PID 1 it never returns.  @cfg holds the command-line options.
 *
 * Outside PID 1 (--init given by hand, or ExecStart= of asyncprobe.service
 * in a systemd initrd) nothing is mounted and root is not switched: it
 * waits for the root device of the kernel command line, reports READY=1 to
 * systemd once its link exists, finishes the run and returns the exit
 * status (AP_EXIT_DEGRADED when the root device did not appear).
 */
struct ap_config;

int ap_init_main(struct ap_config *cfg, int argc, char **argv);

/* ------------------------------------------ pieces of PID 1, for tests */

/*
 * Remove everything below the directory @dirfd (not @dirfd itself),
 * without crossing into other mounts: a directory whose st_dev differs, or
 * that statx() reports as a mount root, is left alone with its contents.
 * Symbolic links are removed, never followed.  Returns the number of
 * entries that could not be removed, or -errno if @dirfd cannot be read.
 */
int ap_init_remove_tree(int dirfd);

/*
 * Find the init to exec in the root file system @root (a directory):
 * @requested (init=) if given and executable there, else the first of
 * /sbin/init, /etc/init, /bin/init, /bin/sh.  Paths, symbolic links
 * included, are resolved inside @root.  Returns 0 and the path (as seen
 * from inside @root) in *ret, or -ENOENT.
 */
int ap_init_find_init(const char *root, const char *requested, char **ret);

/*
 * Split mount options (rootflags=) into MS_* flags, applied on top of
 * *flags, and the file-system-specific rest in *ret_data (malloc'ed, NULL
 * when empty).  Returns 0 or -ENOMEM.
 */
int ap_init_mount_options(const char *options, unsigned long *flags, char **ret_data);

/* Whether @path is the root of a mount (statx, or st_dev against ..). */
bool ap_init_is_mount_point(const char *path);

#endif
