/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Splitting EventHeader events into header, extensions and fields (see
 * eventheader-decode.h). */
#include "eventheader-decode.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "array.h"
#include "cleanup.h"

uint64_t eventheader_read_uint(const uint8_t *p, size_t size, bool big_endian) {
        uint64_t v = 0;

        for (size_t i = 0; i < size && i < 8; i++) {
                size_t at = big_endian ? i : size - 1 - i;
                v = v << 8 | p[at];
        }
        return v;
}

static int hex_digit(char c) {
        /* The name is printf("%x")'s: lower case only, so that the
         * upper-case 'K' and option letters stay separators. */
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

/* Reads 1..@max_digits hex digits at @s[*i]. */
static int parse_hex(const char *s, size_t len, size_t *i, unsigned max_digits, uint64_t *ret) {
        uint64_t v = 0;
        unsigned n = 0;

        while (*i < len && hex_digit(s[*i]) >= 0) {
                if (++n > max_digits)
                        return -EINVAL;
                v = v << 4 | (uint64_t) hex_digit(s[*i]);
                (*i)++;
        }
        if (n == 0)
                return -EINVAL;
        *ret = v;
        return 0;
}

int eventheader_parse_tracepoint(const char *name, size_t len, struct eventheader_tracepoint *ret) {
        struct eventheader_tracepoint tp = {};
        const char *sep;
        uint64_t level;
        size_t i;

        /* Option values are [0-9a-z]: the attributes hold no '_', so the
         * last '_' ends the provider's name, whatever that holds. */
        sep = memrchr(name, '_', len);
        if (!sep || sep == name)
                return -EINVAL;
        tp.provider = name;
        tp.provider_len = (size_t) (sep - name);
        if (memchr(name, ' ', tp.provider_len) || memchr(name, ':', tp.provider_len))
                return -EINVAL;

        i = tp.provider_len + 1;
        if (i >= len || name[i++] != 'L')
                return -EINVAL;
        if (parse_hex(name, len, &i, 2, &level) < 0 || level == 0)
                return -EINVAL;
        tp.level = (uint8_t) level;
        if (i >= len || name[i++] != 'K')
                return -EINVAL;
        if (parse_hex(name, len, &i, 16, &tp.keyword) < 0)
                return -EINVAL;

        /* Options: an upper-case letter, then lower-case letters and digits. */
        while (i < len) {
                char option = name[i++];
                size_t start = i;

                if (option < 'A' || option > 'Z')
                        return -EINVAL;
                while (i < len && ((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9')))
                        i++;
                if (option == 'G' && !tp.group) {
                        tp.group = name + start;
                        tp.group_len = i - start;
                }
        }
        *ret = tp;
        return 0;
}

static int fail(const char **reason, const char *why) {
        if (reason)
                *reason = why;
        return -EBADMSG;
}

/* One extension block of @size bytes at @block, of @kind, into @ev. */
static int extension_block(struct eventheader_event *ev, uint16_t kind, const uint8_t *block, uint16_t size,
                           const char **reason) {
        const uint8_t *nul;

        switch (kind & EVENTHEADER_EXT_KIND_MASK) {
        case EVENTHEADER_EXT_METADATA:
                if (ev->has_metadata)
                        return fail(reason, "two metadata extension blocks");
                nul = memchr(block, '\0', size);
                if (!nul)
                        return fail(reason, "the event's name in the metadata is not terminated");
                ev->has_metadata = true;
                ev->name = (const char *) block;
                ev->name_len = (size_t) (nul - block);
                ev->metadata = nul + 1;
                ev->metadata_len = size - ev->name_len - 1;
                return 0;
        case EVENTHEADER_EXT_ACTIVITY_ID:
                if (ev->has_activity_id)
                        return fail(reason, "two activity id extension blocks");
                if (size != 16 && size != 32)
                        return fail(reason, "an activity id extension of neither 16 nor 32 bytes");
                ev->has_activity_id = true;
                memcpy(ev->activity_id, block, 16);
                if (size == 32) {
                        ev->has_related_id = true;
                        memcpy(ev->related_id, block + 16, 16);
                }
                return 0;
        case 0:
                return fail(reason, "an extension block of kind 0 (invalid)");
        default:
                /* A kind defined after this was written: its size lets us
                 * step over it. */
                return 0;
        }
}

/* The chain of extension blocks at *@at of @p (@len bytes); *@at moves
 * past them. */
static int extension_blocks(struct eventheader_event *ev, const uint8_t *p, size_t len, size_t *at,
                            const char **reason) {
        uint16_t kind;
        int r;

        /* Each block takes at least its 4 bytes: this ends. */
        do {
                uint16_t size;
                const uint8_t *block;

                if (len - *at < 4)
                        return fail(reason, "an extension block's header runs past the record");
                size = (uint16_t) eventheader_read_uint(p + *at, 2, ev->big_endian);
                kind = (uint16_t) eventheader_read_uint(p + *at + 2, 2, ev->big_endian);
                *at += 4;
                if (len - *at < size)
                        return fail(reason, "an extension block says it is longer than the record");
                block = p + *at;
                *at += size;
                r = extension_block(ev, kind, block, size, reason);
                if (r < 0)
                        return r;
        } while (kind & EVENTHEADER_EXT_CHAIN);
        return 0;
}

int eventheader_decode(const char *name, size_t name_len, const void *payload, size_t len,
                       struct eventheader_event *ret, const char **reason) {
        const uint8_t *p = payload;
        struct eventheader_event ev = {};
        size_t at;
        int r;

        if (eventheader_parse_tracepoint(name, name_len, &ev.tracepoint) < 0) {
                if (reason)
                        *reason = "the tracepoint's name is not Provider_L<level>K<keyword>[options]";
                return -EINVAL;
        }
        if (len < EVENTHEADER_HEADER_SIZE)
                return fail(reason, "shorter than the 8 bytes of the eventheader");

        ev.flags = p[0];
        ev.big_endian = !(ev.flags & EVENTHEADER_FLAG_LITTLE_ENDIAN);
        ev.version = p[1];
        ev.id = (uint16_t) eventheader_read_uint(p + 2, 2, ev.big_endian);
        ev.tag = (uint16_t) eventheader_read_uint(p + 4, 2, ev.big_endian);
        ev.opcode = p[6];
        ev.level = p[7];
        at = EVENTHEADER_HEADER_SIZE;

        if (ev.flags & EVENTHEADER_FLAG_EXTENSION) {
                r = extension_blocks(&ev, p, len, &at, reason);
                if (r < 0)
                        return r;
        }

        ev.data = p + at;
        ev.data_len = len - at;
        *ret = ev;
        return 0;
}

/* A field's definition, read once from the metadata: arrays of structs
 * visit their fields once per element without reading the metadata again,
 * and an empty array steps over its struct's fields at once (end). */
struct field_def {
        const char *name;
        size_t name_len;
        uint8_t encoding;       /* with its array flags */
        uint8_t format;
        uint16_t tag;
        uint16_t carray_count;
        size_t end;             /* the index after this field and, for a struct, its fields */
};

struct walk {
        const struct eventheader_event *ev;
        const struct field_def *defs;
        size_t n_defs;
        size_t at;              /* in ev->data */
        size_t items;           /* emitted so far: at most EVENTHEADER_ITEMS_MAX */
        eventheader_visit_t visit;
        void *userdata;
        const char **reason;
};

static int parse_defs(const struct eventheader_event *ev, struct field_def **ret, size_t *ret_n, const char **reason) {
        _cleanup_free_ struct field_def *defs = NULL;
        const uint8_t *m = ev->metadata;
        size_t len = ev->metadata_len, at = 0, n = 0, allocated = 0;

        while (at < len) {
                struct field_def d = {};
                const uint8_t *nul = memchr(m + at, '\0', len - at);

                if (!nul)
                        return fail(reason, "a field's name in the metadata is not terminated");
                d.name = (const char *) m + at;
                d.name_len = (size_t) (nul - (m + at));
                at += d.name_len + 1;

                if (at >= len)
                        return fail(reason, "a field's encoding runs past the metadata");
                d.encoding = m[at++];
                if (d.encoding & EVENTHEADER_ENC_CHAIN) {
                        if (at >= len)
                                return fail(reason, "a field's format runs past the metadata");
                        d.format = m[at++];
                        if (d.format & EVENTHEADER_FMT_CHAIN) {
                                if (len - at < 2)
                                        return fail(reason, "a field's tag runs past the metadata");
                                d.tag = (uint16_t) eventheader_read_uint(m + at, 2, ev->big_endian);
                                at += 2;
                        }
                }
                d.format &= EVENTHEADER_FMT_MASK;
                if ((d.encoding & EVENTHEADER_ENC_CARRAY) && (d.encoding & EVENTHEADER_ENC_VARRAY))
                        return fail(reason, "a field is both a constant and a variable array");
                if (d.encoding & EVENTHEADER_ENC_CARRAY) {
                        if (len - at < 2)
                                return fail(reason, "a constant array's length runs past the metadata");
                        d.carray_count = (uint16_t) eventheader_read_uint(m + at, 2, ev->big_endian);
                        at += 2;
                        if (d.carray_count == 0)
                                return fail(reason, "a constant array of 0 elements");
                }
                switch (d.encoding & EVENTHEADER_ENC_MASK) {
                case EVENTHEADER_ENC_STRUCT:
                        if (d.format == 0)
                                return fail(reason, "a struct of 0 fields");
                        break;
                case EVENTHEADER_ENC_INVALID:
                        return fail(reason, "a field of encoding 0 (invalid)");
                default:
                        /* An encoding we do not know has no size we could
                         * step over: the rest cannot be read. */
                        if ((d.encoding & EVENTHEADER_ENC_MASK) >= _EVENTHEADER_ENC_MAX)
                                return fail(reason, "a field of an unknown encoding");
                        break;
                }

                if (ARRAY_RESERVE(defs, allocated, n + 1) < 0)
                        return -ENOMEM;
                defs[n++] = d;
        }
        *ret = TAKE_PTR(defs);
        *ret_n = n;
        return 0;
}

/* Sets the end of field @i (at @depth) and of the fields its struct holds;
 * returns that end, or a negative errno. Recursion is bounded by
 * EVENTHEADER_DEPTH_MAX. */
static ssize_t link_defs(struct field_def *defs, size_t n, size_t i, unsigned depth, const char **reason) {
        size_t j = i + 1;

        if ((defs[i].encoding & EVENTHEADER_ENC_MASK) == EVENTHEADER_ENC_STRUCT) {
                if (depth >= EVENTHEADER_DEPTH_MAX)
                        return fail(reason, "structs nested deeper than 8");
                for (unsigned k = 0; k < defs[i].format; k++) {
                        ssize_t r;

                        /* A struct that says it has more fields than
                         * the metadata holds ends with the metadata, as
                         * LinuxTracepoints' decoder reads it. */
                        if (j >= n)
                                break;
                        r = link_defs(defs, n, j, depth + 1, reason);
                        if (r < 0)
                                return r;
                        j = (size_t) r;
                }
        }
        defs[i].end = j;
        return (ssize_t) j;
}

static int walk_range(struct walk *w, size_t begin, size_t end, unsigned depth);

static int emit(struct walk *w, const struct field_def *d, enum eventheader_item_kind kind, unsigned depth,
                bool in_array, const uint8_t *value, size_t value_len, unsigned unit, uint16_t count) {
        struct eventheader_item item = {
                .kind = kind,
                .name = d->name,
                .name_len = d->name_len,
                .encoding = d->encoding & EVENTHEADER_ENC_MASK,
                .format = (d->encoding & EVENTHEADER_ENC_MASK) == EVENTHEADER_ENC_STRUCT ? 0 : d->format,
                .tag = d->tag,
                .depth = depth,
                .in_array = in_array,
                .big_endian = w->ev->big_endian,
                .count = count,
                .value = value,
                .value_len = value_len,
                .unit = unit,
        };

        if (++w->items > EVENTHEADER_ITEMS_MAX)
                return fail(w->reason, "the event expands to more values than any record holds");
        return w->visit(&item, w->userdata);
}

/* A zero-terminated string of 8, 16 or 32-bit units. */
static int walk_zstring(struct walk *w, const struct field_def *d, unsigned depth, bool in_array) {
        static const uint8_t zero[4];
        const uint8_t *data = w->ev->data + w->at;
        size_t left = w->ev->data_len - w->at, size;
        unsigned unit = 1u << ((d->encoding & EVENTHEADER_ENC_MASK) - EVENTHEADER_ENC_ZSTRING_CHAR8);
        int r;

        for (size = 0; left - size >= unit; size += unit)
                if (memcmp(data + size, zero, unit) == 0) {
                        r = emit(w, d, EVENTHEADER_ITEM_VALUE, depth, in_array, data, size, unit, 0);
                        if (r < 0)
                                return r;
                        w->at += size + unit;
                        return 0;
                }
        return fail(w->reason, "a zero-terminated string runs past the record");
}

/* A string (or binary) counted by its 16-bit length in units. */
static int walk_counted_string(struct walk *w, const struct field_def *d, unsigned depth, bool in_array) {
        const uint8_t *data = w->ev->data + w->at;
        size_t left = w->ev->data_len - w->at, size;
        uint8_t enc = d->encoding & EVENTHEADER_ENC_MASK;
        unsigned unit = enc == EVENTHEADER_ENC_BINARY_LENGTH16_CHAR8 ? 1 :
                                                                       1u << (enc - EVENTHEADER_ENC_STRING_LENGTH16_CHAR8);
        int r;

        if (left < 2)
                return fail(w->reason, "a counted string's length runs past the record");
        size = (size_t) eventheader_read_uint(data, 2, w->ev->big_endian) * unit;
        if (left - 2 < size)
                return fail(w->reason, "a counted string runs past the record");
        r = emit(w, d, EVENTHEADER_ITEM_VALUE, depth, in_array, data + 2, size, unit, 0);
        if (r < 0)
                return r;
        w->at += 2 + size;
        return 0;
}

static int walk_element(struct walk *w, size_t i, unsigned depth, bool in_array) {
        const struct field_def *d = &w->defs[i];
        const uint8_t *data = w->ev->data + w->at;
        size_t left = w->ev->data_len - w->at, size = 0;
        int r;

        switch (d->encoding & EVENTHEADER_ENC_MASK) {
        case EVENTHEADER_ENC_STRUCT:
                r = emit(w, d, EVENTHEADER_ITEM_STRUCT_BEGIN, depth, in_array, NULL, 0, 0, 0);
                if (r < 0)
                        return r;
                r = walk_range(w, i + 1, d->end, depth + 1);
                if (r < 0)
                        return r;
                return emit(w, d, EVENTHEADER_ITEM_STRUCT_END, depth, in_array, NULL, 0, 0, 0);
        case EVENTHEADER_ENC_VALUE8:
                size = 1;
                break;
        case EVENTHEADER_ENC_VALUE16:
                size = 2;
                break;
        case EVENTHEADER_ENC_VALUE32:
                size = 4;
                break;
        case EVENTHEADER_ENC_VALUE64:
                size = 8;
                break;
        case EVENTHEADER_ENC_VALUE128:
                size = 16;
                break;
        case EVENTHEADER_ENC_ZSTRING_CHAR8:
        case EVENTHEADER_ENC_ZSTRING_CHAR16:
        case EVENTHEADER_ENC_ZSTRING_CHAR32:
                return walk_zstring(w, d, depth, in_array);
        case EVENTHEADER_ENC_STRING_LENGTH16_CHAR8:
        case EVENTHEADER_ENC_STRING_LENGTH16_CHAR16:
        case EVENTHEADER_ENC_STRING_LENGTH16_CHAR32:
        case EVENTHEADER_ENC_BINARY_LENGTH16_CHAR8:
                return walk_counted_string(w, d, depth, in_array);
        default:
                /* parse_defs() let no other encoding through. */
                return fail(w->reason, "a field of an unknown encoding");
        }

        if (left < size)
                return fail(w->reason, "a value runs past the record");
        r = emit(w, d, EVENTHEADER_ITEM_VALUE, depth, in_array, data, size, 0, 0);
        if (r < 0)
                return r;
        w->at += size;
        return 0;
}

static int walk_field(struct walk *w, size_t i, unsigned depth) {
        const struct field_def *d = &w->defs[i];
        uint16_t count;
        int r;

        if (!(d->encoding & (EVENTHEADER_ENC_CARRAY | EVENTHEADER_ENC_VARRAY)))
                return walk_element(w, i, depth, false);

        if (d->encoding & EVENTHEADER_ENC_CARRAY)
                count = d->carray_count;
        else {
                if (w->ev->data_len - w->at < 2)
                        return fail(w->reason, "a variable array's count runs past the record");
                count = (uint16_t) eventheader_read_uint(w->ev->data + w->at, 2, w->ev->big_endian);
                w->at += 2;
        }
        r = emit(w, d, EVENTHEADER_ITEM_ARRAY_BEGIN, depth, false, NULL, 0, 0, count);
        if (r < 0)
                return r;
        /* An element may take no byte of the record (a struct of empty
         * arrays): nested counts are bounded by EVENTHEADER_ITEMS_MAX. */
        for (unsigned e = 0; e < count; e++) {
                r = walk_element(w, i, depth, true);
                if (r < 0)
                        return r;
        }
        return emit(w, d, EVENTHEADER_ITEM_ARRAY_END, depth, false, NULL, 0, 0, count);
}

static int walk_range(struct walk *w, size_t begin, size_t end, unsigned depth) {
        for (size_t i = begin; i < end; i = w->defs[i].end) {
                int r = walk_field(w, i, depth);

                if (r < 0)
                        return r;
        }
        return 0;
}

int eventheader_enumerate(const struct eventheader_event *ev, eventheader_visit_t visit, void *userdata,
                          const char **reason) {
        _cleanup_free_ struct field_def *defs = NULL;
        size_t n = 0;
        struct walk w;
        int r;

        if (!ev->has_metadata)
                return 0;
        r = parse_defs(ev, &defs, &n, reason);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n;) {
                ssize_t end = link_defs(defs, n, i, 0, reason);

                if (end < 0)
                        return (int) end;
                i = (size_t) end;
        }

        w = (struct walk) {
                .ev = ev,
                .defs = defs,
                .n_defs = n,
                .visit = visit,
                .userdata = userdata,
                .reason = reason,
        };
        return walk_range(&w, 0, n, 0);
}
