/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "data-session.h"
#include "event-registry.h"
#include "fd-util.h"
#include "provider-link.h"
#include "ring.h"
#include "macro.h"
#include "privileged-uid.h"

int data_session_path_id(const char *path, uint64_t *ret_id) {
        const size_t prefix = strlen(BROKER_SESSION_PATH_PREFIX);
        uint64_t id = 0;
        const char *d;

        if (!path)
                return -EINVAL;
        if (strcmp(path, BROKER_OBJECT_PATH) == 0) {
                *ret_id = 0;
                return 0;
        }
        if (strncmp(path, BROKER_SESSION_PATH_PREFIX, prefix) != 0 || path[prefix] != '/')
                return -EINVAL;
        d = path + prefix + 1;
        if (*d < '1' || *d > '9' || strlen(d) > 20)
                return -EINVAL;
        for (; *d; d++) {
                if (*d < '0' || *d > '9' || id > (UINT64_MAX - (uint64_t) (*d - '0')) / 10)
                        return -EINVAL;
                id = id * 10 + (uint64_t) (*d - '0');
        }
        *ret_id = id;
        return 0;
}

const char *data_session_path(const struct data_session *ds, char buf[static DATA_SESSION_PATH_MAX]) {
        assert(ds);

        if (ds->id == 0)
                return BROKER_OBJECT_PATH;
        snprintf(buf, DATA_SESSION_PATH_MAX, "%s/%" PRIu64, BROKER_SESSION_PATH_PREFIX, ds->id);
        return buf;
}

void data_session_init(struct data_session *ds, const struct data_session_context *context,
                       const struct data_session_owner *owner, uint64_t id) {
        assert(ds);

        *ds = (struct data_session) { .context = context, .owner = *owner, .id = id };
        user_charge_init(&ds->client_charge, context->charges, owner->uid, CHARGE_CLIENTS);
        user_charge_init(&ds->ring_charge, context->charges, owner->uid, CHARGE_RING_BYTES);
}

/* What @ds holds of @ev goes: one binding, and one registration if active. */
static void release_event(struct data_session *ds, struct broker_event *ev, bool active) {
        event_registry_use(ds->context->events, ev, -1, active ? -1 : 0);
}

void data_session_done(struct data_session *ds) {
        struct provider_link *link = ASSERT_PTR(ds)->context->link;

        /* The provider reads what the client still had queued first, while
         * every bound event is still there. */
        if (ds->provider_session) {
                for (unsigned i = 0; i < ds->n_granted; i++)
                        (void) provider_link_withdraw(link, ds->provider_session, ds->granted[i]->provider_event);
                provider_link_session_close(link, ds->provider_session);
                ds->provider_session = NULL;
        }
        user_charge_deinit(&ds->ring_charge);
        user_charge_deinit(&ds->client_charge);
        for (size_t i = 0; i < ds->indexes.n; i++)
                release_event(ds, ds->indexes.entries[i].event, ds->indexes.entries[i].active);
        for (unsigned i = 0; i < ds->n_granted; i++)
                release_event(ds, ds->granted[i], true);
        free(ds->granted);
        ds->granted = NULL;
        ds->n_granted = ds->n_granted_allocated = 0;
        write_indexes_done(&ds->indexes);
}

int data_session_open_provider(struct data_session *ds) {
        const struct data_session_owner *o = &ASSERT_PTR(ds)->owner;
        struct provider_peer who = { .pid = o->pid, .uid = o->uid, .bus_name = o->bus_name,
                                     .privileged = uid_privileged(o->uid) };
        bool charged_here = false;
        int r;

        if (ds->provider_session)
                return 0;
        if (ds->client_charge.amount == 0) {
                r = user_charge_take(&ds->client_charge, 1);
                if (r < 0)
                        return r;
                charged_here = true;
        }
        r = provider_link_session_open(ds->context->link, &who, &ds->indexes, &ds->provider_session);
        if (r < 0 && charged_here)
                user_charge_deinit(&ds->client_charge);
        return r;
}

int data_session_data_fd(const struct data_session *ds) {
        assert(ds && ds->provider_session);
        return provider_link_session_data_fd(ds->context->link, ds->provider_session);
}

int data_session_status_fd(const struct data_session *ds) {
        assert(ds && ds->provider_session);
        return provider_link_session_status_fd(ds->context->link, ds->provider_session);
}

