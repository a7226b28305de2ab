/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* daemon/core/event-registry.c (status indexes, names, owners, removal) and the
 * write indexes of daemon/core/data-session.c, on the real embedded provider. No bus:
 * sessions are built by hand around a provider session, since
 * session_identify() needs a bus. */
#include "check-tap.h"
#include "cleanup.h"

#include <errno.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <systemd/sd-event.h>

#include "event-registry.h"
#include "ring.h"
#include "peer.h"
#include "status-text.h"
#include "user-charges.h"

static sd_event *event;
static struct provider_link plink;
static struct user_charges charges;
static struct event_registry registry, *const reg = &registry;
/* Sessions without a bus: identification is not tested here. */
static struct peer_registry peers;

/* Small shares, so that the tests reach them. */
static const struct charge_bounds test_bounds = {
        .kind = {
                [CHARGE_CLIENTS] = { .pool = 100, .share = 2 },
                [CHARGE_EVENTS] = { .pool = STATUS_INDEX_MAX, .share = STATUS_INDEX_MAX },
                [CHARGE_RING_BYTES] = { .pool = 1u << 20, .share = 3u * (RING_HEADER_SIZE + RING_DATA_MIN) },
        },
};

static void setup(void) {
        ck_assert_int_eq(sd_event_new(&event), 0);
        ck_assert_int_eq(provider_link_start(&plink, event, &embedded_provider_ops, NULL), 0);
        user_charges_init(&charges, &test_bounds);
        event_registry_init(reg, &plink, &charges);
        peer_registry_init(&peers, NULL, &plink, reg, NULL, &charges, "test.conf", 100);
}

static void teardown(void) {
        peer_registry_done(&peers);
        event_registry_done(reg);
        ck_assert_uint_eq(reg->n_events, 0);
        provider_link_stop(&plink);
        /* Everything charged was released. */
        for (unsigned k = 0; k < _CHARGE_KIND_MAX; k++)
                ck_assert_uint_eq(charges.total[k], 0);
        ck_assert_uint_eq(charges.n_accounts, 0);
        user_charges_done(&charges);
        event = sd_event_unref(event);
}

static struct event_def *parse(const char *command) {
        struct event_def *def = NULL;

        ck_assert_int_eq(event_def_parse(command, 0, &def, NULL), 0);
        return def;
}

/* Adds @command for @owner and asserts success; returns the event. */
static struct broker_event *add(const char *command, uid_t owner) {
        struct event_def *def = parse(command);
        struct broker_event *ev = NULL;

        ck_assert_int_eq(event_registry_add(reg, def, owner, &ev), 0);
        ck_assert_ptr_nonnull(ev);
        ck_assert_ptr_eq(ev->def, def);
        return ev;
}

/* Adds "ev_N u32 a". */
static struct broker_event *add_numbered(unsigned n) {
        char command[64];

        snprintf(command, sizeof(command), "ev_%u u32 a", n);
        return add(command, 1000);
}

START_TEST(test_indexes_start_at_one_and_are_dense) {
        for (unsigned i = 1; i <= 10; i++) {
                struct broker_event *ev = add_numbered(i);

                ck_assert_uint_eq(ev->status_index, i);
                ck_assert_ptr_eq(reg->by_index[i], ev);
                ck_assert_uint_eq(ev->n_registrations, 0);
        }
        ck_assert_uint_eq(reg->n_events, 10);
        ck_assert_ptr_null(reg->by_index[0]);
}
END_TEST

START_TEST(test_exhaustion_and_reuse_after_delete) {
        struct event_def *def;
        struct broker_event *ev = NULL;

        for (unsigned i = 1; i <= STATUS_INDEX_MAX; i++)
                ck_assert_uint_eq(add_numbered(i)->status_index, i);
        ck_assert_uint_eq(reg->n_events, STATUS_INDEX_MAX);
        ck_assert_ptr_null(reg->by_index[0]);

        /* Full: index 0 is never the answer. */
        def = parse("one_too_many u32 a");
        ck_assert_int_eq(event_registry_add(reg, def, 1000, &ev), -ENOSPC);
        ck_assert_ptr_null(ev);
        ck_assert_ptr_null(event_registry_find(reg, "one_too_many"));
        ck_assert_uint_eq(reg->n_events, STATUS_INDEX_MAX);

        /* A deleted index is handed out again, and its name is free. */
        event_registry_remove(reg, event_registry_find(reg, "ev_77"));
        ck_assert_ptr_null(reg->by_index[77]);
        ck_assert_ptr_null(event_registry_find(reg, "ev_77"));
        ck_assert_int_eq(event_registry_add(reg, def, 1000, &ev), 0);
        ck_assert_uint_eq(ev->status_index, 77);
        ck_assert_ptr_eq(event_registry_find(reg, "one_too_many"), ev);
        ck_assert_uint_eq(reg->n_events, STATUS_INDEX_MAX);
}
END_TEST

