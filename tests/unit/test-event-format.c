/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* print fmt and the tracefs format file (uebroker-event-command(7)). The expected
 * texts of the gt_* cases are byte for byte what Linux 6.12 showed under
 * events/user_events/NAME/format for the same commands. */
#include "check-tap.h"
#include "event-def-assert.h"

#include <stdint.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define COMMON_FIELDS                                                                                         \
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"                                \
        "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"                                \
        "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"                        \
        "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"

/* ---- print format of every type ---- */

static const struct {
        const char *command;
        const char *print_fmt;
} print_fmt_cases[] = {
        { "e s64 x", "\"x=%lld\", REC->x" },
        { "e u64 x", "\"x=%llu\", REC->x" },
        { "e s32 x", "\"x=%d\", REC->x" },
        { "e int x", "\"x=%d\", REC->x" },
        { "e u32 x", "\"x=%u\", REC->x" },
        { "e unsigned int x", "\"x=%u\", REC->x" },
        { "e s16 x", "\"x=%d\", REC->x" },
        { "e short x", "\"x=%d\", REC->x" },
        { "e u16 x", "\"x=%u\", REC->x" },
        { "e unsigned short x", "\"x=%u\", REC->x" },
        { "e s8 x", "\"x=%d\", REC->x" },
        { "e char x", "\"x=%d\", REC->x" },
        { "e u8 x", "\"x=%u\", REC->x" },
        { "e unsigned char x", "\"x=%u\", REC->x" },
        { "e char[4] x", "\"x=%s\", REC->x" },
        { "e char[0x10] x", "\"x=%s\", REC->x" },
        { "e unsigned char[4] x", "\"x=%s\", REC->x" },
        { "e __data_loc char[] x", "\"x=%s\", __get_str(x)" },
        { "e __data_loc unsigned char[] x", "\"x=%s\", __get_str(x)" },
        { "e __rel_loc char[] x", "\"x=%s\", __get_rel_str(x)" },
        /* Non-char dynamic fields and structs print as a 64-bit value. */
        { "e __data_loc u8[] x", "\"x=%llu\", REC->x" },
        { "e __data_loc u32[] x", "\"x=%llu\", REC->x" },
        { "e __rel_loc u32[] x", "\"x=%llu\", REC->x" },
        { "e __rel_loc s64[] x", "\"x=%llu\", REC->x" },
        { "e struct foo x 20", "\"x=%llu\", REC->x" },
        /* No fields: an empty format, no arguments. */
        { "e", "\"\"" },
        { "e:F ", "\"\"" },
        /* Several fields: formats joined by one space, then the arguments. */
        { "e u32 a;char[4] b", "\"a=%u b=%s\", REC->a, REC->b" },
        { "e __data_loc char[] data;s64 n;__rel_loc char[] r",
          "\"data=%s n=%lld r=%s\", __get_str(data), REC->n, __get_rel_str(r)" },
};

START_TEST(test_print_fmt) {
        _cleanup_event_def_ struct event_def *ev = parse_ok(print_fmt_cases[_i].command, 0);
        _cleanup_free_ char *print_fmt = event_def_print_fmt(ev);

        ck_assert_ptr_nonnull(print_fmt);
        ck_assert_str_eq(print_fmt, print_fmt_cases[_i].print_fmt);
}
END_TEST

/* ---- whole format files ---- */

