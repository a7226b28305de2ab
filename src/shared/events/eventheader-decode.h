/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * EventHeader events (what OpenTelemetry's user_events exporters write,
 * through LinuxTracepoints' libeventheader-tracepoint or Rust's eventheader
 * crate), split into what they say. Written from the format's definition
 * (LinuxTracepoints' eventheader.h); see docs/DECISIONS.md for why we do
 * not link a decoder.
 *
 * The tracepoint is "Provider_L<level>K<keyword>[Options]" (level and
 * keyword in lower-case hex, options an upper-case letter then lower-case
 * letters or digits, e.g. "Gmygroup"), registered with the fields
 * "u8 eventheader_flags; u8 version; u16 id; u16 tag; u8 opcode; u8 level".
 * A record's payload (the bytes after the common fields) is:
 *
 *   eventheader (8 bytes: flags, version, id, tag, opcode, level)
 *   extension blocks, while the previous one says another follows:
 *       u16 size, u16 kind (0x8000: another block follows), size bytes
 *       kind 1, metadata: "EventName[;attr=value]\0", then per field:
 *           "name[;attr=value]\0", u8 encoding (low 5 bits; 0x20 constant
 *           array, 0x40 variable array, 0x80 a format byte follows),
 *           [u8 format (low 7 bits; 0x80 a u16 tag follows)], [u16 tag],
 *           [u16 element count of a constant array]
 *       kind 2, activity id: 16 bytes, or 32 with the related (parent) id
 *   field values, packed, in the metadata's order (a variable array's u16
 *   element count first; a struct's N fields follow it in the metadata).
 *
 * Multi-byte integers are in the event's byte order (flags bit 0x02:
 * little-endian); UUIDs, ports and IP addresses in network order.
 *
 * Nothing here trusts the record: every length is checked against the
 * bytes there are, structs nest at most EVENTHEADER_DEPTH_MAX deep, an
 * event yields at most EVENTHEADER_ITEMS_MAX items, and a record that does
 * not hold together is refused with a reason (a static string) for the
 * caller to show beside the raw fields.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "u8 eventheader_flags; ..." as tracefs and the registration spell it. */
#define EVENTHEADER_FIELDS "u8 eventheader_flags; u8 version; u16 id; u16 tag; u8 opcode; u8 level"
#define EVENTHEADER_HEADER_SIZE 8
/* Structs within structs (arrays of structs count once per struct). */
#define EVENTHEADER_DEPTH_MAX 8
/* Items one event may yield (values, array and struct bounds). Elements
 * that take no byte of the record (a struct of empty arrays) repeated by
 * nested counts of 65535 made a 110-byte record expand past 2 GiB of text
 * (fuzz-eventheader); a real event of at most 64 KiB yields far fewer. */
#define EVENTHEADER_ITEMS_MAX (1u << 18)

enum {
        EVENTHEADER_FLAG_POINTER64 = 0x01,
        EVENTHEADER_FLAG_LITTLE_ENDIAN = 0x02,
        EVENTHEADER_FLAG_EXTENSION = 0x04,
};

enum {
        EVENTHEADER_EXT_CHAIN = 0x8000,
        EVENTHEADER_EXT_KIND_MASK = 0x7fff,
        EVENTHEADER_EXT_METADATA = 1,
        EVENTHEADER_EXT_ACTIVITY_ID = 2,
};

/* A field's encoding (the low 5 bits of its encoding byte): how big it is. */
enum eventheader_encoding {
        EVENTHEADER_ENC_INVALID = 0,
        EVENTHEADER_ENC_STRUCT = 1,             /* no bytes; the next (format & 0x7f) fields */
        EVENTHEADER_ENC_VALUE8 = 2,
        EVENTHEADER_ENC_VALUE16 = 3,
        EVENTHEADER_ENC_VALUE32 = 4,
        EVENTHEADER_ENC_VALUE64 = 5,
        EVENTHEADER_ENC_VALUE128 = 6,
        EVENTHEADER_ENC_ZSTRING_CHAR8 = 7,      /* up to a zero unit */
        EVENTHEADER_ENC_ZSTRING_CHAR16 = 8,
        EVENTHEADER_ENC_ZSTRING_CHAR32 = 9,
        EVENTHEADER_ENC_STRING_LENGTH16_CHAR8 = 10,     /* u16 count of units, then the units */
        EVENTHEADER_ENC_STRING_LENGTH16_CHAR16 = 11,
        EVENTHEADER_ENC_STRING_LENGTH16_CHAR32 = 12,
        EVENTHEADER_ENC_BINARY_LENGTH16_CHAR8 = 13,
        _EVENTHEADER_ENC_MAX,
        EVENTHEADER_ENC_MASK = 0x1f,
        EVENTHEADER_ENC_CARRAY = 0x20,
        EVENTHEADER_ENC_VARRAY = 0x40,
        EVENTHEADER_ENC_CHAIN = 0x80,
};

