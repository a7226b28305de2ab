/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus-util.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

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

int bus_read_u32_dict(sd_bus_message *m, const char *const *keys, unsigned n_keys, uint32_t *values,
                      uint32_t *ret_found) {
        uint32_t found = 0;
        int r;

        if (n_keys > 32)
                return -EINVAL;
        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                const char *key;
                unsigned i;

                r = sd_bus_message_read(m, "s", &key);
                if (r < 0)
                        return r;
                for (i = 0; i < n_keys && strcmp(key, keys[i]) != 0; i++)
                        ;
                if (i < n_keys) {
                        r = sd_bus_message_read(m, "v", "u", &values[i]);
                        if (r >= 0)
                                found |= UINT32_C(1) << i;
                } else
                        r = sd_bus_message_skip(m, "v");
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        *ret_found = found;
        return 0;
}