static const struct {
        const char *command;
        uint32_t id;
        const char *text;
} format_cases[] = {
        { "t_u32 u32 a", 378,
          "name: t_u32\n"
          "ID: 378\n"
          "format:\n" COMMON_FIELDS "\n"
          "\tfield:u32 a;\toffset:8;\tsize:4;\tsigned:0;\n"
          "\n"
          "print fmt: \"a=%u\", REC->a\n" },
        { "t_all s64 a;u64 b;s32 c;u32 d;int e;unsigned int f;s16 g;u16 h;short i;unsigned short j;s8 k;u8 l;"
          "char m;unsigned char n",
          379,
          "name: t_all\n"
          "ID: 379\n"
          "format:\n" COMMON_FIELDS "\n"
          "\tfield:s64 a;\toffset:8;\tsize:8;\tsigned:1;\n"
          "\tfield:u64 b;\toffset:16;\tsize:8;\tsigned:0;\n"
          "\tfield:s32 c;\toffset:24;\tsize:4;\tsigned:1;\n"
          "\tfield:u32 d;\toffset:28;\tsize:4;\tsigned:0;\n"
          "\tfield:int e;\toffset:32;\tsize:4;\tsigned:1;\n"
          "\tfield:unsigned int f;\toffset:36;\tsize:4;\tsigned:0;\n"
          "\tfield:s16 g;\toffset:40;\tsize:2;\tsigned:1;\n"
          "\tfield:u16 h;\toffset:42;\tsize:2;\tsigned:0;\n"
          "\tfield:short i;\toffset:44;\tsize:2;\tsigned:1;\n"
          "\tfield:unsigned short j;\toffset:46;\tsize:2;\tsigned:0;\n"
          "\tfield:s8 k;\toffset:48;\tsize:1;\tsigned:1;\n"
          "\tfield:u8 l;\toffset:49;\tsize:1;\tsigned:0;\n"
          "\tfield:char m;\toffset:50;\tsize:1;\tsigned:1;\n"
          "\tfield:unsigned char n;\toffset:51;\tsize:1;\tsigned:0;\n"
          "\n"
          "print fmt: \"a=%lld b=%llu c=%d d=%u e=%d f=%u g=%d h=%u i=%d j=%u k=%d l=%u m=%d n=%u\", REC->a, "
          "REC->b, REC->c, REC->d, REC->e, REC->f, REC->g, REC->h, REC->i, REC->j, REC->k, REC->l, REC->m, "
          "REC->n\n" },
        /* __data_loc keeps its type whole; __rel_loc moves the brackets
         * behind the name, as f_show() does. */
        { "t_dl __data_loc char[] msg;__rel_loc char[] rmsg;__data_loc u8[] bytes;__rel_loc u32[] words", 381,
          "name: t_dl\n"
          "ID: 381\n"
          "format:\n" COMMON_FIELDS "\n"
          "\tfield:__data_loc char[] msg;\toffset:8;\tsize:4;\tsigned:1;\n"
          "\tfield:__rel_loc char rmsg[];\toffset:12;\tsize:4;\tsigned:1;\n"
          "\tfield:__data_loc u8[] bytes;\toffset:16;\tsize:4;\tsigned:1;\n"
          "\tfield:__rel_loc u32 words[];\toffset:20;\tsize:4;\tsigned:1;\n"
          "\n"
          "print fmt: \"msg=%s rmsg=%s bytes=%llu words=%llu\", __get_str(msg), __get_rel_str(rmsg), REC->bytes, "
          "REC->words\n" },
        { "t_struct struct foo bar 20;u32 after", 382,
          "name: t_struct\n"
          "ID: 382\n"
          "format:\n" COMMON_FIELDS "\n"
          "\tfield:struct foo bar;\toffset:8;\tsize:20;\tsigned:1;\n"
          "\tfield:u32 after;\toffset:28;\tsize:4;\tsigned:0;\n"
          "\n"
          "print fmt: \"bar=%llu after=%u\", REC->bar, REC->after\n" },
        { "t_none", 383,
          "name: t_none\n"
          "ID: 383\n"
          "format:\n" COMMON_FIELDS "\n"
          "\n"
          "print fmt: \"\"\n" },
        { "t_spaces u32 a;  u32 b; u32 c;", 384,
          "name: t_spaces\n"
          "ID: 384\n"
          "format:\n" COMMON_FIELDS "\n"
          "\tfield:u32 a;\toffset:8;\tsize:4;\tsigned:0;\n"
          "\tfield:u32 b;\toffset:12;\tsize:4;\tsigned:0;\n"
          "\tfield:u32 c;\toffset:16;\tsize:4;\tsigned:0;\n"
          "\n"
          "print fmt: \"a=%u b=%u c=%u\", REC->a, REC->b, REC->c\n" },
        /* Flags are not shown; ID 0 is what `uebctl format` prints. */
        { "e:A,B __data_loc char[] data;__rel_loc char[] r", 0,
          "name: e\n"
          "ID: 0\n"
          "format:\n" COMMON_FIELDS "\n"
          "\tfield:__data_loc char[] data;\toffset:8;\tsize:4;\tsigned:1;\n"
          "\tfield:__rel_loc char r[];\toffset:12;\tsize:4;\tsigned:1;\n"
          "\n"
          "print fmt: \"data=%s r=%s\", __get_str(data), __get_rel_str(r)\n" },
        { "e __data_loc u32[] x;__rel_loc u64[] y;struct s z 3;u8 w", UINT32_MAX,
          "name: e\n"
          "ID: 4294967295\n"
          "format:\n" COMMON_FIELDS "\n"
          "\tfield:__data_loc u32[] x;\toffset:8;\tsize:4;\tsigned:1;\n"
          "\tfield:__rel_loc u64 y[];\toffset:12;\tsize:4;\tsigned:1;\n"
          "\tfield:struct s z;\toffset:16;\tsize:3;\tsigned:1;\n"
          "\tfield:u8 w;\toffset:19;\tsize:1;\tsigned:0;\n"
          "\n"
          "print fmt: \"x=%llu y=%llu z=%llu w=%u\", REC->x, REC->y, REC->z, REC->w\n" },
        /* Fixed arrays: the kernel moves "[N]" behind the name, but 6.12
         * prints an uninitialised length there ("msg[1751318587]" or
         * "msg[]"), so no byte-exact reference exists. The library keeps
         * the size as written; size: gives the bytes. */
        { "t_arr char[20] msg;unsigned char[4] raw;char[0x10] h;char[010] o", 380,
          "name: t_arr\n"
          "ID: 380\n"
          "format:\n" COMMON_FIELDS "\n"
          "\tfield:char msg[20];\toffset:8;\tsize:20;\tsigned:1;\n"
          "\tfield:unsigned char raw[4];\toffset:28;\tsize:4;\tsigned:0;\n"
          "\tfield:char h[0x10];\toffset:32;\tsize:16;\tsigned:1;\n"
          "\tfield:char o[010];\toffset:48;\tsize:8;\tsigned:1;\n"
          "\n"
          "print fmt: \"msg=%s raw=%s h=%s o=%s\", REC->msg, REC->raw, REC->h, REC->o\n" },
};

