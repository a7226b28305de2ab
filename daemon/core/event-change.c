/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "event-change.h"

#include <assert.h>
#include <string.h>

unsigned event_change_signals(const struct event_presence *announced, const struct event_presence *now) {
        assert(announced);

        if (!announced->present)
                return now->present ? EVENT_SIGNAL_ADDED : 0;
        if (!now->present)
                return EVENT_SIGNAL_REMOVED;
        /* Re-created in between: the same view, or a new one. */
        if (announced->owner == now->owner && strcmp(announced->fields, now->fields) == 0)
                return 0;
        return EVENT_SIGNAL_REMOVED | EVENT_SIGNAL_ADDED;
}
