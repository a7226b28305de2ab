/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Shell-style patterns of event names (RecordMatching, uebctl record):
 * fnmatch(3) without flags over names of [A-Za-z0-9_-]. A pattern is 1 to
 * EVENT_PATTERN_MAX bytes of name characters and the wildcards * ? [ ] ! ^,
 * every [ closed by a ]; no backslash (names need no escape). Pure.
 */

#include <stdbool.h>
#include <stddef.h>

#include "event-def.h"

#define EVENT_PATTERN_MAX EVENT_NAME_MAX
/* Patterns one recording may follow: each new event is matched against
 * every pattern of every recording. */
#define EVENT_PATTERNS_MAX 64u

/* 0 if @pattern is valid, else -EINVAL with a message in @error (which
 * names the offending byte's column). */
int event_pattern_validate(const char *pattern, struct event_error *error);

/* True if @pattern has a wildcard: without one it matches one name. */
bool event_pattern_is_glob(const char *pattern);

/* True if @name matches one of @patterns. */
bool event_patterns_match(const char *const *patterns, size_t n, const char *name);

/* A copy of @patterns (NULL for none); -ENOMEM as NULL with n > 0. */
char **event_patterns_copy(const char *const *patterns, size_t n);
/* Frees a copy; returns NULL. */
char **event_patterns_free(char **patterns, size_t n);
