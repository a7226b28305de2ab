/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * uebctl record's EventHeader filters, as EventHeader sessions filter:
 * --provider=NAME (repeatable), --level=N (levels 1..N, 1 critical, 5
 * verbose), --keyword=MASK (any bit of it), --keyword-all=MASK (every bit
 * of it). An EventHeader tracepoint is named PROVIDER_L<level>K<keyword
 * hex>[options] (LinuxTracepoints' eventheader.h).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UEBCTL_PROVIDERS_MAX 16u

struct uebctl_filter {
        const char *providers[UEBCTL_PROVIDERS_MAX];
        size_t n_providers;
        unsigned level;                 /* 0: any */
        uint64_t keyword_any;           /* with has_keyword_any */
        uint64_t keyword_all;           /* with has_keyword_all */
        bool has_keyword_any;
        bool has_keyword_all;
};

/** Whether any filter was given. */
bool uebctl_filter_active(const struct uebctl_filter *f);

/**
 * uebctl_filter_patterns() - the RecordMatching patterns the providers and
 * level make, so that the broker enables only those events (and those
 * registered later): PROVIDER_L1K* .. PROVIDER_LNK* for --level=N, else
 * PROVIDER_L*, also when the levels would pass @max (the level is then
 * left to uebctl_filter_match()). Appended to @patterns (*@n of them, at
 * most @max).
 *
 * Return: 0, -E2BIG when even one pattern per provider passes @max,
 * -ENOMEM. The strings are malloc()ed; the caller frees them.
 */
int uebctl_filter_patterns(const struct uebctl_filter *f, char **patterns, size_t *n, size_t max);

/**
 * uebctl_filter_match() - whether a record of the tracepoint @name (@len
 * bytes) passes every filter given: an event not of the EventHeader form
 * passes only when no filter is given.
 */
bool uebctl_filter_match(const struct uebctl_filter *f, const char *name, size_t len);

/**
 * uebctl_filter_parse_keyword() - a keyword mask as given: 0x hex or
 * decimal, non-zero. Return: 0 or -EINVAL.
 */
int uebctl_filter_parse_keyword(const char *s, uint64_t *ret);

/**
 * uebctl_filter_valid_provider() - whether @s can be an EventHeader
 * provider name: 1 to 200 of [A-Za-z0-9_] (no pattern characters).
 */
bool uebctl_filter_valid_provider(const char *s);
