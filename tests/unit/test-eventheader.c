/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* EventHeader decoding (src/shared/events/eventheader-decode.h) and rendering
 * (eventheader-format.h). Every event is built here byte by byte as
 * LinuxTracepoints' eventheader.h defines the format: the 8-byte header,
 * extension blocks (u16 size, u16 kind), the metadata (event name, then
 * per field: name, encoding, [format], [tag], [array length]), the data. */
#include "check-tap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eventheader-decode.h"
#include "eventheader-format.h"
#include "strbuf.h"

/* Little-endian, 64-bit, extension blocks follow. */
#define FLAGS_LE 0x07
#define FLAGS_BE 0x05

struct bytes {
        uint8_t b[8192];
        size_t n;
        bool big_endian;
};

static void put(struct bytes *x, const void *p, size_t n) {
        ck_assert_uint_le(x->n + n, sizeof(x->b));
        memcpy(x->b + x->n, p, n);
        x->n += n;
}

static void u8(struct bytes *x, uint8_t v) {
        put(x, &v, 1);
}

static void uint_n(struct bytes *x, uint64_t v, size_t size) {
        for (size_t i = 0; i < size; i++) {
                unsigned shift = (unsigned) (8 * (x->big_endian ? size - 1 - i : i));
                u8(x, (uint8_t) (v >> shift));
        }
}

static void u16(struct bytes *x, uint16_t v) {
        uint_n(x, v, 2);
}

static void u32(struct bytes *x, uint32_t v) {
        uint_n(x, v, 4);
}

static void u64(struct bytes *x, uint64_t v) {
        uint_n(x, v, 8);
}

/* With its NUL. */
static void str(struct bytes *x, const char *s) {
        put(x, s, strlen(s) + 1);
}

/* A field definition: encoding (with flags), then the format byte if the
 * encoding says so, then the tag if the format says so. */
static void field(struct bytes *m, const char *name, uint8_t encoding, uint8_t format, uint16_t tag) {
        str(m, name);
        u8(m, encoding);
        if (encoding & EVENTHEADER_ENC_CHAIN) {
                u8(m, format);
                if (format & EVENTHEADER_FMT_CHAIN)
                        u16(m, tag);
        }
}

#define F(enc, fmt) (uint8_t) ((enc) | EVENTHEADER_ENC_CHAIN), (uint8_t) (fmt)

static void header(struct bytes *x, uint8_t flags, uint8_t version, uint16_t id, uint16_t tag, uint8_t opcode,
                   uint8_t level) {
        x->big_endian = !(flags & EVENTHEADER_FLAG_LITTLE_ENDIAN);
        u8(x, flags);
        u8(x, version);
        u16(x, id);
        u16(x, tag);
        u8(x, opcode);
        u8(x, level);
}

static void extension(struct bytes *x, uint16_t kind, const struct bytes *block) {
        u16(x, (uint16_t) block->n);
        u16(x, kind);
        put(x, block->b, block->n);
}

/* An event of level 4 with one metadata block @meta and data @data. */
static void event(struct bytes *x, const struct bytes *meta, const struct bytes *data) {
        header(x, meta->big_endian ? FLAGS_BE : FLAGS_LE, 0, 0, 0, 0, 4);
        extension(x, EVENTHEADER_EXT_METADATA, meta);
        put(x, data->b, data->n);
}

static char *json_of(const char *name, const struct bytes *x) {
        struct strbuf sb = STRBUF_INIT;
        const char *reason = NULL;
        int r = eventheader_format_json(name, strlen(name), x->b, x->n, &sb, &reason);

        ck_assert_msg(r == 0, "%s: %d %s", name, r, reason ?: "");
        return strbuf_steal(&sb);
}

static char *text_of(const char *name, const struct bytes *x) {
        struct strbuf sb = STRBUF_INIT;
        const char *reason = NULL;
        int r = eventheader_format_text(name, strlen(name), x->b, x->n, &sb, &reason);

        ck_assert_msg(r == 0, "%s: %d %s", name, r, reason ?: "");
        return strbuf_steal(&sb);
}

/* The "fields" member of the JSON rendering. */
static void check_fields(const struct bytes *meta, const struct bytes *data, const char *want) {
        struct bytes x = {};
        char *json, *end;

        event(&x, meta, data);
        json = json_of("P_L4K1", &x);
        ck_assert_ptr_nonnull(json);
        ck_assert_msg(strncmp(json, "\"fields\":", 9) == 0, "%s", json);
        end = strstr(json, ",\"eventheader\":");
        ck_assert_ptr_nonnull(end);
        *end = '\0';
        ck_assert_str_eq(json + 9, want);
        free(json);
}

static void check_text(const struct bytes *meta, const struct bytes *data, const char *want) {
        struct bytes x = {};
        char *text;

        event(&x, meta, data);
        text = text_of("P_L4K1", &x);
        ck_assert_ptr_nonnull(text);
        ck_assert_str_eq(text, want);
        free(text);
}

