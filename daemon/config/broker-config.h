/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <limits.h>

/*
 * uebrokerd's configuration file (SYSCONFDIR/uebroker/uebrokerd.conf), an
 * INI file in systemd's style, followed by its drop-ins FILE.d/NAME.conf:
 *
 *     [Limits]
 *     EventsPerClient=256         registrations one bus connection may hold
 *     ClientsPerUser=64           bus connections of one uid holding a session
 *     Events=4095                 events the broker knows at once
 *     CommandLength=511           bytes of a Register command
 *     EventsPerUser=256           events one uid owns, used or unused
 *     Clients=8192                bus connections the broker keeps state for at once
 *     AuthorizationsPerUser=8     polkit checks one uid may have waiting at once
 *     UnusedEventExpirySec=21600  seconds an unused event keeps its owner before
 *                                 another user's new event may take its place
 *                                 when the table is full
 *     OutgoingQueue=1024          messages the outgoing bus queue may hold
 *                                 before the broker refuses new calls
 *     RingMemoryKiB=32768         memory for shared-memory rings, all users
 *     RingMemoryPerUserKiB=       ... one uid (default: a quarter)
 *     RecordStreams=64            record streams open at once, all users
 *                                 (capped to what the provider serves)
 *     RecordStreamsPerUser=       ... one uid (default: a quarter)
 *     NewEventsPerUserPerMinute=60
 *                                 events one uid may create a minute, after a
 *                                 first EventsPerUser= at once (each is an
 *                                 EventAdded, an eviction an EventRemoved)
 *
 *     [Reservations]
 *     hello_tick=user:alice       see name-reservation.h
 *     myapp_*=group:myapp
 *     sys_*=user:0
 *
 * Limits are decimal, in these ranges:
 *     EventsPerClient, ClientsPerUser, Clients  1..65536
 *     Events, EventsPerUser                     1..4095
 *     CommandLength                             1..511
 *     AuthorizationsPerUser                     1..1024
 *     UnusedEventExpirySec                      60..31536000 (one year)
 *     OutgoingQueue                             16..65536
 *     RingMemoryKiB, RingMemoryPerUserKiB       16..1048576
 *     RecordStreams, RecordStreamsPerUser       1..1024
 *     NewEventsPerUserPerMinute                 1..65536
 *
 * A reservation's key is an event name ([A-Za-z_][A-Za-z0-9_-]*, at most
 * EVENT_NAME_MAX bytes) or a non-empty prefix of one followed by a single
 * '*'; its value is user:NAME, user:UID, group:NAME or group:GID (a NAME is
 * 1..255 bytes of printable ASCII without spaces, ':' or '/'; an id is
 * 0..4294967294). Names are resolved when the file is loaded; one that does
 * not resolve is a warning and its reservation allows nobody but root. At
 * most BROKER_CONFIG_RESERVATIONS_MAX reservations.
 *
 * Lines starting with # or ; are comments; whitespace around keys and
 * values is ignored; a key given twice keeps the last value (a reservation
 * given twice is also a warning). Unknown sections and keys are warned
 * about and ignored; malformed lines and values are errors naming
 * FILE:LINE.
 *
 * Drop-ins: after FILE, the regular files NAME.conf in the drop-in
 * directories: FILE.d for --config=FILE; by default, as systemd does for
 * its own files, SYSCONFDIR/uebroker/uebrokerd.conf.d, then
 * /run/uebroker/uebrokerd.conf.d, /usr/local/lib/uebroker/uebrokerd.conf.d
 * and /usr/lib/uebroker/uebrokerd.conf.d (broker_config_default_dropin_dirs).
 * A name in an earlier directory hides the same name in later ones; a
 * symlink to /dev/null or an empty file hides it and is not read (a mask);
 * the files that remain are read in the byte order of their names whatever
 * their directory (dropin-order.h), each the same way as FILE (every file
 * starts outside any section; later values override earlier ones). Other
 * names, hidden names (starting with '.') and other kinds of entries are
 * skipped. At most BROKER_CONFIG_DROPINS_MAX drop-ins per directory and
 * read. Missing directories are fine, and so is a missing FILE when a
 * drop-in exists.
 */

#include <stdbool.h>

#include "build-paths.h"
#include "name-reservation.h"

struct broker_limits {
        unsigned events_per_client;
        unsigned clients_per_user;
        unsigned events;
        unsigned command_length;
        unsigned events_per_user;
        unsigned clients;
        unsigned authorizations_per_user;
        unsigned unused_event_expiry_sec;
        unsigned outgoing_queue;
        unsigned ring_memory_kib;
        unsigned ring_memory_per_user_kib;      /* 0: a quarter of ring_memory_kib */
        unsigned record_streams;
        unsigned record_streams_per_user;       /* 0: a quarter of the streams the provider serves */
        unsigned new_events_per_user_per_minute;
};

