/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * eventheader-dat-json FILE.dat: each EventHeader event of a .dat file of
 * LinuxTracepoints' tests (records of: a little-endian u32 size that
 * counts itself, the tracepoint name with its NUL, the event's bytes),
 * decoded as uebctl record --json decodes it (eventheader-format.h), one
 * JSON object a line: {"name":"TRACEPOINT",FIELDS_AND_EVENTHEADER} or
 * {"name":"TRACEPOINT","error":"REASON"}. compare-eventheader-oracle.py
 * holds them against LinuxTracepoints' own decoding of the same file.
 * Exit 1 when the file does not hold together.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eventheader-format.h"
#include "json-string.h"
#include "strbuf.h"

int main(int argc, char *argv[]) {
        static uint8_t data[1 << 22];
        size_t len, pos = 0;
        FILE *f;

        if (argc != 2) {
                fprintf(stderr, "usage: eventheader-dat-json FILE.dat\n");
                return 2;
        }
        f = fopen(argv[1], "rbe");
        if (!f) {
                fprintf(stderr, "eventheader-dat-json: %s: %m\n", argv[1]);
                return 1;
        }
        len = fread(data, 1, sizeof(data), f);
        if (ferror(f) || !feof(f)) {
                fprintf(stderr, "eventheader-dat-json: %s: unreadable or larger than %zu bytes\n", argv[1],
                        sizeof(data));
                fclose(f);
                return 1;
        }
        fclose(f);

        while (pos < len) {
                struct strbuf sb = STRBUF_INIT;
                const char *reason = NULL, *name;
                size_t name_len;
                uint32_t size;
                int r;

                if (len - pos < sizeof(size))
                        goto malformed;
                size = (uint32_t) data[pos] | (uint32_t) data[pos + 1] << 8 | (uint32_t) data[pos + 2] << 16 |
                       (uint32_t) data[pos + 3] << 24;
                if (size <= sizeof(size) || size - sizeof(size) > len - pos - sizeof(size))
                        goto malformed;
                name = (const char *) data + pos + sizeof(size);
                size -= sizeof(size);
                name_len = strnlen(name, size);
                if (name_len == size)
                        goto malformed;
                strbuf_append(&sb, "{\"name\":");
                json_append_string(&sb, name, name_len);
                strbuf_append_c(&sb, ',');
                r = eventheader_format_json(name, name_len, name + name_len + 1, size - name_len - 1, &sb, &reason);
                if (r == -ENOMEM)
                        return 1;
                if (r < 0) {
                        strbuf_append(&sb, "\"error\":");
                        json_append_string(&sb, reason ?: "?", strlen(reason ?: "?"));
                }
                strbuf_append(&sb, "}\n");
                if (sb.oom)
                        return 1;
                fwrite(sb.buf, 1, sb.len, stdout);
                strbuf_done(&sb);
                pos += sizeof(size) + size;
        }
        return fflush(stdout) == 0 ? 0 : 1;
malformed:
        fprintf(stderr, "eventheader-dat-json: %s: a record at byte %zu does not hold together\n", argv[1], pos);
        return 1;
}
