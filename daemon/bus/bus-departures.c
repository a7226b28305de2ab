/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "bus-departures.h"
#include "macro.h"

struct departure_watch {
        bus_departure_handler_t handler;
        void *userdata;
};

static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct departure_watch *w = ASSERT_PTR(userdata);
        const char *name, *old_owner, *new_owner;

        if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0)
                return 0;
        if (name[0] == ':' && new_owner[0] == '\0')
                w->handler(name, w->userdata);
        return 0;
}

static void departure_watch_destroy(void *userdata) {
        free(userdata);
}

int bus_departures_watch(sd_bus *bus, bus_departure_handler_t handler, void *userdata, sd_bus_slot **ret_slot) {
        struct departure_watch *w;
        sd_bus_slot *slot = NULL;
        int r;

        assert(bus);
        *ret_slot = NULL;
        if (sd_bus_is_bus_client(bus) <= 0)
                return 0;
        w = malloc(sizeof(*w));
        if (!w)
                return -ENOMEM;
        *w = (struct departure_watch) { .handler = handler, .userdata = userdata };

        r = sd_bus_add_match(bus, &slot,
                             "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
                             "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg2=''",
                             on_name_owner_changed, w);
        if (r < 0) {
                free(w);
                return r;
        }
        (void) sd_bus_slot_set_destroy_callback(slot, departure_watch_destroy);
        *ret_slot = slot;
        return 0;
}