int data_session_open_ring(struct data_session *ds, uint32_t requested, uint32_t *ret_size) {
        const struct data_session_context *ctx = ASSERT_PTR(ds)->context;
        uid_t uid = ds->owner.uid;
        uint64_t room = user_charges_room(ctx->charges, uid, CHARGE_RING_BYTES), mapped = 0;
        int fd, r;

        if (!ds->provider_session || ds->indexes.n_active == 0)
                return -ENOENT;
        if (ds->ring_charge.amount > 0)
                return -EBUSY;
        /* The smallest ring must fit; which bound it misses tells the
         * caller whose memory is used up. */
        r = user_charges_check(ctx->charges, uid, CHARGE_RING_BYTES, RING_HEADER_SIZE + RING_DATA_MIN);
        if (r < 0)
                return r;
        /* -ENOSPC from the provider: its own smallest ring is bigger. */
        fd = provider_link_session_ring(ctx->link, ds->provider_session, requested, room, ret_size, &mapped);
        if (fd < 0)
                return fd;
        r = user_charge_take(&ds->ring_charge, mapped);
        if (r < 0) {
                /* The provider mapped more than the room it was given. */
                provider_link_session_ring_close(ctx->link, ds->provider_session);
                safe_close(fd);
                return r;
        }
        return fd;
}

static void close_ring(struct data_session *ds) {
        if (ds->ring_charge.amount == 0)
                return;
        provider_link_session_ring_close(ds->context->link, ds->provider_session);
        user_charge_deinit(&ds->ring_charge);
}

int data_session_find_registration(struct data_session *ds, struct broker_event *ev, uint32_t *ret_write_index) {
        int index = write_indexes_find(&ASSERT_PTR(ds)->indexes, ev);

        if (index < 0 || !ds->indexes.entries[index].active)
                return -ENOENT;
        *ret_write_index = (uint32_t) index;
        return 0;
}

int data_session_register(struct data_session *ds, struct broker_event *ev, uint32_t *ret_write_index) {
        unsigned active_before = ASSERT_PTR(ds)->indexes.n_active;
        int r;

        r = provider_link_register(ds->context->link, ds->provider_session, &ds->indexes, ev,
                                   ev->provider_event, ret_write_index);
        if (r < 0)
                return r;
        event_registry_use(ds->context->events, ev, r > 0, ds->indexes.n_active != active_before);
        return 0;
}

int data_session_unregister(struct data_session *ds, uint32_t write_index) {
        struct broker_event *ev;
        int r;

        assert(ds);
        if (!ds->provider_session)
                return -ENOENT;
        r = provider_link_unregister(ds->context->link, ds->provider_session, &ds->indexes, write_index);
        if (r < 0)
                return r;
        ev = ds->indexes.entries[write_index].event;
        event_registry_use(ds->context->events, ev, 0, -1);
        if (ds->indexes.n_active == 0)
                close_ring(ds);
        return 0;
}

bool data_session_is_granted(const struct data_session *ds, const struct broker_event *ev) {
        assert(ds);

        for (unsigned i = 0; i < ds->n_granted; i++)
                if (ds->granted[i] == ev)
                        return true;
        return false;
}

int data_session_grant(struct data_session *ds, struct broker_event *ev) {
        int r;

        assert(ds);

        r = ARRAY_RESERVE(ds->granted, ds->n_granted_allocated, ds->n_granted + 1);
        if (r < 0)
                return r;
        r = provider_link_grant(ds->context->link, ds->provider_session, ev->provider_event);
        if (r < 0)
                return r;
        ds->granted[ds->n_granted++] = ev;
        event_registry_use(ds->context->events, ev, 1, 1);
        return 0;
}

int data_session_withdraw(struct data_session *ds, struct broker_event *ev) {
        assert(ds);

        for (unsigned i = 0; i < ds->n_granted; i++) {
                int r;

                if (ds->granted[i] != ev)
                        continue;
                r = provider_link_withdraw(ds->context->link, ds->provider_session, ev->provider_event);
                if (r < 0)
                        return r;
                ds->granted[i] = ds->granted[--ds->n_granted];
                release_event(ds, ev, true);
                return 0;
        }
        return -ENOENT;
}
