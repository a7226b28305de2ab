/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the registration-command parser and every renderer.
 * Any input must either be rejected cleanly or parse into an event whose
 * canonical text parses back to an equal event. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event-def.h"
#include "fuzz-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(int r, const struct event_error *error) {
        check(r == -EINVAL || r == -ENOMEM);
        check(error->code == r);
        check(memchr(error->message, '\0', sizeof(error->message)));
        check(error->message[0] != '\0');
}

/* The layout invariants: packed offsets from 8, min_size the sum. */
static void check_layout(const struct event_def *ev, unsigned flags) {
        uint32_t offset = EVENT_COMMON_HEADER_SIZE;

        check(ev->name && strlen(ev->name) >= 1 && strlen(ev->name) <= EVENT_NAME_MAX);
        for (size_t i = 0; i < ev->n_fields; i++) {
                const struct event_field *f = &ev->fields[i];

                check(f->offset == offset);
                check(f->is_signed == (f->type[0] != 'u'));
                check(f->size_given || (f->kind == EVENT_FIELD_STRUCT && (flags & EVENT_PARSE_MATCH)));
                switch (f->kind) {
                case EVENT_FIELD_SCALAR:
                        check(f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8);
                        break;
                case EVENT_FIELD_ARRAY:
                        check(f->size >= 1 && f->size <= EVENT_ARRAY_SIZE_MAX && f->is_char);
                        break;
                case EVENT_FIELD_DATA_LOC:
                case EVENT_FIELD_REL_LOC:
                        check(f->size == 4);
                        break;
                case EVENT_FIELD_STRUCT:
                        check(f->size_given ? f->size >= 1 && f->size <= EVENT_STRUCT_SIZE_MAX : f->size == 0);
                        break;
                default:
                        check(!"unknown kind");
                }
                check(event_def_find_field(ev, f->name) == f);
                offset += f->size;
        }
        check(ev->min_size == offset - EVENT_COMMON_HEADER_SIZE);
}

static void check_renderings(const struct event_def *ev, unsigned flags) {
        char *canonical = event_def_canonical(ev);
        char *fields = event_def_fields_text(ev);
        char *print_fmt = event_def_print_fmt(ev);
        char *format = event_def_format_text(ev, 42);
        struct event_def *again = NULL;
        struct event_error error;
        size_t len;
        int r;

        check(canonical && fields && print_fmt && format);
        check(strncmp(canonical, "u:", 2) == 0);
        check(strncmp(canonical + 2, ev->name, strlen(ev->name)) == 0);
        check(strcmp(canonical + 2 + strlen(ev->name) + (ev->n_fields > 0), fields) == 0);
        check(print_fmt[0] == '"');
        check(strncmp(format, "name: ", 6) == 0);
        check(strstr(format, "\nID: 42\nformat:\n"));
        check(strstr(format, print_fmt));

        /* The canonical text, without "u:", is a command for the same event
         * unless normalising made it longer than a command may be. */
        len = strlen(canonical + 2);
        r = event_def_parse_n(canonical + 2, len, flags, &again, &error);
        if (len > EVENT_COMMAND_MAX)
                check(r == -EINVAL);
        else {
                if (r < 0)
                        fprintf(stderr, "canonical '%s' does not parse: %s\n", canonical, error.message);
                check(r == 0);
                check(event_def_equal(ev, again));
                check(event_def_equal(again, ev));
                check(event_def_matches(ev, again));
                event_def_free(again);
        }

        free(canonical);
        free(fields);
        free(print_fmt);
        free(format);
}

static void check_matching(const struct event_def *ev) {
        struct event_def *name_only = NULL;
        struct event_error error;

        check(event_def_equal(ev, ev));
        check(event_def_matches(ev, ev));
        check(event_def_parse(ev->name, EVENT_PARSE_MATCH, &name_only, &error) == 0);
        check(event_def_matches(ev, name_only));
        check(event_def_equal(ev, name_only) == (ev->n_fields == 0));
        event_def_free(name_only);
}

static void check_payload(const struct event_def *ev, const uint8_t *data, size_t size) {
        /* The input bytes double as a payload: any answer but a crash is fine,
         * as long as it is one the validator may give. */
        int r = event_def_validate_payload(ev, data, size);

        check(r == 0 || r == -EINVAL || r == -EFAULT);
        check((r == -EINVAL) == (size < ev->min_size));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const unsigned all_flags[] = { 0, EVENT_PARSE_MATCH };
        char *copy;

        /* A NUL-terminated copy for event_def_parse(). */
        copy = malloc(size + 1);
        if (!copy)
                return 0;
        memcpy(copy, data, size);
        copy[size] = '\0';

        for (size_t i = 0; i < sizeof(all_flags) / sizeof(all_flags[0]); i++) {
                struct event_def *ev = NULL, *ev_c = NULL;
                struct event_error error, error_c;
                int r, r_c;

                r = event_def_parse_n((const char *) data, size, all_flags[i], &ev, &error);
                r_c = event_def_parse(copy, all_flags[i], &ev_c, &error_c);

                /* Without a NUL in the input, both entry points agree. */
                if (!memchr(data, '\0', size)) {
                        check(r == r_c);
                        check(r < 0 || event_def_equal(ev, ev_c));
                }
                if (r_c < 0) {
                        check_error(r_c, &error_c);
                        check(!ev_c);
                } else
                        event_def_free(ev_c);

                if (r < 0) {
                        check_error(r, &error);
                        check(!ev);
                        continue;
                }
                /* EVENT_PARSE_MATCH only relaxes: a valid command is a valid
                 * spec for the same event. */
                if (all_flags[i] == 0) {
                        struct event_def *spec = NULL;

                        check(event_def_parse_n((const char *) data, size, EVENT_PARSE_MATCH, &spec, &error) == 0);
                        check(event_def_equal(ev, spec));
                        check(event_def_matches(ev, spec));
                        event_def_free(spec);
                }

                check(size <= EVENT_COMMAND_MAX);
                check_layout(ev, all_flags[i]);
                check_renderings(ev, all_flags[i]);
                check_matching(ev);
                check_payload(ev, data, size);
                event_def_free(ev);
        }

        free(copy);
        return 0;
}
