/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parser for registration commands:
 *
 *     name[:FLAG1[,FLAG2...]] [field1[;field2...]]
 *     field := type name [size]
 *
 * It accepts what the kernel accepts, with the stricter name rules of
 * uebroker-event-command(7), and tokenizes fields exactly like the kernel (single spaces
 * separate words), so "u32  a" and "u32 a " are refused here as there.
 */
#include "event-def.h"
#include "log.h"

_Static_assert(LOG_EVENT_NAME_MAX == EVENT_NAME_MAX, "the journal's UEB_EVENT= field holds any event name");

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct parser {
        const char *command;    /* start of the whole command, for columns */
        unsigned parse_flags;
        struct event_error *error;
        struct event_def *ev;
        size_t cap_fields;
};

static int parse_fail(struct parser *p, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int parse_fail(struct parser *p, int code, const char *fmt, ...) {
        va_list ap;

        if (p->error) {
                p->error->code = code;
                va_start(ap, fmt);
                vsnprintf(p->error->message, sizeof(p->error->message), fmt, ap);
                va_end(ap);
        }
        return code;
}

static size_t column(const struct parser *p, const char *at) {
        return (size_t) (at - p->command) + 1;
}

/* A token quoted for a message: shortened, non-printable bytes escaped. */
static const char *quote(char buf[static 48], const char *s, size_t n) {
        size_t o = 0;

        for (size_t i = 0; i < n && o < 40; i++) {
                unsigned char c = (unsigned char) s[i];

                if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\')
                        buf[o++] = (char) c;
                else
                        o += (size_t) snprintf(buf + o, 48 - o, "\\x%02x", c);
        }
        if (o >= 40 && n > 0) {
                memcpy(buf + o, "...", 3);
                o += 3;
        }
        buf[o] = '\0';
        return buf;
}

static bool is_ident_start(char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool is_ident_char(char c) {
        return is_ident_start(c) || (c >= '0' && c <= '9');
}

static bool is_c_identifier(const char *s, size_t n) {
        if (n == 0 || !is_ident_start(s[0]))
                return false;
        for (size_t i = 1; i < n; i++)
                if (!is_ident_char(s[i]))
                        return false;
        return true;
}

struct scalar_type {
        const char *name;
        uint32_t size;
};

static const struct scalar_type scalar_types[] = {
        { "s64", 8 },   { "u64", 8 },
        { "s32", 4 },   { "u32", 4 },   { "int", 4 },   { "unsigned int", 4 },
        { "s16", 2 },   { "u16", 2 },   { "short", 2 }, { "unsigned short", 2 },
        { "s8", 1 },    { "u8", 1 },    { "char", 1 },  { "unsigned char", 1 },
};

static const struct scalar_type *find_scalar(const char *s, size_t n) {
        for (size_t i = 0; i < sizeof(scalar_types) / sizeof(scalar_types[0]); i++)
                if (strlen(scalar_types[i].name) == n && memcmp(scalar_types[i].name, s, n) == 0)
                        return &scalar_types[i];
        return NULL;
}

static bool has_prefix(const char *s, size_t n, const char *prefix, size_t *ret_len) {
        size_t l = strlen(prefix);

        if (n < l || memcmp(s, prefix, l) != 0)
                return false;
        *ret_len = l;
        return true;
}

/* Parses the text of N in char[N]: decimal, 0x hex or 0 octal, 1..1024. */
static int parse_array_size(struct parser *p, unsigned field_no, const char *at, const char *s, size_t n,
                            uint32_t *ret) {
        char q[48];
        unsigned base = 10;
        size_t i = 0;
        uint32_t v = 0;

        if (n == 0)
                return parse_fail(p, -EINVAL, "field %u (column %zu): array size is empty in '%s'", field_no,
                                  column(p, at), quote(q, at, (size_t) (s - at) + 1));
        if (n > EVENT_ARRAY_SIZE_TEXT_MAX)
                return parse_fail(p, -EINVAL,
                                  "field %u (column %zu): array size '%s' is longer than %d characters",
                                  field_no, column(p, s), quote(q, s, n), EVENT_ARRAY_SIZE_TEXT_MAX);
        if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
                base = 16;
                i = 2;
        } else if (n > 1 && s[0] == '0') {
                base = 8;
                i = 1;
        }
        for (; i < n; i++) {
                unsigned d;

                if (s[i] >= '0' && s[i] <= '9')
                        d = (unsigned) (s[i] - '0');
                else if (base == 16 && s[i] >= 'a' && s[i] <= 'f')
                        d = (unsigned) (s[i] - 'a' + 10);
                else if (base == 16 && s[i] >= 'A' && s[i] <= 'F')
                        d = (unsigned) (s[i] - 'A' + 10);
                else
                        d = 16;
                if (d >= base)
                        return parse_fail(p, -EINVAL,
                                          "field %u (column %zu): array size '%s' is not %s number", field_no,
                                          column(p, s), quote(q, s, n),
                                          base == 16 ? "a hexadecimal" : base == 8 ? "an octal" : "a decimal");
                v = v * base + d; /* at most 7 digits: no overflow */
        }
        if (v == 0)
                return parse_fail(p, -EINVAL, "field %u (column %zu): array size must be at least 1", field_no,
                                  column(p, s));
        if (v > EVENT_ARRAY_SIZE_MAX)
                return parse_fail(p, -EINVAL, "field %u (column %zu): array size %u exceeds %d", field_no,
                                  column(p, s), v, EVENT_ARRAY_SIZE_MAX);
        *ret = v;
        return 0;
}

static int parse_struct_size(struct parser *p, unsigned field_no, const char *s, size_t n, uint32_t *ret) {
        char q[48];
        uint64_t v = 0;

        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return parse_fail(p, -EINVAL,
                                          "field %u (column %zu): struct size '%s' is not a decimal number",
                                          field_no, column(p, s), quote(q, s, n));
                v = v * 10 + (uint64_t) (s[i] - '0');
                if (v > EVENT_STRUCT_SIZE_MAX)
                        return parse_fail(p, -EINVAL, "field %u (column %zu): struct size '%s' exceeds %d",
                                          field_no, column(p, s), quote(q, s, n), EVENT_STRUCT_SIZE_MAX);
        }
        if (v == 0)
                return parse_fail(p, -EINVAL, "field %u (column %zu): struct size must be at least 1", field_no,
                                  column(p, s));
        *ret = (uint32_t) v;
        return 0;
}

