/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Renders an event as the kernel shows it: dynamic_events line, print fmt
 * and the tracefs format file. */
#include "event-def.h"
#include "strbuf.h"

#include <stdlib.h>
#include <string.h>

static void append_fields(struct strbuf *sb, const struct event_def *ev) {
        for (size_t i = 0; i < ev->n_fields; i++) {
                const struct event_field *f = &ev->fields[i];

                if (i > 0)
                        strbuf_append(sb, "; ");
                strbuf_printf(sb, "%s %s", f->type, f->name);
                /* A match spec may leave the size out; "0" would not parse back. */
                if (f->kind == EVENT_FIELD_STRUCT && f->size_given)
                        strbuf_printf(sb, " %u", f->size);
        }
}

char *event_def_fields_text(const struct event_def *ev) {
        struct strbuf sb = STRBUF_INIT;

        append_fields(&sb, ev);
        return strbuf_steal(&sb);
}

char *event_def_canonical(const struct event_def *ev) {
        struct strbuf sb = STRBUF_INIT;

        strbuf_printf(&sb, "u:%s", ev->name);
        if (ev->n_fields > 0)
                strbuf_append_c(&sb, ' ');
        append_fields(&sb, ev);
        return strbuf_steal(&sb);
}

/* The kernel's user_field_format(): exact basic types, then char arrays,
 * then everything else (struct, non-char dynamic) as a 64-bit value.
 * Dynamic char fields print as strings. */
static const char *field_print_format(const struct event_field *f) {
        static const struct {
                const char *type;
                const char *fmt;
        } formats[] = {
                { "s64", "%lld" }, { "u64", "%llu" }, { "s32", "%d" },   { "u32", "%u" },
                { "int", "%d" },   { "unsigned int", "%u" },             { "s16", "%d" },
                { "u16", "%u" },   { "short", "%d" }, { "unsigned short", "%u" },
                { "s8", "%d" },    { "u8", "%u" },    { "char", "%d" },  { "unsigned char", "%u" },
        };

        if (f->kind == EVENT_FIELD_SCALAR)
                for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
                        if (strcmp(f->type, formats[i].type) == 0)
                                return formats[i].fmt;
        if (f->is_char && f->kind != EVENT_FIELD_SCALAR)
                return "%s";
        return "%llu";
}

char *event_def_print_fmt(const struct event_def *ev) {
        struct strbuf sb = STRBUF_INIT;

        strbuf_append_c(&sb, '"');
        for (size_t i = 0; i < ev->n_fields; i++)
                strbuf_printf(&sb, "%s%s=%s", i ? " " : "", ev->fields[i].name,
                              field_print_format(&ev->fields[i]));
        strbuf_append_c(&sb, '"');
        for (size_t i = 0; i < ev->n_fields; i++) {
                const struct event_field *f = &ev->fields[i];

                if (event_field_is_dynamic(f) && f->is_char)
                        strbuf_printf(&sb, ", %s(%s)",
                                      f->kind == EVENT_FIELD_DATA_LOC ? "__get_str" : "__get_rel_str", f->name);
                else
                        strbuf_printf(&sb, ", REC->%s", f->name);
        }
        return strbuf_steal(&sb);
}

/* One "field:" line. f_show() moves a bracket suffix behind the name
 * ("char[20] msg" shows as "char msg[20]", "__rel_loc char[] s" as
 * "__rel_loc char s[]"), except for __data_loc types. */
static void append_format_line(struct strbuf *sb, const char *type, const char *name, enum event_field_kind kind,
                               unsigned offset, unsigned size, bool is_signed) {
        const char *bracket = kind == EVENT_FIELD_DATA_LOC ? NULL : strchr(type, '[');
        int type_len = bracket ? (int) (bracket - type) : (int) strlen(type);

        strbuf_printf(sb, "\tfield:%.*s %s%s;\toffset:%u;\tsize:%u;\tsigned:%d;\n", type_len, type, name,
                      bracket ?: "", offset, size, is_signed);
}

char *event_def_format_text(const struct event_def *ev, uint32_t id) {
        struct strbuf sb = STRBUF_INIT;
        char *print_fmt;

        strbuf_printf(&sb, "name: %s\nID: %u\nformat:\n", ev->name, id);
        append_format_line(&sb, "unsigned short", "common_type", EVENT_FIELD_SCALAR, 0, 2, false);
        append_format_line(&sb, "unsigned char", "common_flags", EVENT_FIELD_SCALAR, 2, 1, false);
        append_format_line(&sb, "unsigned char", "common_preempt_count", EVENT_FIELD_SCALAR, 3, 1, false);
        append_format_line(&sb, "int", "common_pid", EVENT_FIELD_SCALAR, 4, 4, true);
        strbuf_append_c(&sb, '\n');

        for (size_t i = 0; i < ev->n_fields; i++) {
                const struct event_field *f = &ev->fields[i];

                append_format_line(&sb, f->type, f->name, f->kind, f->offset, f->size, f->is_signed);
        }

        print_fmt = event_def_print_fmt(ev);
        if (!print_fmt) {
                strbuf_done(&sb);
                return NULL;
        }
        strbuf_printf(&sb, "\nprint fmt: %s\n", print_fmt);
        free(print_fmt);
        return strbuf_steal(&sb);
}
