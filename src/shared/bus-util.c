/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus-util.h"

#include <errno.h>
#include <stdbool.h>

int bus_open_address(const char *address, sd_bus **ret) {
        sd_bus *bus = NULL;
        int r;

        if (!address || !*address)
                return -EINVAL;
        r = sd_bus_new(&bus);
        if (r < 0)
                return r;
        r = sd_bus_set_address(bus, address);
        if (r >= 0)
                r = sd_bus_set_bus_client(bus, true);
        if (r >= 0)
                r = sd_bus_negotiate_fds(bus, true);
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r < 0) {
                sd_bus_unref(bus);
                return r;
        }
        *ret = bus;
        return 0;
}