START_TEST(test_deleted_index_not_reused_while_others_are_free) {
        struct broker_event *ev;

        for (unsigned i = 1; i <= 5; i++)
                add_numbered(i);
        event_registry_remove(reg, event_registry_find(reg, "ev_2"));
        ck_assert_uint_eq(reg->n_events, 4);
        /* A stale client of ev_2 must not see a new event's byte at once. */
        ev = add_numbered(6);
        ck_assert_uint_eq(ev->status_index, 6);
        ck_assert_ptr_null(reg->by_index[2]);
}
END_TEST

START_TEST(test_restored_indexes_move_the_round_robin) {
        static const uint32_t restored[] = { 1, 2, 3, 5 };
        struct broker_event *ev = NULL;

        /* A table restored after a restart, with ev_4 deleted before it:
         * the next new event goes after the highest restored index, not
         * into the hole a stale client of ev_4 may still read. */
        for (size_t i = 0; i < sizeof(restored) / sizeof(restored[0]); i++) {
                char command[64];

                snprintf(command, sizeof(command), "ev_%u u32 a", restored[i]);
                ck_assert_int_eq(event_registry_add_at(reg, parse(command), 1000, restored[i], &ev), 0);
                ck_assert_uint_eq(ev->status_index, restored[i]);
        }
        ev = add_numbered(6);
        ck_assert_uint_eq(ev->status_index, 6);
        ck_assert_ptr_null(reg->by_index[4]);
}
END_TEST

START_TEST(test_owner_and_lookup) {
        struct broker_event *a = add("look_a u32 a", 1000);
        struct broker_event *b = add("look_b u64 b; char[8] c", 2000);

        ck_assert_uint_eq(a->owner_uid, 1000);
        ck_assert_uint_eq(b->owner_uid, 2000);
        ck_assert_ptr_eq(event_registry_find(reg, "look_a"), a);
        ck_assert_ptr_eq(event_registry_find(reg, "look_b"), b);
        ck_assert_ptr_null(event_registry_find(reg, "look"));
        ck_assert_ptr_null(event_registry_find(reg, "look_a "));
        ck_assert_ptr_null(event_registry_find(reg, "LOOK_A"));
        ck_assert_ptr_null(event_registry_find(reg, ""));
        ck_assert_str_eq(a->def->name, "look_a");
}
END_TEST

START_TEST(test_same_name_refused_definitions_compared_by_caller) {
        struct broker_event *ev = add("same_ev u32 a", 1000), *other = NULL;
        _cleanup_(event_def_freep) struct event_def *same = parse("same_ev:FLAG u32 a");
        _cleanup_(event_def_freep) struct event_def *different = parse("same_ev u32 b");

        /* What the broker does with an existing name: the same definition
         * (flags aside) reuses the event, other fields are refused. */
        ck_assert(event_def_equal(event_registry_find(reg, "same_ev")->def, same));
        ck_assert(!event_def_equal(event_registry_find(reg, "same_ev")->def, different));

        /* The registry itself never holds two events of one name. */
        ck_assert_int_eq(event_registry_add(reg, different, 2000, &other), -EEXIST);
        ck_assert_ptr_null(other);
        ck_assert_uint_eq(reg->n_events, 1);
        ck_assert_ptr_eq(event_registry_find(reg, "same_ev"), ev);
        ck_assert_uint_eq(ev->owner_uid, 1000);
        ck_assert_ptr_null(reg->by_index[2]);
}
END_TEST

