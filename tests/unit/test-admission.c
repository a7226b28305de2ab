/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* daemon/core/admission.c: which new event may be created and which unused event
 * makes room, on a real registry (embedded provider) with a fake clock. */
#include "charges-unbounded.h"
#include "check-tap.h"

#include <errno.h>
#include <stdio.h>
#include <systemd/sd-event.h>

#include "admission.h"
#include "event-registry.h"

#define HOUR_USEC (UINT64_C(3600) * 1000000u)

static sd_event *event;
static struct provider_link provider_link;
static struct event_registry registry, *const reg = &registry;
static uint64_t fake_now;

static uint64_t fake_clock(void) {
        return fake_now;
}

static const struct admission_limits limits = {
        .max_events = 6,
        .events_per_user = 3,
        .unused_expiry_usec = 6 * HOUR_USEC,
};

static struct user_charges charges;

/* No bound of the charges' own: the test is about the registry. */
static void charges_init(void) {
        struct charge_bounds unbounded;

        charge_bounds_unbounded(&unbounded);
        user_charges_init(&charges, &unbounded);
}

static void setup(void) {
        ck_assert_int_eq(sd_event_new(&event), 0);
        ck_assert_int_eq(provider_link_start(&provider_link, event, &embedded_provider_ops, NULL), 0);
        charges_init();
        event_registry_init(reg, &provider_link, &charges);
        reg->now_usec = fake_clock;
        fake_now = 100 * HOUR_USEC;
}

static void teardown(void) {
        event_registry_done(reg);
        provider_link_stop(&provider_link);
        event = sd_event_unref(event);
}

static struct broker_event *add(const char *name, uid_t owner) {
        struct event_def *def = NULL;
        struct broker_event *ev = NULL;
        char command[64];

        snprintf(command, sizeof(command), "%s u32 a", name);
        ck_assert_int_eq(event_def_parse(command, 0, &def, NULL), 0);
        ck_assert_int_eq(event_registry_add(reg, def, owner, &ev), 0);
        return ev;
}

static enum admission decide(uid_t uid, struct broker_event **victim) {
        return admission_for_new_event(reg, uid, false, false, fake_now, &limits, victim);
}

START_TEST(test_room_admits_without_victim) {
        struct broker_event *victim = (void *) 1;

        add("a1", 1000);
        ck_assert_int_eq(decide(1000, &victim), ADMISSION_ADMIT);
        ck_assert_ptr_null(victim);
}
END_TEST

START_TEST(test_user_at_limit_evicts_only_its_own) {
        struct broker_event *a1 = add("a1", 1000), *victim;

        add("a2", 1000);
        add("a3", 1000);
        add("b1", 2000);        /* older than nothing of 1000's, and unused */
        /* 1000 owns 3 = EventsPerUser: its own least recently used goes. */
        ck_assert_int_eq(decide(1000, &victim), ADMISSION_EVICT);
        ck_assert_ptr_eq(victim, a1);
        /* 2000 is below its limit and the table has room. */
        ck_assert_int_eq(decide(2000, &victim), ADMISSION_ADMIT);
}
END_TEST

START_TEST(test_user_at_limit_all_in_use_is_refused) {
        struct broker_event *a[3] = { add("a1", 1000), add("a2", 1000), add("a3", 1000) }, *victim;

        for (int i = 0; i < 3; i++)
                a[i]->n_registrations = 1;      /* as a session's registration does */
        add("b1", 2000);
        ck_assert_int_eq(decide(1000, &victim), ADMISSION_USER_FULL);
        ck_assert_ptr_null(victim);
        for (int i = 0; i < 3; i++)
                a[i]->n_registrations = 0;
}
END_TEST

/* Over its part among the owners, a caller may only make room among its
 * own unused events, as at EventsPerUser=; the table has room. */
START_TEST(test_over_part_evicts_only_its_own) {
        struct broker_event *a1 = add("a1", 1000), *victim;

        add("b1", 2000);
        ck_assert_int_eq(admission_for_new_event(reg, 1000, false, true, fake_now, &limits, &victim),
                         ADMISSION_EVICT);
        ck_assert_ptr_eq(victim, a1);
        a1->n_registrations = 1;
        ck_assert_int_eq(admission_for_new_event(reg, 1000, false, true, fake_now, &limits, &victim),
                         ADMISSION_CROWDED);
        ck_assert_ptr_null(victim);
        /* At EventsPerUser= too: that one is named, the caller's own limit. */
        add("a2", 1000)->n_registrations = 1;
        add("a3", 1000)->n_registrations = 1;
        ck_assert_int_eq(admission_for_new_event(reg, 1000, false, true, fake_now, &limits, &victim),
                         ADMISSION_USER_FULL);
        a1->n_registrations = 0;
        event_registry_find(reg, "a2")->n_registrations = 0;
        event_registry_find(reg, "a3")->n_registrations = 0;
}
END_TEST

