/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The registration-command parser, canonical text, equality and the delete
 * match rule (uebroker-event-command(7)). */
#include "check-tap.h"
#include "event-def-assert.h"

#include <stdbool.h>
#include <stdint.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- every type: size, kind, signedness, char-ness ---- */

static const struct {
        const char *command;
        const char *type;
        uint32_t size;
        enum event_field_kind kind;
        bool is_signed;
        bool is_char;
} type_cases[] = {
        { "e s64 x", "s64", 8, EVENT_FIELD_SCALAR, true, false },
        { "e u64 x", "u64", 8, EVENT_FIELD_SCALAR, false, false },
        { "e s32 x", "s32", 4, EVENT_FIELD_SCALAR, true, false },
        { "e u32 x", "u32", 4, EVENT_FIELD_SCALAR, false, false },
        { "e int x", "int", 4, EVENT_FIELD_SCALAR, true, false },
        { "e unsigned int x", "unsigned int", 4, EVENT_FIELD_SCALAR, false, false },
        { "e s16 x", "s16", 2, EVENT_FIELD_SCALAR, true, false },
        { "e u16 x", "u16", 2, EVENT_FIELD_SCALAR, false, false },
        { "e short x", "short", 2, EVENT_FIELD_SCALAR, true, false },
        { "e unsigned short x", "unsigned short", 2, EVENT_FIELD_SCALAR, false, false },
        { "e s8 x", "s8", 1, EVENT_FIELD_SCALAR, true, false },
        { "e u8 x", "u8", 1, EVENT_FIELD_SCALAR, false, false },
        /* The signedness quirk: everything not starting with 'u' is signed. */
        { "e char x", "char", 1, EVENT_FIELD_SCALAR, true, true },
        { "e unsigned char x", "unsigned char", 1, EVENT_FIELD_SCALAR, false, true },
        { "e char[20] x", "char[20]", 20, EVENT_FIELD_ARRAY, true, true },
        { "e unsigned char[4] x", "unsigned char[4]", 4, EVENT_FIELD_ARRAY, false, true },
        { "e __data_loc char[] x", "__data_loc char[]", 4, EVENT_FIELD_DATA_LOC, true, true },
        { "e __data_loc char x", "__data_loc char", 4, EVENT_FIELD_DATA_LOC, true, true },
        { "e __data_loc unsigned char[] x", "__data_loc unsigned char[]", 4, EVENT_FIELD_DATA_LOC, true, true },
        { "e __data_loc u8[] x", "__data_loc u8[]", 4, EVENT_FIELD_DATA_LOC, true, false },
        { "e __data_loc unsigned int[] x", "__data_loc unsigned int[]", 4, EVENT_FIELD_DATA_LOC, true, false },
        { "e __rel_loc char[] x", "__rel_loc char[]", 4, EVENT_FIELD_REL_LOC, true, true },
        { "e __rel_loc u32[] x", "__rel_loc u32[]", 4, EVENT_FIELD_REL_LOC, true, false },
        { "e __rel_loc unsigned short[] x", "__rel_loc unsigned short[]", 4, EVENT_FIELD_REL_LOC, true, false },
        /* C's shorthand, as LinuxTracepoints' unit tests write it */
        { "e __rel_loc unsigned[] x", "__rel_loc unsigned[]", 4, EVENT_FIELD_REL_LOC, true, false },
        { "e struct foo x 12", "struct foo", 12, EVENT_FIELD_STRUCT, true, false },
        { "e struct _Foo9 x 1", "struct _Foo9", 1, EVENT_FIELD_STRUCT, true, false },
};

START_TEST(test_type) {
        _cleanup_event_def_ struct event_def *ev = parse_ok(type_cases[_i].command, 0);
        const struct event_field *f;

        ck_assert_str_eq(ev->name, "e");
        ck_assert_uint_eq(ev->n_flags, 0);
        ck_assert_uint_eq(ev->n_fields, 1);
        f = &ev->fields[0];
        ck_assert_str_eq(f->type, type_cases[_i].type);
        ck_assert_str_eq(f->name, "x");
        ck_assert_uint_eq(f->size, type_cases[_i].size);
        ck_assert_uint_eq(f->offset, 8);
        ck_assert_int_eq(f->kind, type_cases[_i].kind);
        ck_assert_int_eq(f->is_signed, type_cases[_i].is_signed);
        ck_assert_int_eq(f->is_char, type_cases[_i].is_char);
        ck_assert(f->size_given);
        ck_assert_uint_eq(ev->min_size, type_cases[_i].size);
        ck_assert_ptr_eq(event_def_find_field(ev, "x"), f);
}
END_TEST

/* ---- array sizes that are accepted ---- */

