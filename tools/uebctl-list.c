/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* uebctl list [--json]: the broker's events. */
#include "uebctl.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json-string.h"
#include "strbuf.h"

static int print_json(const struct uebctl_event_info *events, size_t n) {
        struct strbuf sb = STRBUF_INIT;
        char *text;

        strbuf_append_c(&sb, '[');
        for (size_t i = 0; i < n; i++) {
                strbuf_append(&sb, i ? ",\n {\"name\":" : "\n {\"name\":");
                json_append_string(&sb, events[i].name, strlen(events[i].name));
                strbuf_append(&sb, ",\"fields\":");
                json_append_string(&sb, events[i].fields, strlen(events[i].fields));
                strbuf_printf(&sb, ",\"owner_uid\":%u,\"registrations\":%u,\"enabled\":%s}", events[i].owner_uid,
                              events[i].registrations, events[i].enabled ? "true" : "false");
        }
        strbuf_append(&sb, n ? "\n]\n" : "]\n");
        text = strbuf_steal(&sb);
        if (!text) {
                fprintf(stderr, "error: out of memory\n");
                return 1;
        }
        fputs(text, stdout);
        free(text);
        return 0;
}

static void print_table(const struct uebctl_event_info *events, size_t n) {
        int width = 4;

        for (size_t i = 0; i < n; i++)
                if ((int) strlen(events[i].name) > width)
                        width = (int) strlen(events[i].name);
        printf("%-*s %8s %4s %7s  %s\n", width, "NAME", "OWNER", "REGS", "ENABLED", "FIELDS");
        for (size_t i = 0; i < n; i++)
                printf("%-*s %8u %4u %7s  %s\n", width, events[i].name, events[i].owner_uid, events[i].registrations,
                       events[i].enabled ? "yes" : "no", events[i].fields);
        printf("\n%zu event%s.\n", n, n == 1 ? "" : "s");
}

int uebctl_list(int argc, char *argv[]) {
        static const struct option options[] = {
                { "json", no_argument, NULL, 'j' },
                {},
        };
        struct uebctl_event_info *events = NULL;
        sd_bus *bus = NULL;
        bool json = false;
        size_t n = 0;
        int c, r, status;

        while ((c = getopt_long(argc, argv, "j", options, NULL)) >= 0)
                switch (c) {
                case 'j':
                        json = true;
                        break;
                default:
                        return 2;
                }
        if (optind != argc) {
                fprintf(stderr, "usage: uebctl list [--json]\n");
                return 2;
        }

        if (uebctl_bus_open(&bus) < 0)
                return 1;
        r = uebctl_list_events(bus, &events, &n);
        sd_bus_flush_close_unref(bus);
        if (r < 0)
                return 1;

        if (json)
                status = print_json(events, n);
        else {
                print_table(events, n);
                status = 0;
        }
        uebctl_event_info_free(events, n);
        return fflush(stdout) == 0 ? status : 1;
}
