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
 *
 * Unknown sections and keys are warned about and ignored; malformed values
 * are errors.
 */

#include <stdbool.h>

struct broker_limits {
        unsigned events_per_client;
        unsigned clients_per_user;
        unsigned events;
        unsigned command_length;
};

#define BROKER_CONFIG_DEFAULT_PATH "/etc/uebroker/uebrokerd.conf"

void broker_limits_init_default(struct broker_limits *limits);

/* Loads @path into @limits (defaults for what the file does not set).
 * Returns 0, -ENOENT when the file does not exist (limits untouched), or
 * another negative errno with a malloc()ed message naming file, line and
 * problem in *ret_message. */
int broker_config_load(const char *path, struct broker_limits *limits, char **ret_message);