/* Classifies a type string and computes its size. */
static int parse_type(struct parser *p, unsigned field_no, const char *t, size_t n, struct event_field *f) {
        const struct scalar_type *st;
        size_t plen;
        char q[48];

        f->is_signed = t[0] != 'u';

        st = find_scalar(t, n);
        if (st) {
                f->kind = EVENT_FIELD_SCALAR;
                f->size = st->size;
                f->is_char = strstr(st->name, "char") != NULL;
                return 0;
        }

        if (has_prefix(t, n, "__data_loc ", &plen) || has_prefix(t, n, "__rel_loc ", &plen)) {
                const char *inner = t + plen;
                size_t ilen = n - plen;

                f->kind = t[2] == 'd' ? EVENT_FIELD_DATA_LOC : EVENT_FIELD_REL_LOC;
                f->size = 4;
                if (ilen >= 2 && memcmp(inner + ilen - 2, "[]", 2) == 0)
                        ilen -= 2;
                st = find_scalar(inner, ilen);
                /* C's "unsigned": the kernel checks no element type after
                 * the prefix, and LinuxTracepoints' tests write
                 * '__rel_loc unsigned[]' (plain fields keep the kernel's
                 * list, which lacks it). */
                if (!st && ilen == strlen("unsigned") && memcmp(inner, "unsigned", ilen) == 0)
                        st = find_scalar("unsigned int", strlen("unsigned int"));
                if (!st)
                        return parse_fail(p, -EINVAL,
                                          "field %u (column %zu): unknown type '%s' (a dynamic field takes a basic type, e.g. '__data_loc char[]')",
                                          field_no, column(p, t), quote(q, t, n));
                f->is_char = strstr(st->name, "char") != NULL;
                f->element_size = st->size;
                return 0;
        }

        if (has_prefix(t, n, "struct ", &plen)) {
                if (!is_c_identifier(t + plen, n - plen))
                        return parse_fail(p, -EINVAL,
                                          "field %u (column %zu): struct tag '%s' is not a C identifier", field_no,
                                          column(p, t + plen), quote(q, t + plen, n - plen));
                f->kind = EVENT_FIELD_STRUCT;
                return 0; /* size comes from the third word */
        }

        if ((has_prefix(t, n, "char[", &plen) || has_prefix(t, n, "unsigned char[", &plen))) {
                const char *close = memchr(t + plen, ']', n - plen);

                if (!close)
                        return parse_fail(p, -EINVAL, "field %u (column %zu): '%s' lacks a closing ']'", field_no,
                                          column(p, t), quote(q, t, n));
                if ((size_t) (close - t) != n - 1)
                        return parse_fail(p, -EINVAL, "field %u (column %zu): unexpected '%s' after ']'", field_no,
                                          column(p, close + 1), quote(q, close + 1, n - (size_t) (close - t) - 1));
                f->kind = EVENT_FIELD_ARRAY;
                f->is_char = true;
                return parse_array_size(p, field_no, t, t + plen, (size_t) (close - t) - plen, &f->size);
        }

        if ((n == 4 && memcmp(t, "long", 4) == 0) || (n == 13 && memcmp(t, "unsigned long", 13) == 0))
                return parse_fail(p, -EINVAL,
                                  "field %u (column %zu): type '%s' is not allowed (its size differs between user and kernel; use s64/u64)",
                                  field_no, column(p, t), quote(q, t, n));
        return parse_fail(p, -EINVAL, "field %u (column %zu): unknown type '%s'", field_no, column(p, t),
                          quote(q, t, n));
}

