/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The configuration file is written by an administrator but read by a
 * privileged daemon: parse it as hostile input. Bounded file and line
 * sizes, decimal values in fixed ranges, and every complaint names
 * FILE:LINE with the offending text made printable.
 */

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "config.h"
#include "event-def.h"
#include "fd-util.h"
#include "log.h"
#include "status-text.h"
#include "strbuf.h"

#define LIMITS_SECTION "Limits"
/* Shown text of a key or value in a message, before "...". */
#define SHOWN_TEXT_MAX 64

struct limit_key {
        const char *name;
        size_t offset;
        unsigned min, max;
};

static const struct limit_key limit_keys[] = {
        { "EventsPerClient", offsetof(struct broker_limits, events_per_client), 1, BROKER_CONFIG_LIMIT_MAX },
        { "ClientsPerUser", offsetof(struct broker_limits, clients_per_user), 1, BROKER_CONFIG_LIMIT_MAX },
        { "Events", offsetof(struct broker_limits, events), 1, STATUS_INDEX_MAX },
        { "CommandLength", offsetof(struct broker_limits, command_length), 1, EVENT_COMMAND_MAX },
        { "EventsPerUser", offsetof(struct broker_limits, events_per_user), 1, STATUS_INDEX_MAX },
};

void broker_limits_init_default(struct broker_limits *limits) {
        *limits = (struct broker_limits) {
                .events_per_client = 256,
                .clients_per_user = 64,
                .events = STATUS_INDEX_MAX,
                .command_length = EVENT_COMMAND_MAX,
                .events_per_user = 1024,
        };
}

struct parser {
        const char *path;
        unsigned line;
        char **warnings;
        size_t n_warnings;
        size_t n_suppressed;
        char *error;
};

