/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "status-text.h"
#include "strbuf.h"

char *status_text(const struct status_entry *entries, size_t n, uint32_t max) {
        struct strbuf sb = STRBUF_INIT;
        size_t busy = 0;

        for (size_t i = 0; i < n; i++) {
                uint8_t s = entries[i].status;

                strbuf_printf(&sb, "%u:%s", entries[i].index, entries[i].name);
                if (s) {
                        strbuf_append(&sb, " # Used by");
                        if (s & EVENT_STATUS_FTRACE)
                                strbuf_append(&sb, " ftrace");
                        if (s & EVENT_STATUS_PERF)
                                strbuf_append(&sb, " perf");
                        if (s & EVENT_STATUS_OTHER)
                                strbuf_append(&sb, " other");
                        busy++;
                }
                strbuf_append_c(&sb, '\n');
        }
        strbuf_printf(&sb, "\nActive: %zu\nBusy: %zu\nMax: %u\n", n, busy, max);
        return strbuf_steal(&sb);
}
