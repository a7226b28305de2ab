/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* uebctl delete NAME: removes an event nobody holds or listens to. */
#include "uebctl.h"

#include <stdio.h>
#include <unistd.h>

#include "cleanup.h"

int uebctl_delete(int argc, char *argv[]) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        /* polkit may ask for a password only when someone can answer. */
        bool interactive = uebctl_opts.ask_password && isatty(STDIN_FILENO);
        int r, status = 0;

        if (argc < 2) {
                fprintf(stderr, "usage: uebctl delete [--no-ask-password] NAME...\n");
                return 2;
        }
        if (uebctl_bus_open(&bus) < 0)
                return 1;
        for (int i = 1; i < argc; i++) {
                _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;

                r = sd_bus_call_method(bus, BROKER_BUS_NAME, BROKER_OBJECT_PATH, BROKER_INTERFACE, "Delete",
                                       &error, NULL, "sb", argv[i], (int) interactive);
                if (r < 0) {
                        char what[300];

                        snprintf(what, sizeof(what), "Delete %s", argv[i]);
                        status = uebctl_call_failed(what, r, &error);
                }
        }
        return status;
}
