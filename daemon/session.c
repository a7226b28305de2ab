/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>

#include "broker.h"
#include "log.h"
#include "session.h"

/* Write indexes are dense (0, 1, 2, ...); one beyond this means a broken
 * provider, not a big client. */
#define SESSION_WRITE_INDEX_MAX (1u << 20)

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

        for (size_t i = 0; i < s->n_slots; i++)
                if (s->registrations[i])
                        s->registrations[i]->n_registrations--;
        b->provider_ops->session_free(b->provider, s->provider_session);

        tdelete(s, &b->sessions, compare_by_bus_name);
        b->n_sessions--;

        sd_bus_track_unref(s->track);
        free(s->registrations);
        free(s->bus_name);
        free(s);
        return NULL;
}

void session_free_all(struct broker *b) {
        while (b->sessions)
                session_free(*(struct session **) b->sessions);
}

int session_find_registration(struct session *s, struct broker_event *ev, uint32_t *ret_write_index) {
        for (size_t i = 0; i < s->n_slots; i++)
                if (s->registrations[i] == ev) {
                        *ret_write_index = (uint32_t) i;
                        return 0;
                }
        return -ENOENT;
}

int session_register(struct session *s, struct broker_event *ev, uint32_t *ret_write_index) {
        struct broker *b = s->broker;
        uint32_t write_index;
        int r;

        if (session_find_registration(s, ev, ret_write_index) == 0)
                return 0;

        r = b->provider_ops->session_register(b->provider, s->provider_session, ev->provider_event, &write_index);
        if (r < 0)
                return r;

        if (write_index >= SESSION_WRITE_INDEX_MAX) {
                (void) b->provider_ops->session_unregister(b->provider, s->provider_session, write_index);
                return -ERANGE;
        }
        if (write_index >= s->n_slots) {
                struct broker_event **regs;
                size_t n = (size_t) write_index + 1;

                regs = reallocarray(s->registrations, n, sizeof(*regs));
                if (!regs) {
                        (void) b->provider_ops->session_unregister(b->provider, s->provider_session, write_index);
                        return -ENOMEM;
                }
                memset(regs + s->n_slots, 0, (n - s->n_slots) * sizeof(*regs));
                s->registrations = regs;
                s->n_slots = n;
        }
        s->registrations[write_index] = ev;
        s->n_registrations++;
        ev->n_registrations++;
        *ret_write_index = write_index;
        return 0;
}

int session_unregister(struct session *s, uint32_t write_index) {
        struct broker *b = s->broker;
        int r;

        if (write_index >= s->n_slots || !s->registrations[write_index])
                return -ENOENT;
        r = b->provider_ops->session_unregister(b->provider, s->provider_session, write_index);
        if (r < 0)
                return r;
        s->registrations[write_index]->n_registrations--;
        s->registrations[write_index] = NULL;
        s->n_registrations--;
        return 0;
}
