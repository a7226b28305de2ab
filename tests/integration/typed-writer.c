/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * typed-writer: the writing half of test-typed-write.sh. Registers two
 * events, one declared with UEB_EVENT() (every kind of field the macros
 * know) and one with a struct written through ueb_write_values(), says
 * "registered" on stdout, waits (bounded) until a recorder enables both,
 * tries values the definitions refuse (none may reach the recorder), then
 * writes three good records. Exits 0 when every call returned what it
 * should; each failure is printed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "uebroker-event.h"

UEB_EVENT(typed_all,
          UEB_FIELD(u8, u8v),
          UEB_FIELD(s16, s16v),
          UEB_FIELD(u32, u32v),
          UEB_FIELD(s64, s64v),
          UEB_CHAR_ARRAY(tag, 8),
          UEB_STRING(msg),
          UEB_REL_STRING(rel),
          UEB_ARRAY(u16, words))

#define STRUCT_COMMAND "typed_struct struct pair p 8; __data_loc char[] note"

static int failures;

#define EXPECT(what, got, want)                                                                               \
        do {                                                                                                  \
                int got_ = (got), want_ = (want);                                                             \
                if (got_ != want_) {                                                                          \
                        printf("FAIL: %s: %d (%s), expected %d\n", what, got_, strerror(-got_), want_);        \
                        failures++;                                                                           \
                }                                                                                             \
        } while (0)

int main(void) {
        const uint16_t words[] = { 0x0102, 0xa0b0 };
        const struct { uint32_t a, b; } pair = { 7, 0xffffffff };
        struct ueb_client *c = NULL;
        struct ueb_event *all = NULL, *st = NULL;
        struct ueb_value bad[8];
        struct ueb_stats stats;
        char why[256];

        if (ueb_open(&c) != 1 || ueb_register_typed_all(c, &all) != 1 || ueb_register(c, STRUCT_COMMAND, &st) != 1) {
                printf("FAIL: no broker: %s\n", c ? ueb_last_error(c) : "no client");
                return 1;
        }
        printf("registered\n");
        fflush(stdout);

        for (int i = 0; i < 400 && !(ueb_enabled(all) && ueb_enabled(st)); i++)
                nanosleep(&(struct timespec) { 0, 25 * 1000 * 1000 }, NULL);
        if (!ueb_enabled(all) || !ueb_enabled(st)) {
                printf("FAIL: not enabled within 10 s\n");
                return 1;
        }

        /* Refused before anything is written. */
        bad[0] = ueb_value_u8(1);
        EXPECT("one value for eight fields", ueb_write_values(all, bad, 1), -EINVAL);
        EXPECT("u32 for struct", ueb_write_values(st, (struct ueb_value[]) { ueb_value_u32(1), ueb_value_string("x") }, 2),
               -EINVAL);
        EXPECT("7 bytes for struct pair 8",
               ueb_write_values(st, (struct ueb_value[]) { ueb_value_bytes(&pair, 7), ueb_value_string("x") }, 2),
               -EINVAL);
        ueb_check_values(st, (struct ueb_value[]) { ueb_value_bytes(&pair, 7), ueb_value_string("x") }, 2, why,
                         sizeof(why));
        if (!strstr(why, "field 1 (p)")) {
                printf("FAIL: explanation '%s'\n", why);
                failures++;
        }
        EXPECT("9 bytes for char[8]", ueb_write_typed_all(all, 1, 2, 3, 4, "123456789", "m", "r", words, 2), -EMSGSIZE);
        ueb_event_stats(all, &stats);
        EXPECT("refusals counted as failed", (int) stats.failed, 2);
        EXPECT("nothing written yet", (int) stats.written, 0);

        /* The good ones. */
        EXPECT("typed_all 1",
               ueb_write_typed_all(all, 255, -2, 4000000000u, INT64_MIN, "tag", "hello, typed world", "relative",
                                   words, 2),
               0);
        EXPECT("typed_all 2", ueb_write_typed_all(all, 0, 0, 0, 0, "12345678", NULL, "", NULL, 0), 0);
        EXPECT("typed_struct", ueb_write_values(st, (struct ueb_value[]) { ueb_value_bytes(&pair, sizeof(pair)),
                                                                          ueb_value_string("pair") }, 2),
               0);

        ueb_close(c);
        printf("%d failure(s)\n", failures);
        return failures == 0 ? 0 : 1;
}
