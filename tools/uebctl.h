/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "broker-bus.h"
#include "uebroker.h"

/* A subcommand: argv[0] is its name; returns the process exit status
 * (0 ok, 1 failure, 2 usage). */
struct uebctl_command {
        const char *name;
        const char *args;
        const char *help;
        int (*run)(int argc, char *argv[]);
};

/* The bus chosen by the global options (--system, --session,
 * --bus-address=ADDR); UEB_BUS_DEFAULT follows $UEBROKER_BUS_ADDRESS. */
extern enum ueb_bus uebctl_bus_kind;
extern const char *uebctl_bus_address;

/* Joins argv[first..argc) with single spaces, so a command may be given as
 * one quoted argument or as words. Returns malloc()ed text or NULL. */
char *uebctl_join_args(int argc, char *argv[], int first);

/* uebctl-bus.c: connects to the chosen bus; prints the reason and returns
 * a negative errno on failure. */
int uebctl_bus_open(sd_bus **ret);
/* Prints "error: METHOD: NAME: message" for a failed call; returns 1. */
int uebctl_call_failed(const char *method, int r, const sd_bus_error *error);

/* One entry of ListEvents. */
struct uebctl_event_info {
        char *name;
        char *fields;
        uint32_t owner_uid;
        uint32_t registrations;
        bool enabled;
};

/* Calls ListEvents; prints the failure and returns a negative errno. */
int uebctl_list_events(sd_bus *bus, struct uebctl_event_info **ret, size_t *ret_n);
void uebctl_event_info_free(struct uebctl_event_info *events, size_t n);

int uebctl_format(int argc, char *argv[]);
int uebctl_list(int argc, char *argv[]);
int uebctl_status(int argc, char *argv[]);
int uebctl_record(int argc, char *argv[]);
int uebctl_delete(int argc, char *argv[]);
int uebctl_emit(int argc, char *argv[]);
