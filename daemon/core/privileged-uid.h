/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Who is privileged: root or the daemon's own uid. Such callers skip polkit
 * (as systemd's services do) and the limits meant for other users. The
 * uid must come from the bus's credentials (bus/bus-caller.h). */

#include <stdbool.h>
#include <sys/types.h>
#include <unistd.h>

static inline bool uid_privileged(uid_t uid) {
        return uid == 0 || uid == geteuid();
}