START_TEST(test_status_follows_recorders_and_remove_clears) {
        struct broker_event *ev = add("stat_ev u32 a", 1000);
        struct provider_event *pe = ev->provider_event;
        int fd;

        ck_assert_uint_eq(broker_event_status(reg, ev), 0);
        fd = provider_link_record(&plink, &pe, 1, NULL);
        ck_assert_int_ge(fd, 0);
        ck_assert_uint_eq(broker_event_status(reg, ev), EVENT_STATUS_OTHER);

        /* The recorder goes when the provider notices its consumer left. */
        close(fd);
        for (int i = 0; i < 10 && broker_event_status(reg, ev) != 0; i++)
                ck_assert_int_ge(sd_event_run(event, 100000), 0);
        ck_assert_uint_eq(broker_event_status(reg, ev), 0);

        event_registry_remove(reg, ev);
        ck_assert_uint_eq(reg->n_events, 0);
        ck_assert_ptr_null(reg->by_index[1]);
        ck_assert_ptr_null(event_registry_find(reg, "stat_ev"));
}
END_TEST

/* Events of @owner in use (registered, bound or listened to). */
static unsigned count_in_use(uid_t owner) {
        unsigned n = 0;

        for (uint32_t i = 1; i < STATUS_PAGE_SIZE; i++)
                if (reg->by_index[i] && reg->by_index[i]->owner_uid == owner && broker_event_in_use(reg, reg->by_index[i]))
                        n++;
        return n;
}

/* Write indexes (data-session.c) */

/* The own data session of a peer of @uid without peer_identify()'s bus
 * tracking (not in the registry's tree); peer_free() releases it like any
 * other. Returns what data_session_open_provider() did in *ret_opened. */
static struct data_session *session_of_uid(uid_t uid, int *ret_opened) {
        struct peer *p = calloc(1, sizeof(*p));

        ck_assert_ptr_nonnull(p);
        peers.n++;
        p->registry = &peers;
        p->bus_name = strdup(":test");
        ck_assert_ptr_nonnull(p->bus_name);
        p->identified = true;
        p->uid = uid;
        p->pid = getpid();
        /* As peer_identified() sets them up; the connection is not
         * charged (no bus). */
        user_charge_init(&p->connection_charge, &charges, uid, CHARGE_CONNECTIONS);
        data_session_init(&p->own, &peers.sessions, &(struct data_session_owner) { p->uid, p->pid, p->bus_name }, 0);
        *ret_opened = data_session_open_provider(&p->own);
        return &p->own;
}

/* The peer whose own data session @s is. */
static struct peer *peer_of(struct data_session *s) {
        return (struct peer *) ((char *) s - offsetof(struct peer, own));
}

static struct data_session *session_without_bus(void) {
        uint64_t before = user_charges_held(&charges, getuid(), CHARGE_CLIENTS);
        int opened;
        struct data_session *s = session_of_uid(getuid(), &opened);

        ck_assert_int_eq(opened, 0);
        ck_assert_uint_eq(user_charges_held(&charges, s->owner.uid, CHARGE_CLIENTS), before + 1);
        return s;
}

