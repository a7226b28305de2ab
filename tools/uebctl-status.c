/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* uebctl status [NAME...]: the broker's status text (org.uebroker1(5), GetStatus),
 * then what its data path counted (the RecordCounters property) if it has
 * any, and what the bus has not delivered of its replies (Delivery); or
 * the state of named events, as systemctl status shows units. */
#include "uebctl.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "strbuf.h"
#include "text-escape.h"

/* Counter names as the broker gives them, and how to print them. */
static const struct {
        const char *key;
        const char *label;
} record_counters[] = {
        { "received", "Records received" },
        { "dropped", "Records dropped as invalid" },
        { "writer-dropped", "Records writers dropped (data file or ring full)" },
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
                return 1;
        }
        if (!any)
                return 0;       /* the kernel carries the records */
        putchar('\n');
        for (size_t i = 0; i < sizeof(record_counters) / sizeof(record_counters[0]); i++)
                printf("%s: %" PRIu64 "\n", record_counters[i].label, values[i]);
        return 0;
}

/* The Delivery property (daemon/bus/delivery.h): replies the bus has not
 * delivered yet, and whether the bus takes what the broker sends. A broker
 * without it (an older version) prints nothing. */
static int print_delivery(sd_bus *bus) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        static const char *const keys[] = { "pinned-fds", "pinned-bytes", "pinned-connections", "waiting", "sent",
                                            "held", "refused", "dropped", "stalled-usec", "bus-statistics" };
        uint64_t v[sizeof(keys) / sizeof(keys[0])] = { 0 }, value;
        const char *key;
        int r;

        r = sd_bus_get_property(bus, BROKER_BUS_NAME, BROKER_OBJECT_PATH, BROKER_INTERFACE, "Delivery", &error,
                                &reply, "a{st}");
        if (r < 0)
                return sd_bus_error_has_name(&error, SD_BUS_ERROR_UNKNOWN_PROPERTY) ? 0 :
                       uebctl_call_failed("Delivery", r, &error);
        r = sd_bus_message_enter_container(reply, 'a', "{st}");
        while (r > 0 && (r = sd_bus_message_read(reply, "{st}", &key, &value)) > 0)
                for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
                        if (strcmp(key, keys[i]) == 0)
                                v[i] = value;
        if (r < 0) {
                fprintf(stderr, "error: Delivery: unexpected reply\n");
                return 1;
        }
        if (v[9])
                printf("\nReplies not yet delivered by the bus: %" PRIu64 " descriptors, %" PRIu64 " bytes on %" PRIu64
                       " connections\n", v[0], v[1], v[2]);
        else
                printf("\nReplies not yet delivered by the bus: not known (the bus gives no connection statistics; "
                       "nothing is held back)\n");
        printf("Replies waiting in the broker: %" PRIu64 " (since start: %" PRIu64 " sent, %" PRIu64 " held, %" PRIu64
               " refused, %" PRIu64 " calls left unanswered)\n", v[3], v[4], v[5], v[6], v[7]);
        if (v[8] > 0)
                printf("The bus has taken none of the broker's queued messages for %" PRIu64 ".%03" PRIu64 " s\n",
                       v[8] / 1000000u, v[8] / 1000u % 1000u);
        return 0;
}

/* The Pools property (daemon/core/user-charges.h): what all users hold of each
 * pool, of its bound, and one uid's share. Nothing from an older broker. */
static int print_pools(sd_bus *bus) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        uint64_t held, pool, share;
        const char *key;
        int r;

        r = sd_bus_get_property(bus, BROKER_BUS_NAME, BROKER_OBJECT_PATH, BROKER_INTERFACE, "Pools", &error, &reply,
                                "a(sttt)");
        if (r < 0)
                return sd_bus_error_has_name(&error, SD_BUS_ERROR_UNKNOWN_PROPERTY) ? 0 :
                       uebctl_call_failed("Pools", r, &error);
        r = sd_bus_message_enter_container(reply, 'a', "(sttt)");
        if (r > 0)
                printf("\nPools (held by all users / bound / one uid's share):\n");
        while (r > 0 && (r = sd_bus_message_read(reply, "(sttt)", &key, &held, &pool, &share)) > 0)
                printf("  %-16s %" PRIu64 " / %" PRIu64 " / %" PRIu64 "\n", key, held, pool, share);
        if (r < 0) {
                fprintf(stderr, "error: Pools: unexpected reply\n");
                return 1;
        }
        return 0;
}

/* The PoolHolders property: who holds the most of each pool held at all.
 * Nothing from an older broker. */
