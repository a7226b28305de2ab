/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the EventHeader decoder and its renderings
 * (eventheader-decode.h, eventheader-format.h). The input is a tracepoint
 * name up to the first NUL (at most 256 bytes; without a NUL the name is
 * "P_L4K1" and the whole input the payload), then the payload. Checks:
 * text and JSON agree on whether the event decodes; a refusal comes with
 * a reason and leaves the output untouched; the walk opens and closes
 * what it opens, stays within EVENTHEADER_DEPTH_MAX and hands out only
 * bytes of the payload; the text has no control bytes (a terminal is
 * safe) and the JSON's brackets balance outside its strings. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "eventheader-decode.h"
#include "eventheader-format.h"
#include "fuzz-check.h"
#include "strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct walk_state {
        const uint8_t *begin, *end;
        unsigned open;
        unsigned items;
};

static int visit(const struct eventheader_item *it, void *userdata) {
        struct walk_state *w = userdata;

        w->items++;
        check(it->depth <= EVENTHEADER_DEPTH_MAX);
        switch (it->kind) {
        case EVENTHEADER_ITEM_ARRAY_BEGIN:
        case EVENTHEADER_ITEM_STRUCT_BEGIN:
                w->open++;
                check(w->open <= 2 * (EVENTHEADER_DEPTH_MAX + 1));
                break;
        case EVENTHEADER_ITEM_ARRAY_END:
        case EVENTHEADER_ITEM_STRUCT_END:
                check(w->open > 0);
                w->open--;
                break;
        case EVENTHEADER_ITEM_VALUE:
                check(it->value_len == 0 || (it->value >= w->begin && it->value + it->value_len <= w->end));
                break;
        }
        return 0;
}

/* Brackets outside strings balance; no raw control byte anywhere. */
static void check_json(const char *s) {
        int depth = 0;
        bool in_string = false;

        for (; *s; s++) {
                check((unsigned char) *s >= 0x20);
                if (in_string) {
                        if (*s == '\\')
                                s++;
                        else if (*s == '"')
                                in_string = false;
                        continue;
                }
                if (*s == '"')
                        in_string = true;
                else if (*s == '{' || *s == '[')
                        depth++;
                else if (*s == '}' || *s == ']')
                        check(--depth >= 0);
        }
        check(!in_string);
        check(depth == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const uint8_t *nul = memchr(data, '\0', size < 257 ? size : 257);
        const char *name = "P_L4K1";
        size_t name_len = 6;
        const uint8_t *payload = data;
        size_t len = size;
        struct strbuf text = STRBUF_INIT, json = STRBUF_INIT;
        const char *reason_text = NULL, *reason_json = NULL, *reason = NULL;
        struct eventheader_event ev;
        int rt, rj, r;

        if (nul) {
                name = (const char *) data;
                name_len = (size_t) (nul - data);
                payload = nul + 1;
                len = size - name_len - 1;
        }

        rt = eventheader_format_text(name, name_len, payload, len, &text, &reason_text);
        rj = eventheader_format_json(name, name_len, payload, len, &json, &reason_json);
        check(rt == rj);
        if (rt < 0) {
                check(rt == -EINVAL || rt == -EBADMSG);
                check(reason_text && reason_json && strcmp(reason_text, reason_json) == 0);
                check(!text.buf && !json.buf);
        } else {
                check(text.buf && json.buf && !text.oom && !json.oom);
                for (const char *c = text.buf; *c; c++)
                        check((unsigned char) *c >= 0x20 && *c != 0x7f);
                struct strbuf doc = STRBUF_INIT;

                /* '"fields":...,"eventheader":...' made one object */
                strbuf_append_c(&doc, '{');
                strbuf_append(&doc, json.buf);
                strbuf_append_c(&doc, '}');
                check(!doc.oom);
                check_json(doc.buf);
                strbuf_done(&doc);
        }

        r = eventheader_decode(name, name_len, payload, len, &ev, &reason);
        if (r >= 0) {
                struct walk_state w = { .begin = payload, .end = payload + len };

                check(ev.data >= payload && ev.data + ev.data_len == payload + len);
                r = eventheader_enumerate(&ev, visit, &w, &reason);
                if (r >= 0)
                        check(w.open == 0);
                check((r >= 0) == (rt >= 0));
        } else
                check(r == rt);

        strbuf_done(&text);
        strbuf_done(&json);
        return 0;
}
