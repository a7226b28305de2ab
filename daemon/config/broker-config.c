/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The configuration file is written by an administrator but read by a
 * privileged daemon: parse it as hostile input. Bounded file and line
 * sizes, a bounded number of drop-ins and reservations, decimal values in
 * fixed ranges, and every complaint names FILE:LINE with the offending text
 * made printable.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
#include "broker-config.h"
#include "cleanup.h"
#include "dropin-order.h"
#include "event-def.h"
#include "fd-util.h"
#include "log.h"
#include "macro.h"
#include "name-reservation.h"
#include "status-text.h"
#include "strbuf.h"

#define LIMITS_SECTION "Limits"
#define RESERVATIONS_SECTION "Reservations"
#define EXPECTED_SECTIONS "[" LIMITS_SECTION "] or [" RESERVATIONS_SECTION "]"
#define RESERVATION_VALUES "user:NAME, user:UID, group:NAME or group:GID"
/* Bytes of a user or group name in a reservation (LOGIN_NAME_MAX - 1). */
#define ACCOUNT_NAME_MAX 255
/* The largest uid or gid; (uid_t) -1 means "none". */
#define ACCOUNT_ID_MAX 4294967294u
/* Bound on the getpwnam_r()/getgrnam_r() buffer. */
#define ACCOUNT_BUFFER_MAX (1024u * 1024u)
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
        { "Clients", offsetof(struct broker_limits, clients), 1, BROKER_CONFIG_LIMIT_MAX },
        { "AuthorizationsPerUser", offsetof(struct broker_limits, authorizations_per_user), 1,
          BROKER_CONFIG_AUTHORIZATIONS_MAX },
        { "UnusedEventExpirySec", offsetof(struct broker_limits, unused_event_expiry_sec), BROKER_CONFIG_EXPIRY_MIN,
          BROKER_CONFIG_EXPIRY_MAX },
        { "OutgoingQueue", offsetof(struct broker_limits, outgoing_queue), BROKER_CONFIG_OUTGOING_QUEUE_MIN,
          BROKER_CONFIG_LIMIT_MAX },
        { "RingMemoryKiB", offsetof(struct broker_limits, ring_memory_kib), BROKER_CONFIG_RING_MEMORY_KIB_MIN,
          BROKER_CONFIG_RING_MEMORY_KIB_MAX },
        { "RingMemoryPerUserKiB", offsetof(struct broker_limits, ring_memory_per_user_kib),
          BROKER_CONFIG_RING_MEMORY_KIB_MIN, BROKER_CONFIG_RING_MEMORY_KIB_MAX },
        { "RecordStreams", offsetof(struct broker_limits, record_streams), 1, BROKER_CONFIG_RECORD_STREAMS_MAX },
        { "RecordStreamsPerUser", offsetof(struct broker_limits, record_streams_per_user), 1,
          BROKER_CONFIG_RECORD_STREAMS_MAX },
        { "NewEventsPerUserPerMinute", offsetof(struct broker_limits, new_events_per_user_per_minute), 1,
          BROKER_CONFIG_LIMIT_MAX },
};

_Static_assert(sizeof(limit_keys) / sizeof(limit_keys[0]) == BROKER_LIMITS_N, "BROKER_LIMITS_N counts limit_keys");

const char *broker_limit_origin(const struct broker_limit_origins *o, const char *key) {
        if (!o || !key)
                return NULL;
        for (size_t i = 0; i < BROKER_LIMITS_N; i++)
                if (strcmp(limit_keys[i].name, key) == 0)
                        return o->origin[i];
        return NULL;
}

const char *broker_limit_where_text(const struct broker_limit_origins *o, const char *config_path, const char *key,
                                    char buf[static BROKER_LIMIT_WHERE_MAX]) {
        const char *origin = broker_limit_origin(o, key);

        if (origin)
                snprintf(buf, BROKER_LIMIT_WHERE_MAX, " in %s", origin);
        else
                snprintf(buf, BROKER_LIMIT_WHERE_MAX, ", the default; set it in %s", config_path);
        return buf;
}

