/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "delivery-budget.h"
#include "macro.h"
#include "user-charges.h"

static bool fits(struct delivery_cost pinned, struct delivery_cost cost, unsigned max_fds, uint64_t max_bytes) {
        if (cost.fds > 0 && pinned.fds + cost.fds > max_fds)
                return false;
        /* An oversized reply alone is allowed, else it could never go. */
        if (cost.bytes > 0 && pinned.bytes + cost.bytes > max_bytes && pinned.bytes > 0)
                return false;
        return true;
}

/* Within the uid's part among the uids pinning: an oversized reply alone
 * aside, as in fits(). */
static bool within_part(const struct delivery_limits *limits, const struct delivery_usage *all,
                        const struct delivery_usage *user, struct delivery_cost cost) {
        if (cost.fds > 0 && !charge_within_part(limits->max_fds, all->pinned.fds, user->pinned.fds, cost.fds,
                                                all->others.fds))
                return false;
        if (cost.bytes > 0 && all->pinned.bytes > 0 &&
            !charge_within_part(limits->max_bytes, all->pinned.bytes, user->pinned.bytes, cost.bytes,
                                all->others.bytes))
                return false;
        return true;
}

enum delivery_verdict delivery_decide(const struct delivery_limits *limits, const struct delivery_usage *all,
                                      const struct delivery_usage *user, bool privileged,
                                      struct delivery_cost cost, bool may_hold) {
        bool fits_all = fits(all->pinned, cost, ASSERT_PTR(limits)->max_fds, limits->max_bytes);
        bool fits_user = privileged || (fits(user->pinned, cost, limits->fds_per_uid, limits->bytes_per_uid) &&
                                        within_part(limits, all, user, cost));

        if (fits_all && fits_user)
                return DELIVERY_SEND;
        if (!may_hold)
                return DELIVERY_REFUSE;
        if (all->held >= limits->max_held)
                return DELIVERY_REFUSE;
        if (!privileged && user->held >= limits->held_per_uid)
                return DELIVERY_REFUSE;
        return DELIVERY_HOLD;
}
