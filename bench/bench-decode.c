/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cost of turning a record into text: ns per record with our decoder
 * (event-decode.c, what uebctl record prints) vs libtraceevent's
 * tep_print_event() on the same record (what trace-cmd prints), and our
 * JSON vs reading every field with tep_get_field_val()/tep_get_field_raw().
 *   bench-decode [ITERATIONS]   (default 2M per case)
 * No broker needed: the records are built here.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#include "bench-util.h"
#include "cleanup.h"
#include "event-decode.h"
#include "event-def.h"
#include "strbuf.h"

#define EVENT_ID 1234

struct bench_case {
        const char *command;
        unsigned char payload[64];
        size_t len;
};

static const struct bench_case cases[] = {
        /* The demo's event: uebctl record's common case. */
        { "hello_tick u32 count;char[20] msg", { 10, 0, 0, 0, 'h', 'e', 'l', 'l', 'o', ' ', 'f', 'r', 'o', 'm' }, 24 },
        /* Scalars, a fixed string and a dynamic one (at record offset 8+20). */
        { "mixed u32 a;s64 b;__data_loc char[] s;char[4] t",
          { 7, 0, 0, 0, 0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 28, 0, 6, 0, 'a', 'b', 'c', 0, 'd', 'y', 'n',
            'a', 'm', 0 },
          26 },
        /* Where the two differ: negative s8/s16, a control byte, a struct. */
        { "diverge s8 a;s16 b;char[4] c;struct foo d 3", { 0xff, 0xfe, 0xff, 'a', 0x1b, '[', 0, 1, 2, 3 }, 10 },
};

int main(int argc, char *argv[]) {
        unsigned long long n = bench_count(argc, argv, 2000000ull);

        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
                const struct bench_case *bc = &cases[c];
                _cleanup_(event_def_freep) struct event_def *ev = NULL;
                _cleanup_free_ char *format = NULL;
                struct event_error error;
                struct tep_handle *tep = tep_alloc();
                struct tep_event *event = NULL;
                unsigned char record[8 + sizeof(bc->payload)] = { 0 };
                uint16_t id = EVENT_ID;
                struct tep_record rec = { .data = record, .size = (int) (8 + bc->len) };
                struct strbuf sb = STRBUF_INIT;
                struct trace_seq s;
                unsigned long long bytes_ours = 0, bytes_tep = 0;
                uint64_t t0, t1, t2, t3, t4;

                if (!tep || event_def_parse(bc->command, 0, &ev, &error) < 0)
                        return 1;
                format = event_def_format_text(ev, EVENT_ID);
                if (!format || tep_parse_format(tep, &event, format, strlen(format), "user_events") != 0)
                        return 1;
                memcpy(record, &id, sizeof(id));
                memcpy(record + 8, bc->payload, bc->len);
                trace_seq_init(&s);

                event_decode_text(ev, bc->payload, bc->len, &sb);
                tep_print_event(tep, &s, &rec, "%s", TEP_PRINT_INFO);
                trace_seq_terminate(&s);
                /* Shown escaped: the raw line could drive the terminal. */
                printf("%s\n  ours: %s\n  tep:  ", bc->command, sb.buf);
                for (const char *p = s.buffer; *p; p++)
                        printf((unsigned char) *p < 0x20 ? "\\x%02x" : "%c", (unsigned char) *p);
                printf("\n");

                t0 = bench_now_ns();
                for (unsigned long long i = 0; i < n; i++) {
                        sb.len = 0; /* reuse the buffer, as uebctl record does per line */
                        event_decode_text(ev, bc->payload, bc->len, &sb);
                        bytes_ours += sb.len;
                }
                t1 = bench_now_ns();
                for (unsigned long long i = 0; i < n; i++) {
                        trace_seq_reset(&s);
                        tep_print_event(tep, &s, &rec, "%s", TEP_PRINT_INFO);
                        bytes_tep += s.len;
                }
                t2 = bench_now_ns();
                for (unsigned long long i = 0; i < n; i++) {
                        sb.len = 0;
                        event_decode_json(ev, bc->payload, bc->len, &sb);
                        bytes_ours += sb.len;
                }
                t3 = bench_now_ns();
                for (unsigned long long i = 0; i < n; i++) {
                        /* What a libtraceevent JSON writer has to do at least: find
                         * and read every field (formatting it would come on top). */
                        for (struct tep_format_field *f = event->format.fields; f; f = f->next) {
                                unsigned long long v = 0;
                                int len = 0;

                                trace_seq_reset(&s);
                                if (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC))
                                        bytes_tep += tep_get_field_raw(&s, event, f->name, &rec, &len, 0) ? (unsigned) len : 0;
                                else if (tep_get_field_val(&s, event, f->name, &rec, &v, 0) == 0)
                                        bytes_tep += v & 1;
                        }
                }
                t4 = bench_now_ns();

                printf("  %llu records each (output bytes %llu/%llu)\n", n, bytes_ours, bytes_tep);
                bench_report("text: event_decode_text()", (double) (t1 - t0) / (double) n, "tep_print_event()",
                             (double) (t2 - t1) / (double) n, "ns/rec");
                bench_report("json: event_decode_json()", (double) (t3 - t2) / (double) n, "tep_get_field_*() only",
                             (double) (t4 - t3) / (double) n, "ns/rec");
                trace_seq_destroy(&s);
                strbuf_done(&sb);
                tep_free(tep);
        }
        return 0;
}