const char *const broker_config_default_dropin_dirs[] = {
        BROKER_CONFIG_DEFAULT_PATH ".d",
        "/run/uebroker/uebrokerd.conf.d",
        "/usr/local/lib/uebroker/uebrokerd.conf.d",
        "/usr/lib/uebroker/uebrokerd.conf.d",
        NULL,
};

void broker_limits_init_default(struct broker_limits *limits) {
        assert(limits);
        *limits = (struct broker_limits) {
                .events_per_client = 256,
                .clients_per_user = 64,
                .events = STATUS_INDEX_MAX,
                .command_length = EVENT_COMMAND_MAX,
                .events_per_user = 256,
                .clients = 8192,
                .authorizations_per_user = 8,
                .unused_event_expiry_sec = 6u * 60u * 60u,
                .outgoing_queue = 1024,
                .ring_memory_kib = 32u * 1024u,
                .record_streams = 64,
                .new_events_per_user_per_minute = 60,
        };
}

void broker_config_init_default(struct broker_config *c) {
        assert(c);
        *c = (struct broker_config) {};
        broker_limits_init_default(&c->limits);
}

void broker_config_done(struct broker_config *c) {
        if (!c)
                return;
        for (size_t i = 0; i < BROKER_LIMITS_N; i++)
                free(c->origins.origin[i]);
        name_reservations_done(&c->reservations);
}