static const struct {
        const char *command;
        uint32_t size;
} array_ok_cases[] = {
        { "e char[1] a", 1 },
        { "e char[20] a", 20 },
        { "e char[1024] a", 1024 },
        { "e char[0x10] a", 16 },
        { "e char[0X10] a", 16 },
        { "e char[0x3ff] a", 1023 },
        { "e char[0x3FF] a", 1023 },
        { "e char[0x400] a", 1024 },
        { "e char[010] a", 8 },
        { "e char[07] a", 7 },
        { "e char[02000] a", 1024 },
        { "e char[0x0001] a", 1 },
        /* Seven characters between the brackets, the most allowed. */
        { "e char[0x00001] a", 1 },
        { "e char[0000001] a", 1 },
        { "e char[0001024] a", 01024 },
        { "e char[0000400] a", 256 },
        { "e unsigned char[7] a", 7 },
        { "e unsigned char[0x400] a", 1024 },
        { "e unsigned char[010] a", 8 },
};

START_TEST(test_array_size_ok) {
        _cleanup_event_def_ struct event_def *ev = parse_ok(array_ok_cases[_i].command, 0);

        ck_assert_uint_eq(ev->n_fields, 1);
        ck_assert_int_eq(ev->fields[0].kind, EVENT_FIELD_ARRAY);
        ck_assert_uint_eq(ev->fields[0].size, array_ok_cases[_i].size);
        ck_assert_uint_eq(ev->min_size, array_ok_cases[_i].size);
        ck_assert(ev->fields[0].is_char);
        ck_assert_int_eq(ev->fields[0].is_signed, ev->fields[0].type[0] != 'u');
}
END_TEST

/* ---- every rejection: -EINVAL, error.code, and a message naming the token ---- */