static char *dup_n(const char *s, size_t n) {
        char *d = malloc(n + 1);

        if (d) {
                memcpy(d, s, n);
                d[n] = '\0';
        }
        return d;
}

static int add_field(struct parser *p, unsigned field_no, const char *type, size_t type_len, const char *name,
                     size_t name_len, const char *size_tok, size_t size_len) {
        struct event_def *ev = p->ev;
        struct event_field f = {};
        char q[48];
        int r;

        r = parse_type(p, field_no, type, type_len, &f);
        if (r < 0)
                return r;

        if (name_len > EVENT_FIELD_NAME_MAX)
                return parse_fail(p, -EINVAL, "field %u (column %zu): field name is %zu bytes, longer than %d",
                                  field_no, column(p, name), name_len, EVENT_FIELD_NAME_MAX);
        if (!is_c_identifier(name, name_len))
                return parse_fail(p, -EINVAL, "field %u (column %zu): field name '%s' is not a C identifier",
                                  field_no, column(p, name), quote(q, name, name_len));
        if (name_len >= 7 && memcmp(name, "common_", 7) == 0)
                return parse_fail(p, -EINVAL,
                                  "field %u (column %zu): field name '%s' is reserved for the common header",
                                  field_no, column(p, name), quote(q, name, name_len));
        for (size_t i = 0; i < ev->n_fields; i++)
                if (strlen(ev->fields[i].name) == name_len && memcmp(ev->fields[i].name, name, name_len) == 0)
                        return parse_fail(p, -EINVAL, "field %u (column %zu): field name '%s' is used twice",
                                          field_no, column(p, name), quote(q, name, name_len));

        if (f.kind == EVENT_FIELD_STRUCT) {
                if (size_tok) {
                        r = parse_struct_size(p, field_no, size_tok, size_len, &f.size);
                        if (r < 0)
                                return r;
                        f.size_given = true;
                } else if (!(p->parse_flags & EVENT_PARSE_MATCH))
                        return parse_fail(p, -EINVAL,
                                          "field %u (column %zu): struct field '%s' needs a size, e.g. '%s %s 16'",
                                          field_no, column(p, name), quote(q, name, name_len),
                                          quote((char[48]) {}, type, type_len), quote((char[48]) {}, name, name_len));
        } else if (size_tok)
                return parse_fail(p, -EINVAL,
                                  "field %u (column %zu): a size ('%s') is only allowed after a struct field",
                                  field_no, column(p, size_tok), quote(q, size_tok, size_len));
        else
                f.size_given = true; /* implied by the type */

        if (ev->n_fields == p->cap_fields) {
                size_t cap = p->cap_fields ? p->cap_fields * 2 : 4;
                struct event_field *a = realloc(ev->fields, cap * sizeof(*a));

                if (!a)
                        return parse_fail(p, -ENOMEM, "out of memory");
                ev->fields = a;
                p->cap_fields = cap;
        }

        f.offset = EVENT_COMMON_HEADER_SIZE + ev->min_size;
        f.type = dup_n(type, type_len);
        f.name = dup_n(name, name_len);
        if (!f.type || !f.name) {
                free(f.type);
                free(f.name);
                return parse_fail(p, -ENOMEM, "out of memory");
        }
        ev->fields[ev->n_fields++] = f;
        /* Bounded: at most 511 bytes of command, each field at most 65535. */
        ev->min_size += f.size;
        return 0;
}

/* Types that hold a space: the kernel's list, in its order. */
static const char *const spaced_type_prefixes[] = {
        "unsigned ", "struct ", "__data_loc unsigned ", "__data_loc ", "__rel_loc unsigned ", "__rel_loc ",
};