struct parser {
        const char *path;       /* of the file being read */
        unsigned line;
        struct broker_config *config;
        char **warnings;                /* NULL-terminated */
        size_t n_warnings, allocated_warnings;
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

/* "FILE:LINE" ("FILE" when no line applies). */
static void append_location(struct strbuf *sb, const struct parser *p) {
        append_shown(sb, p->path, strlen(p->path));
        if (p->line > 0)
                strbuf_printf(sb, ":%u", p->line);
}

/* "FILE:LINE: TEXT" ("FILE: TEXT" when no line applies). */
static char *located(const struct parser *p, const char *text) {
        struct strbuf sb = STRBUF_INIT;

        append_location(&sb, p);
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
        char *w;

        w = located(p, text);
        free(text);
        if (!w)
                return -ENOMEM;
        if (ARRAY_RESERVE(p->warnings, p->allocated_warnings, p->n_warnings + 2) < 0) {
                free(w);
                return -ENOMEM;
        }
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

static int parse_limit(struct parser *p, const struct limit_key *k, const char *value, size_t n) {
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
        *(unsigned *) ((char *) &p->config->limits + k->offset) = (unsigned) v;
        /* The last file to set a key wins, and is the one refusals name. */
        strbuf_printf(&sb, "%s:%u", p->path, p->line);
        free(p->config->origins.origin[k - limit_keys]);
        p->config->origins.origin[k - limit_keys] = strbuf_steal(&sb);
        return p->config->origins.origin[k - limit_keys] ? 0 : -ENOMEM;
}

/* "KEY=VALUE" for a message. */
static void append_setting(struct strbuf *sb, const char *key, size_t key_n, const char *value, size_t value_n) {
        append_shown(sb, key, key_n);
        strbuf_append_c(sb, '=');
        append_shown(sb, value, value_n);
}

static bool is_account_name_char(char c) {
        return c > ' ' && c < 0x7f && c != ':' && c != '/';
}

/* Looks up the user or group @name in the user database. Returns 1 and
 * the id, 0 when there is no such account, or a negative errno. */
static int lookup_account(bool is_group, const char *name, uint32_t *ret_id) {
        _cleanup_free_ char *buf = NULL;
        size_t buf_size = 1024;
        struct passwd pw, *pw_result = NULL;
        struct group gr, *gr_result = NULL;
        int r;

        for (;;) {
                free(buf);
                buf = malloc(buf_size);
                if (!buf)
                        return -ENOMEM;
                if (is_group)
                        r = getgrnam_r(name, &gr, buf, buf_size, &gr_result);
                else
                        r = getpwnam_r(name, &pw, buf, buf_size, &pw_result);
                if (r != ERANGE)
                        break;
                if (buf_size >= ACCOUNT_BUFFER_MAX)
                        return -E2BIG;
                buf_size *= 2;
        }
        /* getpwnam_r(3) lists these for "not found" besides 0 and no result. */
        if (r == ENOENT || r == ESRCH || r == EBADF || r == EPERM)
                return 0;
        if (r != 0)
                return -r;
        if (is_group ? !gr_result : !pw_result)
                return 0;
        *ret_id = is_group ? (uint32_t) gr.gr_gid : (uint32_t) pw.pw_uid;
        return 1;
}

/* The value of a reservation: "user:" or "group:" and a name or a decimal
 * id. Fills in is_group, and resolved and id for a numeric id; a name is
 * returned in *ret_name (not NUL-terminated). */
static int parse_account(struct parser *p, const char *key, size_t key_n, const char *value, size_t value_n,
                         struct name_reservation *res, const char **ret_name, size_t *ret_name_n) {
        struct strbuf sb = STRBUF_INIT;
        const char *name;
        size_t name_n;
        bool numeric = true, valid;
        unsigned long long id = 0;

        if (value_n == 0) {
                append_shown(&sb, key, key_n);
                strbuf_append(&sb, "= needs a value (" RESERVATION_VALUES ")");
                return fail(p, -EINVAL, &sb);
        }
        if (value_n > 5 && memcmp(value, "user:", 5) == 0) {
                res->is_group = false;
                name = value + 5;
        } else if (value_n > 6 && memcmp(value, "group:", 6) == 0) {
                res->is_group = true;
                name = value + 6;
        } else {
                append_setting(&sb, key, key_n, value, value_n);
                strbuf_append(&sb, ": expected " RESERVATION_VALUES);
                return fail(p, -EINVAL, &sb);
        }
        name_n = value_n - (size_t) (name - value);

        for (size_t i = 0; i < name_n; i++) {
                if (name[i] < '0' || name[i] > '9') {
                        numeric = false;
                        break;
                }
                if (id <= ACCOUNT_ID_MAX)
                        id = id * 10 + (unsigned long long) (name[i] - '0');
        }
        if (numeric) {
                if (id > ACCOUNT_ID_MAX) {
                        append_setting(&sb, key, key_n, value, value_n);
                        strbuf_printf(&sb, ": %s out of range (0..%u)", res->is_group ? "gid" : "uid",
                                      ACCOUNT_ID_MAX);
                        return fail(p, -ERANGE, &sb);
                }
                res->resolved = true;
                res->id = (uint32_t) id;
                *ret_name = NULL;
                *ret_name_n = 0;
                return 0;
        }

        valid = name_n <= ACCOUNT_NAME_MAX;
        for (size_t i = 0; valid && i < name_n; i++)
                valid = is_account_name_char(name[i]);
        if (!valid) {
                append_setting(&sb, key, key_n, value, value_n);
                strbuf_printf(&sb, ": not a valid %s name (1..%u printable ASCII characters, no spaces, ':' or '/')",
                              res->is_group ? "group" : "user", ACCOUNT_NAME_MAX);
                return fail(p, -EINVAL, &sb);
        }
        *ret_name = name;
        *ret_name_n = name_n;
        return 0;
}

/* KEY=VALUE in [Reservations]: KEY is an event name or a prefix of one and
 * '*'; VALUE names the user or group it is reserved for. */
static int parse_reservation(struct parser *p, const char *key, size_t key_n, const char *value, size_t value_n) {
        _cleanup_(name_reservation_done) struct name_reservation res = {};
        _cleanup_free_ char *name_z = NULL;
        struct name_reservation *existing;
        struct strbuf sb = STRBUF_INIT;
        const char *name = NULL;
        size_t name_n = 0, pattern_n;
        int r;

        res.is_prefix = key[key_n - 1] == '*';
        pattern_n = key_n - (res.is_prefix ? 1 : 0);
        if (res.is_prefix && pattern_n == 0) {
                strbuf_append(&sb, "*= would reserve every event name; write a prefix before the '*'");
                return fail(p, -EINVAL, &sb);
        }
        if (!event_name_is_valid(key, pattern_n)) {
                append_shown(&sb, key, key_n);
                strbuf_printf(&sb, "= is not an event name or a prefix of one followed by '*' "
                              "(1..%d of A-Z a-z 0-9 _ -, starting with a letter or '_')", EVENT_NAME_MAX);
                return fail(p, -EINVAL, &sb);
        }
        r = parse_account(p, key, key_n, value, value_n, &res, &name, &name_n);
        if (r < 0)
                return r;

        res.pattern = strndup(key, pattern_n);
        res.who = strndup(value, value_n);
        append_location(&sb, p);
        res.origin = strbuf_steal(&sb);
        if (!res.pattern || !res.who || !res.origin)
                return -ENOMEM;

        existing = name_reservations_get(&p->config->reservations, res.pattern, res.is_prefix);
        if (!existing && p->config->reservations.n >= BROKER_CONFIG_RESERVATIONS_MAX) {
                strbuf_printf(&sb, "more than %u reservations", BROKER_CONFIG_RESERVATIONS_MAX);
                return fail(p, -E2BIG, &sb);
        }
        if (existing) {
                append_shown(&sb, key, key_n);
                strbuf_printf(&sb, "= set again, replacing %s from %s", existing->who, existing->origin);
                r = warn(p, &sb);
                if (r < 0)
                        return r;
        }

        /* A name is looked up now; one that does not resolve keeps the
         * reservation, allowing nobody but root. */
        if (name) {
                name_z = strndup(name, name_n);
                if (!name_z)
                        return -ENOMEM;
                r = lookup_account(res.is_group, name_z, &res.id);
                if (r == -ENOMEM)
                        return r;
                res.resolved = r > 0;
                if (r <= 0) {
                        append_setting(&sb, key, key_n, value, value_n);
                        if (r == 0)
                                strbuf_printf(&sb, ": no such %s", res.is_group ? "group" : "user");
                        else
                                strbuf_printf(&sb, ": cannot look up the %s: %s", res.is_group ? "group" : "user",
                                              strerror(-r));
                        strbuf_append(&sb, "; the reservation allows nobody but root");
                        r = warn(p, &sb);
                        if (r < 0)
                                return r;
                }
        }

        if (!existing)
                return name_reservations_add(&p->config->reservations, &res);
        name_reservation_done(existing);
        *existing = res;
        res = (struct name_reservation) {};
        return 0;
}

/* One line without its newline; @section tracks [Section] across lines:
 * NULL before the first, "" inside one we ignore. */
static int parse_line(struct parser *p, const char *line, size_t n, const char **section) {
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
                        strbuf_append(&sb, " (expected " EXPECTED_SECTIONS ")");
                        return fail(p, -EINVAL, &sb);
                }
                if (n - 2 == strlen(LIMITS_SECTION) && memcmp(line + 1, LIMITS_SECTION, n - 2) == 0) {
                        *section = LIMITS_SECTION;
                        return 0;
                }
                if (n - 2 == strlen(RESERVATIONS_SECTION) && memcmp(line + 1, RESERVATIONS_SECTION, n - 2) == 0) {
                        *section = RESERVATIONS_SECTION;
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
                strbuf_append(&sb, "= outside of a section (expected " EXPECTED_SECTIONS " before it)");
                return fail(p, -EINVAL, &sb);
        }
        if ((*section)[0] == '\0')
                return 0;       /* in an unknown section, warned about once */
        if (strcmp(*section, RESERVATIONS_SECTION) == 0)
                return parse_reservation(p, key, key_n, value, value_n);

        k = find_limit_key(key, key_n);
        if (!k) {
                strbuf_append(&sb, "unknown key ");
                append_shown(&sb, key, key_n);
                strbuf_append(&sb, " in [" LIMITS_SECTION "], ignoring it");
                return warn(p, &sb);
        }
        return parse_limit(p, k, value, value_n);
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
        *ret_text = TAKE_PTR(text);
        *ret_size = size;
        return 0;
}

/* One file, from outside any section. */
static int parse_file(struct parser *p) {
        _cleanup_free_ char *text = NULL;
        const char *section = NULL, *line, *end;
        size_t size = 0;
        int r;

        p->line = 0;
        r = read_config_file(p, &text, &size);
        if (r < 0)
                return r;

        end = text + size;
        for (line = text; line < end;) {
                const char *nl = memchr(line, '\n', (size_t) (end - line));
                size_t n = (size_t) ((nl ?: end) - line);

                p->line++;
                r = parse_line(p, line, n, &section);
                if (r < 0)
                        return r;
                line += n + (nl ? 1 : 0);
        }
        return 0;
}

/* The drop-in candidates of one directory (names malloc()ed). */
struct dropin_listing {
        struct dropin_entry *entries;
        size_t n, allocated;
};

static void dropin_listing_done(struct dropin_listing *l) {
        for (size_t i = 0; i < l->n; i++)
                free((char *) l->entries[i].name);
        free(l->entries);
        *l = (struct dropin_listing) {};
}

static void dropin_listings_free(struct dropin_listing *l, size_t n) {
        if (!l)
                return;
        for (size_t i = 0; i < n; i++)
                dropin_listing_done(&l[i]);
        free(l);
}

static void closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}