/* Refused with a reason, nothing appended, in both renderings. */
static void check_malformed(const struct bytes *x, const char *why) {
        struct strbuf sb = STRBUF_INIT;
        const char *reason = NULL;

        strbuf_append(&sb, "kept");
        ck_assert_int_eq(eventheader_format_json("P_L4K1", 6, x->b, x->n, &sb, &reason), -EBADMSG);
        ck_assert_ptr_nonnull(reason);
        ck_assert_msg(strstr(reason, why), "reason '%s', expected '%s'", reason, why);
        reason = NULL;
        ck_assert_int_eq(eventheader_format_text("P_L4K1", 6, x->b, x->n, &sb, &reason), -EBADMSG);
        ck_assert_ptr_nonnull(reason);
        ck_assert_str_eq(sb.buf, "kept");
        strbuf_done(&sb);
}

static void check_malformed_event(const struct bytes *meta, const struct bytes *data, const char *why) {
        struct bytes x = {};

        event(&x, meta, data);
        check_malformed(&x, why);
}

START_TEST(test_tracepoint_names) {
        struct eventheader_tracepoint tp;
        static const char *const invalid[] = {
                "P",          "P_",          "_L4K1",        "P_L4",     "P_LK1",    "P_L4K",  "P_L0K1",
                "P_L100K1",   "P_L4K1g",     "P_L4KA",       "P_L4x1",   "P_l4K1",   "A B_L4K1", "A:B_L4K1",
                "P_L4K12345678901234567", "P_L4K1G_x",
        };

#define NAME(s) (s), strlen(s)
        ck_assert_int_eq(eventheader_parse_tracepoint(NAME("MyProvider_L4K1"), &tp), 0);
        ck_assert_uint_eq(tp.provider_len, 10);
        ck_assert_int_eq(memcmp(tp.provider, "MyProvider", 10), 0);
        ck_assert_uint_eq(tp.level, 4);
        ck_assert_uint_eq(tp.keyword, 1);
        ck_assert_ptr_null(tp.group);

        /* The provider's own '_' and "_L" stay in it; the group option. */
        ck_assert_int_eq(eventheader_parse_tracepoint(NAME("My_Lx_Provider_Lff K"), &tp), -EINVAL);
        ck_assert_int_eq(eventheader_parse_tracepoint(NAME("My_L5K1_P_L5Kf123456789abcdefAxGmygroup9"), &tp), 0);
        ck_assert_uint_eq(tp.provider_len, 9);
        ck_assert_uint_eq(tp.level, 5);
        ck_assert_uint_eq(tp.keyword, 0xf123456789abcdefULL);
        ck_assert_uint_eq(tp.group_len, 8);
        ck_assert_int_eq(memcmp(tp.group, "mygroup9", 8), 0);

        for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++)
                ck_assert_msg(eventheader_parse_tracepoint(NAME(invalid[i]), &tp) == -EINVAL, "%s", invalid[i]);
#undef NAME
}
END_TEST

START_TEST(test_header_and_activity) {
        struct bytes x = {}, act = {}, meta = {};
        char *s;

        /* No extension: no name, no fields; the data stays bytes. */
        header(&x, 0x03, 2, 0x1234, 0xbeef, 1, 5);
        u8(&x, 0xab);
        s = json_of("Prov_L5K2aGgrp", &x);
        ck_assert_str_eq(s, "\"fields\":{},\"eventheader\":{\"provider\":\"Prov\",\"event\":null,\"group\":\"grp\","
                            "\"level\":5,\"keyword\":\"0x2a\",\"opcode\":1,\"tag\":48879,\"id\":4660,\"version\":2,"
                            "\"flags\":3,\"data\":\"ab\"}");
        free(s);
        s = text_of("Prov_L5K2aGgrp", &x);
        ck_assert_str_eq(s, "Prov:(no metadata) level=5 keyword=0x2a group=grp opcode=1 id=4660 version=2 "
                            "tag=0xBEEF data=0xab");
        free(s);

        /* Activity id and related id, then metadata, chained. */
        x = (struct bytes) {};
        header(&x, FLAGS_LE, 0, 0, 0, 2, 4);
        for (uint8_t i = 0; i < 32; i++)
                u8(&act, i < 16 ? (uint8_t) (i + 1) : (uint8_t) (0xf0 + i - 16));
        extension(&x, EVENTHEADER_EXT_ACTIVITY_ID | EVENTHEADER_EXT_CHAIN, &act);
        str(&meta, "Start;attr=1");
        extension(&x, EVENTHEADER_EXT_METADATA, &meta);
        s = json_of("P_L4K0", &x);
        ck_assert_str_eq(s, "\"fields\":{},\"eventheader\":{\"provider\":\"P\",\"event\":\"Start;attr=1\","
                            "\"level\":4,\"keyword\":\"0x0\",\"opcode\":2,\"tag\":0,\"id\":0,\"version\":0,"
                            "\"flags\":7,\"activity\":\"01020304-0506-0708-090a-0b0c0d0e0f10\","
                            "\"related_activity\":\"f0f1f2f3-f4f5-f6f7-f8f9-fafbfcfdfeff\"}");
        free(s);
        s = text_of("P_L4K0", &x);
        ck_assert_str_eq(s, "P:Start;attr=1 level=4 keyword=0x0 opcode=2 activity=01020304-0506-0708-090a-0b0c0d0e0f10 "
                            "related=f0f1f2f3-f4f5-f6f7-f8f9-fafbfcfdfeff");
        free(s);

        /* An unknown extension kind is stepped over. */
        x = (struct bytes) {};
        header(&x, FLAGS_LE, 0, 0, 0, 0, 4);
        extension(&x, 0x7777 | EVENTHEADER_EXT_CHAIN, &act);
        extension(&x, EVENTHEADER_EXT_METADATA, &meta);
        s = text_of("P_L4K0", &x);
        ck_assert_str_eq(s, "P:Start;attr=1 level=4 keyword=0x0");
        free(s);
}
END_TEST

