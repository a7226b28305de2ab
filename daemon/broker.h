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
#include "config.h"
#include "event-registry.h"
#include "providers/provider.h"

struct polkit_registry;

struct broker {
        sd_event *event;
        sd_bus *bus;
        sd_bus_slot *object_slot;
        struct polkit_registry *polkit;
        const struct provider_ops *provider_ops;
        struct provider *provider;
        struct event_registry registry;
        struct broker_limits limits;
        const char *config_path;        /* for error messages naming the key */
        void *sessions;                 /* tsearch() tree of struct session, by bus name */
        unsigned n_sessions;
};

/* Sets up the broker on a started @bus attached to @event: provider, polkit,
 * the object. Does not request the bus name. */
int broker_new(sd_event *event, sd_bus *bus, bool bus_is_system, const struct provider_ops *ops,
               const struct broker_limits *limits, const char *config_path, struct broker **ret);
struct broker *broker_free(struct broker *b);

/* The introspection XML of /org/uebroker1 as sd-bus serves it, produced
 * without any bus: a private connection pair inside this process. */
int broker_introspect(char **ret_xml);