START_TEST(test_write_indexes) {
        struct broker_event *a = add("wi_a u32 a", 1000), *b = add("wi_b u32 b", 1000), *c = add("wi_c u32 c", 1000);
        struct broker_event *d = add("wi_d u32 d", 1000);
        struct data_session *s = session_without_bus();
        uint32_t wi = 99;

        /* 0, 1, 2 in order of first registration; again: the same one. */
        ck_assert_int_eq(data_session_register(s, a, &wi), 0);
        ck_assert_uint_eq(wi, 0);
        ck_assert_int_eq(data_session_register(s, b, &wi), 0);
        ck_assert_uint_eq(wi, 1);
        ck_assert_int_eq(data_session_register(s, a, &wi), 0);
        ck_assert_uint_eq(wi, 0);
        ck_assert_int_eq(data_session_register(s, c, &wi), 0);
        ck_assert_uint_eq(wi, 2);
        ck_assert_uint_eq(s->indexes.n_active, 3);
        ck_assert_uint_eq(a->n_registrations, 1);
        ck_assert_int_eq(data_session_find_registration(s, c, &wi), 0);
        ck_assert_uint_eq(wi, 2);
        ck_assert_int_eq(data_session_find_registration(s, d, &wi), -ENOENT);

        /* Unregister: unknown indexes are -ENOENT; an unregistered index
         * stays bound to its event and is never handed to another one. */
        ck_assert_int_eq(data_session_unregister(s, 3), -ENOENT);
        ck_assert_int_eq(data_session_unregister(s, UINT32_MAX), -ENOENT);
        ck_assert_int_eq(data_session_unregister(s, 1), 0);
        ck_assert_int_eq(data_session_unregister(s, 1), -ENOENT);
        ck_assert_uint_eq(b->n_registrations, 0);
        ck_assert_uint_eq(b->n_bound_sessions, 1);
        ck_assert_uint_eq(s->indexes.n_active, 2);
        ck_assert_int_eq(data_session_find_registration(s, b, &wi), -ENOENT);
        ck_assert_int_eq(data_session_register(s, d, &wi), 0);
        ck_assert_uint_eq(wi, 3);
        /* The same event again: its old index, active again. */
        ck_assert_int_eq(data_session_register(s, b, &wi), 0);
        ck_assert_uint_eq(wi, 1);
        ck_assert_uint_eq(b->n_registrations, 1);
        ck_assert_uint_eq(b->n_bound_sessions, 1);
        ck_assert_uint_eq(s->indexes.n_active, 4);
        ck_assert_uint_eq(s->indexes.n, 4);

        /* Ending the session releases every registration. */
        peer_free(peer_of(s));
        ck_assert_uint_eq(a->n_registrations, 0);
        ck_assert_uint_eq(b->n_registrations, 0);
        ck_assert_uint_eq(c->n_registrations, 0);
        ck_assert_uint_eq(d->n_registrations, 0);
        ck_assert_uint_eq(a->n_bound_sessions + b->n_bound_sessions + c->n_bound_sessions + d->n_bound_sessions, 0);
        ck_assert_uint_eq(peers.n, 0);
        ck_assert_uint_eq(user_charges_held(&charges, getuid(), CHARGE_CLIENTS), 0);
}
END_TEST

/* Opens a record stream of @ev (status byte non-zero until closed). */
static int record(struct broker_event *ev) {
        struct provider_event *pe = ev->provider_event;
        int fd = provider_link_record(&plink, &pe, 1, NULL);

        ck_assert_int_ge(fd, 0);
        ck_assert_uint_ne(broker_event_status(reg, ev), 0);
        return fd;
}

static void stop_recording(int fd, struct broker_event *ev) {
        close(fd);
        for (int i = 0; i < 10 && broker_event_status(reg, ev) != 0; i++)
                ck_assert_int_ge(sd_event_run(event, 100000), 0);
        ck_assert_uint_eq(broker_event_status(reg, ev), 0);
}

START_TEST(test_bound_index_keeps_event_in_use) {
        struct broker_event *ev = add("bound_ev u32 a", 1000);
        struct data_session *s = session_without_bus();
        uint32_t wi = 99;

        ck_assert(!broker_event_in_use(reg, ev));
        ck_assert_ptr_eq(event_registry_find_unused(reg, UID_ANY, UINT64_MAX), ev);
        ck_assert_int_eq(data_session_register(s, ev, &wi), 0);
        ck_assert(broker_event_in_use(reg, ev));
        ck_assert_ptr_null(event_registry_find_unused(reg, UID_ANY, UINT64_MAX));

        /* Unregistered, the index stays bound: still in use, not evictable. */
        ck_assert_int_eq(data_session_unregister(s, wi), 0);
        ck_assert_uint_eq(ev->n_registrations, 0);
        ck_assert(broker_event_in_use(reg, ev));
        ck_assert_ptr_null(event_registry_find_unused(reg, UID_ANY, UINT64_MAX));
        ck_assert_uint_eq(count_in_use(1000), 1);

        /* The session ends: nothing holds it any more. */
        peer_free(peer_of(s));
        ck_assert_uint_eq(ev->n_bound_sessions, 0);
        ck_assert(!broker_event_in_use(reg, ev));
        ck_assert_ptr_eq(event_registry_find_unused(reg, UID_ANY, UINT64_MAX), ev);
        ck_assert_uint_eq(count_in_use(1000), 0);
}
END_TEST

