/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The kernel's user_events files, as both kernel providers (upstream.c,
 * v1.c) and the tracefs recordings (tracefs-record.c) use them: finding
 * tracefs, telling the kernel's user_events interfaces apart, the
 * registration string, deleting an event; and upstream's own pure parts,
 * where a status byte's enable bit lives and the lines of
 * user_events_status. No state, no sd-bus: unit-tested on fake directory
 * trees (tests/unit/test-upstream.c).
 *
 * The ioctl structures are in src/shared/wire/user-events-abi.h.
 */

#include <stddef.h>
#include <stdint.h>

#include "user-events-abi.h"

#include "event-def.h"

/* The status word of a registration: one u32 (enable_size 4). */
#define UPSTREAM_ENABLE_SIZE 4u

enum user_events_interface {
        USER_EVENTS_IFACE_NONE,         /* no user_events in this tracefs */
        USER_EVENTS_IFACE_UPSTREAM,     /* Linux 6.4+: remote-write enablers */
        USER_EVENTS_IFACE_ORIGINAL,     /* the original byte-per-event page (v1, kernel/) */
        USER_EVENTS_IFACE_BITMAP,       /* 5.18-6.3 BROKEN: bit-per-event page */
};

const char *user_events_interface_name(enum user_events_interface i);

/*
 * Where tracefs is: @override when not NULL (used as given); else the first
 * of @candidates (NULL-terminated) that is a mounted tracefs (it holds a
 * "trace" or "user_events_data" file); else the mount point of the first
 * "tracefs" line of @mounts_path (/proc/mounts). -ENOENT when none.
 */
int tracefs_find(const char *override, const char *const *candidates, const char *mounts_path,
                          char **ret);

/*
 * Which interface the user_events files in @tracefs speak, without side
 * effects: nothing is opened for writing, nothing registered; the status
 * file is opened read-only, mapped read-only and unmapped again, and its
 * text read. Returns the interface and, when it is not the upstream one
 * (or @tracefs is unusable), a malloc()ed reason in *@ret_reason (may be
 * NULL); negative errno on allocation failure only.
 */
int user_events_detect_interface(const char *tracefs, char **ret_reason);

/*
 * The name_args string for DIAG_IOCSREG: "NAME type name; type name".
 * Flags are dropped (upstream refuses "NAME:flag" with EINVAL); array sizes
 * are written in decimal (the kernel parses only decimal, and copies at most
 * 6 characters of the brackets: docs/DECISIONS.md); struct fields keep their
 * size. NULL when out of memory.
 */
char *user_events_registration_string(const struct event_def *def);

/*
 * The enabler for status byte @status_index of a page at @page_addr: the
 * kernel sets and clears one bit of a u32, so the u32 is the aligned word
 * holding the byte and the bit is that byte's lowest bit. The byte is then
 * non-zero exactly while the event is enabled, as on a v1 page.
 */
void upstream_enable_location(uint32_t status_index, uint64_t page_addr, uint64_t *ret_addr, uint8_t *ret_bit);

/*
 * One line of the upstream user_events_status text:
 * "NAME[ # Used by[ ftrace][ perf][ other]]". Returns 1 with the name (not
 * NUL-terminated) and the EVENT_STATUS_* bits, 0 for lines that name no
 * event (empty, "Active: N", "Busy: N").
 */
int upstream_status_line_parse(const char *line, size_t len, const char **ret_name, size_t *ret_name_len,
                               uint8_t *ret_status);

/* DIAG_IOCSDEL of @name on @control_fd (the same request on both kernel
 * interfaces), logged as "@provider: ...": ENOENT (already gone) at debug,
 * EBUSY at info followed by @busy_note (who may still hold it on this
 * interface), anything else as a warning. The broker forgets the event
 * either way. */
void kernel_event_delete(int control_fd, const char *provider, const char *name, const char *busy_note);
