/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* uebctl's options, set by main() (uebctl.c) before a command runs and read
 * by the commands: a file of their own, below both. */
#include "uebctl.h"

struct uebctl_options uebctl_opts = {
        .legend = true,
        .pager = true,
        .ask_password = true,
};