START_TEST(test_exempt_caller_has_no_share_but_the_table) {
        struct broker_event *a[3] = { add("a1", 1000), add("a2", 1000), add("a3", 1000) }, *victim;

        for (int i = 0; i < 3; i++)
                a[i]->n_registrations = 1;
        ck_assert_int_eq(admission_for_new_event(reg, 1000, true, false, fake_now, &limits, &victim), ADMISSION_ADMIT);
        add("a4", 1000);
        add("a5", 1000);
        add("a6", 1000);
        /* Table full, its own unused events go first. */
        ck_assert_int_eq(admission_for_new_event(reg, 1000, true, false, fake_now, &limits, &victim), ADMISSION_EVICT);
        ck_assert_str_eq(victim->def->name, "a4");
        for (int i = 0; i < 3; i++)
                a[i]->n_registrations = 0;
}
END_TEST

START_TEST(test_full_table_keeps_other_users_events_until_expiry) {
        struct broker_event *b[3], *c[3], *victim;

        for (int i = 0; i < 3; i++) {
                char name[8];

                snprintf(name, sizeof(name), "b%d", i);
                b[i] = add(name, 2000);
                snprintf(name, sizeof(name), "c%d", i);
                c[i] = add(name, 3000);
        }
        /* Table full (6), uid 1000 owns nothing: others' unused events are
         * kept while younger than the expiry, however often 1000 asks. */
        for (int i = 0; i < 100; i++)
                ck_assert_int_eq(decide(1000, &victim), ADMISSION_TABLE_FULL);
        fake_now += 6 * HOUR_USEC - 1;
        ck_assert_int_eq(decide(1000, &victim), ADMISSION_TABLE_FULL);
        /* Touching c0 keeps it; b0 is the oldest once the expiry passes. */
        event_registry_touch(reg, c[0]);
        fake_now += 1;
        ck_assert_int_eq(decide(1000, &victim), ADMISSION_EVICT);
        ck_assert_ptr_eq(victim, b[0]);
        /* An expired event in use stays. */
        b[0]->n_registrations = 1;
        ck_assert_int_eq(decide(1000, &victim), ADMISSION_EVICT);
        ck_assert_ptr_eq(victim, b[1]);
        b[0]->n_registrations = 0;
}
END_TEST

START_TEST(test_full_table_takes_callers_own_unused_first) {
        struct broker_event *a1, *victim;

        add("b0", 2000);
        add("b1", 2000);
        add("b2", 2000);
        a1 = add("a1", 1000);
        add("c0", 3000);
        add("c1", 3000);
        fake_now += 7 * HOUR_USEC;      /* every event expired */
        ck_assert_int_eq(decide(1000, &victim), ADMISSION_EVICT);
        ck_assert_ptr_eq(victim, a1);
}
END_TEST

START_TEST(test_expiry_clock_before_boot_plus_expiry) {
        struct broker_event *victim;

        fake_now = 1;   /* early after boot: nothing can have expired */
        for (int i = 0; i < 6; i++) {
                char name[8];

                snprintf(name, sizeof(name), "b%d", i);
                add(name, 2000 + (uid_t) i);
        }
        ck_assert_int_eq(decide(1000, &victim), ADMISSION_TABLE_FULL);
}
END_TEST

static Suite *admission_suite(void) {
        Suite *s = suite_create("admission");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_room_admits_without_victim);
        tcase_add_test(tc, test_exempt_caller_has_no_share_but_the_table);
        tcase_add_test(tc, test_user_at_limit_evicts_only_its_own);
        tcase_add_test(tc, test_user_at_limit_all_in_use_is_refused);
        tcase_add_test(tc, test_over_part_evicts_only_its_own);
        tcase_add_test(tc, test_full_table_keeps_other_users_events_until_expiry);
        tcase_add_test(tc, test_full_table_takes_callers_own_unused_first);
        tcase_add_test(tc, test_expiry_clock_before_boot_plus_expiry);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(admission_suite());
}
