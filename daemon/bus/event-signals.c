/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "event-signals.h"

#include <errno.h>
#include <search.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "broker-bus.h"
#include "cleanup.h"
#include "event-change.h"
#include "log.h"
#include "macro.h"

/* An event changed since the last batch, with what listeners were told
 * then. */
struct pending_change {
        char *name;
        struct event_presence announced;
        char *announced_fields;         /* owns announced.fields */
        struct pending_change *next;
};

struct event_signals {
        sd_event *event;
        sd_bus *bus;
        struct event_registry *reg;
        uint64_t interval_usec;
        uint64_t last_batch_usec;       /* CLOCK_MONOTONIC; 0: none yet */
        sd_event_source *timer;
        void *by_name;                  /* tsearch() tree of struct pending_change */
        struct pending_change *first, *last;    /* in order of first change */
        uint32_t announced_active;      /* ActiveEvents as last announced */
};

static int compare_by_name(const void *a, const void *b) {
        const struct pending_change *x = a, *y = b;

        return strcmp(x->name, y->name);
}

static void pending_change_free(struct pending_change *c) {
        free(c->name);
        free(c->announced_fields);
        free(c);
}

static void pop_pending(struct event_signals *s) {
        struct pending_change *c = s->first;

        s->first = c->next;
        if (!s->first)
                s->last = NULL;
        tdelete(c, &s->by_name, compare_by_name);
        pending_change_free(c);
}

static void drop_pending(struct event_signals *s) {
        while (s->first)
                pop_pending(s);
}

static void emit(struct event_signals *s, const char *member, const char *types, ...) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        va_list ap;
        int r;

        r = sd_bus_message_new_signal(s->bus, &m, BROKER_OBJECT_PATH, BROKER_INTERFACE, member);
        if (r >= 0) {
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
        }
        if (r >= 0)
                r = sd_bus_send(s->bus, m, NULL);
        if (r < 0)
                log_debug_errno(r, "Cannot send %s: %m", member);
}

static void send_batch(struct event_signals *s) {
        for (unsigned n = 0; s->first && n < EVENT_SIGNALS_BATCH_MAX; n++, pop_pending(s)) {
                struct pending_change *c = s->first;
                struct broker_event *ev = event_registry_find(s->reg, c->name);
                _cleanup_free_ char *fields = ev ? event_def_fields_text(ev->def) : NULL;
                struct event_presence now = {
                        .present = ev != NULL,
                        .fields = fields,
                        .owner = ev ? ev->owner_uid : 0,
                };
                unsigned bits;

                if (ev && !fields) {
                        log_warning("Out of memory: EventAdded for %s not sent.", c->name);
                        continue;
                }
                bits = event_change_signals(&c->announced, &now);
                if (bits & EVENT_SIGNAL_REMOVED)
                        emit(s, "EventRemoved", "s", c->name);
                if (bits & EVENT_SIGNAL_ADDED)
                        emit(s, "EventAdded", "ssu", c->name, fields, (uint32_t) now.owner);
        }
        /* The rest go with the next batch (on_timer()), in order, still
         * coalesced. */

        if (s->reg->n_events != s->announced_active) {
                int r = sd_bus_emit_properties_changed(s->bus, BROKER_OBJECT_PATH, BROKER_INTERFACE, "ActiveEvents",
                                                       NULL);

                if (r < 0)
                        log_debug_errno(r, "Cannot emit PropertiesChanged for ActiveEvents: %m");
                s->announced_active = s->reg->n_events;
        }
}

static int on_timer(sd_event_source *source, uint64_t usec, void *userdata) {
        struct event_signals *s = ASSERT_PTR(userdata);

        s->last_batch_usec = usec;
        send_batch(s);
        /* What did not fit goes one interval later; else sleep. */
        if (s->first)
                return sd_event_source_set_time(source, usec + s->interval_usec);
        return sd_event_source_set_enabled(source, SD_EVENT_OFF);
}

static void schedule(struct event_signals *s) {
        uint64_t now = 0, when;
        int r, enabled = SD_EVENT_OFF;

        if (s->timer && sd_event_source_get_enabled(s->timer, &enabled) >= 0 && enabled != SD_EVENT_OFF)
                return;         /* a batch is due already */
        (void) sd_event_now(s->event, CLOCK_MONOTONIC, &now);
        when = s->last_batch_usec && s->last_batch_usec + s->interval_usec > now ?
                       s->last_batch_usec + s->interval_usec : now;
        if (s->timer)
                r = sd_event_source_set_time(s->timer, when);
        else
                r = sd_event_add_time(s->event, &s->timer, CLOCK_MONOTONIC, when, 0, on_timer, s);
        if (r >= 0)
                r = sd_event_source_set_enabled(s->timer, SD_EVENT_ON);
        if (r < 0)
                log_warning_errno(r, "Cannot schedule the EventAdded/EventRemoved signals: %m");
}

static void on_change(void *userdata, const struct broker_event *ev, bool added) {
        struct event_signals *s = ASSERT_PTR(userdata);
        struct pending_change key = { .name = ev->def->name }, *c;
        void *node;

        schedule(s);
        if (tfind(&key, &s->by_name, compare_by_name))
                return;         /* what listeners know is recorded already */

        c = calloc(1, sizeof(*c));
        if (c)
                c->name = strdup(ev->def->name);
        if (c && !added) {
                c->announced_fields = event_def_fields_text(ev->def);
                c->announced = (struct event_presence) {
                        .present = true,
                        .fields = c->announced_fields,
                        .owner = ev->owner_uid,
                };
        }
        node = c && c->name && (added || c->announced_fields) ? tsearch(c, &s->by_name, compare_by_name) : NULL;
        if (!node) {
                log_warning("Out of memory: the signal for a change of event %s is not sent.", ev->def->name);
                if (c)
                        pending_change_free(c);
                return;
        }
        if (s->last)
                s->last->next = c;
        else
                s->first = c;
        s->last = c;
}

int event_signals_new(sd_event *event, sd_bus *bus, struct event_registry *reg, uint64_t interval_usec,
                      struct event_signals **ret) {
        struct event_signals *s;

        assert(event);
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        *s = (struct event_signals) {
                .event = event,
                .bus = bus,
                .reg = reg,
                .interval_usec = interval_usec,
                .announced_active = reg->n_events,
        };
        reg->on_change = on_change;
        reg->on_change_userdata = s;
        *ret = s;
        return 0;
}

struct event_signals *event_signals_free(struct event_signals *s) {
        if (!s)
                return NULL;
        if (s->reg->on_change_userdata == s) {
                s->reg->on_change = NULL;
                s->reg->on_change_userdata = NULL;
        }
        sd_event_source_disable_unref(s->timer);
        drop_pending(s);
        free(s);
        return NULL;
}
