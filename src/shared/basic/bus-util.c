/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus-util.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"

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

int bus_message_read_strv_bounded(sd_bus_message *m, size_t max_items, bus_string_check_t check, void *userdata,
                                  sd_bus_error *error, const char ***ret, size_t *ret_n) {
        _cleanup_free_ const char **strings = NULL;
        size_t n = 0, allocated = 0;
        const char *s;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "s");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_read(m, "s", &s)) > 0) {
                if (n >= max_items)
                        return -E2BIG;
                if (check) {
                        r = check(s, n, userdata, error);
                        if (r < 0)
                                return r;
                }
                if (n == allocated) {
                        /* Grown as the strings come, never beyond the bound:
                         * a short array costs little whatever the bound. */
                        size_t more = allocated ? allocated * 2 : 8;
                        const char **grown;

                        if (more > max_items)
                                more = max_items;
                        grown = reallocarray(strings, more, sizeof(*strings));
                        if (!grown)
                                return -ENOMEM;
                        strings = grown;
                        allocated = more;
                }
                strings[n++] = s;
        }
        if (r < 0)
                return r;
        r = sd_bus_message_exit_container(m);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(strings);
        *ret_n = n;
        return 0;
}
