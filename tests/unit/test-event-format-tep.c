/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libtraceevent as the oracle for our format text: what perf and trace-cmd
 * parse out of events/user_events/NAME/format must be what we meant (same
 * fields, offsets, sizes, signedness and kinds), and the print fmt must
 * parse. Then records printed by libtraceevent must read as ours do. */
#include "check-tap.h"
#include "event-decode.h"
#include "event-def-assert.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define EVENT_ID 1234

static void tep_handle_freep(struct tep_handle **t) {
        if (*t)
                tep_free(*t);
}
#define _cleanup_tep_ _cleanup_(tep_handle_freep)

/* Every field type the parser accepts, alone and mixed. */
static const char *const commands[] = {
        "e u8 a;s8 b;u16 c;s16 d;u32 e;s32 f;u64 g;s64 h",
        "e char a;unsigned char b;short c;unsigned short d;int e;unsigned int f",
        "e char[4] a;unsigned char[16] b;char[0x10] c;u8 tail",
        "e __data_loc char[] s;__data_loc unsigned char[] us;__data_loc u8[] b;__data_loc u32[] w",
        "e __rel_loc char[] s;__rel_loc u8[] b;__rel_loc s64[] q",
        "e struct foo x 20;u32 after;struct bar y 1",
        "e u32 count;char[20] msg;__data_loc char[] data;s64 n;__rel_loc char[] r;struct s blob 3",
        "e",
};

static struct tep_event *parse_with_tep(struct tep_handle *tep, const struct event_def *ev) {
        _cleanup_free_ char *format = event_def_format_text(ev, EVENT_ID);
        struct tep_event *event = NULL;

        ck_assert_ptr_nonnull(format);
        ck_assert_int_eq(tep_parse_format(tep, &event, format, strlen(format), "user_events"), 0);
        ck_assert_ptr_nonnull(event);
        ck_assert_str_eq(event->name, ev->name);
        ck_assert_int_eq(event->id, EVENT_ID);
        ck_assert_str_eq(event->system, "user_events");
        return event;
}

/* libtraceevent calls any byte array a string (char, u8 or s8 elements);
 * we print only char ones as strings and other byte arrays as hex. */
static bool tep_sees_string(const struct event_field *f) {
        if (f->kind == EVENT_FIELD_ARRAY)
                return true;
        return event_field_is_dynamic(f) && f->element_size == 1;
}

START_TEST(test_fields) {
        _cleanup_event_def_ struct event_def *ev = parse_ok(commands[_i], 0);
        _cleanup_tep_ struct tep_handle *tep = tep_alloc();
        struct tep_event *event = parse_with_tep(tep, ev);
        struct tep_format_field *tf;
        size_t n = 0;

        ck_assert_int_eq(event->format.nr_common, 4);
        for (tf = event->format.fields; tf; tf = tf->next, n++) {
                const struct event_field *f;
                unsigned long want = 0;

                ck_assert_uint_lt(n, ev->n_fields);
                f = &ev->fields[n];
                ck_assert_str_eq(tf->name, f->name);
                ck_assert_int_eq(tf->offset, (int) f->offset);
                ck_assert_int_eq(tf->size, (int) f->size);

                if (f->kind == EVENT_FIELD_ARRAY || event_field_is_dynamic(f))
                        want |= TEP_FIELD_IS_ARRAY;
                if (event_field_is_dynamic(f))
                        want |= TEP_FIELD_IS_DYNAMIC;
                if (f->kind == EVENT_FIELD_REL_LOC)
                        want |= TEP_FIELD_IS_RELATIVE;
                if (f->is_signed)
                        want |= TEP_FIELD_IS_SIGNED;
                if (tep_sees_string(f))
                        want |= TEP_FIELD_IS_STRING;
                ck_assert_msg(tf->flags == want, "%s: libtraceevent flags 0x%lx, expected 0x%lx", f->name, tf->flags,
                              want);

                if (f->kind == EVENT_FIELD_ARRAY) {
                        ck_assert_uint_eq(tf->arraylen, f->size);
                        ck_assert_uint_eq(tf->elementsize, 1);
                } else if (f->kind == EVENT_FIELD_DATA_LOC) {
                        ck_assert_uint_eq(tf->elementsize, f->element_size);
                }
        }
        ck_assert_uint_eq(n, ev->n_fields);
}
END_TEST