static int print_pool_holders(sd_bus *bus) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *key;
        uint64_t n_uids;
        int r;

        r = sd_bus_get_property(bus, BROKER_BUS_NAME, BROKER_OBJECT_PATH, BROKER_INTERFACE, "PoolHolders", &error,
                                &reply, "a(sta(ut))");
        if (r < 0)
                return sd_bus_error_has_name(&error, SD_BUS_ERROR_UNKNOWN_PROPERTY) ? 0 :
                       uebctl_call_failed("PoolHolders", r, &error);
        r = sd_bus_message_enter_container(reply, 'a', "(sta(ut))");
        if (r > 0)
                printf("\nWho holds them (uids holding some; the most, by uid):\n");
        while (r > 0 && (r = sd_bus_message_enter_container(reply, 'r', "sta(ut)")) > 0) {
                uint32_t uid;
                uint64_t held;
                unsigned shown = 0;

                r = sd_bus_message_read(reply, "st", &key, &n_uids);
                if (r >= 0)
                        r = sd_bus_message_enter_container(reply, 'a', "(ut)");
                if (r < 0)
                        break;
                printf("  %-16s %" PRIu64 " uid%s:", key, n_uids, n_uids == 1 ? "" : "s");
                while ((r = sd_bus_message_read(reply, "(ut)", &uid, &held)) > 0)
                        printf("%s uid %" PRIu32 " (%" PRIu64 ")", shown++ ? "," : "", uid, held);
                printf("%s\n", n_uids > shown ? ", ..." : "");
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
                if (r < 0)
                        break;
                r = 1;
        }
        if (r < 0) {
                fprintf(stderr, "error: PoolHolders: unexpected reply\n");
                return 1;
        }
        return 0;
}

static int print_status_text(sd_bus *bus) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *text;
        int r;

        r = sd_bus_call_method(bus, BROKER_BUS_NAME, BROKER_OBJECT_PATH, BROKER_INTERFACE, "GetStatus", &error,
                               &reply, NULL);
        if (r < 0)
                return uebctl_call_failed("GetStatus", r, &error);
        if (sd_bus_message_read(reply, "s", &text) <= 0) {
                fprintf(stderr, "error: GetStatus: unexpected reply\n");
                return 1;
        }
        uebctl_pager_open();
        fputs(text, stdout);
        r = print_record_counters(bus);
        if (r == 0)
                r = print_delivery(bus);
        if (r == 0)
                r = print_pools(bus);
        return r != 0 ? r : print_pool_holders(bus);
}

static void append_event_text(struct strbuf *sb, const struct uebctl_event_info *e) {
        char user_buf[USER_BUF_SIZE];
        const char *user = uebctl_user_name(e->owner_uid, user_buf, sizeof(user_buf));

        strbuf_printf(sb,
                      "%s\n"
                      "       Fields: %s\n"
                      "        Owner: %s (uid %u)\n"
                      "Registrations: %u\n"
                      "      Enabled: %s\n",
                      e->name, e->fields, user ?: "-", e->owner_uid, e->registrations,
                      e->enabled ? "yes (recorded or traced)" : "no");
}

static const struct uebctl_event_info *find(const struct uebctl_event_info *events, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(events[i].name, name) == 0)
                        return &events[i];
        return NULL;
}

static int print_events(sd_bus *bus, char **names, size_t n_names) {
        struct uebctl_event_info *events = NULL;
        struct strbuf sb = STRBUF_INIT;
        size_t n = 0, shown = 0;
        char *text;
        int status = 0;

        if (uebctl_list_events(bus, &events, &n) < 0)
                return 1;
        if (uebctl_opts.json != UEBCTL_JSON_OFF)
                strbuf_append_c(&sb, '[');
        for (size_t i = 0; i < n_names; i++) {
                const struct uebctl_event_info *e = find(events, n, names[i]);

                if (!e) {
                        struct strbuf name = STRBUF_INIT;
                        char *escaped;

                        /* The argument came from a user, maybe from a script. */
                        text_escape_append(&name, names[i], strlen(names[i]), TEXT_ESCAPE_TERMINAL);
                        escaped = strbuf_steal(&name);
                        fprintf(stderr, "error: no event is called %s (see uebctl list)\n", escaped ?: "?");
                        free(escaped);
                        status = 1;
                        continue;
                }
                if (uebctl_opts.json != UEBCTL_JSON_OFF) {
                        if (shown)
                                strbuf_append_c(&sb, ',');
                        uebctl_append_event_json(&sb, e);
                } else {
                        if (shown)
                                strbuf_append_c(&sb, '\n');
                        append_event_text(&sb, e);
                }
                shown++;
        }
        if (uebctl_opts.json != UEBCTL_JSON_OFF)
                strbuf_append_c(&sb, ']');
        uebctl_event_info_free(events, n);
        text = strbuf_steal(&sb);
        if (!text) {
                fprintf(stderr, "error: out of memory\n");
                return 1;
        }
        uebctl_pager_open();
        if (uebctl_opts.json != UEBCTL_JSON_OFF) {
                if (uebctl_print_json(text) != 0)
                        status = 1;
        } else
                fputs(text, stdout);
        free(text);
        return status;
}

int uebctl_status(int argc, char *argv[]) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int status;

        if (argc == 1 && uebctl_opts.json != UEBCTL_JSON_OFF) {
                fprintf(stderr, "error: the status text has no JSON form; name events (uebctl status --json NAME...) "
                                "or use uebctl list --json\n");
                return 2;
        }
        if (uebctl_bus_open(&bus) < 0)
                return 1;
        status = argc == 1 ? print_status_text(bus) : print_events(bus, argv + 1, (size_t) (argc - 1));
        return fflush(stdout) == 0 ? status : 1;
}