static int parse_field(struct parser *p, unsigned field_no, const char *s, size_t n) {
        const char *words[3];
        size_t lens[3];
        size_t nwords = 0, type_end = 0, i, plen;
        char q[48];

        for (i = 0; i < sizeof(spaced_type_prefixes) / sizeof(spaced_type_prefixes[0]); i++)
                if (has_prefix(s, n, spaced_type_prefixes[i], &plen)) {
                        const char *sp = memchr(s + plen, ' ', n - plen);

                        if (!sp)
                                return parse_fail(p, -EINVAL, "field %u (column %zu): '%s' has no field name",
                                                  field_no, column(p, s), quote(q, s, n));
                        type_end = (size_t) (sp - s);
                        break;
                }
        if (type_end == 0) {
                const char *sp = memchr(s, ' ', n);

                type_end = sp ? (size_t) (sp - s) : n;
        }
        words[nwords] = s;
        lens[nwords++] = type_end;

        /* Then single-space separated words, as the kernel's strsep(" "). */
        i = type_end;
        while (i < n) {
                const char *w;
                const char *sp;
                size_t wlen;

                i++; /* the separating space */
                w = s + i;
                sp = memchr(w, ' ', n - i);
                wlen = sp ? (size_t) (sp - w) : n - i;
                if (wlen == 0)
                        return parse_fail(p, -EINVAL,
                                          "field %u (column %zu): extra space in '%s' (words are separated by exactly one space)",
                                          field_no, column(p, w), quote(q, s, n));
                if (nwords == 3)
                        return parse_fail(p, -EINVAL, "field %u (column %zu): unexpected '%s'", field_no,
                                          column(p, w), quote(q, w, wlen));
                words[nwords] = w;
                lens[nwords++] = wlen;
                i += wlen;
        }
        if (nwords < 2)
                return parse_fail(p, -EINVAL, "field %u (column %zu): '%s' has no field name (write 'type name')",
                                  field_no, column(p, s), quote(q, s, n));

        return add_field(p, field_no, words[0], lens[0], words[1], lens[1], nwords == 3 ? words[2] : NULL,
                         nwords == 3 ? lens[2] : 0);
}

static int parse_flags_list(struct parser *p, const char *s, size_t n) {
        struct event_def *ev = p->ev;
        size_t i = 0, count = 1;
        unsigned flag_no = 0;
        char q[48];

        for (size_t k = 0; k < n; k++)
                count += s[k] == ',';
        ev->flags = calloc(count, sizeof(char *));
        if (!ev->flags)
                return parse_fail(p, -ENOMEM, "out of memory");

        for (;;) {
                const char *comma = memchr(s + i, ',', n - i);
                size_t flen = comma ? (size_t) (comma - (s + i)) : n - i;

                flag_no++;
                if (flen == 0)
                        return parse_fail(p, -EINVAL, "flag %u (column %zu): empty flag", flag_no,
                                          column(p, s + i));
                for (size_t k = 0; k < flen; k++)
                        if (!is_ident_char(s[i + k]))
                                return parse_fail(p, -EINVAL,
                                                  "flag %u (column %zu): flag '%s' may hold only letters, digits and '_'",
                                                  flag_no, column(p, s + i), quote(q, s + i, flen));
                ev->flags[ev->n_flags] = dup_n(s + i, flen);
                if (!ev->flags[ev->n_flags])
                        return parse_fail(p, -ENOMEM, "out of memory");
                ev->n_flags++;
                if (!comma)
                        return 0;
                i += flen + 1;
        }
}

bool event_name_is_valid(const char *name, size_t n) {
        if (!name || n == 0 || n > EVENT_NAME_MAX || !is_ident_start(name[0]))
                return false;
        for (size_t i = 1; i < n; i++)
                if (!is_ident_char(name[i]) && name[i] != '-')
                        return false;
        return true;
}

static int parse_name(struct parser *p, const char *s, size_t n) {
        char q[48];

        if (n == 0)
                return parse_fail(p, -EINVAL, "column 1: the command must start with the event name");
        if (n > EVENT_NAME_MAX)
                return parse_fail(p, -EINVAL, "event name is %zu bytes, longer than %d", n, EVENT_NAME_MAX);
        if (!is_ident_start(s[0]))
                return parse_fail(p, -EINVAL,
                                  "event name '%s' must start with a letter or '_'", quote(q, s, n));
        for (size_t i = 1; i < n; i++)
                if (!is_ident_char(s[i]) && s[i] != '-')
                        return parse_fail(p, -EINVAL,
                                          "event name '%s' (column %zu): character '%s' is not allowed (use A-Z a-z 0-9 _ -)",
                                          quote(q, s, n), i + 1, quote((char[48]) {}, s + i, 1));
        p->ev->name = dup_n(s, n);
        return p->ev->name ? 0 : parse_fail(p, -ENOMEM, "out of memory");
}

