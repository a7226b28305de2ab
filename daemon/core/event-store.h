/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The events the broker knows and who owns them, kept across restarts in
 * STATE_DIR/events (default /run/uebroker: per boot, as user_events
 * themselves are). One line per event, "UID:INDEX COMMAND\n", COMMAND in
 * the canonical form of the command grammar (uebroker-event-command(7)),
 * INDEX its status index: a restarted broker gives each event the index it
 * had, so a client's status byte keeps its address (ueb_enabled_address()).
 * "UID COMMAND" lines (older brokers) load with any free index. Written whole to a temporary file and
 * renamed over the old one, so a crash leaves the old or the new file.
 *
 * Read back at start-up as unused events, each with a full idle period
 * ahead of it (UnusedEventExpirySec=) counted from the restart: the file
 * keeps no times, so a restart never makes a name expire sooner.
 */

#include <stddef.h>
#include <sys/types.h>

#include "event-registry.h"

#define EVENT_STORE_FILE "events"
/* A line: uid, a colon, an index, a space, a command, a newline. */
#define EVENT_STORE_LINE_MAX (10u + 1u + 4u + 1u + EVENT_COMMAND_MAX + 1u)

/* The file's text for every event of @reg, malloc()ed; NULL when out of
 * memory. */
char *event_store_format(struct event_registry *reg);

/* Adds the events of @text to @reg. Lines that do not parse, names that
 * exist already and events beyond the free status indexes are skipped with
 * a warning naming the line; returns how many were added, or -ENOMEM. */
int event_store_parse(struct event_registry *reg, const char *text, size_t size, const char *origin);

/* The same through STATE_DIR/events. A missing file loads nothing. */
int event_store_save(struct event_registry *reg, const char *state_dir);
int event_store_load(struct event_registry *reg, const char *state_dir);
