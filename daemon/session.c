/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>

#include "broker.h"
#include "log.h"
#include "session.h"

static int compare_by_bus_name(const void *a, const void *b) {
        const struct session *x = a, *y = b;

        return strcmp(x->bus_name, y->bus_name);
}

struct session *session_find(struct broker *b, const char *bus_name) {
        struct session key = { .bus_name = (char *) bus_name };
        void *found = tfind(&key, &b->sessions, compare_by_bus_name);

        return found ? *(struct session **) found : NULL;
}

static void count_uid_action(const void *node, VISIT which, void *closure) {
        const struct session *s = *(const struct session *const *) node;
        struct { uid_t uid; unsigned n; } *c = closure;

        if ((which == postorder || which == leaf) && s->uid == c->uid)
                c->n++;
}

unsigned session_count_for_uid(struct broker *b, uid_t uid) {
        struct { uid_t uid; unsigned n; } c = { uid, 0 };

        twalk_r(b->sessions, count_uid_action, &c);
        return c.n;
}

static int on_connection_gone(sd_bus_track *track, void *userdata) {
        struct session *s = userdata;

        log_debug("Client %s (uid %u, pid %d) went away, releasing its %u registrations.",
                  s->bus_name, (unsigned) s->uid, (int) s->pid, s->n_registrations);
        session_free(s);
        return 0;
}

int session_new(struct broker *b, const char *bus_name, uid_t uid, pid_t pid, struct session **ret) {
        struct provider_peer peer = { .pid = pid, .uid = uid, .bus_name = bus_name };
        struct session *s;
        int r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->broker = b;
        s->uid = uid;
        s->pid = pid;
        s->bus_name = strdup(bus_name);
        if (!s->bus_name) {
                free(s);
                return -ENOMEM;
        }

        r = sd_bus_track_new(b->bus, &s->track, on_connection_gone, s);
        if (r < 0)
                goto fail;
        /* Fails with -ENXIO if the connection is already gone. */
        r = sd_bus_track_add_name(s->track, bus_name);
        if (r < 0)
                goto fail;

        r = b->provider_ops->session_new(b->provider, &peer, &s->provider_session);
        if (r < 0)
                goto fail;

        if (!tsearch(s, &b->sessions, compare_by_bus_name)) {
                r = -ENOMEM;
                goto fail;
        }
        b->n_sessions++;
        *ret = s;
        return 0;

fail:
        if (s->provider_session)
                b->provider_ops->session_free(b->provider, s->provider_session);
        sd_bus_track_unref(s->track);
        free(s->bus_name);
        free(s);
        return r;
}

struct session *session_free(struct session *s) {
        struct broker *b;

        if (!s)
                return NULL;
        b = s->broker;

        /* The provider reads what the client still had queued first, while
         * every bound event is still there. */
        b->provider_ops->session_free(b->provider, s->provider_session);
        for (size_t i = 0; i < s->n_slots; i++) {
                struct broker_event *ev = s->slots[i].event;

                if (s->slots[i].active)
                        ev->n_registrations--;
                ev->n_bound_sessions--;
                event_registry_touch(&b->registry, ev);
        }

        tdelete(s, &b->sessions, compare_by_bus_name);
        b->n_sessions--;

        sd_bus_track_unref(s->track);
        free(s->slots);
        free(s->bus_name);
        free(s);
        return NULL;
}

void session_free_all(struct broker *b) {
        while (b->sessions)
                session_free(*(struct session **) b->sessions);
}

/* The slot bound to @ev, or NULL. */
static struct session_slot *session_find_slot(struct session *s, struct broker_event *ev) {
        for (size_t i = 0; i < s->n_slots; i++)
                if (s->slots[i].event == ev)
                        return &s->slots[i];
        return NULL;
}

int session_find_registration(struct session *s, struct broker_event *ev, uint32_t *ret_write_index) {
        struct session_slot *slot = session_find_slot(s, ev);

        if (!slot || !slot->active)
                return -ENOENT;
        *ret_write_index = (uint32_t) (slot - s->slots);
        return 0;
}

static void slot_activate(struct session *s, struct session_slot *slot) {
        slot->active = true;
        slot->event->n_registrations++;
        s->n_registrations++;
        event_registry_touch(&s->broker->registry, slot->event);
}

/* provider.h: new write indexes come in order, an index stays bound to its
 * event. A provider that answers otherwise is broken; undoing its answer
 * could touch another event's index, so only refuse. */
static int provider_broke_contract(struct session *s, uint32_t got, uint32_t expected) {
        return log_error_errno(-EPROTO, "Provider %s gave %s write index %u where %u was due.",
                               s->broker->provider_ops->name, s->bus_name, got, expected);
}

/* Registers @ev again on the index still bound to it. */
static int session_reactivate(struct session *s, struct session_slot *slot, uint32_t *ret_write_index) {
        struct broker *b = s->broker;
        uint32_t expected = (uint32_t) (slot - s->slots), write_index;
        int r;

        r = b->provider_ops->session_register(b->provider, s->provider_session, slot->event->provider_event,
                                              &write_index);
        if (r < 0)
                return r;
        if (write_index != expected)
                return provider_broke_contract(s, write_index, expected);
        slot_activate(s, slot);
        *ret_write_index = write_index;
        return 0;
}

int session_register(struct session *s, struct broker_event *ev, uint32_t *ret_write_index) {
        struct broker *b = s->broker;
        struct session_slot *slot;
        uint32_t write_index;
        int r;

        slot = session_find_slot(s, ev);
        if (slot) {
                if (slot->active) {
                        *ret_write_index = (uint32_t) (slot - s->slots);
                        return 0;
                }
                return session_reactivate(s, slot, ret_write_index);
        }

        if (s->n_slots >= SESSION_SLOTS_MAX)
                return -ENOSPC;
        /* Room first: once the provider has bound the index it must be
         * recorded here, or the event could go while the provider still
         * points to it. */
        if (s->n_slots == s->n_allocated) {
                size_t n = s->n_allocated ? s->n_allocated * 2 : 8;
                struct session_slot *slots;

                if (n > SESSION_SLOTS_MAX)
                        n = SESSION_SLOTS_MAX;
                slots = reallocarray(s->slots, n, sizeof(*slots));
                if (!slots)
                        return -ENOMEM;
                s->slots = slots;
                s->n_allocated = n;
        }

        r = b->provider_ops->session_register(b->provider, s->provider_session, ev->provider_event, &write_index);
        if (r < 0)
                return r;
        if (write_index != s->n_slots)
                return provider_broke_contract(s, write_index, (uint32_t) s->n_slots);
        slot = &s->slots[s->n_slots++];
        *slot = (struct session_slot) { .event = ev };
        ev->n_bound_sessions++;
        slot_activate(s, slot);
        *ret_write_index = write_index;
        return 0;
}

int session_unregister(struct session *s, uint32_t write_index) {
        struct broker *b = s->broker;
        struct session_slot *slot;
        int r;

        if (write_index >= s->n_slots || !s->slots[write_index].active)
                return -ENOENT;
        slot = &s->slots[write_index];
        r = b->provider_ops->session_unregister(b->provider, s->provider_session, write_index);
        if (r < 0)
                return r;
        slot->active = false;
        slot->event->n_registrations--;
        s->n_registrations--;
        event_registry_touch(&b->registry, slot->event);
        return 0;
}