/* The keys of struct broker_limits, one per field. */
#define BROKER_LIMITS_N 14u

/* Where each limit in force was set: "FILE:LINE" (owned), or NULL for the
 * built-in default. */
struct broker_limit_origins {
        char *origin[BROKER_LIMITS_N];
};

struct broker_config {
        struct broker_limits limits;
        struct broker_limit_origins origins;
        struct name_reservations reservations;
};

/**
 * broker_limit_origin() - where the limit @key (its name without '=', e.g.
 * "ClientsPerUser") was set, for refusals that name what to change
 * @o: may be NULL (nothing known: NULL)
 *
 * Return: "FILE:LINE", borrowed from @o; NULL when @key kept its built-in
 * default or is not a limit. Pure; thread-safe.
 */
const char *broker_limit_origin(const struct broker_limit_origins *o, const char *key);

/* Room for broker_limit_where_text()'s text. */
#define BROKER_LIMIT_WHERE_MAX (PATH_MAX + 64)

/**
 * broker_limit_where_text() - where the limit @key is set, for a refusal to
 * name after "KEY=": " in FILE:LINE" when a file set it, else ", the
 * default; set it in @config_path"
 * @buf: written; returned
 *
 * Pure; thread-safe.
 */
const char *broker_limit_where_text(const struct broker_limit_origins *o, const char *config_path, const char *key,
                                    char buf[static BROKER_LIMIT_WHERE_MAX]);

/* SYSCONFDIR/uebroker/uebrokerd.conf, as configured at build time. */
#define BROKER_CONFIG_DEFAULT_PATH UEBROKER_CONFIG_FILE

/* Bounds on hostile input: bytes per line (without the newline), bytes per
 * file, warnings kept (then one "N more warnings not shown"), drop-in files,
 * reservations, and the range bounds of the limits that have no bound of
 * their own elsewhere (EVENT_COMMAND_MAX, STATUS_INDEX_MAX). */
#define BROKER_CONFIG_LINE_MAX 4096u
#define BROKER_CONFIG_FILE_MAX (1024u * 1024u)
#define BROKER_CONFIG_WARNINGS_MAX 32u
#define BROKER_CONFIG_DROPINS_MAX 256u
#define BROKER_CONFIG_RESERVATIONS_MAX 4096u
#define BROKER_CONFIG_LIMIT_MAX 65536u                          /* EventsPerClient, ClientsPerUser, Clients, OutgoingQueue,
                                                                 * NewEventsPerUserPerMinute */
#define BROKER_CONFIG_AUTHORIZATIONS_MAX 1024u                  /* AuthorizationsPerUser */
#define BROKER_CONFIG_EXPIRY_MIN 60u                            /* UnusedEventExpirySec */
#define BROKER_CONFIG_EXPIRY_MAX (365u * 24u * 60u * 60u)
#define BROKER_CONFIG_OUTGOING_QUEUE_MIN 16u                    /* OutgoingQueue */
#define BROKER_CONFIG_RING_MEMORY_KIB_MIN 16u                   /* RingMemoryKiB, RingMemoryPerUserKiB */
#define BROKER_CONFIG_RING_MEMORY_KIB_MAX (1024u * 1024u)
#define BROKER_CONFIG_RECORD_STREAMS_MAX 1024u                  /* RecordStreams, RecordStreamsPerUser */

void broker_limits_init_default(struct broker_limits *limits);

/* The defaults and no reservations. */
void broker_config_init_default(struct broker_config *c);
/* Frees the reservations; @c is empty afterwards (usable with _cleanup_). */
void broker_config_done(struct broker_config *c);

/* The default drop-in directories, highest precedence first, NULL-terminated. */
extern const char *const broker_config_default_dropin_dirs[];

/* Loads @path and the drop-ins of @dropin_dirs (NULL-terminated, highest
 * precedence first; NULL for just @path.d) into @c, which must hold a configuration
 * (broker_config_init_default() or an earlier load); its old contents are
 * released and replaced by the defaults overridden by what the files set.
 * Returns 0, -ENOENT when neither @path nor any drop-in exists, or another
 * negative errno with a malloc()ed message naming file, line and problem
 * in *ret_message (NULL on success and on -ENOENT). On any error @c is
 * untouched. Warnings are logged at LOG_WARNING. */
int broker_config_load(const char *path, const char *const *dropin_dirs, struct broker_config *c, char **ret_message);

/* Like broker_config_load(), but hands the warnings back as a
 * NULL-terminated array of malloc()ed "FILE:LINE: ..." strings in
 * *ret_warnings (NULL when there are none), also on failure. @ret_warnings
 * and @ret_message may be NULL. */
int broker_config_parse(const char *path, const char *const *dropin_dirs, struct broker_config *c,
                        char ***ret_warnings, char **ret_message);
char **broker_config_warnings_free(char **warnings);