/* The print fmt parses: not marked failed, one argument per field. */
START_TEST(test_print_fmt_parses) {
        _cleanup_event_def_ struct event_def *ev = parse_ok(commands[_i], 0);
        _cleanup_tep_ struct tep_handle *tep = tep_alloc();
        struct tep_event *event = parse_with_tep(tep, ev);
        _cleanup_free_ char *print_fmt = event_def_print_fmt(ev);
        size_t n_args = 0;

        ck_assert_int_eq(event->flags & TEP_EVENT_FL_FAILED, 0);
        ck_assert_ptr_nonnull(event->print_fmt.format);
        /* The library keeps the format string without its quotes. */
        ck_assert_uint_ge(strlen(print_fmt), 2);
        ck_assert_int_eq(strncmp(event->print_fmt.format, print_fmt + 1, strlen(event->print_fmt.format)), 0);
        for (struct tep_print_arg *a = event->print_fmt.args; a; a = a->next)
                n_args++;
        ck_assert_uint_eq(n_args, ev->n_fields);
}
END_TEST

/* Records: what trace-cmd prints (tep_print_event() with the print fmt)
 * must be what uebctl record prints, wherever the print fmt can say it:
 * integers, and strings of printable ASCII. docs/DECISIONS.md lists where
 * the two differ on purpose (negative s8/s16, control bytes, structs and
 * non-char dynamic arrays). The payload starts at record offset 8. */
static const struct {
        const char *command;
        unsigned char payload[64];
        size_t len;
        const char *text;
} records[] = {
        { "hello_tick u32 count;char[20] msg",
          { 10, 0, 0, 0, 'h', 'e', 'l', 'l', 'o', ' ', 'f', 'r', 'o', 'm' },
          24,
          "count=10 msg=hello from" },
        { "e u8 a;u16 b;u32 c;u64 d",
          { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
          15,
          "a=255 b=65535 c=4294967295 d=18446744073709551615" },
        { "e s32 a;s64 b;int c;s8 d;s16 e",
          { 0xfe, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0xd6, 0xff, 0xff, 0xff, 0x7f,
            0xff, 0x7f },
          19,
          "a=-2 b=-9223372036854775808 c=-42 d=127 e=32767" },
        { "e unsigned char a;unsigned short b;unsigned int c;char d;short e",
          { 1, 2, 0, 3, 0, 0, 0, 4, 5, 0 },
          10,
          "a=1 b=2 c=3 d=4 e=5" },
        /* data_loc: 6 << 16 | record offset 8 + 12; rel_loc: 4 << 16 | 10
         * bytes after the end of its own word (payload 8, data at 18). */
        { "e __data_loc char[] s;__rel_loc char[] r;char[4] t",
          { 20, 0, 6, 0, 10, 0, 4, 0, 'x', 'y', 'z', 0, 'd', 'y', 'n', 'a', 'm', 0, 'r', 'e', 'l', 0 },
          22,
          "s=dynam r=rel t=xyz" },
        { "e u8 n;__rel_loc char[] r",
          { 9, 0, 0, 4, 0, 'r', 'e', 'l', 0 },
          9,
          "n=9 r=rel" },
};

START_TEST(test_records_print_alike) {
        _cleanup_event_def_ struct event_def *ev = parse_ok(records[_i].command, 0);
        _cleanup_tep_ struct tep_handle *tep = tep_alloc();
        unsigned char data[8 + sizeof(records[0].payload)] = { 0 };
        uint16_t id = EVENT_ID;
        struct tep_record rec = { .data = data, .size = (int) (8 + records[_i].len) };
        struct strbuf ours = STRBUF_INIT;
        _cleanup_free_ char *text = NULL;
        struct trace_seq s;

        parse_with_tep(tep, ev);
        memcpy(data, &id, sizeof(id));
        memcpy(data + 8, records[_i].payload, records[_i].len);

        ck_assert_int_eq(event_decode_text(ev, records[_i].payload, records[_i].len, &ours), 0);
        text = strbuf_steal(&ours);
        ck_assert_ptr_nonnull(text);
        ck_assert_str_eq(text, records[_i].text);

        trace_seq_init(&s);
        tep_print_event(tep, &s, &rec, "%s", TEP_PRINT_INFO);
        trace_seq_terminate(&s);
        ck_assert_str_eq(s.buffer, text);
        trace_seq_destroy(&s);
}
END_TEST

int main(void) {
        Suite *s = suite_create("event-format-tep");
        TCase *tc;

        tc = tcase_create("oracle");
        tcase_add_loop_test(tc, test_fields, 0, ARRAY_SIZE(commands));
        tcase_add_loop_test(tc, test_print_fmt_parses, 0, ARRAY_SIZE(commands));
        tcase_add_loop_test(tc, test_records_print_alike, 0, ARRAY_SIZE(records));
        suite_add_tcase(s, tc);

        return check_tap_run(s);
}
