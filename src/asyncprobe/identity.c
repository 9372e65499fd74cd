/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Placeholder: the naming work (issue 4) fills this file. */
#include "asyncprobe.h"