int event_def_parse_n(const char *command, size_t len, unsigned parse_flags, struct event_def **ret,
                      struct event_error *error) {
        struct parser p = { .command = command, .parse_flags = parse_flags, .error = error };
        const char *name_end, *colon, *args;
        size_t name_len, args_len;
        unsigned field_no = 0;
        int r;

        if (error)
                *error = (struct event_error) {};
        if (!command || !ret)
                return parse_fail(&p, -EINVAL, "no command given");
        if (len > EVENT_COMMAND_MAX)
                return parse_fail(&p, -EINVAL, "command is %zu bytes, longer than the %d allowed", len,
                                  EVENT_COMMAND_MAX);
        if (memchr(command, '\0', len))
                return parse_fail(&p, -EINVAL, "command contains a NUL byte at column %zu",
                                  (size_t) ((const char *) memchr(command, '\0', len) - command) + 1);
        if (len == 0)
                return parse_fail(&p, -EINVAL, "command is empty; expected 'name [type field; ...]'");

        p.ev = calloc(1, sizeof(*p.ev));
        if (!p.ev)
                return parse_fail(&p, -ENOMEM, "out of memory");

        name_end = memchr(command, ' ', len);
        name_len = name_end ? (size_t) (name_end - command) : len;
        colon = memchr(command, ':', name_len);

        r = parse_name(&p, command, colon ? (size_t) (colon - command) : name_len);
        if (r < 0)
                goto fail;
        if (colon) {
                r = parse_flags_list(&p, colon + 1, name_len - (size_t) (colon + 1 - command));
                if (r < 0)
                        goto fail;
        }

        /* Fields are separated by ';'; leading spaces are skipped and empty
         * fields (a trailing ';') ignored. */
        args = name_end ? name_end + 1 : command + len;
        args_len = (size_t) (command + len - args);
        while (name_end) {
                const char *semi = memchr(args, ';', args_len);
                size_t flen = semi ? (size_t) (semi - args) : args_len;
                size_t skip = 0;

                field_no++;
                while (skip < flen && args[skip] == ' ')
                        skip++;
                if (skip < flen) {
                        r = parse_field(&p, field_no, args + skip, flen - skip);
                        if (r < 0)
                                goto fail;
                }
                if (!semi)
                        break;
                args = semi + 1;
                args_len -= flen + 1;
        }

        *ret = p.ev;
        return 0;
fail:
        event_def_free(p.ev);
        return r;
}

int event_def_parse(const char *command, unsigned parse_flags, struct event_def **ret, struct event_error *error) {
        return event_def_parse_n(command, command ? strnlen(command, EVENT_COMMAND_MAX + 1) : 0, parse_flags, ret,
                                 error);
}

struct event_def *event_def_free(struct event_def *ev) {
        if (!ev)
                return NULL;
        for (size_t i = 0; i < ev->n_fields; i++) {
                free(ev->fields[i].type);
                free(ev->fields[i].name);
        }
        free(ev->fields);
        for (size_t i = 0; i < ev->n_flags; i++)
                free(ev->flags[i]);
        free(ev->flags);
        free(ev->name);
        free(ev);
        return NULL;
}

static bool field_same(const struct event_field *a, const struct event_field *b, bool size_optional) {
        if (strcmp(a->type, b->type) != 0 || strcmp(a->name, b->name) != 0)
                return false;
        if (size_optional && !b->size_given)
                return true;
        return a->size == b->size;
}

bool event_def_equal(const struct event_def *a, const struct event_def *b) {
        if (strcmp(a->name, b->name) != 0 || a->n_fields != b->n_fields)
                return false;
        for (size_t i = 0; i < a->n_fields; i++)
                if (!field_same(&a->fields[i], &b->fields[i], false))
                        return false;
        return true;
}

bool event_def_matches(const struct event_def *ev, const struct event_def *spec) {
        if (strcmp(ev->name, spec->name) != 0)
                return false;
        if (spec->n_fields == 0)
                return true;
        if (ev->n_fields != spec->n_fields)
                return false;
        for (size_t i = 0; i < ev->n_fields; i++)
                if (!field_same(&ev->fields[i], &spec->fields[i], true))
                        return false;
        return true;
}

const struct event_field *event_def_find_field(const struct event_def *ev, const char *name) {
        for (size_t i = 0; i < ev->n_fields; i++)
                if (strcmp(ev->fields[i].name, name) == 0)
                        return &ev->fields[i];
        return NULL;
}
