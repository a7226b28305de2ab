/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The status page and its text form (org.uebroker1(5), GetStatus). */

#include <stddef.h>
#include <stdint.h>

#define STATUS_PAGE_SIZE 4096
/* Index 0 is never handed out; 1..4095 are. */
#define STATUS_INDEX_MAX (STATUS_PAGE_SIZE - 1)
#define STATUS_MAX_EVENTS STATUS_PAGE_SIZE

#define EVENT_STATUS_FTRACE (1u << 0)
#define EVENT_STATUS_PERF (1u << 1)
#define EVENT_STATUS_OTHER (1u << 7)

struct status_entry {
        uint32_t index;
        const char *name;
        uint8_t status;
};

/* One "INDEX:NAME[ # Used by[ ftrace][ perf][ other]]" line per entry, in
 * the given order, then a blank line and the Active/Busy/Max summary.
 * Returns a malloc()ed string, NULL when out of memory. */
char *status_text(const struct status_entry *entries, size_t n, uint32_t max);
