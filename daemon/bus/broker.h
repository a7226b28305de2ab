/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The bus object /org/uebroker1, interface org.uebroker1.Broker (the
 * contract in DESIGN.md). Handlers follow one order: read the arguments,
 * validate them, authorize (polkit, which may suspend and re-run the call),
 * change state, reply.
 */

#include <stdbool.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

/* The bus name, path, interface and error names: one definition for the
 * daemon and its clients. */
#include "broker-bus.h"
#include "broker-config.h"
#include "event-registry.h"
#include "log.h"
#include "name-reservation.h"
#include "provider-link.h"
#include "peer.h"
#include "user-charges.h"

struct polkit_registry;
struct event_signals;
struct delivery;

struct broker {
        sd_event *event;
        sd_bus *bus;
        sd_bus_slot *object_slot;
        sd_bus_slot *session_slot;      /* BROKER_SESSION_PATH_PREFIX/<id> */
        sd_bus_slot *filter_slot;       /* charges sd-bus's own replies (broker.c) */
        sd_bus_slot *departures;        /* the one NameOwnerChanged match */
        struct polkit_registry *polkit;
        struct provider_link link;      /* every call into the provider */
        struct event_registry registry;
        struct event_signals *signals;  /* EventAdded, EventRemoved, ActiveEvents */
        struct broker_limits limits;
        const struct name_reservations *reservations;
        const struct broker_limit_origins *limit_origins;       /* may be NULL: borrowed */
        const char *config_path;        /* for error messages naming the key */
        struct peer_registry peers;
        /* What each uid holds of every pool (user-charges.h): sessions,
         * events, polkit checks, rings' memory, record streams. */
        struct user_charges charges;

        /* Replies sent that the bus has not delivered yet, per connection
         * and uid (delivery.h): every reply to an identified caller. */
        struct delivery *delivery;
        /* What callers can make the broker log, as often as they call, is
         * rate limited: refusals 20 per 5 s, events created and evicted 50
         * per 5 s, then a count of what was not logged. */
        struct log_ratelimit refusal_ratelimit;
        struct log_ratelimit event_log_ratelimit;

        /* Names and owners survive a restart and a crash: the event
         * store in state_dir, saved before the reply to the call that
         * changed it. */
        const char *state_dir;
};

/* What the broker is given at start. */
struct broker_settings {
        bool bus_is_system;
        const struct broker_limits *limits;
        const struct name_reservations *reservations;   /* may be NULL */
        const struct broker_limit_origins *limit_origins;       /* may be NULL */
        const char *config_path;
        const char *state_dir;                          /* NULL: keep no state */
        const struct provider_settings *provider;       /* may be NULL */
};

/* Descriptors kept free for everything but sessions (bus, provider, record
 * streams, messages in flight). */
#define BROKER_FD_RESERVE 1024u

/* Sets up the broker on a started @bus attached to @event: provider, polkit,
 * the object. Does not request the bus name. */
int broker_new(sd_event *event, sd_bus *bus, const struct provider_ops *ops, const struct broker_settings *settings,
               struct broker **ret);
struct broker *broker_free(struct broker *b);

/* New limits and reservations (a reload), for calls from now on: what
 * sessions hold stays (registrations, sessions and events beyond a lowered
 * limit, polkit checks waiting), and a reservation of a name an event
 * already has takes effect when the name is free. @reservations must stay
 * valid while the broker uses it. */
void broker_reconfigure(struct broker *b, const struct broker_limits *limits,
                        const struct broker_limit_origins *limit_origins,
                        const struct name_reservations *reservations);

/** broker_restore() - loads the events a previous broker kept in the state
 * directory, once the bus name is ours: the previous broker saved the table
 * before each reply that changed it, and served nothing once it let the name
 * go, so what is read now is what it last answered. Failures are
 * logged; the broker starts without them. Before the event loop runs. */
void broker_restore(struct broker *b);


/* The configuration file's name, for messages naming a key. */
const char *broker_config_name(const struct broker *b);

/* broker_limit_where_text() for the broker's configuration. */
const char *broker_limit_where(const struct broker *b, const char *key, char buf[static BROKER_LIMIT_WHERE_MAX]);

/* The introspection XML of /org/uebroker1 as sd-bus serves it, produced
 * without any bus: a private connection pair inside this process. */
int broker_introspect(char **ret_xml);
