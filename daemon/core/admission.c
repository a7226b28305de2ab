/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>

#include "admission.h"

enum admission admission_for_new_event(struct event_registry *reg, uid_t uid, bool exempt, bool over_part,
                                       uint64_t now_usec, const struct admission_limits *limits,
                                       struct broker_event **ret_victim) {
        struct broker_event *victim;
        bool user_full;

        assert(reg);
        assert(limits);
        user_full = !exempt && event_registry_count_owned(reg, uid) >= limits->events_per_user;

        *ret_victim = NULL;
        if (user_full || over_part) {
                victim = event_registry_find_unused(reg, uid, UINT64_MAX);
                if (!victim)
                        return user_full ? ADMISSION_USER_FULL : ADMISSION_CROWDED;
                *ret_victim = victim;
                return ADMISSION_EVICT;
        }
        if (reg->n_events < limits->max_events)
                return ADMISSION_ADMIT;

        victim = event_registry_find_unused(reg, uid, UINT64_MAX);
        if (!victim && now_usec >= limits->unused_expiry_usec)
                victim = event_registry_find_unused(reg, UID_ANY, now_usec - limits->unused_expiry_usec);
        if (!victim)
                return ADMISSION_TABLE_FULL;
        *ret_victim = victim;
        return ADMISSION_EVICT;
}
