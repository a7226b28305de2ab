/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Assertions shared by the event-definition unit tests. They are macros so a
 * failure reports the line of the test, not of this header. */

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "event-def.h"

#define _cleanup_event_def_ __attribute__((cleanup(event_def_freep)))

/* Parses @command with @flags; fails the test with the library's message if
 * it is rejected. */
#define parse_ok(command, flags)                                                                              \
        ({                                                                                                    \
                struct event_def *_ev = NULL;                                                                 \
                struct event_error _error;                                                                    \
                int _r = event_def_parse((command), (flags), &_ev, &_error);                                  \
                ck_assert_msg(_r == 0, "'%s' was rejected (%d): %s", (command), _r, _error.message);          \
                ck_assert_ptr_nonnull(_ev);                                                                   \
                _ev;                                                                                          \
        })

/* Checks that @len bytes at @command are rejected with -EINVAL, with and
 * without an error struct, that *ret stays untouched, and that the message
 * contains every string of the NULL-terminated @needles. */
static inline void check_rejected(const char *command, size_t len, unsigned flags, const char *const *needles,
                                  int line) {
        struct event_def *sentinel = (struct event_def *) &sentinel;
        struct event_def *ev = sentinel;
        struct event_error error;
        int r;

        memset(&error, 0x55, sizeof(error));
        r = event_def_parse_n(command, len, flags, &ev, &error);
        ck_assert_msg(r == -EINVAL, "line %d: '%.*s' returned %d, expected -EINVAL", line, (int) len, command, r);
        ck_assert_msg(error.code == -EINVAL, "line %d: error.code is %d", line, error.code);
        ck_assert_msg(ev == sentinel, "line %d: *ret was written on failure", line);
        ck_assert_msg(strnlen(error.message, sizeof(error.message)) < sizeof(error.message),
                      "line %d: message not terminated", line);
        ck_assert_msg(error.message[0] != '\0', "line %d: empty message", line);
        for (const char *const *n = needles; *n; n++)
                ck_assert_msg(strstr(error.message, *n), "line %d: message for '%.*s' is \"%s\", lacks \"%s\"", line,
                              (int) len, command, error.message, *n);

        r = event_def_parse_n(command, len, flags, &ev, NULL);
        ck_assert_msg(r == -EINVAL, "line %d: without error struct: %d", line, r);
        ck_assert_msg(ev == sentinel, "line %d: *ret was written on failure", line);
}

#define assert_rejected_n(command, len, flags, ...)                                                           \
        check_rejected((command), (len), (flags), (const char *const[]) { __VA_ARGS__, NULL }, __LINE__)
#define assert_rejected(command, flags, ...) assert_rejected_n((command), strlen(command), (flags), __VA_ARGS__)