static const struct {
        const char *command;
        unsigned flags;
        const char *needles[4];
} reject_cases[] = {
        /* array sizes */
        { "e char[1025] a", 0, { "field 1", "1025", "1024" } },
        { "e u32 a; char[1025] b", 0, { "field 2 (column 15)", "array size 1025 exceeds 1024" } },
        { "e char[0x401] a", 0, { "field 1", "1025" } },
        { "e char[02001] a", 0, { "field 1", "1025" } },
        { "e unsigned char[1025] a", 0, { "field 1", "1025" } },
        { "e char[9999999] a", 0, { "field 1", "9999999", "1024" } },
        { "e char[0] a", 0, { "field 1", "at least 1" } },
        { "e char[0x0] a", 0, { "field 1", "at least 1" } },
        { "e char[00] a", 0, { "field 1", "at least 1" } },
        { "e char[0x000001] a", 0, { "field 1", "'0x000001'", "7 characters" } },
        { "e char[00000001] a", 0, { "field 1", "'00000001'", "7 characters" } },
        { "e char[0x0000000000001] a", 0, { "field 1", "'0x0000000000001'" } },
        { "e char[08] a", 0, { "field 1", "'08'", "octal" } },
        { "e char[0x] a", 0, { "field 1", "'0x'" } },
        { "e char[0xg] a", 0, { "field 1", "'0xg'", "hexadecimal" } },
        { "e char[+4] a", 0, { "field 1", "'+4'", "decimal" } },
        { "e char[-4] a", 0, { "field 1", "'-4'", "decimal" } },
        { "e char[4a] a", 0, { "field 1", "'4a'", "decimal" } },
        { "e char[] a", 0, { "field 1", "empty", "char[]" } },
        { "e char[4 a", 0, { "field 1", "'char[4'", "closing ']'" } },
        { "e char[ 4] a", 0, { "field 1", "closing ']'" } },
        { "e char[4]x a", 0, { "field 1", "'x'", "after ']'" } },
        { "e char[4][2] a", 0, { "field 1", "'[2]'", "after ']'" } },
        /* struct */
        { "e struct foo bar", 0, { "field 1", "'bar'", "needs a size" } },
        { "e u32 a;struct foo bar", 0, { "field 2", "'bar'", "needs a size" } },
        { "e struct foo bar 0x10", 0, { "field 1", "'0x10'", "decimal" } },
        { "e struct foo bar 0x10", EVENT_PARSE_MATCH, { "field 1", "'0x10'", "decimal" } },
        { "e struct foo bar -1", 0, { "field 1", "'-1'", "decimal" } },
        { "e struct foo bar 0", 0, { "field 1", "at least 1" } },
        { "e struct foo bar 0", EVENT_PARSE_MATCH, { "field 1", "at least 1" } },
        { "e struct foo bar 65536", 0, { "field 1", "'65536'", "65535" } },
        { "e struct foo bar 99999999999999999999999", 0, { "field 1", "65535" } },
        { "e struct foo bar 1 2", 0, { "field 1", "unexpected '2'" } },
        { "e struct 9foo bar 4", 0, { "field 1", "struct tag '9foo'" } },
        { "e struct foo-x bar 4", 0, { "field 1", "struct tag 'foo-x'" } },
        { "e struct foo", 0, { "field 1", "'struct foo'", "no field name" } },
        { "e struct", 0, { "field 1", "'struct'", "no field name" } },
        { "e u32 a 4", 0, { "field 1", "'4'", "only allowed after a struct" } },
        { "e char[4] a 4", 0, { "field 1", "'4'", "only allowed after a struct" } },
        { "e __data_loc char[] a 4", 0, { "field 1", "'4'", "only allowed after a struct" } },
        { "e u32 a 4", EVENT_PARSE_MATCH, { "field 1", "'4'", "only allowed after a struct" } },
        /* flags */
        { "e:", 0, { "flag 1", "empty" } },
        { "e: u32 a", 0, { "flag 1", "empty" } },
        { "e:,A", 0, { "flag 1", "empty" } },
        { "e:A,,B", 0, { "flag 2", "empty" } },
        { "e:A,", 0, { "flag 2", "empty" } },
        { "e:A,B-C", 0, { "flag 2", "'B-C'" } },
        { "e:A:B", 0, { "flag 1", "'A:B'" } },
        /* event names */
        { " u32 a", 0, { "event name" } },
        { ":A u32 a", 0, { "event name" } },
        { "9e u32 a", 0, { "'9e'", "must start with a letter" } },
        { "-e", 0, { "'-e'", "must start with a letter" } },
        { "e.x u32 a", 0, { "'e.x'", "'.'" } },
        { "e/x", 0, { "'e/x'", "'/'" } },
        { "e\tx u32 a", 0, { "\\x09" } },
        { "caf\xc3\xa9", 0, { "\\xc3", "not allowed" } },
        { "\xc3\xa9t\xc3\xa9", 0, { "\\xc3\\xa9t", "must start with a letter" } },
        /* field names */
        { "e u32 9a", 0, { "field 1", "'9a'", "C identifier" } },
        { "e u32 a-b", 0, { "field 1", "'a-b'", "C identifier" } },
        { "e u32 a.b", 0, { "field 1", "'a.b'", "C identifier" } },
        { "e u32 \xc3\xa9", 0, { "field 1", "\\xc3\\xa9", "C identifier" } },
        { "e char a[4]", 0, { "field 1", "'a[4]'", "C identifier" } },
        { "e u32 a;u32 a", 0, { "field 2", "'a'", "twice" } },
        { "e u32 a;u8 b;s64 a", 0, { "field 3", "'a'", "twice" } },
        { "e u32 a;u32 a", EVENT_PARSE_MATCH, { "field 2", "twice" } },
        { "e u32 common_pid", 0, { "field 1", "'common_pid'", "reserved" } },
        { "e u32 common_type", 0, { "field 1", "'common_type'", "reserved" } },
        { "e u32 common_x", 0, { "field 1", "'common_x'", "reserved" } },
        { "e u32 common_", 0, { "field 1", "'common_'", "reserved" } },
        { "e u32", 0, { "field 1", "'u32'", "no field name" } },
        { "e u32 a;u32", 0, { "field 2", "'u32'", "no field name" } },
        { "e unsigned int", 0, { "field 1", "'unsigned int'", "no field name" } },
        { "e unsigned a", 0, { "field 1", "no field name" } },
        { "e __data_loc char[]", 0, { "field 1", "no field name" } },
        /* types */
        { "e long a", 0, { "field 1", "'long'", "not allowed" } },
        { "e unsigned long a", 0, { "field 1", "'unsigned long'", "not allowed" } },
        { "e float a", 0, { "field 1", "unknown type 'float'" } },
        { "e u128 a", 0, { "field 1", "unknown type 'u128'" } },
        { "e U32 a", 0, { "field 1", "unknown type 'U32'" } },
        { "e u32[] a", 0, { "field 1", "unknown type 'u32[]'" } },
        { "e signed int a", 0, { "field 1", "unknown type 'signed'" } },
        { "e unsigned a", 0, { "field 1", "'unsigned a' has no field name" } },
        { "e __data_loc foo x", 0, { "field 1", "'__data_loc foo'" } },
        { "e __data_loc long[] x", 0, { "field 1", "'__data_loc long[]'" } },
        { "e __rel_loc s128[] x", 0, { "field 1", "'__rel_loc s128[]'" } },
        { "e u32 a;\tu32 b", 0, { "field 2", "unknown type '\\x09u32'" } },
        { "e u32 a;;long b", 0, { "field 3", "'long'" } },
        /* spacing: the kernel splits words on single spaces */
        { "e u32  a", 0, { "field 1", "extra space", "'u32  a'" } },
        { "e u32 a ", 0, { "field 1", "extra space", "'u32 a '" } },
        { "e u32 a; u32  b", 0, { "field 2", "extra space" } },
        { "e u32 a ;u32 b", 0, { "field 1", "extra space" } },
        { "e struct  foo bar 4", 0, { "field 1" } },
};

START_TEST(test_rejected) {
        assert_rejected_n(reject_cases[_i].command, strlen(reject_cases[_i].command), reject_cases[_i].flags,
                          reject_cases[_i].needles[0], reject_cases[_i].needles[1], reject_cases[_i].needles[2],
                          reject_cases[_i].needles[3]);
}
END_TEST

/* ---- command length: 511 bytes at most ---- */