static bool is_dropin_name(const char *name) {
        size_t n = strlen(name);

        return name[0] != '.' && n > 5 && strcmp(name + n - 5, ".conf") == 0;
}

/* What a directory entry is as a drop-in (after following symlinks): a
 * file to read, a mask (a device such as /dev/null, or an empty file: what
 * systemd's null_or_empty() calls masked), or nothing (-1: a directory,
 * FIFO or socket). */
static int dropin_kind_of(const struct stat *st) {
        if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
                return DROPIN_MASK;
        if (!S_ISREG(st->st_mode))
                return -1;
        return st->st_size == 0 ? DROPIN_MASK : DROPIN_FILE;
}

/* The drop-ins and masks in the directory p->path; empty without the
 * directory. */
static int list_dropins(struct parser *p, struct dropin_listing *ret) {
        _cleanup_(dropin_listing_done) struct dropin_listing l = {};
        _cleanup_(closedirp) DIR *d = NULL;
        struct strbuf sb = STRBUF_INIT;
        int r;

        d = opendir(p->path);
        if (!d) {
                r = -errno;
                if (r == -ENOENT)
                        return 0;
                strbuf_printf(&sb, "cannot open the drop-in directory: %s", strerror(-r));
                return fail(p, r, &sb);
        }
        for (;;) {
                struct dirent *de;
                struct stat st;
                int kind;

                errno = 0;
                de = readdir(d);
                if (!de && errno != 0) {
                        r = -errno;
                        strbuf_printf(&sb, "cannot read the drop-in directory: %s", strerror(-r));
                        return fail(p, r, &sb);
                }
                if (!de)
                        break;
                if (!is_dropin_name(de->d_name))
                        continue;
                if (fstatat(dirfd(d), de->d_name, &st, 0) < 0) {
                        if (errno == ENOENT)
                                continue;       /* a dangling symlink */
                        r = -errno;
                        strbuf_append(&sb, "cannot stat drop-in ");
                        append_shown(&sb, de->d_name, strlen(de->d_name));
                        strbuf_printf(&sb, ": %s", strerror(-r));
                        return fail(p, r, &sb);
                }
                kind = dropin_kind_of(&st);
                if (kind < 0)
                        continue;
                if (l.n >= BROKER_CONFIG_DROPINS_MAX) {
                        strbuf_printf(&sb, "more than %u drop-in files", BROKER_CONFIG_DROPINS_MAX);
                        return fail(p, -E2BIG, &sb);
                }
                if (ARRAY_RESERVE(l.entries, l.allocated, l.n + 1) < 0)
                        return -ENOMEM;
                l.entries[l.n].name = strdup(de->d_name);
                if (!l.entries[l.n].name)
                        return -ENOMEM;
                l.entries[l.n++].kind = (enum dropin_kind) kind;
        }
        *ret = l;
        l = (struct dropin_listing) {};
        return 0;
}

