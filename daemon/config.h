/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * uebrokerd's configuration file (default /etc/uebroker/uebrokerd.conf), an
 * INI file in systemd's style:
 *
 *     [Limits]
 *     EventsPerClient=256     registrations one bus connection may hold
 *     ClientsPerUser=64       bus connections of one uid holding a session
 *     Events=4095             events the broker knows at once
 *     CommandLength=511       bytes of a Register command
 *     EventsPerUser=1024      events one uid owns that are in use
 *
 * Values are decimal, 1..65536 (Events and EventsPerUser 1..4095,
 * CommandLength 1..511).
 * Lines starting with # or ; are comments; whitespace around keys and
 * values is ignored; a key given twice keeps the last value. Unknown
 * sections and keys are warned about and ignored; malformed lines and
 * values are errors naming FILE:LINE.
 */

#include <stdbool.h>

struct broker_limits {
        unsigned events_per_client;
        unsigned clients_per_user;
        unsigned events;
        unsigned command_length;
        unsigned events_per_user;
};

#define BROKER_CONFIG_DEFAULT_PATH "/etc/uebroker/uebrokerd.conf"

/* Bounds on hostile input: bytes per line (without the newline), bytes per
 * file, warnings kept (then one "N more warnings not shown"), and the upper
 * bound of EventsPerClient and ClientsPerUser. */
#define BROKER_CONFIG_LINE_MAX 4096u
#define BROKER_CONFIG_FILE_MAX (1024u * 1024u)
#define BROKER_CONFIG_WARNINGS_MAX 32u
#define BROKER_CONFIG_LIMIT_MAX 65536u

void broker_limits_init_default(struct broker_limits *limits);

/* Loads @path into @limits (defaults for what the file does not set).
 * Returns 0, -ENOENT when the file does not exist, or another negative
 * errno with a malloc()ed message naming file, line and problem in
 * *ret_message (NULL on success and on -ENOENT). On any error @limits is
 * untouched. */
int broker_config_load(const char *path, struct broker_limits *limits, char **ret_message);

/* Like broker_config_load() (which logs each warning at LOG_WARNING), but
 * hands the warnings back as a NULL-terminated array of malloc()ed
 * "FILE:LINE: ..." strings in *ret_warnings (NULL when there are none),
 * also on failure. @ret_warnings and @ret_message may be NULL. */
int broker_config_parse(const char *path, struct broker_limits *limits, char ***ret_warnings, char **ret_message);
char **broker_config_warnings_free(char **warnings);
