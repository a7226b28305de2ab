/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The event-definition library: parses user_events registration commands
 * (uebroker-event-command(7)), renders them back (canonical text, print fmt,
 * tracefs format file), matches delete specifications and validates
 * payloads (uebroker-event-command(7), RECORDS).
 *
 * No global state. Every function is safe on inputs of any length and
 * content. Ownership: event_def_parse*() returns a heap object owned by the
 * caller and released with event_def_free(); the string renderers return
 * malloc()ed strings the caller free()s, or NULL on -ENOMEM.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cleanup.h"

/* MAX_EVENT_DESC is 512 bytes including the terminating NUL. */
#define EVENT_COMMAND_MAX 511
#define EVENT_NAME_MAX 255
#define EVENT_FIELD_NAME_MAX 255
/* MAX_FIELD_ARRAY_SIZE */
#define EVENT_ARRAY_SIZE_MAX 1024
/* Text between the brackets of char[N]. */
#define EVENT_ARRAY_SIZE_TEXT_MAX 7
/* Our bound on a struct field; the kernel has none, but a record longer
 * than a dynamic-location offset can address (16 bits) is useless. */
#define EVENT_STRUCT_SIZE_MAX 65535
/* trace_entry on x86_64: common_type, common_flags, common_preempt_count,
 * common_pid. User fields start right after it. */
#define EVENT_COMMON_HEADER_SIZE 8
#define EVENT_ERROR_MESSAGE_MAX 256

enum event_field_kind {
        EVENT_FIELD_SCALAR,     /* u32, int, unsigned char, ... */
        EVENT_FIELD_ARRAY,      /* char[N], unsigned char[N] */
        EVENT_FIELD_DATA_LOC,   /* __data_loc T: u32 size << 16 | offset from record start */
        EVENT_FIELD_REL_LOC,    /* __rel_loc T: u32 size << 16 | offset from end of the field */
        EVENT_FIELD_STRUCT,     /* struct TAG name SIZE */
};

struct event_field {
        char *type;             /* as tracefs shows it: "u32", "char[20]", "__data_loc char[]", "struct foo" */
        char *name;
        uint32_t size;          /* bytes in the payload; 4 for dynamic fields */
        uint32_t element_size;  /* dynamic fields: bytes per element (1 for char[]) */
        uint32_t offset;        /* from the start of the record, common header included */
        enum event_field_kind kind;
        bool is_signed;         /* type does not start with 'u' (kernel quirk, kept) */
        bool is_char;           /* char based: printed with %s; dynamic ones must end in NUL */
        bool size_given;        /* struct: SIZE was written (always true outside match specs) */
};

/* __data_loc or __rel_loc: the payload holds a u32 location, the bytes
 * themselves come after the fixed fields. */
static inline bool event_field_is_dynamic(const struct event_field *f) {
        return f->kind == EVENT_FIELD_DATA_LOC || f->kind == EVENT_FIELD_REL_LOC;
}

struct event_def {
        char *name;
        char **flags;           /* flag words after "name:", kept and otherwise ignored */
        size_t n_flags;
        struct event_field *fields;
        size_t n_fields;
        uint32_t min_size;      /* minimum payload: sum of field sizes */
};

struct event_error {
        int code;               /* negative errno, same as the return value */
        char message[EVENT_ERROR_MESSAGE_MAX];
};

enum {
        /* Parse a delete/match specification: a struct's size may be left out. */
        EVENT_PARSE_MATCH = 1 << 0,
};

/*
 * Parses @len bytes at @command (no "u:" prefix). Returns 0 and stores a new
 * event in *@ret, or a negative errno (-EINVAL for anything malformed,
 * -ENOMEM) and, if @error is not NULL, a message naming the offending token
 * and where it is.
 */
int event_def_parse_n(const char *command, size_t len, unsigned parse_flags,
                      struct event_def **ret, struct event_error *error);
int event_def_parse(const char *command, unsigned parse_flags,
                    struct event_def **ret, struct event_error *error);

/* Whether @name[0..n) is a valid event name as event_def_parse() accepts it:
 * 1..EVENT_NAME_MAX bytes of [A-Za-z0-9_-], starting with a letter or '_'. */
bool event_name_is_valid(const char *name, size_t n);

struct event_def *event_def_free(struct event_def *ev);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct event_def *, event_def_free);

/* Same name and the same fields (types, names, sizes) in the same order.
 * Flags do not count: this is the rule for re-registration. */
bool event_def_equal(const struct event_def *a, const struct event_def *b);

/* The delete rule: @spec without fields matches any event of its name; with
 * fields they must be the same types and names in the same order, and a
 * struct size is compared only where the spec gives one. */
bool event_def_matches(const struct event_def *ev, const struct event_def *spec);

/* Looks up a field by name, NULL if there is none. */
const struct event_field *event_def_find_field(const struct event_def *ev, const char *name);

/* "u:NAME type name; type name" as dynamic_events lists it (struct fields
 * with their size appended). */
char *event_def_canonical(const struct event_def *ev);

/* The field list alone, "type name; type name", "" without fields. */
char *event_def_fields_text(const struct event_def *ev);

/* The print fmt value: "\"a=%u b=%s\", REC->a, REC->b" (quotes included). */
char *event_def_print_fmt(const struct event_def *ev);

/* The whole events/user_events/NAME/format text, with @id as "ID:". */
char *event_def_format_text(const struct event_def *ev, uint32_t id);

/*
 * Checks a payload (the bytes after the u32 write index) against @ev:
 * -EINVAL if shorter than min_size; -EFAULT if a dynamic field points outside
 * the payload or a char dynamic field does not end in NUL; 0 if valid.
 */
int event_def_validate_payload(const struct event_def *ev, const void *payload, size_t len);

/* Decodes a valid dynamic field of @payload: the bytes it points at. */
int event_field_dynamic_span(const struct event_field *f, const void *payload, size_t len,
                             size_t *ret_offset, size_t *ret_size);