START_TEST(test_evictable_is_least_recently_used_unused) {
        struct broker_event *a = add("lru_a u32 a", 1000), *b = add("lru_b u32 b", 1000), *c = add("lru_c u32 c", 1000);
        struct data_session *s = session_without_bus();
        uint32_t wi;
        int fd;

        /* Creation order first. */
        ck_assert_ptr_eq(event_registry_find_unused(reg, UID_ANY, UINT64_MAX), a);
        event_registry_touch(reg, a);
        ck_assert_ptr_eq(event_registry_find_unused(reg, UID_ANY, UINT64_MAX), b);

        /* Recorded: still unused (a listener does not pin an event).
         * Registered: in use. */
        fd = record(b);
        ck_assert(!broker_event_in_use(reg, b));
        ck_assert_ptr_eq(event_registry_find_unused(reg, UID_ANY, UINT64_MAX), b);
        ck_assert_int_eq(data_session_register(s, b, &wi), 0);
        ck_assert(broker_event_in_use(reg, b));
        ck_assert_ptr_eq(event_registry_find_unused(reg, UID_ANY, UINT64_MAX), c);
        ck_assert_int_eq(data_session_register(s, c, &wi), 0);
        ck_assert_ptr_eq(event_registry_find_unused(reg, UID_ANY, UINT64_MAX), a);
        ck_assert_int_eq(data_session_register(s, a, &wi), 0);
        ck_assert_ptr_null(event_registry_find_unused(reg, UID_ANY, UINT64_MAX));

        /* Released, they count as used when released: b, c, then a (the
         * order the session bound them). */
        stop_recording(fd, b);
        peer_free(peer_of(s));
        ck_assert_ptr_eq(event_registry_find_unused(reg, UID_ANY, UINT64_MAX), b);
        event_registry_remove(reg, b);
        ck_assert_ptr_eq(event_registry_find_unused(reg, UID_ANY, UINT64_MAX), c);
        event_registry_remove(reg, c);
        ck_assert_ptr_eq(event_registry_find_unused(reg, UID_ANY, UINT64_MAX), a);
}
END_TEST

START_TEST(test_count_in_use_by_owner) {
        struct broker_event *a = add("own_a u32 a", 1000), *b = add("own_b u32 b", 1000);
        struct broker_event *c = add("own_c u32 c", 2000);
        struct data_session *s = session_without_bus();
        uint32_t wi;
        int fd;

        ck_assert_uint_eq(count_in_use(1000), 0);
        ck_assert_int_eq(data_session_register(s, a, &wi), 0);
        ck_assert_int_eq(data_session_register(s, c, &wi), 0);
        ck_assert_uint_eq(count_in_use(1000), 1);
        ck_assert_uint_eq(count_in_use(2000), 1);
        ck_assert_uint_eq(count_in_use(3000), 0);
        fd = record(b);         /* a listener does not make it in use */
        ck_assert_uint_eq(count_in_use(1000), 1);
        stop_recording(fd, b);
        ck_assert_uint_eq(count_in_use(1000), 1);
        peer_free(peer_of(s));
        ck_assert_uint_eq(count_in_use(1000), 0);
        ck_assert_uint_eq(count_in_use(2000), 0);
}
END_TEST

static Suite *event_registry_suite(void) {
        Suite *s = suite_create("event-registry");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, test_indexes_start_at_one_and_are_dense);
        tcase_add_test(tc, test_exhaustion_and_reuse_after_delete);
        tcase_add_test(tc, test_deleted_index_not_reused_while_others_are_free);
        tcase_add_test(tc, test_restored_indexes_move_the_round_robin);
        tcase_add_test(tc, test_owner_and_lookup);
        tcase_add_test(tc, test_same_name_refused_definitions_compared_by_caller);
        tcase_add_test(tc, test_status_follows_recorders_and_remove_clears);
        tcase_add_test(tc, test_write_indexes);
        tcase_add_test(tc, test_bound_index_keeps_event_in_use);
        tcase_add_test(tc, test_evictable_is_least_recently_used_unused);
        tcase_add_test(tc, test_count_in_use_by_owner);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(event_registry_suite());
}