/* A field's format (the low 7 bits of its format byte): how to show it. */
enum eventheader_format {
        EVENTHEADER_FMT_DEFAULT = 0,
        EVENTHEADER_FMT_UNSIGNED_INT = 1,
        EVENTHEADER_FMT_SIGNED_INT = 2,
        EVENTHEADER_FMT_HEX_INT = 3,
        EVENTHEADER_FMT_ERRNO = 4,
        EVENTHEADER_FMT_PID = 5,
        EVENTHEADER_FMT_TIME = 6,               /* seconds since 1970, signed */
        EVENTHEADER_FMT_BOOLEAN = 7,
        EVENTHEADER_FMT_FLOAT = 8,
        EVENTHEADER_FMT_HEX_BYTES = 9,
        EVENTHEADER_FMT_STRING8 = 10,           /* one byte per character (Latin-1) */
        EVENTHEADER_FMT_STRING_UTF = 11,        /* UTF-8/16/32 by the unit size */
        EVENTHEADER_FMT_STRING_UTF_BOM = 12,    /* a BOM, if there is one, says which */
        EVENTHEADER_FMT_STRING_XML = 13,
        EVENTHEADER_FMT_STRING_JSON = 14,
        EVENTHEADER_FMT_UUID = 15,
        EVENTHEADER_FMT_PORT = 16,              /* network order */
        EVENTHEADER_FMT_IP_ADDRESS = 17,        /* 4 or 16 bytes, network order */
        EVENTHEADER_FMT_IP_ADDRESS_OBSOLETE = 18,
        EVENTHEADER_FMT_MASK = 0x7f,
        EVENTHEADER_FMT_CHAIN = 0x80,
};

/* What the tracepoint's name says. Pointers are into the name given. */
struct eventheader_tracepoint {
        const char *provider;
        size_t provider_len;
        uint8_t level;
        uint64_t keyword;
        const char *group;      /* the 'G' option's value, NULL if none */
        size_t group_len;
};

/* One event, as eventheader_decode() found it. Pointers are into the name
 * and payload given, which must outlive it. */
struct eventheader_event {
        struct eventheader_tracepoint tracepoint;
        uint8_t flags;
        uint8_t version;
        uint16_t id;
        uint16_t tag;
        uint8_t opcode;
        uint8_t level;
        bool big_endian;
        bool has_activity_id;
        bool has_related_id;
        uint8_t activity_id[16];
        uint8_t related_id[16];
        /* Without a metadata extension there is no name and no field
         * definitions: the event's decoding is defined elsewhere (a
         * manifest by provider, id and version) and the data stays bytes. */
        bool has_metadata;
        const char *name;               /* "EventName[;attr=value...]", not NUL-terminated here */
        size_t name_len;
        const uint8_t *metadata;        /* the field definitions after the name */
        size_t metadata_len;
        const uint8_t *data;            /* the field values */
        size_t data_len;
};

enum eventheader_item_kind {
        EVENTHEADER_ITEM_VALUE,
        EVENTHEADER_ITEM_ARRAY_BEGIN,
        EVENTHEADER_ITEM_ARRAY_END,
        EVENTHEADER_ITEM_STRUCT_BEGIN,
        EVENTHEADER_ITEM_STRUCT_END,
};

/* One step of eventheader_enumerate(): a value, or the start or end of an
 * array or a struct. An array's elements and a struct's fields come
 * between its BEGIN and END; an array's elements carry its name. */
struct eventheader_item {
        enum eventheader_item_kind kind;
        const char *name;               /* "name[;attr=value...]" */
        size_t name_len;
        uint8_t encoding;               /* enum eventheader_encoding, flags removed */
        uint8_t format;                 /* enum eventheader_format, flag removed (structs: 0) */
        uint16_t tag;
        unsigned depth;                 /* 0 for top-level fields */
        bool in_array;                  /* an element of the enclosing array */
        bool big_endian;
        uint16_t count;                 /* ARRAY_BEGIN: elements */
        /* VALUE: the value's bytes, without a length prefix or terminating
         * zero unit (a string's units, a value's bytes). */
        const uint8_t *value;
        size_t value_len;
        unsigned unit;                  /* VALUE: bytes per string unit (1, 2, 4), else 0 */
};

/* Parses a tracepoint name of the EventHeader form; -EINVAL if it is not
 * one (no '_L', bad hex, a level of 0, an option out of order...). */
int eventheader_parse_tracepoint(const char *name, size_t len, struct eventheader_tracepoint *ret);

/* Splits a record of tracepoint @name into header, extensions and data.
 * -EINVAL if @name is not of the EventHeader form, -EBADMSG if the
 * payload does not hold together; *reason says why either way. */
int eventheader_decode(const char *name, size_t name_len, const void *payload, size_t len,
                       struct eventheader_event *ret, const char **reason);

/* Calls @visit for each field of @ev, in order, arrays and structs
 * opened and closed around their contents. Every item is checked before
 * it is handed out, but a malformed field further on is found only when
 * it is reached: a caller that must not show half an event renders into
 * a buffer first. -EBADMSG with *reason for a malformed event, -ENOMEM,
 * or the first negative value @visit returns. An event without metadata
 * has no fields (0). */
typedef int (*eventheader_visit_t)(const struct eventheader_item *item, void *userdata);
int eventheader_enumerate(const struct eventheader_event *ev, eventheader_visit_t visit, void *userdata,
                          const char **reason);

/* The value of a VALUE item's bytes of @size (1, 2, 4, 8) in its byte order. */
uint64_t eventheader_read_uint(const uint8_t *p, size_t size, bool big_endian);