/* "NAME char[1024] FIELD" with a 255-byte name, @total bytes long. */
static char *long_command(size_t total) {
        char *s = malloc(total + 1);

        ck_assert_ptr_nonnull(s);
        ck_assert_uint_gt(total, 255 + 12);
        memset(s, 'n', 255);
        memcpy(s + 255, " char[1024] ", 12);
        memset(s + 267, 'f', total - 267);
        s[total] = '\0';
        return s;
}

START_TEST(test_command_511_accepted) {
        _cleanup_free_ char *command = long_command(EVENT_COMMAND_MAX);
        _cleanup_event_def_ struct event_def *ev = NULL;
        _cleanup_event_def_ struct event_def *ev_n = NULL;
        struct event_error error;

        ck_assert_uint_eq(strlen(command), 511);
        ck_assert_int_eq(event_def_parse(command, 0, &ev, &error), 0);
        ck_assert_uint_eq(strlen(ev->name), 255);
        ck_assert_uint_eq(ev->n_fields, 1);
        ck_assert_uint_eq(strlen(ev->fields[0].name), 511 - 267);
        ck_assert_uint_eq(ev->min_size, 1024);

        ck_assert_int_eq(event_def_parse_n(command, 511, 0, &ev_n, &error), 0);
        ck_assert(event_def_equal(ev, ev_n));
}
END_TEST

START_TEST(test_command_512_rejected) {
        _cleanup_free_ char *command = long_command(EVENT_COMMAND_MAX + 1);

        ck_assert_uint_eq(strlen(command), 512);
        assert_rejected_n(command, 512, 0, "512", "511");
        assert_rejected(command, 0, "512", "511");
        assert_rejected(command, EVENT_PARSE_MATCH, "512", "511");
}
END_TEST

START_TEST(test_command_prefix_of_longer_buffer) {
        _cleanup_free_ char *command = long_command(600);
        _cleanup_event_def_ struct event_def *ev = NULL;
        struct event_error error;

        /* Only @len bytes count, whatever follows them. */
        ck_assert_int_eq(event_def_parse_n(command, 511, 0, &ev, &error), 0);
        ck_assert_uint_eq(strlen(ev->fields[0].name), 511 - 267);
        assert_rejected_n(command, 512, 0, "512");
        assert_rejected_n(command, 600, 0, "600");
}
END_TEST

START_TEST(test_command_huge_rejected) {
        const size_t len = 1 << 20;
        _cleanup_free_ char *command = malloc(len + 1);

        ck_assert_ptr_nonnull(command);
        memset(command, 'a', len);
        command[len] = '\0';
        assert_rejected_n(command, len, 0, "1048576");
        /* event_def_parse() stops counting after 512 bytes. */
        assert_rejected(command, 0, "longer than the 511");
}
END_TEST

START_TEST(test_command_empty_null_nul) {
        struct event_def *ev = NULL;
        struct event_error error;

        assert_rejected_n("", 0, 0, "empty");
        assert_rejected("", 0, "empty");
        /* Only the first @len bytes are looked at. */
        assert_rejected_n("e u32 a", 0, 0, "empty");
        /* An embedded NUL is refused, with its position. */
        assert_rejected_n("e u32 a\0b", 9, 0, "NUL byte at column 8");
        assert_rejected_n("\0", 1, 0, "NUL byte at column 1");
        assert_rejected_n("e\0", 2, 0, "NUL byte at column 2");

        ck_assert_int_eq(event_def_parse(NULL, 0, &ev, &error), -EINVAL);
        ck_assert_int_eq(error.code, -EINVAL);
        ck_assert_ptr_null(ev);
        ck_assert_int_eq(event_def_parse_n(NULL, 5, 0, &ev, &error), -EINVAL);
        ck_assert_int_eq(event_def_parse("e u32 a", 0, NULL, &error), -EINVAL);
        ck_assert_int_eq(error.code, -EINVAL);
        ck_assert_int_eq(event_def_parse("e u32 a", 0, NULL, NULL), -EINVAL);
}
END_TEST

START_TEST(test_parse_stops_at_nul) {
        /* A C string ends at its NUL: the rest is not part of the command. */
        _cleanup_event_def_ struct event_def *ev = parse_ok("e u32 a\0u32 b", 0);

        ck_assert_uint_eq(ev->n_fields, 1);
        ck_assert_uint_eq(ev->min_size, 4);
}
END_TEST

/* ---- struct ---- */

START_TEST(test_struct_sizes) {
        _cleanup_event_def_ struct event_def *ev = parse_ok("e struct foo bar 20;u32 after", 0);
        _cleanup_event_def_ struct event_def *big = parse_ok("e struct foo bar 65535", 0);
        _cleanup_event_def_ struct event_def *leading_zero = parse_ok("e struct foo bar 020", 0);

        ck_assert_uint_eq(ev->n_fields, 2);
        ck_assert_str_eq(ev->fields[0].type, "struct foo");
        ck_assert_str_eq(ev->fields[0].name, "bar");
        ck_assert_uint_eq(ev->fields[0].size, 20);
        ck_assert_uint_eq(ev->fields[0].offset, 8);
        ck_assert(ev->fields[0].size_given);
        ck_assert_uint_eq(ev->fields[1].offset, 28);
        ck_assert_uint_eq(ev->min_size, 24);

        ck_assert_uint_eq(big->fields[0].size, 65535);
        /* Decimal only: a leading 0 does not make it octal. */
        ck_assert_uint_eq(leading_zero->fields[0].size, 20);
}
END_TEST