/* The drop-in @name in the directory @dir. */
static int parse_dropin(struct parser *p, const char *dir, const char *name) {
        _cleanup_free_ char *file = NULL;
        int r;

        if (asprintf(&file, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        p->path = file;
        r = parse_file(p);
        p->path = NULL;
        p->line = 0;
        return r;
}

/* The drop-ins of @dirs (NULL-terminated, highest precedence first), in
 * systemd's order (dropin-order.h); sets *found if any was read. */
static int parse_dropins(struct parser *p, const char *const *dirs, bool *found) {
        struct dropin_listing *listings = NULL;
        _cleanup_free_ struct dropin_dir *views = NULL;
        _cleanup_free_ struct dropin_choice *chosen = NULL;
        struct strbuf sb = STRBUF_INIT;
        size_t n_dirs = 0, n_chosen = 0;
        int r = 0;

        while (dirs[n_dirs])
                n_dirs++;
        listings = calloc(n_dirs ?: 1, sizeof(*listings));
        views = calloc(n_dirs ?: 1, sizeof(*views));
        if (!listings || !views) {
                free(listings);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n_dirs && r >= 0; i++) {
                p->path = dirs[i];
                p->line = 0;
                r = list_dropins(p, &listings[i]);
                views[i] = (struct dropin_dir) { .entries = listings[i].entries, .n_entries = listings[i].n };
        }
        if (r >= 0)
                r = dropins_choose(views, n_dirs, &chosen, &n_chosen);
        if (r >= 0 && n_chosen > BROKER_CONFIG_DROPINS_MAX) {
                p->path = dirs[0];
                strbuf_printf(&sb, "more than %u drop-in files in all drop-in directories together",
                              BROKER_CONFIG_DROPINS_MAX);
                r = fail(p, -E2BIG, &sb);
        }
        for (size_t i = 0; r >= 0 && i < n_chosen; i++) {
                r = parse_dropin(p, dirs[chosen[i].dir], chosen[i].name);
                if (r == -ENOENT) {
                        r = 0;          /* removed since listed */
                        continue;
                }
                if (r >= 0)
                        *found = true;
        }
        dropin_listings_free(listings, n_dirs);
        return r;
}

/* @path, then the drop-ins of @dirs (NULL: @path.d); -ENOENT when none of
 * them exists. */
static int parse_all(struct parser *p, const char *path, const char *const *dirs) {
        _cleanup_free_ char *own_dir = NULL;
        const char *own_dirs[2] = {};
        bool found;
        int r;

        p->path = path;
        r = parse_file(p);
        if (r < 0 && r != -ENOENT)
                return r;
        found = r >= 0;

        if (!dirs) {
                if (asprintf(&own_dir, "%s.d", path) < 0)
                        return -ENOMEM;
                own_dirs[0] = own_dir;
                dirs = own_dirs;
        }
        r = parse_dropins(p, dirs, &found);
        if (r < 0)
                return r;
        p->path = path;
        p->line = 0;
        if (!found)
                return -ENOENT;

        if (p->n_suppressed > 0) {
                char *t;

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

int broker_config_parse(const char *path, const char *const *dropin_dirs, struct broker_config *c,
                        char ***ret_warnings, char **ret_message) {
        struct broker_config parsed;
        struct parser p = { .config = &parsed };
        int r;

        if (!path || !c)
                return -EINVAL;
        broker_config_init_default(&parsed);
        r = parse_all(&p, path, dropin_dirs);
        if (r >= 0) {
                broker_config_done(c);
                *c = parsed;
        } else
                broker_config_done(&parsed);

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

int broker_config_load(const char *path, const char *const *dropin_dirs, struct broker_config *c, char **ret_message) {
        char **warnings = NULL;
        int r;

        r = broker_config_parse(path, dropin_dirs, c, &warnings, ret_message);
        if (warnings)
                for (char **w = warnings; *w; w++)
                        log_warning("%s", *w);
        broker_config_warnings_free(warnings);
        return r;
}