/* @s[0..n) for a message: printable ASCII, at most SHOWN_TEXT_MAX bytes. */
static void append_shown(struct strbuf *sb, const char *s, size_t n) {
        for (size_t i = 0; i < n && i < SHOWN_TEXT_MAX; i++)
                strbuf_append_c(sb, s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?');
        if (n > SHOWN_TEXT_MAX)
                strbuf_append(sb, "...");
}

/* "FILE:LINE: TEXT" ("FILE: TEXT" when no line applies). */
static char *located(const struct parser *p, const char *text) {
        struct strbuf sb = STRBUF_INIT;

        append_shown(&sb, p->path, strlen(p->path));
        if (p->line > 0)
                strbuf_printf(&sb, ":%u", p->line);
        strbuf_printf(&sb, ": %s", text);
        return strbuf_steal(&sb);
}

static int fail(struct parser *p, int error, struct strbuf *text) {
        char *t = strbuf_steal(text);

        if (!t)
                return -ENOMEM;
        free(p->error);
        p->error = located(p, t);
        free(t);
        return p->error ? error : -ENOMEM;
}

static int push_warning(struct parser *p, char *text) {
        char *w, **grown;

        w = located(p, text);
        free(text);
        if (!w)
                return -ENOMEM;
        grown = realloc(p->warnings, (p->n_warnings + 2) * sizeof(char *));
        if (!grown) {
                free(w);
                return -ENOMEM;
        }
        p->warnings = grown;
        p->warnings[p->n_warnings++] = w;
        p->warnings[p->n_warnings] = NULL;
        return 0;
}

static int warn(struct parser *p, struct strbuf *text) {
        char *t = strbuf_steal(text);

        if (!t)
                return -ENOMEM;
        if (p->n_warnings >= BROKER_CONFIG_WARNINGS_MAX) {
                p->n_suppressed++;
                free(t);
                return 0;
        }
        return push_warning(p, t);
}

static bool is_blank(char c) {
        return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static void trim(const char **s, size_t *n) {
        while (*n > 0 && is_blank(**s)) {
                (*s)++;
                (*n)--;
        }
        while (*n > 0 && is_blank((*s)[*n - 1]))
                (*n)--;
}

static const struct limit_key *find_limit_key(const char *key, size_t n) {
        for (size_t i = 0; i < sizeof(limit_keys) / sizeof(limit_keys[0]); i++)
                if (strlen(limit_keys[i].name) == n && memcmp(limit_keys[i].name, key, n) == 0)
                        return &limit_keys[i];
        return NULL;
}

static int parse_limit(struct parser *p, const struct limit_key *k, const char *value, size_t n,
                       struct broker_limits *limits) {
        struct strbuf sb = STRBUF_INIT;
        unsigned long v = 0;
        bool too_big = false;

        if (n == 0) {
                strbuf_printf(&sb, "%s= needs a value (%u..%u)", k->name, k->min, k->max);
                return fail(p, -EINVAL, &sb);
        }
        for (size_t i = 0; i < n; i++) {
                if (value[i] < '0' || value[i] > '9') {
                        strbuf_printf(&sb, "%s=", k->name);
                        append_shown(&sb, value, n);
                        strbuf_printf(&sb, " is not a decimal number (%u..%u)", k->min, k->max);
                        return fail(p, -EINVAL, &sb);
                }
                if (!too_big)
                        v = v * 10 + (unsigned long) (value[i] - '0');
                if (v > k->max)
                        too_big = true; /* keep checking the digits, stop growing */
        }
        if (too_big || v < k->min) {
                strbuf_printf(&sb, "%s=", k->name);
                append_shown(&sb, value, n);
                strbuf_printf(&sb, " is out of range (%u..%u)", k->min, k->max);
                return fail(p, -ERANGE, &sb);
        }
        *(unsigned *) ((char *) limits + k->offset) = (unsigned) v;
        return 0;
}

/* One line without its newline; @section tracks [Section] across lines:
 * NULL before the first, "" inside one we ignore. */
static int parse_line(struct parser *p, const char *line, size_t n, const char **section,
                      struct broker_limits *limits) {
        struct strbuf sb = STRBUF_INIT;
        const char *eq, *key, *value;
        const struct limit_key *k;
        size_t key_n, value_n;

        if (n > BROKER_CONFIG_LINE_MAX) {
                strbuf_printf(&sb, "line is longer than %u bytes", BROKER_CONFIG_LINE_MAX);
                return fail(p, -EINVAL, &sb);
        }
        if (memchr(line, '\0', n)) {
                strbuf_append(&sb, "line contains a NUL byte");
                return fail(p, -EINVAL, &sb);
        }
        trim(&line, &n);
        if (n == 0 || line[0] == '#' || line[0] == ';')
                return 0;

        if (line[0] == '[') {
                if (line[n - 1] != ']' || n < 3) {
                        strbuf_append(&sb, "malformed section header ");
                        append_shown(&sb, line, n);
                        strbuf_append(&sb, " (expected [" LIMITS_SECTION "])");
                        return fail(p, -EINVAL, &sb);
                }
                if (n - 2 == strlen(LIMITS_SECTION) && memcmp(line + 1, LIMITS_SECTION, n - 2) == 0) {
                        *section = LIMITS_SECTION;
                        return 0;
                }
                *section = "";
                strbuf_append(&sb, "unknown section ");
                append_shown(&sb, line, n);
                strbuf_append(&sb, ", ignoring it");
                return warn(p, &sb);
        }

        eq = memchr(line, '=', n);
        if (!eq) {
                strbuf_append(&sb, "expected KEY=VALUE, [Section] or a comment, not ");
                append_shown(&sb, line, n);
                return fail(p, -EINVAL, &sb);
        }
        key = line;
        key_n = (size_t) (eq - line);
        value = eq + 1;
        value_n = n - key_n - 1;
        trim(&key, &key_n);
        trim(&value, &value_n);
        if (key_n == 0) {
                strbuf_append(&sb, "missing key before '='");
                return fail(p, -EINVAL, &sb);
        }
        if (!*section) {
                append_shown(&sb, key, key_n);
                strbuf_append(&sb, "= outside of a section (expected [" LIMITS_SECTION "] before it)");
                return fail(p, -EINVAL, &sb);
        }
        if ((*section)[0] == '\0')
                return 0;       /* in an unknown section, warned about once */

        k = find_limit_key(key, key_n);
        if (!k) {
                strbuf_append(&sb, "unknown key ");
                append_shown(&sb, key, key_n);
                strbuf_append(&sb, " in [" LIMITS_SECTION "], ignoring it");
                return warn(p, &sb);
        }
        return parse_limit(p, k, value, value_n, limits);
}

/* The whole file, bounded; a FIFO or device is refused rather than read. */
static int read_config_file(struct parser *p, char **ret_text, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *text = NULL;
        struct strbuf sb = STRBUF_INIT;
        struct stat st;
        size_t size = 0;
        int r;

        fd = open(p->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                r = -errno;
                if (r == -ENOENT)
                        return r;
                strbuf_printf(&sb, "cannot open: %s", strerror(-r));
                return fail(p, r, &sb);
        }
        if (fstat(fd, &st) < 0) {
                r = -errno;
                strbuf_printf(&sb, "cannot stat: %s", strerror(-r));
                return fail(p, r, &sb);
        }
        if (!S_ISREG(st.st_mode)) {
                strbuf_append(&sb, "not a regular file");
                return fail(p, -EINVAL, &sb);
        }
        text = malloc(BROKER_CONFIG_FILE_MAX + 1);
        if (!text)
                return -ENOMEM;
        for (;;) {
                ssize_t n = read(fd, text + size, BROKER_CONFIG_FILE_MAX + 1 - size);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        r = -errno;
                        strbuf_printf(&sb, "cannot read: %s", strerror(-r));
                        return fail(p, r, &sb);
                }
                if (n == 0)
                        break;
                size += (size_t) n;
                if (size > BROKER_CONFIG_FILE_MAX) {
                        strbuf_printf(&sb, "file is larger than %u bytes", BROKER_CONFIG_FILE_MAX);
                        return fail(p, -EFBIG, &sb);
                }
        }
        *ret_text = text;
        text = NULL;
        *ret_size = size;
        return 0;
}

static int parse_file(struct parser *p, struct broker_limits *limits) {
        _cleanup_free_ char *text = NULL;
        const char *section = NULL, *line, *end;
        size_t size = 0;
        int r;

        r = read_config_file(p, &text, &size);
        if (r < 0)
                return r;

        end = text + size;
        for (line = text; line < end;) {
                const char *nl = memchr(line, '\n', (size_t) (end - line));
                size_t n = (size_t) ((nl ?: end) - line);

                p->line++;
                r = parse_line(p, line, n, &section, limits);
                if (r < 0)
                        return r;
                line += n + (nl ? 1 : 0);
        }

        if (p->n_suppressed > 0) {
                char *t;

                p->line = 0;
                if (asprintf(&t, "%zu more warnings not shown", p->n_suppressed) < 0)
                        return -ENOMEM;
                return push_warning(p, t);
        }
        return 0;
}

char **broker_config_warnings_free(char **warnings) {
        if (warnings)
                for (char **w = warnings; *w; w++)
                        free(*w);
        free(warnings);
        return NULL;
}

int broker_config_parse(const char *path, struct broker_limits *limits, char ***ret_warnings, char **ret_message) {
        struct parser p = { .path = path };
        struct broker_limits parsed;
        int r;

        if (!path || !limits)
                return -EINVAL;
        broker_limits_init_default(&parsed);
        r = parse_file(&p, &parsed);
        if (r >= 0)
                *limits = parsed;

        if (ret_message)
                *ret_message = p.error;
        else
                free(p.error);
        if (ret_warnings)
                *ret_warnings = p.warnings;
        else
                broker_config_warnings_free(p.warnings);
        return r;
}

int broker_config_load(const char *path, struct broker_limits *limits, char **ret_message) {
        char **warnings = NULL;
        int r;

        r = broker_config_parse(path, limits, &warnings, ret_message);
        if (warnings)
                for (char **w = warnings; *w; w++)
                        log_warning("%s", *w);
        broker_config_warnings_free(warnings);
        return r;
}
