/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* uebctl list: the broker's events. */
#include "uebctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

static int print_json(const struct uebctl_event_info *events, size_t n) {
        struct strbuf sb = STRBUF_INIT;
        char *text;
        int status;

        strbuf_append_c(&sb, '[');
        for (size_t i = 0; i < n; i++) {
                if (i)
                        strbuf_append_c(&sb, ',');
                uebctl_append_event_json(&sb, &events[i]);
        }
        strbuf_append_c(&sb, ']');
        text = strbuf_steal(&sb);
        if (!text) {
                fprintf(stderr, "error: out of memory\n");
                return 1;
        }
        status = uebctl_print_json(text);
        free(text);
        return status;
}

static void print_table(const struct uebctl_event_info *events, size_t n) {
        char user_buf[USER_BUF_SIZE];
        int width = 4, user_width = 5;

        for (size_t i = 0; i < n; i++) {
                const char *user = uebctl_user_name(events[i].owner_uid, user_buf, sizeof(user_buf));

                if ((int) strlen(events[i].name) > width)
                        width = (int) strlen(events[i].name);
                if (user && (int) strlen(user) > user_width)
                        user_width = (int) strlen(user);
        }
        if (uebctl_opts.legend)
                printf("%-*s %8s %-*s %4s %7s  %s\n", width, "NAME", "UID", user_width, "OWNER", "REGS", "ENABLED",
                       "FIELDS");
        for (size_t i = 0; i < n; i++) {
                const char *user = uebctl_user_name(events[i].owner_uid, user_buf, sizeof(user_buf));

                printf("%-*s %8u %-*s %4u %7s  %s\n", width, events[i].name, events[i].owner_uid, user_width,
                       user ?: "-", events[i].registrations, events[i].enabled ? "yes" : "no", events[i].fields);
        }
        if (uebctl_opts.legend)
                printf("\n%zu event%s.\n", n, n == 1 ? "" : "s");
}

int uebctl_list(int argc, char *argv[]) {
        struct uebctl_event_info *events = NULL;
        sd_bus *bus = NULL;
        size_t n = 0;
        int r, status = 0;

        if (argc != 1) {
                fprintf(stderr, "usage: uebctl list [--json=MODE] [--no-legend] [--no-pager]\n");
                return 2;
        }

        if (uebctl_bus_open(&bus) < 0)
                return 1;
        r = uebctl_list_events(bus, &events, &n);
        sd_bus_flush_close_unref(bus);
        if (r < 0)
                return 1;

        uebctl_pager_open();
        if (uebctl_opts.json != UEBCTL_JSON_OFF)
                status = print_json(events, n);
        else
                print_table(events, n);
        uebctl_event_info_free(events, n);
        return fflush(stdout) == 0 ? status : 1;
}