START_TEST(test_struct_size_optional_when_matching) {
        _cleanup_event_def_ struct event_def *spec = parse_ok("e struct foo bar;u32 after", EVENT_PARSE_MATCH);
        _cleanup_event_def_ struct event_def *sized = parse_ok("e struct foo bar 20;u32 after", EVENT_PARSE_MATCH);

        ck_assert_uint_eq(spec->n_fields, 2);
        ck_assert_int_eq(spec->fields[0].kind, EVENT_FIELD_STRUCT);
        ck_assert(!spec->fields[0].size_given);
        ck_assert_uint_eq(spec->fields[0].size, 0);
        ck_assert_uint_eq(spec->fields[1].offset, 8);
        ck_assert(sized->fields[0].size_given);
        ck_assert_uint_eq(sized->fields[0].size, 20);
}
END_TEST

/* ---- flags ---- */

START_TEST(test_flags_kept) {
        _cleanup_event_def_ struct event_def *ev = parse_ok("e:A,B u32 a", 0);
        _cleanup_event_def_ struct event_def *one = parse_ok("e:BPF_ITER", 0);
        _cleanup_event_def_ struct event_def *digits = parse_ok("e:_1,x9_ u8 z", 0);
        _cleanup_event_def_ struct event_def *none = parse_ok("e u32 a", 0);

        ck_assert_str_eq(ev->name, "e");
        ck_assert_uint_eq(ev->n_flags, 2);
        ck_assert_str_eq(ev->flags[0], "A");
        ck_assert_str_eq(ev->flags[1], "B");
        ck_assert_uint_eq(ev->n_fields, 1);
        ck_assert_str_eq(ev->fields[0].name, "a");

        ck_assert_str_eq(one->name, "e");
        ck_assert_uint_eq(one->n_flags, 1);
        ck_assert_str_eq(one->flags[0], "BPF_ITER");
        ck_assert_uint_eq(one->n_fields, 0);

        ck_assert_uint_eq(digits->n_flags, 2);
        ck_assert_str_eq(digits->flags[0], "_1");
        ck_assert_str_eq(digits->flags[1], "x9_");

        ck_assert_uint_eq(none->n_flags, 0);
        ck_assert_ptr_null(none->flags);
}
END_TEST

/* ---- names ---- */

static const char *const good_names[] = {
        "_", "a", "Z", "__", "a_b", "a-b", "a-", "a--b", "_a-b_C9", "Z0123456789", "t_u32",
};

START_TEST(test_name_allowed) {
        _cleanup_event_def_ struct event_def *ev = parse_ok(good_names[_i], 0);

        ck_assert_str_eq(ev->name, good_names[_i]);
        ck_assert_uint_eq(ev->n_fields, 0);
        ck_assert_uint_eq(ev->min_size, 0);
        ck_assert(event_name_is_valid(good_names[_i], strlen(good_names[_i])));
}
END_TEST

/* The parser's name rule as a predicate (used by the daemon's configuration). */
START_TEST(test_name_is_valid) {
        char name[EVENT_NAME_MAX + 1];

        ck_assert(!event_name_is_valid(NULL, 0));
        ck_assert(!event_name_is_valid("", 0));
        ck_assert(!event_name_is_valid("9a", 2));
        ck_assert(!event_name_is_valid("-a", 2));
        ck_assert(!event_name_is_valid("a b", 3));
        ck_assert(!event_name_is_valid("a:b", 3));
        ck_assert(!event_name_is_valid("a*", 2));
        ck_assert(!event_name_is_valid("a.b", 3));
        ck_assert(!event_name_is_valid("\xc3\xa9", 2));
        ck_assert(event_name_is_valid("ab", 1));        /* only the first n bytes count */
        ck_assert(!event_name_is_valid("a\0", 2));
        memset(name, 'n', sizeof(name));
        ck_assert(event_name_is_valid(name, EVENT_NAME_MAX));
        ck_assert(!event_name_is_valid(name, EVENT_NAME_MAX + 1));
}
END_TEST

START_TEST(test_name_length) {
        char name[EVENT_NAME_MAX + 2];
        _cleanup_event_def_ struct event_def *ev = NULL;

        memset(name, 'n', sizeof(name) - 1);
        name[EVENT_NAME_MAX] = '\0';
        ev = parse_ok(name, 0);
        ck_assert_uint_eq(strlen(ev->name), 255);

        name[EVENT_NAME_MAX] = 'n';
        name[EVENT_NAME_MAX + 1] = '\0';
        assert_rejected(name, 0, "256", "255");
}
END_TEST

