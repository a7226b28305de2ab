/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* uebctl's bus access: which bus, calls, and ListEvents. */
#include "bus-util.h"
#include "uebctl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cleanup.h"

enum ueb_bus uebctl_bus_kind = UEB_BUS_DEFAULT;
const char *uebctl_bus_address = NULL;

int uebctl_bus_open(sd_bus **ret) {
        enum ueb_bus kind = uebctl_bus_kind;
        const char *address = uebctl_bus_address;
        sd_bus *bus = NULL;
        int r;

        if (kind == UEB_BUS_DEFAULT) {
                address = getenv("UEBROKER_BUS_ADDRESS");
                kind = address && *address ? UEB_BUS_ADDRESS : UEB_BUS_SYSTEM;
        }
        switch (kind) {
        case UEB_BUS_SESSION:
                r = sd_bus_open_user(&bus);
                break;
        case UEB_BUS_ADDRESS:
                r = bus_open_address(address, &bus);
                break;
        default:
                r = sd_bus_open_system(&bus);
                break;
        }
        if (r < 0) {
                fprintf(stderr, "error: cannot connect to the %s bus%s%s: %s\n",
                        kind == UEB_BUS_SESSION ? "session" : kind == UEB_BUS_ADDRESS ? "given" : "system",
                        kind == UEB_BUS_ADDRESS ? " " : "", kind == UEB_BUS_ADDRESS ? address : "", strerror(-r));
                sd_bus_unref(bus);
                return r;
        }
        *ret = bus;
        return 0;
}

int uebctl_call_failed(const char *method, int r, const sd_bus_error *error) {
        if (sd_bus_error_is_set(error))
                fprintf(stderr, "error: %s: %s: %s\n", method, error->name, error->message ?: "");
        else
                fprintf(stderr, "error: %s: %s\n", method, strerror(-r));
        return 1;
}

void uebctl_event_info_free(struct uebctl_event_info *events, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(events[i].name);
                free(events[i].fields);
        }
        free(events);
}

int uebctl_list_events(sd_bus *bus, struct uebctl_event_info **ret, size_t *ret_n) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        struct uebctl_event_info *events = NULL;
        size_t n = 0, allocated = 0;
        int r;

        r = sd_bus_call_method(bus, BROKER_BUS_NAME, BROKER_OBJECT_PATH, BROKER_INTERFACE, "ListEvents", &error,
                               &reply, NULL);
        if (r < 0) {
                uebctl_call_failed("ListEvents", r, &error);
                return r;
        }
        r = sd_bus_message_enter_container(reply, 'a', "(ssuub)");
        if (r < 0)
                goto bad_reply;
        for (;;) {
                const char *name, *fields;
                uint32_t uid, regs;
                int enabled;

                r = sd_bus_message_read(reply, "(ssuub)", &name, &fields, &uid, &regs, &enabled);
                if (r < 0)
                        goto bad_reply;
                if (r == 0)
                        break;
                if (ARRAY_RESERVE(events, allocated, n + 1) < 0) {
                        r = -ENOMEM;
                        goto bad_reply;
                }
                events[n] = (struct uebctl_event_info) {
                        .name = strdup(name),
                        .fields = strdup(fields),
                        .owner_uid = uid,
                        .registrations = regs,
                        .enabled = enabled,
                };
                n++;
                if (!events[n - 1].name || !events[n - 1].fields) {
                        r = -ENOMEM;
                        goto bad_reply;
                }
        }
        *ret = events;
        *ret_n = n;
        return 0;

bad_reply:
        fprintf(stderr, "error: ListEvents: cannot read the reply: %s\n", strerror(-r));
        uebctl_event_info_free(events, n);
        return r;
}
