/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* daemon/providers/write-indexes.c and provider-link.c: the one write-index
 * table, and what the link does when a provider agrees, refuses, or says its
 * kernel numbered the event otherwise (-EPROTO). The provider here is a
 * recording double: each call is logged, its answers are set by the test. */
#include "check-tap.h"

#include <errno.h>
#include <stdlib.h>
#include <systemd/sd-event.h>

#include "provider-link.h"

struct provider {
        int register_answer;            /* what session_register returns */
        int unregister_answer;
        unsigned n_register, n_unregister;
        uint32_t last_index;
        struct provider_event *last_event;
};
struct provider_session {
        const struct write_indexes *indexes;
};
struct provider_event {
        int unused;
};

static struct provider double_provider;
static struct provider_session double_session;

static int double_new(sd_event *e, const struct provider_settings *settings, struct provider **ret) {
        double_provider = (struct provider) {};
        *ret = &double_provider;
        return 0;
}

static struct provider *double_free(struct provider *p) {
        return NULL;
}

static int double_session_new(struct provider *p, const struct provider_peer *peer,
                              const struct write_indexes *indexes, struct provider_session **ret) {
        double_session.indexes = indexes;
        *ret = &double_session;
        return 0;
}

static int double_register(struct provider *p, struct provider_session *s, struct provider_event *ev,
                           uint32_t write_index) {
        p->n_register++;
        p->last_index = write_index;
        p->last_event = ev;
        return p->register_answer;
}

static int double_unregister(struct provider *p, struct provider_session *s, struct provider_event *ev,
                             uint32_t write_index) {
        p->n_unregister++;
        p->last_index = write_index;
        p->last_event = ev;
        return p->unregister_answer;
}

static const struct provider_ops double_ops = {
        .name = "double",
        .new = double_new,
        .free = double_free,
        .session_new = double_session_new,
        .session_register = double_register,
        .session_unregister = double_unregister,
};

/* Events are opaque to the table: distinct addresses are enough. */
static char broker_events[3];
#define BEV(i) ((struct broker_event *) &broker_events[i])
static struct provider_event provider_events[3];

static struct provider_link link_;
static struct write_indexes table;
static struct provider_session *ps;

static void setup(void) {
        ck_assert_int_eq(provider_link_start(&link_, NULL, &double_ops, NULL), 0);
        table = (struct write_indexes) {};
        ck_assert_int_eq(provider_link_session_open(&link_, &(struct provider_peer) {}, &table, &ps), 0);
}

static void teardown(void) {
        write_indexes_done(&table);
        provider_link_stop(&link_);
}

static uint32_t do_register(int i, int expect) {
        uint32_t index = UINT32_MAX;

        ck_assert_int_eq(provider_link_register(&link_, ps, &table, BEV(i), &provider_events[i], &index), expect);
        return index;
}

START_TEST(test_indexes_in_order_and_kept) {
        ck_assert_uint_eq(do_register(0, 1), 0);
        ck_assert_uint_eq(do_register(1, 1), 1);
        ck_assert_ptr_eq(double_provider.last_event, &provider_events[1]);
        /* Active already: the provider is not asked again. */
        ck_assert_uint_eq(do_register(0, 0), 0);
        ck_assert_uint_eq(double_provider.n_register, 2);
        ck_assert_uint_eq(table.n_active, 2);

        /* Unregistered: deactivated, still bound; the data path stops
         * routing it; registering again reactivates the same index. */
        ck_assert_int_eq(provider_link_unregister(&link_, ps, &table, 0), 0);
        ck_assert_ptr_null(write_indexes_active_event(&table, 0));
        ck_assert_ptr_eq(write_indexes_active_event(&table, 1), &provider_events[1]);
        ck_assert_int_eq(provider_link_unregister(&link_, ps, &table, 0), -ENOENT);
        ck_assert_uint_eq(double_provider.n_unregister, 1);
        ck_assert_uint_eq(do_register(2, 1), 2);
        ck_assert_uint_eq(do_register(0, 0), 0);
        ck_assert_uint_eq(double_provider.last_index, 0);
        ck_assert_uint_eq(table.n, 3);
        ck_assert_uint_eq(table.n_active, 3);
}
END_TEST

START_TEST(test_refusal_leaves_table_unchanged) {
        ck_assert_uint_eq(do_register(0, 1), 0);
        double_provider.register_answer = -EPROTO;      /* the kernel numbered it otherwise */
        do_register(1, -EPROTO);
        ck_assert_uint_eq(table.n, 1);
        ck_assert_int_eq(write_indexes_find(&table, BEV(1)), -ENOENT);
        double_provider.register_answer = -EMFILE;
        do_register(1, -EMFILE);
        ck_assert_uint_eq(table.n, 1);
        /* The next one still gets index 1. */
        double_provider.register_answer = 0;
        ck_assert_uint_eq(do_register(1, 1), 1);

        /* A refused unregister keeps the index active. */
        double_provider.unregister_answer = -EIO;
        ck_assert_int_eq(provider_link_unregister(&link_, ps, &table, 1), -EIO);
        ck_assert_ptr_eq(write_indexes_active_event(&table, 1), &provider_events[1]);
}
END_TEST

START_TEST(test_untrusted_indexes) {
        ck_assert_uint_eq(do_register(0, 1), 0);
        ck_assert_ptr_null(write_indexes_active_event(&table, 1));
        ck_assert_ptr_null(write_indexes_active_event(&table, UINT32_MAX));
        ck_assert_int_eq(provider_link_unregister(&link_, ps, &table, UINT32_MAX), -ENOENT);
        ck_assert_uint_eq(double_provider.n_unregister, 0);
}
END_TEST

START_TEST(test_table_bound) {
        struct write_indexes t = {};

        for (unsigned i = 0; i < WRITE_INDEXES_MAX; i++) {
                ck_assert_int_eq(write_indexes_reserve(&t), 0);
                ck_assert_uint_eq(write_indexes_append(&t, BEV(0), NULL), i);
        }
        ck_assert_int_eq(write_indexes_reserve(&t), -ENOSPC);
        ck_assert_uint_eq(t.n_allocated, WRITE_INDEXES_MAX);
        write_indexes_done(&t);
        ck_assert_ptr_null(t.entries);
}
END_TEST

static Suite *provider_link_suite(void) {
        Suite *s = suite_create("provider-link");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_indexes_in_order_and_kept);
        tcase_add_test(tc, test_refusal_leaves_table_unchanged);
        tcase_add_test(tc, test_untrusted_indexes);
        tcase_add_test(tc, test_table_bound);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(provider_link_suite());
}