START_TEST(test_format_text) {
        _cleanup_event_def_ struct event_def *ev = parse_ok(format_cases[_i].command, 0);
        _cleanup_free_ char *text = event_def_format_text(ev, format_cases[_i].id);

        ck_assert_ptr_nonnull(text);
        ck_assert_str_eq(text, format_cases[_i].text);
}
END_TEST

/* Tools find the user fields after the first blank line and the print fmt
 * after the second; both must hold for any event. */
START_TEST(test_format_text_structure) {
        _cleanup_event_def_ struct event_def *ev = parse_ok(format_cases[_i].command, 0);
        _cleanup_free_ char *text = event_def_format_text(ev, 7);
        _cleanup_free_ char *print_fmt = event_def_print_fmt(ev);
        const char *first, *second, *line;
        size_t n_lines = 0;

        first = strstr(text, "\n\n");
        ck_assert_ptr_nonnull(first);
        second = strstr(first + 1, "\n\n");
        ck_assert_ptr_nonnull(second);
        ck_assert_ptr_null(strstr(second + 1, "\n\n"));
        ck_assert(strncmp(text, "name: ", 6) == 0);
        ck_assert(strncmp(text + 6, ev->name, strlen(ev->name)) == 0);
        ck_assert_ptr_nonnull(strstr(text, "\nID: 7\nformat:\n"));

        /* One line per user field, in order, at its offset. */
        for (line = first + 2; line < second + 1; line = strchr(line, '\n') + 1) {
                char expect[64];

                ck_assert_uint_lt(n_lines, ev->n_fields);
                snprintf(expect, sizeof(expect), ";\toffset:%u;\tsize:%u;\tsigned:%d;\n",
                         ev->fields[n_lines].offset, ev->fields[n_lines].size, ev->fields[n_lines].is_signed);
                ck_assert(strncmp(line, "\tfield:", 7) == 0);
                ck_assert_ptr_eq(strstr(line, expect), strchr(line, ';'));
                n_lines++;
        }
        ck_assert_uint_eq(n_lines, ev->n_fields);

        ck_assert(strncmp(second + 2, "print fmt: ", 11) == 0);
        ck_assert_ptr_nonnull(print_fmt);
        ck_assert(strncmp(second + 2 + 11, print_fmt, strlen(print_fmt)) == 0);
        ck_assert_str_eq(second + 2 + 11 + strlen(print_fmt), "\n");
}
END_TEST

int main(void) {
        Suite *s = suite_create("event-format");
        TCase *tc;

        tc = tcase_create("print-fmt");
        tcase_add_loop_test(tc, test_print_fmt, 0, ARRAY_SIZE(print_fmt_cases));
        suite_add_tcase(s, tc);

        tc = tcase_create("format-text");
        tcase_add_loop_test(tc, test_format_text, 0, ARRAY_SIZE(format_cases));
        tcase_add_loop_test(tc, test_format_text_structure, 0, ARRAY_SIZE(format_cases));
        suite_add_tcase(s, tc);

        return check_tap_run(s);
}