START_TEST(test_name_trailing_space_no_fields) {
        _cleanup_event_def_ struct event_def *ev = parse_ok("e ", 0);
        _cleanup_event_def_ struct event_def *semi = parse_ok("e ;", 0);
        _cleanup_event_def_ struct event_def *spaces = parse_ok("e   ", 0);

        ck_assert_str_eq(ev->name, "e");
        ck_assert_uint_eq(ev->n_fields, 0);
        ck_assert_uint_eq(semi->n_fields, 0);
        ck_assert_uint_eq(spaces->n_fields, 0);
}
END_TEST

START_TEST(test_field_name_length) {
        char command[6 + EVENT_FIELD_NAME_MAX + 2];
        _cleanup_event_def_ struct event_def *ev = NULL;

        memcpy(command, "e u32 ", 6);
        memset(command + 6, 'f', EVENT_FIELD_NAME_MAX + 1);
        command[6 + EVENT_FIELD_NAME_MAX] = '\0';
        ev = parse_ok(command, 0);
        ck_assert_uint_eq(strlen(ev->fields[0].name), 255);

        command[6 + EVENT_FIELD_NAME_MAX] = 'f';
        command[6 + EVENT_FIELD_NAME_MAX + 1] = '\0';
        assert_rejected(command, 0, "field 1", "256", "255");
}
END_TEST

START_TEST(test_field_names_c_identifiers) {
        _cleanup_event_def_ struct event_def *ev = parse_ok("e u32 _;u32 a1;u32 A_b;u32 common;u32 xcommon_pid", 0);

        ck_assert_uint_eq(ev->n_fields, 5);
        ck_assert_str_eq(ev->fields[0].name, "_");
        ck_assert_str_eq(ev->fields[1].name, "a1");
        ck_assert_str_eq(ev->fields[2].name, "A_b");
        ck_assert_str_eq(ev->fields[3].name, "common");
        ck_assert_str_eq(ev->fields[4].name, "xcommon_pid");
        ck_assert_ptr_eq(event_def_find_field(ev, "common"), &ev->fields[3]);
        ck_assert_ptr_null(event_def_find_field(ev, "comm"));
        ck_assert_ptr_null(event_def_find_field(ev, ""));
}
END_TEST

/* ---- spacing and empty fields ---- */

START_TEST(test_spacing) {
        _cleanup_event_def_ struct event_def *ev = parse_ok("e u32 a;  u32 b; u32 c;", 0);
        _cleanup_event_def_ struct event_def *lead = parse_ok("e  u32 a", 0);
        _cleanup_event_def_ struct event_def *empties = parse_ok("e ;;u32 a;; ;u32 b;", 0);

        ck_assert_uint_eq(ev->n_fields, 3);
        ck_assert_str_eq(ev->fields[0].name, "a");
        ck_assert_str_eq(ev->fields[1].name, "b");
        ck_assert_str_eq(ev->fields[2].name, "c");
        ck_assert_uint_eq(ev->fields[0].offset, 8);
        ck_assert_uint_eq(ev->fields[1].offset, 12);
        ck_assert_uint_eq(ev->fields[2].offset, 16);
        ck_assert_uint_eq(ev->min_size, 12);

        ck_assert_uint_eq(lead->n_fields, 1);
        ck_assert_str_eq(lead->fields[0].type, "u32");

        ck_assert_uint_eq(empties->n_fields, 2);
        ck_assert_str_eq(empties->fields[1].name, "b");
}
END_TEST

/* ---- offsets packed from 8, min_size the sum ---- */

START_TEST(test_offsets_packed) {
        _cleanup_event_def_ struct event_def *ev =
                parse_ok("e u8 a;u64 b;char[3] c;__data_loc char[] d;struct s e 5;u16 f;__rel_loc u8[] g;s32 h", 0);
        static const uint32_t offsets[] = { 8, 9, 17, 20, 24, 29, 31, 35 };
        static const uint32_t sizes[] = { 1, 8, 3, 4, 5, 2, 4, 4 };

        ck_assert_uint_eq(ev->n_fields, 8);
        for (size_t i = 0; i < 8; i++) {
                ck_assert_uint_eq(ev->fields[i].offset, offsets[i]);
                ck_assert_uint_eq(ev->fields[i].size, sizes[i]);
        }
        ck_assert_uint_eq(ev->min_size, 31);
}
END_TEST

START_TEST(test_no_fields) {
        _cleanup_event_def_ struct event_def *ev = parse_ok("t_none", 0);

        ck_assert_str_eq(ev->name, "t_none");
        ck_assert_uint_eq(ev->n_fields, 0);
        ck_assert_uint_eq(ev->min_size, 0);
        ck_assert_ptr_null(event_def_find_field(ev, "a"));
}
END_TEST

/* ---- canonical text and fields text ---- */

