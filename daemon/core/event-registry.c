/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "event-registry.h"
#include "time-util.h"
#include "macro.h"

static uint64_t boottime_usec(void) {
        return clock_ns(CLOCK_BOOTTIME) / 1000u;
}

static int compare_by_name(const void *a, const void *b) {
        const struct broker_event *x = a, *y = b;

        return strcmp(x->def->name, y->def->name);
}

void event_registry_init(struct event_registry *reg, struct provider_link *link, struct user_charges *charges) {
        assert(reg);

        *reg = (struct event_registry) {
                .link = link,
                .charges = charges,
                .next_index_hint = 1,
                .now_usec = boottime_usec,
        };
}

static void broker_event_free(struct broker_event *ev) {
        event_def_free(ev->def);
        free(ev->store_line);
        free(ev);
}

void event_registry_done(struct event_registry *reg) {
        assert(reg);

        for (uint32_t i = 1; i < STATUS_PAGE_SIZE; i++) {
                struct broker_event *ev = reg->by_index[i];

                if (!ev)
                        continue;
                provider_link_event_remove(reg->link, ev->provider_event);
                user_charge_deinit(&ev->owner_charge);
                tdelete(ev, &reg->by_name, compare_by_name);
                reg->by_index[i] = NULL;
                broker_event_free(ev);
        }
        reg->n_events = 0;
}

struct broker_event *event_registry_find(struct event_registry *reg, const char *name) {
        struct event_def key_def = { .name = (char *) name };
        struct broker_event key = { .def = &key_def };
        void *found = tfind(&key, &ASSERT_PTR(reg)->by_name, compare_by_name);

        return found ? *(struct broker_event **) found : NULL;
}

static uint32_t allocate_index(struct event_registry *reg) {
        /* Round-robin from the last one handed out, so a just-deleted
         * index is not reused at once (a stale client would see another
         * event's byte) while free indexes remain. */
        for (uint32_t n = 0; n < STATUS_INDEX_MAX; n++) {
                uint32_t i = (reg->next_index_hint - 1 + n) % STATUS_INDEX_MAX + 1;

                if (!reg->by_index[i]) {
                        reg->next_index_hint = i % STATUS_INDEX_MAX + 1;
                        return i;
                }
        }
        return 0;
}

int event_registry_add(struct event_registry *reg, struct event_def *def, uid_t owner, struct broker_event **ret) {
        assert(reg);

        return event_registry_add_at(reg, def, owner, 0, ret);
}

int event_registry_add_at(struct event_registry *reg, struct event_def *def, uid_t owner, uint32_t preferred,
                          struct broker_event **ret) {
        struct broker_event *ev;
        uint32_t index;
        int r;

        assert(reg);
        /* One event per name: the caller decides what an existing name
         * means (the same definition is reused, another one is refused). */
        if (event_registry_find(reg, def->name))
                return -EEXIST;
        if (preferred >= 1 && preferred <= STATUS_INDEX_MAX && !reg->by_index[preferred])
                index = preferred;
        else
                index = allocate_index(reg);
        if (index == 0)
                return -ENOSPC;

        ev = calloc(1, sizeof(*ev));
        if (!ev)
                return -ENOMEM;
        /* Admission (admission.h) decided: the owner's count only follows. */
        user_charge_init(&ev->owner_charge, reg->charges, owner, CHARGE_EVENTS);
        r = user_charge_force(&ev->owner_charge, 1);
        if (r < 0) {
                free(ev);
                return r;
        }
        ev->def = def;
        ev->owner_uid = owner;
        event_registry_touch(reg, ev);

        r = provider_link_event_add(reg->link, def, &index, &ev->provider_event);
        if (r < 0) {
                user_charge_deinit(&ev->owner_charge);
                free(ev);
                return r;
        }
        /* A provider that picks indexes itself gave one we cannot hold;
         * or no memory for the name tree. */
        if (index == 0 || index > STATUS_INDEX_MAX || reg->by_index[index])
                r = -EADDRINUSE;
        else if (!tsearch(ev, &reg->by_name, compare_by_name))
                r = -ENOMEM;
        if (r < 0) {
                provider_link_event_remove(reg->link, ev->provider_event);
                user_charge_deinit(&ev->owner_charge);
                free(ev);       /* @def stays the caller's */
                return r;
        }
        ev->status_index = index;
        reg->by_index[index] = ev;
        reg->n_events++;
        /* An index given back (a restored table) moves the round-robin on
         * past it, as one handed out does: the holes below it were deleted
         * lately, perhaps just before a restart. */
        if (index >= reg->next_index_hint)
                reg->next_index_hint = index % STATUS_INDEX_MAX + 1;
        if (reg->on_change)
                reg->on_change(reg->on_change_userdata, ev, true);
        *ret = ev;
        return 0;
}

struct event_def *event_registry_remove_keep_def(struct event_registry *reg, struct broker_event *ev) {
        struct event_def *def = ev->def;

        assert(reg);

        assert(ev->n_bound_sessions == 0);
        if (reg->on_change)
                reg->on_change(reg->on_change_userdata, ev, false);
        provider_link_event_remove(reg->link, ev->provider_event);
        tdelete(ev, &reg->by_name, compare_by_name);
        reg->by_index[ev->status_index] = NULL;
        reg->n_events--;
        user_charge_deinit(&ev->owner_charge);
        free(ev->store_line);
        free(ev);
        return def;
}

void event_registry_remove(struct event_registry *reg, struct broker_event *ev) {
        assert(reg);

        event_def_free(event_registry_remove_keep_def(reg, ev));
}

uint8_t broker_event_status(struct event_registry *reg, struct broker_event *ev) {
        assert(reg);

        return provider_link_event_status(reg->link, ev->provider_event);
}

bool broker_event_in_use(struct event_registry *reg, struct broker_event *ev) {
        assert(reg);

        (void) reg;
        return ev->n_registrations > 0 || ev->n_bound_sessions > 0;
}

void event_registry_touch(struct event_registry *reg, struct broker_event *ev) {
        assert(reg);

        ev->last_used = ++reg->use_clock;
        ev->last_used_usec = reg->now_usec();
}

void event_registry_use(struct event_registry *reg, struct broker_event *ev, int bound, int registered) {
        assert(reg);

        assert(bound >= -1 && bound <= 1 && registered >= -1 && registered <= 1);
        assert(bound >= 0 || ev->n_bound_sessions > 0);
        assert(registered >= 0 || ev->n_registrations > 0);
        ev->n_bound_sessions += (unsigned) bound;
        ev->n_registrations += (unsigned) registered;
        event_registry_touch(reg, ev);
}

struct broker_event *event_registry_find_unused(struct event_registry *reg, uid_t owner, uint64_t used_before_usec) {
        struct broker_event *oldest = NULL;

        assert(reg);

        for (uint32_t i = 1; i < STATUS_PAGE_SIZE; i++) {
                struct broker_event *ev = reg->by_index[i];

                if (!ev || (owner != UID_ANY && ev->owner_uid != owner) || ev->last_used_usec > used_before_usec)
                        continue;
                if ((!oldest || ev->last_used < oldest->last_used) && !broker_event_in_use(reg, ev))
                        oldest = ev;
        }
        return oldest;
}

unsigned event_registry_count_owned(struct event_registry *reg, uid_t owner) {
        assert(reg);

        return (unsigned) user_charges_held(reg->charges, owner, CHARGE_EVENTS);
}
