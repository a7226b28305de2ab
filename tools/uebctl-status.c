/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* uebctl status: the broker's status text (SPEC.md section 4). */
#include "uebctl.h"

#include <stdio.h>

#include "cleanup.h"

int uebctl_status(int argc, char *argv[]) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        const char *text;
        int r;

        if (argc != 1) {
                fprintf(stderr, "usage: uebctl status\n");
                return 2;
        }
        if (uebctl_bus_open(&bus) < 0)
                return 1;
        r = sd_bus_call_method(bus, BROKER_BUS_NAME, BROKER_OBJECT_PATH, BROKER_INTERFACE, "GetStatus", &error,
                               &reply, NULL);
        if (r < 0)
                return uebctl_call_failed("GetStatus", r, &error);
        if (sd_bus_message_read(reply, "s", &text) <= 0) {
                fprintf(stderr, "error: GetStatus: unexpected reply\n");
                return 1;
        }
        fputs(text, stdout);
        return fflush(stdout) == 0 ? 0 : 1;
}