static const struct {
        const char *command;
        unsigned flags;
        const char *canonical;
        const char *fields;
} canonical_cases[] = {
        /* Inputs and dynamic_events lines as Linux 6.12 shows them. */
        { "t_u32 u32 a", 0, "u:t_u32 u32 a", "u32 a" },
        { "t_all s64 a;u64 b;s32 c;u32 d;int e;unsigned int f;s16 g;u16 h;short i;unsigned short j;s8 k;u8 l;"
          "char m;unsigned char n",
          0,
          "u:t_all s64 a; u64 b; s32 c; u32 d; int e; unsigned int f; s16 g; u16 h; short i; unsigned short j; "
          "s8 k; u8 l; char m; unsigned char n",
          "s64 a; u64 b; s32 c; u32 d; int e; unsigned int f; s16 g; u16 h; short i; unsigned short j; s8 k; u8 l; "
          "char m; unsigned char n" },
        { "t_arr char[20] msg;unsigned char[4] raw;char[0x10] h;char[010] o", 0,
          "u:t_arr char[20] msg; unsigned char[4] raw; char[0x10] h; char[010] o",
          "char[20] msg; unsigned char[4] raw; char[0x10] h; char[010] o" },
        { "t_dl __data_loc char[] msg;__rel_loc char[] rmsg;__data_loc u8[] bytes;__rel_loc u32[] words", 0,
          "u:t_dl __data_loc char[] msg; __rel_loc char[] rmsg; __data_loc u8[] bytes; __rel_loc u32[] words",
          "__data_loc char[] msg; __rel_loc char[] rmsg; __data_loc u8[] bytes; __rel_loc u32[] words" },
        { "t_struct struct foo bar 20;u32 after", 0, "u:t_struct struct foo bar 20; u32 after",
          "struct foo bar 20; u32 after" },
        { "t_none", 0, "u:t_none", "" },
        { "t_spaces u32 a;  u32 b; u32 c;", 0, "u:t_spaces u32 a; u32 b; u32 c", "u32 a; u32 b; u32 c" },
        { "t_edge6 char[0x0001] a", 0, "u:t_edge6 char[0x0001] a", "char[0x0001] a" },
        { "t_big char[1024] a", 0, "u:t_big char[1024] a", "char[1024] a" },
        /* Ours: flags are not part of the definition; sizes are normalised. */
        { "e:A,B u32 a", 0, "u:e u32 a", "u32 a" },
        { "e ", 0, "u:e", "" },
        { "e:F", 0, "u:e", "" },
        { "e struct foo bar 020", 0, "u:e struct foo bar 20", "struct foo bar 20" },
        /* A match spec without a struct size renders without one. */
        { "e struct foo bar;u32 x", EVENT_PARSE_MATCH, "u:e struct foo bar; u32 x", "struct foo bar; u32 x" },
        { "e struct foo bar 7", EVENT_PARSE_MATCH, "u:e struct foo bar 7", "struct foo bar 7" },
};

START_TEST(test_canonical) {
        _cleanup_event_def_ struct event_def *ev = parse_ok(canonical_cases[_i].command, canonical_cases[_i].flags);
        _cleanup_event_def_ struct event_def *again = NULL;
        _cleanup_free_ char *canonical = event_def_canonical(ev);
        _cleanup_free_ char *fields = event_def_fields_text(ev);
        struct event_error error;

        ck_assert_str_eq(canonical, canonical_cases[_i].canonical);
        ck_assert_str_eq(fields, canonical_cases[_i].fields);
        /* The canonical text, without "u:", parses back to the same event. */
        ck_assert_int_eq(event_def_parse(canonical + 2, canonical_cases[_i].flags, &again, &error), 0);
        ck_assert(event_def_equal(ev, again));
}
END_TEST

/* ---- equality (re-registration) ---- */

static const struct {
        const char *a;
        const char *b;
        bool equal;
} equal_cases[] = {
        { "e u32 a", "e u32 a", true },
        { "e u32 a", "e:F u32 a", true },
        { "e:G u32 a", "e:F,H u32 a", true },
        { "e u32 a", "e u32 a;", true },
        { "e u32 a;u32 b", "e  u32 a;   u32 b;", true },
        { "e", "e ", true },
        { "e struct s x 4", "e struct s x 4", true },
        { "e struct s x 4", "e struct s x 004", true },
        { "e struct s x 4", "e struct s x 8", false },
        { "e struct s x 4", "e struct t x 4", false },
        { "e u32 a", "e u32 b", false },
        { "e u32 a", "e s32 a", false },
        { "e u32 a", "e unsigned int a", false },
        { "e u32 a", "f u32 a", false },
        { "e u32 a", "e-x u32 a", false },
        { "e", "e u32 a", false },
        { "e u32 a", "e u32 a;u32 b", false },
        { "e u32 a;u32 b", "e u32 b;u32 a", false },
        { "e char[16] a", "e char[16] a", true },
        { "e char[16] a", "e char[0x10] a", false },
        { "e char[16] a", "e char[17] a", false },
        { "e __data_loc char[] a", "e __rel_loc char[] a", false },
        { "e __data_loc char[] a", "e __data_loc char a", false },
};

