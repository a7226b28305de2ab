/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* uebctl status: the broker's status text (SPEC.md section 4), then what
 * its data path counted (the RecordCounters property), if it has any. */
#include "uebctl.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cleanup.h"

/* Counter names as the broker gives them, and how to print them. */
static const struct {
        const char *key;
        const char *label;
} record_counters[] = {
        { "received", "Records received" },
        { "dropped", "Records dropped as invalid" },
        { "writer-dropped", "Records writers dropped (data file full)" },
        { "recorded", "Records recorded" },
        { "lost", "Records lost to slow consumers" },
};

static int print_record_counters(sd_bus *bus) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        uint64_t values[sizeof(record_counters) / sizeof(record_counters[0])] = { 0 };
        bool any = false;
        const char *key;
        uint64_t value;
        int r;

        r = sd_bus_get_property(bus, BROKER_BUS_NAME, BROKER_OBJECT_PATH, BROKER_INTERFACE, "RecordCounters", &error,
                                &reply, "a{st}");
        if (r < 0)
                return uebctl_call_failed("RecordCounters", r, &error);
        r = sd_bus_message_enter_container(reply, 'a', "{st}");
        while (r > 0 && (r = sd_bus_message_read(reply, "{st}", &key, &value)) > 0)
                for (size_t i = 0; i < sizeof(record_counters) / sizeof(record_counters[0]); i++)
                        if (strcmp(key, record_counters[i].key) == 0) {
                                values[i] = value;
                                any = true;
                        }
        if (r < 0) {
                fprintf(stderr, "error: RecordCounters: unexpected reply\n");
                return r;
        }
        if (!any)
                return 0;       /* the kernel carries the records */
        putchar('\n');
        for (size_t i = 0; i < sizeof(record_counters) / sizeof(record_counters[0]); i++)
                printf("%s: %" PRIu64 "\n", record_counters[i].label, values[i]);
        return 0;
}

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
        r = print_record_counters(bus);
        if (fflush(stdout) != 0)
                return 1;
        return r < 0 ? 1 : 0;
}