START_TEST(test_integers) {
        struct bytes m = {}, d = {};

        str(&m, "Ints");
        field(&m, "u8", EVENTHEADER_ENC_VALUE8, 0, 0);
        u8(&d, 200);
        field(&m, "s8", F(EVENTHEADER_ENC_VALUE8, EVENTHEADER_FMT_SIGNED_INT), 0);
        u8(&d, 0x80);
        field(&m, "h16", F(EVENTHEADER_ENC_VALUE16, EVENTHEADER_FMT_HEX_INT), 0);
        u16(&d, 0xea60);
        field(&m, "s16", F(EVENTHEADER_ENC_VALUE16, EVENTHEADER_FMT_SIGNED_INT), 0);
        u16(&d, 0x8000);
        field(&m, "u32", F(EVENTHEADER_ENC_VALUE32, EVENTHEADER_FMT_UNSIGNED_INT), 0);
        u32(&d, 4000000000u);
        field(&m, "s32", F(EVENTHEADER_ENC_VALUE32, EVENTHEADER_FMT_SIGNED_INT), 0);
        u32(&d, 0xffffffffu);
        field(&m, "u64", EVENTHEADER_ENC_VALUE64, 0, 0);
        u64(&d, UINT64_MAX);
        field(&m, "s64", F(EVENTHEADER_ENC_VALUE64, EVENTHEADER_FMT_SIGNED_INT), 0);
        u64(&d, (uint64_t) INT64_MIN);
        field(&m, "h64", F(EVENTHEADER_ENC_VALUE64, EVENTHEADER_FMT_HEX_INT), 0);
        u64(&d, 0x7ce66c50e2840000ULL);
        field(&m, "pid", F(EVENTHEADER_ENC_VALUE32, EVENTHEADER_FMT_PID), 0);
        u32(&d, 884);
        /* A format that does not fit the size: the encoding's default. */
        field(&m, "errno8", F(EVENTHEADER_ENC_VALUE8, EVENTHEADER_FMT_ERRNO), 0);
        u8(&d, 2);
        /* An unknown format: the default too. */
        field(&m, "fmt99", F(EVENTHEADER_ENC_VALUE16, 99), 0);
        u16(&d, 7);
        check_fields(&m, &d,
                     "{\"u8\":200,\"s8\":-128,\"h16\":\"0xEA60\",\"s16\":-32768,\"u32\":4000000000,\"s32\":-1,"
                     "\"u64\":18446744073709551615,\"s64\":-9223372036854775808,\"h64\":\"0x7CE66C50E2840000\","
                     "\"pid\":884,\"errno8\":2,\"fmt99\":7}");
        check_text(&m, &d,
                   "P:Ints level=4 keyword=0x1 u8=200 s8=-128 h16=0xEA60 s16=-32768 u32=4000000000 s32=-1 "
                   "u64=18446744073709551615 s64=-9223372036854775808 h64=0x7CE66C50E2840000 pid=884 errno8=2 fmt99=7");
}
END_TEST

START_TEST(test_big_endian) {
        struct bytes m = { .big_endian = true }, d = { .big_endian = true };

        str(&m, "BE");
        field(&m, "u32", EVENTHEADER_ENC_VALUE32, 0, 0);
        u32(&d, 0x01020304);
        field(&m, "a", F(EVENTHEADER_ENC_VALUE16 | EVENTHEADER_ENC_CARRAY, EVENTHEADER_FMT_HEX_INT), 0);
        u16(&m, 2);
        u16(&d, 0x1234);
        u16(&d, 0xabcd);
        field(&m, "s16", F(EVENTHEADER_ENC_STRING_LENGTH16_CHAR16, EVENTHEADER_FMT_STRING_UTF), 0);
        u16(&d, 2);
        u16(&d, 'h');
        u16(&d, 0x00e9);
        check_fields(&m, &d, "{\"u32\":16909060,\"a\":[\"0x1234\",\"0xABCD\"],\"s16\":\"h\xc3\xa9\"}");
}
END_TEST

