/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Asynchronous polkit authorization for method handlers.
 *
 * In a handler (after reading and validating the arguments):
 *
 *     r = polkit_check(broker->polkit, m, "org.uebroker1.delete", interactive, error);
 *     if (r < 0) return r;        denied or failed: error is set
 *     if (r == 0) return 1;       asked polkit; the method is re-run
 *                                 (sd_bus_enqueue_for_read) when it answers
 *     ...authorized: change state, reply
 *
 * On the system bus the subject is ("system-bus-name", {"name": sender}).
 * On any other bus a caller with the daemon's uid or root is allowed
 * outright; others are checked as ("unix-process", {pid, start-time, uid})
 * on the system bus, and refused if polkit cannot be reached. The caller's
 * identity always comes from the bus's credentials (sd_bus_query_sender_creds),
 * never from arguments.
 */

#include <stdbool.h>
#include <systemd/sd-bus.h>

struct polkit_registry;

/* @bus is the connection the broker serves on; @bus_is_system tells which
 * subject kind applies. */
int polkit_registry_new(sd_bus *bus, bool bus_is_system, struct polkit_registry **ret);
struct polkit_registry *polkit_registry_free(struct polkit_registry *reg);

/* 1: authorized; 0: pending, return 1 from the handler and expect to be
 * called again with the same message; negative errno with @error set
 * (org.freedesktop.DBus.Error.AccessDenied when denied). */
int polkit_check(struct polkit_registry *reg, sd_bus_message *m, const char *action, bool interactive,
                 sd_bus_error *error);

/* Drops what is pending for a connection that went away. */
void polkit_forget_sender(struct polkit_registry *reg, const char *sender);
