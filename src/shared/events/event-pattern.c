/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "event-pattern.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_name_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static int fail(struct event_error *error, const char *format, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct event_error *error, const char *format, ...) {
        va_list ap;

        if (error) {
                error->code = -EINVAL;
                va_start(ap, format);
                (void) vsnprintf(error->message, sizeof(error->message), format, ap);
                va_end(ap);
        }
        return -EINVAL;
}

int event_pattern_validate(const char *pattern, struct event_error *error) {
        size_t len = strlen(pattern);
        bool in_bracket = false;

        if (len == 0)
                return fail(error, "an empty pattern matches no event; give a name or a pattern such as 'app_*'");
        if (len > EVENT_PATTERN_MAX)
                return fail(error, "pattern is %zu bytes, longer than %u", len, (unsigned) EVENT_PATTERN_MAX);
        for (size_t i = 0; i < len; i++) {
                char c = pattern[i];

                if (is_name_char(c) || c == '*' || c == '?')
                        continue;
                if (c == '[' && !in_bracket) {
                        in_bracket = true;
                        continue;
                }
                if (c == ']' && in_bracket) {
                        in_bracket = false;
                        continue;
                }
                if ((c == '!' || c == '^') && in_bracket && pattern[i - 1] == '[')
                        continue;
                if (c >= 0x21 && c < 0x7f)
                        return fail(error, "pattern column %zu: '%c' is neither a name character ([A-Za-z0-9_-]) "
                                           "nor a wildcard (* ? [...] [!...])", i + 1, c);
                return fail(error, "pattern column %zu: byte 0x%02x is neither a name character ([A-Za-z0-9_-]) "
                                   "nor a wildcard (* ? [...] [!...])", i + 1, (unsigned char) c);
        }
        if (in_bracket)
                return fail(error, "pattern has a '[' without its ']'");
        return 0;
}

bool event_pattern_is_glob(const char *pattern) {
        return strpbrk(pattern, "*?[") != NULL;
}

bool event_patterns_match(const char *const *patterns, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (fnmatch(patterns[i], name, 0) == 0)
                        return true;
        return false;
}

char **event_patterns_free(char **patterns, size_t n) {
        for (size_t i = 0; patterns && i < n; i++)
                free(patterns[i]);
        free(patterns);
        return NULL;
}

char **event_patterns_copy(const char *const *patterns, size_t n) {
        char **copy;

        if (n == 0)
                return NULL;
        copy = calloc(n, sizeof(*copy));
        if (!copy)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                copy[i] = strdup(patterns[i]);
                if (!copy[i])
                        return event_patterns_free(copy, i);
        }
        return copy;
}