START_TEST(test_other_formats) {
        struct bytes m = {}, d = {};
        static const uint8_t uuid[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
        static const uint8_t v6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
        float f = 3.14f, nan_f = __builtin_nanf("");
        double g = 1.0 / 3;
        uint32_t fbits, nbits;
        uint64_t gbits;

        memcpy(&fbits, &f, 4);
        memcpy(&nbits, &nan_f, 4);
        memcpy(&gbits, &g, 8);
        str(&m, "Formats");
        field(&m, "b0", F(EVENTHEADER_ENC_VALUE8, EVENTHEADER_FMT_BOOLEAN), 0);
        u8(&d, 0);
        field(&m, "b1", F(EVENTHEADER_ENC_VALUE32, EVENTHEADER_FMT_BOOLEAN), 0);
        u32(&d, 1);
        field(&m, "b7", F(EVENTHEADER_ENC_VALUE16, EVENTHEADER_FMT_BOOLEAN), 0);
        u16(&d, 7);
        field(&m, "e", F(EVENTHEADER_ENC_VALUE32, EVENTHEADER_FMT_ERRNO), 0);
        u32(&d, 2);
        field(&m, "e_big", F(EVENTHEADER_ENC_VALUE32, EVENTHEADER_FMT_ERRNO), 0);
        u32(&d, 0x80000000u);
        field(&m, "t32", F(EVENTHEADER_ENC_VALUE32, EVENTHEADER_FMT_TIME), 0);
        u32(&d, 2000000000);
        field(&m, "t64", F(EVENTHEADER_ENC_VALUE64, EVENTHEADER_FMT_TIME), 0);
        u64(&d, (uint64_t) -11644473600LL);
        field(&m, "t64huge", F(EVENTHEADER_ENC_VALUE64, EVENTHEADER_FMT_TIME), 0);
        u64(&d, 9000000000000000000ULL);
        field(&m, "f32", F(EVENTHEADER_ENC_VALUE32, EVENTHEADER_FMT_FLOAT), 0);
        u32(&d, fbits);
        field(&m, "nan", F(EVENTHEADER_ENC_VALUE32, EVENTHEADER_FMT_FLOAT), 0);
        u32(&d, nbits);
        field(&m, "f64", F(EVENTHEADER_ENC_VALUE64, EVENTHEADER_FMT_FLOAT), 0);
        u64(&d, gbits);
        field(&m, "uuid", F(EVENTHEADER_ENC_VALUE128, EVENTHEADER_FMT_UUID), 0);
        put(&d, uuid, 16);
        field(&m, "v128", EVENTHEADER_ENC_VALUE128, 0, 0);
        put(&d, uuid, 16);
        field(&m, "port", F(EVENTHEADER_ENC_VALUE16, EVENTHEADER_FMT_PORT), 0);
        put(&d, "\x00\x50", 2);   /* network order: 80 */
        field(&m, "ip4", F(EVENTHEADER_ENC_VALUE32, EVENTHEADER_FMT_IP_ADDRESS), 0);
        put(&d, "\x7f\x00\x00\x01", 4);
        field(&m, "ip6", F(EVENTHEADER_ENC_VALUE128, EVENTHEADER_FMT_IP_ADDRESS_OBSOLETE), 0);
        put(&d, v6, 16);
        field(&m, "hex", F(EVENTHEADER_ENC_VALUE32, EVENTHEADER_FMT_HEX_BYTES), 0);
        put(&d, "\x01\x02\x03\x04", 4);
        field(&m, "ch", F(EVENTHEADER_ENC_VALUE8, EVENTHEADER_FMT_STRING8), 0);
        u8(&d, 0xfe);
        field(&m, "wch", F(EVENTHEADER_ENC_VALUE16, EVENTHEADER_FMT_STRING_UTF), 0);
        u16(&d, 0x20ac);
        field(&m, "dch", F(EVENTHEADER_ENC_VALUE32, EVENTHEADER_FMT_STRING_UTF), 0);
        u32(&d, 0x1f600);
        field(&m, "tagged", F(EVENTHEADER_ENC_VALUE8, EVENTHEADER_FMT_CHAIN), 0x12);
        u8(&d, 1);
        check_fields(&m, &d,
                     "{\"b0\":false,\"b1\":true,\"b7\":7,\"e\":\"ENOENT(2)\",\"e_big\":\"ERRNO(-2147483648)\","
                     "\"t32\":\"2033-05-18T03:33:20\",\"t64\":\"1601-01-01T00:00:00\","
                     "\"t64huge\":\"TIME(9000000000000000000)\",\"f32\":3.14,\"nan\":\"nan\","
                     "\"f64\":0.3333333333333333,\"uuid\":\"01020304-0506-0708-090a-0b0c0d0e0f10\","
                     "\"v128\":\"01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f 10\",\"port\":80,"
                     "\"ip4\":\"127.0.0.1\",\"ip6\":\"2001:db8::1\",\"hex\":\"01 02 03 04\",\"ch\":\"\xc3\xbe\","
                     "\"wch\":\"\xe2\x82\xac\",\"dch\":\"\xf0\x9f\x98\x80\",\"tagged;tag=0x12\":1}");
        check_text(&m, &d,
                   "P:Formats level=4 keyword=0x1 b0=false b1=true b7=7 e=ENOENT(2) e_big=ERRNO(-2147483648) "
                   "t32=2033-05-18T03:33:20 t64=1601-01-01T00:00:00 t64huge=TIME(9000000000000000000) f32=3.14 "
                   "nan=nan f64=0.3333333333333333 uuid=01020304-0506-0708-090a-0b0c0d0e0f10 "
                   "v128=0x0102030405060708090a0b0c0d0e0f10 port=80 ip4=127.0.0.1 ip6=2001:db8::1 hex=0x01020304 "
                   "ch=\xc3\xbe wch=\xe2\x82\xac dch=\xf0\x9f\x98\x80 tagged=1");
}
END_TEST

START_TEST(test_strings) {
        struct bytes m = {}, d = {};

        str(&m, "Strings");
        field(&m, "z8", EVENTHEADER_ENC_ZSTRING_CHAR8, 0, 0);
        str(&d, "hi\xc3\xa9");
        field(&m, "z16", EVENTHEADER_ENC_ZSTRING_CHAR16, 0, 0);
        /* U+1F600 as a surrogate pair, then a lone surrogate. */
        u16(&d, 'a');
        u16(&d, 0xd83d);
        u16(&d, 0xde00);
        u16(&d, 0xd800);
        u16(&d, 0);
        field(&m, "z32", EVENTHEADER_ENC_ZSTRING_CHAR32, 0, 0);
        u32(&d, 'b');
        u32(&d, 0x110000);
        u32(&d, 0);
        field(&m, "l8", EVENTHEADER_ENC_STRING_LENGTH16_CHAR8, 0, 0);
        u16(&d, 3);
        put(&d, "a\0b", 3);
        field(&m, "l16", EVENTHEADER_ENC_STRING_LENGTH16_CHAR16, 0, 0);
        u16(&d, 1);
        u16(&d, 'c');
        field(&m, "l32", EVENTHEADER_ENC_STRING_LENGTH16_CHAR32, 0, 0);
        u16(&d, 1);
        u32(&d, 'd');
        field(&m, "bin", EVENTHEADER_ENC_BINARY_LENGTH16_CHAR8, 0, 0);
        u16(&d, 2);
        put(&d, "\xde\xad", 2);
        field(&m, "latin1", F(EVENTHEADER_ENC_ZSTRING_CHAR8, EVENTHEADER_FMT_STRING8), 0);
        str(&d, "\xe9t\xe9");
        field(&m, "bad_utf8", EVENTHEADER_ENC_ZSTRING_CHAR8, 0, 0);
        str(&d, "\xff\x1b[0m");
        field(&m, "z16hex", F(EVENTHEADER_ENC_ZSTRING_CHAR16, EVENTHEADER_FMT_HEX_BYTES), 0);
        u16(&d, 'h');
        u16(&d, 0);
        field(&m, "empty", EVENTHEADER_ENC_ZSTRING_CHAR8, 0, 0);
        u8(&d, 0);
        /* Odd bytes of UTF-16 (counted char8 with a BOM format). */
        field(&m, "odd16", F(EVENTHEADER_ENC_BINARY_LENGTH16_CHAR8, EVENTHEADER_FMT_STRING_UTF_BOM), 0);
        u16(&d, 3);
        put(&d, "\xff\xfe" "A", 3);
        check_fields(&m, &d,
                     "{\"z8\":\"hi\xc3\xa9\",\"z16\":\"a\xf0\x9f\x98\x80\xef\xbf\xbd\",\"z32\":\"b\xef\xbf\xbd\","
                     "\"l8\":\"a\\u0000b\",\"l16\":\"c\",\"l32\":\"d\",\"bin\":\"de ad\","
                     "\"latin1\":\"\xc3\xa9t\xc3\xa9\",\"bad_utf8\":\"\\udcff\\u001b[0m\",\"z16hex\":\"68 00\","
                     "\"empty\":\"\",\"odd16\":\"\xef\xbf\xbd\"}");
        check_text(&m, &d,
                   "P:Strings level=4 keyword=0x1 z8=hi\xc3\xa9 z16=a\xf0\x9f\x98\x80\xef\xbf\xbd z32=b\xef\xbf\xbd "
                   "l8=a\\x00b l16=c l32=d bin=0xdead latin1=\xc3\xa9t\xc3\xa9 bad_utf8=\\xff\\x1b[0m z16hex=0x6800 "
                   "empty= odd16=\xef\xbf\xbd");
}
END_TEST

START_TEST(test_bom) {
        struct bytes m = {}, d = {};

        str(&m, "Bom");
        /* Big-endian UTF-16 by its BOM in a little-endian event. */
        field(&m, "be16", F(EVENTHEADER_ENC_STRING_LENGTH16_CHAR16, EVENTHEADER_FMT_STRING_UTF_BOM), 0);
        u16(&d, 3);
        put(&d, "\xfe\xff\x00h\x00i", 6);
        field(&m, "le16", F(EVENTHEADER_ENC_ZSTRING_CHAR16, EVENTHEADER_FMT_STRING_XML), 0);
        put(&d, "\xff\xfeh\x00\x00\x00", 6);
        field(&m, "utf8", F(EVENTHEADER_ENC_ZSTRING_CHAR8, EVENTHEADER_FMT_STRING_JSON), 0);
        str(&d, "\xef\xbb\xbf{}");
        field(&m, "be32", F(EVENTHEADER_ENC_STRING_LENGTH16_CHAR32, EVENTHEADER_FMT_STRING_UTF_BOM), 0);
        u16(&d, 2);
        put(&d, "\x00\x00\xfe\xff\x00\x00\x00x", 8);
        field(&m, "le32", F(EVENTHEADER_ENC_STRING_LENGTH16_CHAR32, EVENTHEADER_FMT_STRING_UTF_BOM), 0);
        u16(&d, 2);
        put(&d, "\xff\xfe\x00\x00y\x00\x00\x00", 8);
        field(&m, "nobom", F(EVENTHEADER_ENC_STRING_LENGTH16_CHAR16, EVENTHEADER_FMT_STRING_UTF_BOM), 0);
        u16(&d, 1);
        u16(&d, 'z');
        check_fields(&m, &d, "{\"be16\":\"hi\",\"le16\":\"h\",\"utf8\":\"{}\",\"be32\":\"x\",\"le32\":\"y\",\"nobom\":\"z\"}");
}
END_TEST

START_TEST(test_counted_fixed_formats) {
        struct bytes m = {}, d = {};

        /* string_length16_char8 and binary_length16_char8 take any format:
         * length 0 is null, a size the format takes is that value, another
         * is the encoding's default (string, hex bytes). */
        str(&m, "Counted");
        field(&m, "null", F(EVENTHEADER_ENC_BINARY_LENGTH16_CHAR8, EVENTHEADER_FMT_SIGNED_INT), 0);
        u16(&d, 0);
        field(&m, "ip", F(EVENTHEADER_ENC_BINARY_LENGTH16_CHAR8, EVENTHEADER_FMT_IP_ADDRESS), 0);
        u16(&d, 4);
        put(&d, "\x0a\x00\x00\x01", 4);
        field(&m, "i16", F(EVENTHEADER_ENC_STRING_LENGTH16_CHAR8, EVENTHEADER_FMT_SIGNED_INT), 0);
        u16(&d, 2);
        u16(&d, 0xffff);
        field(&m, "odd_bin", F(EVENTHEADER_ENC_BINARY_LENGTH16_CHAR8, EVENTHEADER_FMT_UNSIGNED_INT), 0);
        u16(&d, 3);
        put(&d, "abc", 3);
        field(&m, "odd_str", F(EVENTHEADER_ENC_STRING_LENGTH16_CHAR8, EVENTHEADER_FMT_UNSIGNED_INT), 0);
        u16(&d, 3);
        put(&d, "abc", 3);
        field(&m, "uuid", F(EVENTHEADER_ENC_BINARY_LENGTH16_CHAR8, EVENTHEADER_FMT_UUID), 0);
        u16(&d, 16);
        put(&d, "\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\xcc\xdd\xee\xff", 16);
        check_fields(&m, &d,
                     "{\"null\":null,\"ip\":\"10.0.0.1\",\"i16\":-1,\"odd_bin\":\"61 62 63\",\"odd_str\":\"abc\","
                     "\"uuid\":\"00112233-4455-6677-8899-aabbccddeeff\"}");
}
END_TEST

START_TEST(test_arrays_and_structs) {
        struct bytes m = {}, d = {};

        str(&m, "Nested");
        field(&m, "c", EVENTHEADER_ENC_VALUE16 | EVENTHEADER_ENC_CARRAY, 0, 0);
        u16(&m, 3);
        u16(&d, 1);
        u16(&d, 2);
        u16(&d, 3);
        field(&m, "v", EVENTHEADER_ENC_ZSTRING_CHAR8 | EVENTHEADER_ENC_VARRAY, 0, 0);
        u16(&d, 3);
        str(&d, "ABC");
        str(&d, "");
        str(&d, "XYZ");
        field(&m, "none", EVENTHEADER_ENC_VALUE32 | EVENTHEADER_ENC_VARRAY, 0, 0);
        u16(&d, 0);
        /* s { a; inner { b; ips[] } } */
        field(&m, "s", F(EVENTHEADER_ENC_STRUCT, 2), 0);
        field(&m, "a", EVENTHEADER_ENC_VALUE8, 0, 0);
        u8(&d, 7);
        field(&m, "inner", F(EVENTHEADER_ENC_STRUCT, 2 | EVENTHEADER_FMT_CHAIN), 0xbeef);
        field(&m, "b", F(EVENTHEADER_ENC_VALUE8, EVENTHEADER_FMT_BOOLEAN), 0);
        u8(&d, 1);
        field(&m, "ips", F(EVENTHEADER_ENC_VALUE32 | EVENTHEADER_ENC_VARRAY, EVENTHEADER_FMT_IP_ADDRESS), 0);
        u16(&d, 2);
        put(&d, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
        /* An array of structs, and an empty one whose fields are skipped. */
        field(&m, "pts", F(EVENTHEADER_ENC_STRUCT | EVENTHEADER_ENC_VARRAY, 2), 0);
        field(&m, "x", F(EVENTHEADER_ENC_VALUE8, EVENTHEADER_FMT_SIGNED_INT), 0);
        field(&m, "y", EVENTHEADER_ENC_ZSTRING_CHAR8, 0, 0);
        u16(&d, 2);
        u8(&d, 0xff);
        str(&d, "p");
        u8(&d, 1);
        str(&d, "q");
        field(&m, "nopts", F(EVENTHEADER_ENC_STRUCT | EVENTHEADER_ENC_VARRAY, 1), 0);
        field(&m, "z", EVENTHEADER_ENC_VALUE64, 0, 0);
        u16(&d, 0);
        field(&m, "last", EVENTHEADER_ENC_VALUE8, 0, 0);
        u8(&d, 9);
        check_fields(&m, &d,
                     "{\"c\":[1,2,3],\"v\":[\"ABC\",\"\",\"XYZ\"],\"none\":[],"
                     "\"s\":{\"a\":7,\"inner;tag=0xBEEF\":{\"b\":true,\"ips\":[\"1.2.3.4\",\"5.6.7.8\"]}},"
                     "\"pts\":[{\"x\":-1,\"y\":\"p\"},{\"x\":1,\"y\":\"q\"}],\"nopts\":[],\"last\":9}");
        check_text(&m, &d,
                   "P:Nested level=4 keyword=0x1 c=[1,2,3] v=[ABC,,XYZ] none=[] s={a=7 inner={b=true "
                   "ips=[1.2.3.4,5.6.7.8]}} pts=[{x=-1 y=p},{x=1 y=q}] nopts=[] last=9");
}
END_TEST

/* @levels structs, each holding the next, the innermost a u8. */
static void nested(struct bytes *m, struct bytes *d, unsigned levels) {
        str(m, "Deep");
        for (unsigned i = 0; i < levels; i++)
                field(m, "s", F(EVENTHEADER_ENC_STRUCT, 1), 0);
        field(m, "v", EVENTHEADER_ENC_VALUE8, 0, 0);
        u8(d, 1);
}

START_TEST(test_depth) {
        struct bytes m = {}, d = {};

        nested(&m, &d, EVENTHEADER_DEPTH_MAX);
        check_fields(&m, &d, "{\"s\":{\"s\":{\"s\":{\"s\":{\"s\":{\"s\":{\"s\":{\"s\":{\"v\":1}}}}}}}}}");
        m = d = (struct bytes) {};
        nested(&m, &d, EVENTHEADER_DEPTH_MAX + 1);
        check_malformed_event(&m, &d, "nested deeper");
        /* A struct claiming more fields than there are ends with the
         * metadata, as LinuxTracepoints reads it. */
        m = d = (struct bytes) {};
        str(&m, "Short");
        field(&m, "s", F(EVENTHEADER_ENC_STRUCT, 20), 0);
        field(&m, "v", EVENTHEADER_ENC_VALUE8, 0, 0);
        u8(&d, 3);
        check_fields(&m, &d, "{\"s\":{\"v\":3}}");
}
END_TEST

START_TEST(test_malformed_header) {
        struct bytes x = {}, b = {};

        header(&x, FLAGS_LE, 0, 0, 0, 0, 4);
        x.n = 7;
        check_malformed(&x, "shorter than the 8 bytes");

        /* The extension flag, then nothing. */
        x.n = 8;
        check_malformed(&x, "extension block's header runs past");
        u16(&x, 1);
        check_malformed(&x, "extension block's header runs past");

        /* A block longer than the record. */
        x.n = 8;
        u16(&x, 100);
        u16(&x, EVENTHEADER_EXT_METADATA);
        str(&x, "E");
        check_malformed(&x, "longer than the record");

        /* A chain flag on the last block. */
        x.n = 8;
        str(&b, "E");
        extension(&x, EVENTHEADER_EXT_METADATA | EVENTHEADER_EXT_CHAIN, &b);
        check_malformed(&x, "extension block's header runs past");

        /* An activity id of 20 bytes; two metadata blocks; kind 0. */
        x.n = 8;
        b.n = 20;
        extension(&x, EVENTHEADER_EXT_ACTIVITY_ID, &b);
        check_malformed(&x, "activity id extension");
        x.n = b.n = 0;
        header(&x, FLAGS_LE, 0, 0, 0, 0, 4);
        str(&b, "E");
        extension(&x, EVENTHEADER_EXT_METADATA | EVENTHEADER_EXT_CHAIN, &b);
        extension(&x, EVENTHEADER_EXT_METADATA, &b);
        check_malformed(&x, "two metadata");
        x.n = 8;
        extension(&x, 0, &b);
        check_malformed(&x, "kind 0");

        /* The event's name without its NUL. */
        x.n = 8;
        b.n = 1;
        extension(&x, EVENTHEADER_EXT_METADATA, &b);
        check_malformed(&x, "event's name");
}
END_TEST

START_TEST(test_malformed_metadata) {
        struct bytes m, d = {};

#define META(...)                                               \
        do {                                                    \
                m = (struct bytes) {};                          \
                str(&m, "E");                                   \
                put(&m, (const uint8_t[]) { __VA_ARGS__ },      \
                    sizeof((const uint8_t[]) { __VA_ARGS__ })); \
        } while (0)

        META('f');
        check_malformed_event(&m, &d, "field's name");
        META('f', 0);
        check_malformed_event(&m, &d, "encoding runs past");
        META('f', 0, EVENTHEADER_ENC_VALUE8 | EVENTHEADER_ENC_CHAIN);
        check_malformed_event(&m, &d, "format runs past");
        META('f', 0, EVENTHEADER_ENC_VALUE8 | EVENTHEADER_ENC_CHAIN, EVENTHEADER_FMT_CHAIN, 1);
        check_malformed_event(&m, &d, "tag runs past");
        META('f', 0, EVENTHEADER_ENC_VALUE8 | EVENTHEADER_ENC_CARRAY, 1);
        check_malformed_event(&m, &d, "constant array's length");
        META('f', 0, EVENTHEADER_ENC_VALUE8 | EVENTHEADER_ENC_CARRAY, 0, 0);
        check_malformed_event(&m, &d, "0 elements");
        META('f', 0, EVENTHEADER_ENC_VALUE8 | EVENTHEADER_ENC_CARRAY | EVENTHEADER_ENC_VARRAY, 1, 0);
        check_malformed_event(&m, &d, "both a constant and a variable");
        META('f', 0, 0);
        check_malformed_event(&m, &d, "encoding 0");
        META('f', 0, _EVENTHEADER_ENC_MAX);
        check_malformed_event(&m, &d, "unknown encoding");
        META('f', 0, EVENTHEADER_ENC_STRUCT);
        check_malformed_event(&m, &d, "struct of 0 fields");
#undef META
}
END_TEST

START_TEST(test_malformed_data) {
        struct bytes m = {}, d = {};

        str(&m, "E");
        field(&m, "v", EVENTHEADER_ENC_VALUE32, 0, 0);
        u16(&d, 1);
        check_malformed_event(&m, &d, "value runs past");

        m = d = (struct bytes) {};
        str(&m, "E");
        field(&m, "z", EVENTHEADER_ENC_ZSTRING_CHAR16, 0, 0);
        put(&d, "a\0b", 3);     /* no whole zero unit */
        check_malformed_event(&m, &d, "zero-terminated string");

        m = d = (struct bytes) {};
        str(&m, "E");
        field(&m, "l", EVENTHEADER_ENC_STRING_LENGTH16_CHAR32, 0, 0);
        u16(&d, 2);
        u32(&d, 'a');
        check_malformed_event(&m, &d, "counted string runs past");
        d.n = 1;
        check_malformed_event(&m, &d, "counted string's length");

        /* A variable array whose count lies: 65535 elements in 4 bytes. */
        m = d = (struct bytes) {};
        str(&m, "E");
        field(&m, "a", EVENTHEADER_ENC_VALUE16 | EVENTHEADER_ENC_VARRAY, 0, 0);
        u16(&d, 0xffff);
        u16(&d, 1);
        u16(&d, 2);
        check_malformed_event(&m, &d, "value runs past");
        d.n = 1;
        check_malformed_event(&m, &d, "variable array's count");

        /* An array of structs of many elements, each running short. */
        m = d = (struct bytes) {};
        str(&m, "E");
        field(&m, "s", F(EVENTHEADER_ENC_STRUCT | EVENTHEADER_ENC_CARRAY, 1), 0);
        u16(&m, 1000);
        field(&m, "v", EVENTHEADER_ENC_VALUE64, 0, 0);
        u64(&d, 1);
        check_malformed_event(&m, &d, "value runs past");
}
END_TEST

START_TEST(test_not_eventheader) {
        struct bytes x = {};
        struct strbuf sb = STRBUF_INIT;
        const char *reason = NULL;

        header(&x, 0x03, 0, 0, 0, 0, 4);
        ck_assert_int_eq(eventheader_format_text("plain_event", 11, x.b, x.n, &sb, &reason), -EINVAL);
        ck_assert_ptr_nonnull(reason);
        ck_assert_ptr_null(sb.buf);
}
END_TEST

static int count_items(const struct eventheader_item *item, void *userdata) {
        unsigned *n = userdata;

        (void) item;
        return ++*n >= 3 ? -ECANCELED : 0;
}

START_TEST(test_enumerate_stops) {
        struct bytes m = {}, d = {}, x = {};
        struct eventheader_event ev;
        const char *reason = NULL;
        unsigned n = 0;

        str(&m, "E");
        field(&m, "a", EVENTHEADER_ENC_VALUE8 | EVENTHEADER_ENC_CARRAY, 0, 0);
        u16(&m, 4);
        put(&d, "\1\2\3\4", 4);
        event(&x, &m, &d);
        ck_assert_int_eq(eventheader_decode("P_L4K1", 6, x.b, x.n, &ev, &reason), 0);
        ck_assert(ev.has_metadata);
        ck_assert_uint_eq(ev.name_len, 1);
        ck_assert_uint_eq(ev.data_len, 4);
        /* A visitor's error ends the walk and is returned as is. */
        ck_assert_int_eq(eventheader_enumerate(&ev, count_items, &n, &reason), -ECANCELED);
        ck_assert_uint_eq(n, 3);
}
END_TEST

static Suite *eventheader_suite(void) {
        Suite *s = suite_create("eventheader");
        TCase *tc = tcase_create("decode");

        tcase_add_test(tc, test_tracepoint_names);
        tcase_add_test(tc, test_header_and_activity);
        tcase_add_test(tc, test_integers);
        tcase_add_test(tc, test_big_endian);
        tcase_add_test(tc, test_other_formats);
        tcase_add_test(tc, test_strings);
        tcase_add_test(tc, test_bom);
        tcase_add_test(tc, test_counted_fixed_formats);
        tcase_add_test(tc, test_arrays_and_structs);
        tcase_add_test(tc, test_depth);
        tcase_add_test(tc, test_malformed_header);
        tcase_add_test(tc, test_malformed_metadata);
        tcase_add_test(tc, test_malformed_data);
        tcase_add_test(tc, test_not_eventheader);
        tcase_add_test(tc, test_enumerate_stops);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(eventheader_suite());
}
