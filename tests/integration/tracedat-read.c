/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tracedat-read FILE: reads a trace.dat file with libtracecmd's reading
 * API (tracecmd_open, tracecmd_iterate_events), as trace-cmd and
 * KernelShark do, and prints one JSON object per record on stdout:
 *     {"ts":NS,"cpu":C,"pid":P,"system":"S","name":"N","missed":M,"fields":{...}}
 * missed is the record's missed_events (records lost before it; -1 when
 * the count is unknown), present only when not 0. Fields come from the
 * event's format as libtraceevent parsed it: integers sign-extended where
 * the format says signed, char arrays and __data_loc char[] as strings
 * (up to their NUL), anything else as hex. Exits 1 if the file does not
 * open or a record has no event. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace-cmd.h>

#include "json-string.h"
#include "strbuf.h"

static int failures;

static void append_hex(struct strbuf *sb, const uint8_t *p, size_t n) {
        strbuf_append_c(sb, '"');
        for (size_t i = 0; i < n; i++)
                strbuf_printf(sb, "%02x", p[i]);
        strbuf_append_c(sb, '"');
}

static void append_field(struct strbuf *sb, struct tep_handle *tep, struct tep_format_field *f,
                         const uint8_t *data, size_t size) {
        size_t offset = f->offset, len = f->size;

        if (f->flags & TEP_FIELD_IS_DYNAMIC) {
                uint32_t loc;

                if (offset + 4 > size) {
                        strbuf_append(sb, "null");
                        return;
                }
                loc = (uint32_t) tep_read_number(tep, data + offset, 4);
                offset = loc & 0xffff;
                len = loc >> 16;
                if (f->flags & TEP_FIELD_IS_RELATIVE)
                        offset += f->offset + f->size;
        }
        if (offset + len > size) {
                strbuf_append(sb, "null");
                return;
        }
        if (f->flags & TEP_FIELD_IS_STRING || ((f->flags & TEP_FIELD_IS_DYNAMIC) && strstr(f->type, "char"))) {
                json_append_string(sb, (const char *) data + offset, strnlen((const char *) data + offset, len));
        } else if (!(f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) &&
                   (len == 1 || len == 2 || len == 4 || len == 8)) {
                unsigned long long v = tep_read_number(tep, data + offset, (int) len);

                if ((f->flags & TEP_FIELD_IS_SIGNED) && len < 8 && (v >> (len * 8 - 1)) & 1)
                        v |= ~0ull << (len * 8);
                if (f->flags & TEP_FIELD_IS_SIGNED)
                        strbuf_printf(sb, "%lld", (long long) v);
                else
                        strbuf_printf(sb, "%llu", v);
        } else
                append_hex(sb, data + offset, len);
}

static int print_record(struct tracecmd_input *handle, struct tep_record *record, int cpu, void *userdata) {
        struct tep_handle *tep = tracecmd_get_tep(handle);
        struct tep_event *event = tep_find_event_by_record(tep, record);
        struct strbuf sb = STRBUF_INIT;
        char *line;

        if (!event) {
                fprintf(stderr, "tracedat-read: a record on CPU %d has no event\n", cpu);
                failures++;
                return 0;
        }
        strbuf_printf(&sb, "{\"ts\":%llu,\"cpu\":%d,\"pid\":%d,\"system\":", record->ts, record->cpu,
                      tep_data_pid(tep, record));
        json_append_string(&sb, event->system, strlen(event->system));
        strbuf_append(&sb, ",\"name\":");
        json_append_string(&sb, event->name, strlen(event->name));
        if (record->missed_events)
                strbuf_printf(&sb, ",\"missed\":%lld", record->missed_events);
        strbuf_append(&sb, ",\"fields\":{");
        for (struct tep_format_field *f = event->format.fields; f; f = f->next) {
                json_append_string(&sb, f->name, strlen(f->name));
                strbuf_append_c(&sb, ':');
                append_field(&sb, tep, f, record->data, (size_t) record->size);
                if (f->next)
                        strbuf_append_c(&sb, ',');
        }
        strbuf_append(&sb, "}}");
        line = strbuf_steal(&sb);
        if (!line) {
                failures++;
                return -1;
        }
        puts(line);
        free(line);
        return 0;
}

int main(int argc, char *argv[]) {
        struct tracecmd_input *handle;

        if (argc != 2) {
                fprintf(stderr, "usage: tracedat-read FILE\n");
                return 2;
        }
        handle = tracecmd_open(argv[1], TRACECMD_FL_LOAD_NO_PLUGINS);
        if (!handle) {
                fprintf(stderr, "tracedat-read: tracecmd_open(%s) failed: %s\n", argv[1], strerror(errno));
                return 1;
        }
        if (tracecmd_iterate_events(handle, NULL, 0, print_record, NULL) < 0) {
                fprintf(stderr, "tracedat-read: tracecmd_iterate_events failed\n");
                failures++;
        }
        tracecmd_close(handle);
        return failures ? 1 : 0;
}
