/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Placeholder: the initramfs work (issue 5) fills this file. */
#include "asyncprobe.h"
