/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Who sent a method call, as the bus vouches for it. */

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

/* The sender's effective uid and pid from the bus's kernel-verified
 * credentials (dbus-daemon's SO_PEERCRED): never from the message body,
 * never augmented from /proc (racy: -EPERM). *@ret_pid is 0 when the bus
 * does not know the pid. Negative errno when the uid is unknown. */
int bus_caller_identify(sd_bus_message *m, uid_t *ret_uid, pid_t *ret_pid);
