/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Asynchronous polkit authorization for method handlers.
 *
 * In a handler (after reading and validating the arguments, with the
 * caller's uid and pid from its session):
 *
 *     r = polkit_check(broker->polkit, m, "org.uebroker1.delete", interactive, uid, pid, error);
 *     if (r < 0) return r;        denied or failed: error is set
 *     if (r == 0) return 1;       asked polkit; the method is re-run
 *                                 (sd_bus_enqueue_for_read) when it answers
 *     ...authorized: change state, reply
 *
 * A caller with the daemon's uid or root is allowed outright (on the system
 * bus too, as systemd does, so root is not locked out when polkit is gone).
 * Others: on the system bus the subject is ("system-bus-name", {"name":
 * sender}), never a pid (the pid-reuse race of CVE-2013-4288); on any other
 * bus ("unix-process", {pid, start-time, uid}) sent over a system bus
 * connection opened on first need. Polkit unreachable or failing is a
 * denial. The uid and pid come from the bus's credentials (the session
 * recorded them), never from arguments.
 *
 * Fairness: each waiting check is charged to its uid (user-charges.h,
 * CHARGE_AUTHORIZATIONS: AuthorizationsPerUser= of POLKIT_MAX_PENDING);
 * beyond, its calls are refused with LimitsExceeded. At most POLKIT_MAX_IN_FLIGHT checks are sent at once, below
 * dbus-daemon's 128 pending replies per connection, so a flood never makes
 * the bus refuse the broker's calls; later checks wait in order and are
 * sent as answers come back. Those decisions (which call a stored check
 * belongs to, what its re-run gets, which check goes next, the charges)
 * are polkit-queue.h's.
 *
 * A call waiting for polkit holds a reference to its message; the answer is
 * dropped when the re-run takes it, when the event loop next goes idle
 * without the re-run asking for it, as soon as the sender leaves the bus
 * (polkit_registry_forget_sender(), called by the broker's departure
 * watch) or with the registry.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

struct polkit_registry;
struct user_charges;

/* Checks waiting for polkit in all (each holds its call's message), and how
 * many are sent to polkit at once. */
#define POLKIT_MAX_PENDING 1024u
#define POLKIT_MAX_IN_FLIGHT 64u

/* @bus is the connection the broker serves on; @bus_is_system tells which
 * subject kind applies; @charges (the broker's, outliving the registry)
 * bounds the checks waiting per uid and in all. */
int polkit_registry_new(sd_bus *bus, bool bus_is_system, struct user_charges *charges,
                        struct polkit_registry **ret);
struct polkit_registry *polkit_registry_free(struct polkit_registry *reg);

/* 1: authorized; 0: pending, return 1 from the handler and expect to be
 * called again with the same message; negative errno with @error set
 * (-EACCES with org.freedesktop.DBus.Error.AccessDenied when denied, or
 * org.freedesktop.DBus.Error.InteractiveAuthorizationRequired when polkit
 * wants a password the call did not allow asking for; -EBUSY with
 * org.freedesktop.DBus.Error.LimitsExceeded when too many checks wait). */
int polkit_check(struct polkit_registry *reg, sd_bus_message *m, const char *action, bool interactive, uid_t uid,
                 pid_t pid, sd_bus_error *error);

/* Drops every check of @sender: it left the bus. A check already sent
 * stays, orphaned, until polkit answers it or the call times out: the bus
 * counts it against the broker's pending calls until then. */
void polkit_registry_forget_sender(struct polkit_registry *reg, const char *sender);

/* Checks in flight, queued, or answered and not yet taken by the re-run,
 * for callers still there. */
size_t polkit_registry_n_queries(const struct polkit_registry *reg);
/* Checks sent for callers that left, still out. */
size_t polkit_registry_n_orphaned(const struct polkit_registry *reg);
