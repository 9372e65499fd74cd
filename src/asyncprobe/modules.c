/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Placeholder: the coldplug work (issue 3) fills this file. */
#include "asyncprobe.h"