START_TEST(test_equal) {
        _cleanup_event_def_ struct event_def *a = parse_ok(equal_cases[_i].a, 0);
        _cleanup_event_def_ struct event_def *b = parse_ok(equal_cases[_i].b, 0);

        ck_assert_msg(event_def_equal(a, b) == equal_cases[_i].equal, "equal('%s', '%s') != %d", equal_cases[_i].a,
                      equal_cases[_i].b, equal_cases[_i].equal);
        ck_assert(event_def_equal(b, a) == equal_cases[_i].equal);
        ck_assert(event_def_equal(a, a));
}
END_TEST

/* ---- the delete match rule ---- */

static const struct {
        const char *event;
        const char *spec;
        bool matches;
} match_cases[] = {
        { "e u32 a;u32 b", "e", true },
        { "e", "e", true },
        { "e struct foo bar 20;u32 after", "e", true },
        { "e u32 a;u32 b", "e u32 a;u32 b", true },
        { "e u32 a;u32 b", "e u32 a; u32 b", true },
        { "e u32 a;u32 b", "e u32 a; u32 b;", true },
        { "e u32 a;u32 b", "e:F u32 a;u32 b", true },
        { "e u32 a;u32 b", "e u32 a", false },
        { "e u32 a", "e u32 a;u32 b", false },
        { "e u32 a;u32 b", "e u32 b;u32 a", false },
        { "e u32 a", "e u32 b", false },
        { "e u32 a", "e s32 a", false },
        { "e int a", "e s32 a", false },
        { "e u32 a", "f u32 a", false },
        { "e u32 a", "f", false },
        { "e u32 a", "E", false },
        { "e", "e u32 a", false },
        { "e struct foo bar 20;u32 after", "e struct foo bar;u32 after", true },
        { "e struct foo bar 20;u32 after", "e struct foo bar 20;u32 after", true },
        { "e struct foo bar 20;u32 after", "e struct foo bar 21;u32 after", false },
        { "e struct foo bar 20;u32 after", "e struct foo baz;u32 after", false },
        { "e struct foo bar 20;u32 after", "e struct fob bar;u32 after", false },
        { "e struct foo bar 20", "e struct foo bar;u32 after", false },
        { "e char[0x10] h", "e char[0x10] h", true },
        { "e char[0x10] h", "e char[16] h", false },
};

START_TEST(test_matches) {
        _cleanup_event_def_ struct event_def *ev = parse_ok(match_cases[_i].event, 0);
        _cleanup_event_def_ struct event_def *spec = parse_ok(match_cases[_i].spec, EVENT_PARSE_MATCH);

        ck_assert_msg(event_def_matches(ev, spec) == match_cases[_i].matches, "matches('%s', '%s') != %d",
                      match_cases[_i].event, match_cases[_i].spec, match_cases[_i].matches);
        /* An event always matches itself, parsed either way. */
        ck_assert(event_def_matches(ev, ev));
}
END_TEST

int main(void) {
        Suite *s = suite_create("event-def");
        TCase *tc;

        tc = tcase_create("types");
        tcase_add_loop_test(tc, test_type, 0, ARRAY_SIZE(type_cases));
        tcase_add_loop_test(tc, test_array_size_ok, 0, ARRAY_SIZE(array_ok_cases));
        suite_add_tcase(s, tc);

        tc = tcase_create("rejections");
        tcase_add_loop_test(tc, test_rejected, 0, ARRAY_SIZE(reject_cases));
        suite_add_tcase(s, tc);

        tc = tcase_create("command");
        tcase_add_test(tc, test_command_511_accepted);
        tcase_add_test(tc, test_command_512_rejected);
        tcase_add_test(tc, test_command_prefix_of_longer_buffer);
        tcase_add_test(tc, test_command_huge_rejected);
        tcase_add_test(tc, test_command_empty_null_nul);
        tcase_add_test(tc, test_parse_stops_at_nul);
        suite_add_tcase(s, tc);

        tc = tcase_create("struct-flags-names");
        tcase_add_test(tc, test_struct_sizes);
        tcase_add_test(tc, test_struct_size_optional_when_matching);
        tcase_add_test(tc, test_flags_kept);
        tcase_add_loop_test(tc, test_name_allowed, 0, ARRAY_SIZE(good_names));
        tcase_add_test(tc, test_name_is_valid);
        tcase_add_test(tc, test_name_length);
        tcase_add_test(tc, test_name_trailing_space_no_fields);
        tcase_add_test(tc, test_field_name_length);
        tcase_add_test(tc, test_field_names_c_identifiers);
        suite_add_tcase(s, tc);

        tc = tcase_create("layout");
        tcase_add_test(tc, test_spacing);
        tcase_add_test(tc, test_offsets_packed);
        tcase_add_test(tc, test_no_fields);
        suite_add_tcase(s, tc);

        tc = tcase_create("text-equal-match");
        tcase_add_loop_test(tc, test_canonical, 0, ARRAY_SIZE(canonical_cases));
        tcase_add_loop_test(tc, test_equal, 0, ARRAY_SIZE(equal_cases));
        tcase_add_loop_test(tc, test_matches, 0, ARRAY_SIZE(match_cases));
        suite_add_tcase(s, tc);

        return check_tap_run(s);
}
