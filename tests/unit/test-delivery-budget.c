/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* daemon/bus/delivery-budget.c: which reply goes now, which waits in the
 * broker and which is refused, from what is pinned (sent, not yet
 * delivered by the bus) and held, for all clients and for one uid. */
#include "check-tap.h"

#include "delivery-budget.h"

static const struct delivery_limits limits = {
        .max_fds = 48,
        .max_bytes = 1000,
        .fds_per_uid = 12,
        .bytes_per_uid = 250,
        .held_per_uid = 2,
        .max_held = 3,
};

static const struct delivery_cost register_reply = { .fds = 2, .bytes = 10 };

static enum delivery_verdict decide(struct delivery_usage all, struct delivery_usage user, bool privileged,
                                    struct delivery_cost cost) {
        return delivery_decide(&limits, &all, &user, privileged, cost, true);
}

START_TEST(test_nothing_pinned_sends) {
        ck_assert_int_eq(decide((struct delivery_usage) {}, (struct delivery_usage) {}, false, register_reply),
                         DELIVERY_SEND);
}
END_TEST

START_TEST(test_uid_share_of_descriptors) {
        struct delivery_usage user = { .pinned = { .fds = 10 } };

        /* 10 + 2 = 12: the last pair of the share. */
        ck_assert_int_eq(decide(user, user, false, register_reply), DELIVERY_SEND);
        user.pinned.fds = 11;
        ck_assert_int_eq(decide(user, user, false, register_reply), DELIVERY_HOLD);
        /* Root is exempt from the share, not from the bus's limit. */
        ck_assert_int_eq(decide(user, user, true, register_reply), DELIVERY_SEND);
}
END_TEST

START_TEST(test_all_clients_bound_holds_even_root) {
        struct delivery_usage all = { .pinned = { .fds = 47 } }, user = {};

        ck_assert_int_eq(decide(all, user, false, register_reply), DELIVERY_HOLD);
        ck_assert_int_eq(decide(all, user, true, register_reply), DELIVERY_HOLD);
        /* A reply without descriptors is not held back by descriptors. */
        ck_assert_int_eq(decide(all, user, false, (struct delivery_cost) { .bytes = 10 }), DELIVERY_SEND);
}
END_TEST

START_TEST(test_bytes_share) {
        struct delivery_usage user = { .pinned = { .bytes = 200 } };

        ck_assert_int_eq(decide(user, user, false, (struct delivery_cost) { .bytes = 50 }), DELIVERY_SEND);
        ck_assert_int_eq(decide(user, user, false, (struct delivery_cost) { .bytes = 51 }), DELIVERY_HOLD);
}
END_TEST

START_TEST(test_oversized_reply_goes_alone) {
        struct delivery_cost huge = { .bytes = 5000 };
        struct delivery_usage none = {}, some = { .pinned = { .bytes = 1 } };

        /* Bigger than the share and than the bound for all: it goes when
         * nothing else is pinned, else it waits. */
        ck_assert_int_eq(decide(none, none, false, huge), DELIVERY_SEND);
        ck_assert_int_eq(decide(some, some, false, huge), DELIVERY_HOLD);
        ck_assert_int_eq(decide(some, none, false, huge), DELIVERY_HOLD);
}
END_TEST

START_TEST(test_held_queues_are_bounded) {
        struct delivery_usage all = { .pinned = { .fds = 12 }, .held = 2 },
                              user = { .pinned = { .fds = 12 }, .held = 2 };

        /* The uid's queue is full: refused. */
        ck_assert_int_eq(decide(all, user, false, register_reply), DELIVERY_REFUSE);
        /* Root's queue is not the uid's, but the queue for all is bounded. */
        user.held = 0;
        ck_assert_int_eq(decide(all, user, false, register_reply), DELIVERY_HOLD);
        all.held = 3;
        ck_assert_int_eq(decide(all, user, false, register_reply), DELIVERY_REFUSE);
        ck_assert_int_eq(decide(all, user, true, register_reply), DELIVERY_SEND);
}
END_TEST

START_TEST(test_may_not_hold_refuses) {
        struct delivery_usage user = { .pinned = { .bytes = 250 } };

        ck_assert_int_eq(delivery_decide(&limits, &user, &user, false, (struct delivery_cost) { .bytes = 1 }, false),
                         DELIVERY_REFUSE);
        ck_assert_int_eq(delivery_decide(&limits, &user, &user, false, (struct delivery_cost) { .fds = 1 }, false),
                         DELIVERY_SEND);
}
END_TEST

START_TEST(test_cost_arithmetic_saturates) {
        struct delivery_cost c = { .fds = 2, .bytes = 10 };

        delivery_cost_add(&c, register_reply);
        ck_assert_uint_eq(c.fds, 4);
        ck_assert_uint_eq(c.bytes, 20);
        delivery_cost_sub(&c, (struct delivery_cost) { .fds = 5, .bytes = 5 });
        ck_assert_uint_eq(c.fds, 0);
        ck_assert_uint_eq(c.bytes, 15);
        ck_assert(!delivery_cost_is_zero(c));
        delivery_cost_sub(&c, c);
        ck_assert(delivery_cost_is_zero(c));
}
END_TEST

START_TEST(test_default_limits_below_dbus_daemon) {
        struct delivery_limits d = DELIVERY_LIMITS_DEFAULT;

        /* dbus-daemon: 64 descriptors and 127 MB per sender, 16 per message. */
        ck_assert_uint_le(d.max_fds + 16, 64);
        ck_assert_uint_lt(d.max_bytes, UINT64_C(127) << 20);
        ck_assert_uint_lt(d.fds_per_uid, d.max_fds);
        ck_assert_uint_lt(d.bytes_per_uid, d.max_bytes);
        ck_assert_uint_lt(d.held_per_uid, d.max_held);
}
END_TEST

static Suite *delivery_budget_suite(void) {
        Suite *s = suite_create("delivery-budget");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_nothing_pinned_sends);
        tcase_add_test(tc, test_uid_share_of_descriptors);
        tcase_add_test(tc, test_all_clients_bound_holds_even_root);
        tcase_add_test(tc, test_bytes_share);
        tcase_add_test(tc, test_oversized_reply_goes_alone);
        tcase_add_test(tc, test_held_queues_are_bounded);
        tcase_add_test(tc, test_may_not_hold_refuses);
        tcase_add_test(tc, test_cost_arithmetic_saturates);
        tcase_add_test(tc, test_default_limits_below_dbus_daemon);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(delivery_budget_suite());
}
