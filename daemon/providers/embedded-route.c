/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The embedded provider's routing: a record read from a session's data
 * socket (embedded.c) or ring (embedded-ring.c) is counted, checked and
 * handed to the recorders that want it (embedded-recorder.c). Both readers
 * call down into this file; it calls only the recorders below it.
 */

#include <string.h>
#include <time.h>

#include "embedded-internal.h"
#include "macro.h"
#include "time-util.h"

void embedded_session_drop(struct provider_session *s, const char *why, uint32_t write_index) {
        struct provider *p = ASSERT_PTR(s)->provider;
        unsigned suppressed = 0;

        s->dropped++;
        p->dropped++;
        if (log_get_max_level() >= LOG_DEBUG && log_ratelimit_ok(&p->drop_ratelimit, &suppressed))
                log_debug("Dropped a record from %s (pid %d), write index %u: %s (%llu dropped by this client; %u messages suppressed).",
                          s->bus_name, (int) s->pid, write_index, why,
                          (unsigned long long) s->dropped, suppressed);
}

const struct provider_event *embedded_session_record_accept(struct provider_session *s, uint32_t write_index,
                                                   size_t payload_len) {
        const struct provider_event *ev;

        assert(s);
        s->received++;
        s->provider->received++;
        /* The socket cannot carry more (MSG_TRUNC), nor a ring (ring.h). */
        if (payload_len > EMBEDDED_PAYLOAD_MAX) {
                embedded_session_drop(s, "payload longer than the record limit", write_index);
                return NULL;
        }
        ev = write_indexes_active_event(s->indexes, write_index);
        if (!ev)
                embedded_session_drop(s, "write index not registered", write_index);
        return ev;
}

bool embedded_session_recorders_full(const struct provider_session *s) {
        const struct write_indexes *t = ASSERT_PTR(s)->indexes;
        bool recorded = false;

        for (size_t i = 0; i < t->n; i++) {
                const struct provider_event *ev = t->entries[i].provider_event;

                if (!t->entries[i].active || !ev)
                        continue;
                for (unsigned j = 0; j < ev->n_recorders; j++) {
                        if (!embedded_recorder_waiting(ev->recorders[j]))
                                return false;
                        recorded = true;
                }
        }
        return recorded;
}

bool embedded_session_record_deliver(struct provider_session *s, const struct provider_event *ev, uint32_t write_index,
                            const uint8_t *payload, size_t payload_len, uint64_t timestamp_ns, uint32_t tid,
                            uint64_t write_monotonic_ns) {
        struct ueb_record_header h;
        bool all_waiting = true;
        int r;

        assert(s);

        r = event_def_validate_payload(ev->def, payload, payload_len);
        if (r < 0) {
                embedded_session_drop(s, r == -EINVAL ? "payload shorter than the event's fields" :
                                               "dynamic field out of bounds or not NUL-terminated", write_index);
                return false;
        }

        /* Disabled events cost a lookup and a validation, nothing more. */
        if (ev->n_recorders == 0)
                return false;

        h = (struct ueb_record_header) {
                /* A ring's tid and write time are the writer's say-so. */
                .flags = tid != 0 || write_monotonic_ns != 0 ? UEB_RECORD_FLAG_WRITER_CLAIMED : 0,
                .pid = (uint32_t) s->pid,
                .uid = (uint32_t) s->uid,
                .timestamp_ns = timestamp_ns,
                .tid = tid,
                .write_monotonic_ns = write_monotonic_ns,
        };
        /* Packing never frees a recorder (a gone consumer is freed on
         * EPOLLHUP), so the list stays intact while we walk it. */
        for (unsigned i = 0; i < ev->n_recorders; i++)
                all_waiting = embedded_recorder_add(ev->recorders[i], &h, ev->def->name, ev->name_len, payload,
                                                    payload_len) && all_waiting;
        return all_waiting;
}


