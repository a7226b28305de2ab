/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * EventHeader records (eventheader-decode.h) shown for people and for
 * machines, in forms close to LinuxTracepoints' perf-decode:
 *
 *   text:  "MyProvider:MyEvent level=4 keyword=0x1 count=3 msg=hello ips=[1.2.3.4,::1] s={a=1 b=0x0a}"
 *          (then group=, opcode=, id= version=, tag=, activity= related=
 *          after keyword when the event has them)
 *   JSON:  "fields":{"count":3,"msg":"hello","ips":["1.2.3.4","::1"],"s":{"a":1,"b":"0x0A"}},
 *          "eventheader":{"provider":"MyProvider","event":"MyEvent","level":4,"keyword":"0x1",...}
 *
 * Values in their EventHeader formats: integers as numbers, hex integers
 * as "0x..." strings, booleans, errno as "ENOENT(2)", time as
 * "2026-12-03T10:00:00" (UTC; "TIME(n)" past what gmtime() takes), floats
 * as the shortest text that reads back the same, binary as "01 02 03" (in
 * text 0x010203), UUIDs, ports, IPv4 and IPv6 addresses, strings from
 * UTF-8, UTF-16, UTF-32 (event byte order, or by their BOM for the
 * *_bom/xml/json formats) and Latin-1 (string8), arrays, structs; a
 * counted value of length 0 with a fixed-size format is null. A field's
 * nonzero tag is shown in its JSON name, "name;tag=0x12", as perf-decode
 * does. JSON member names may repeat (EventHeader allows two fields of one
 * name; perf-decode writes them so too). Strings are escaped as
 * text-escape.h describes; the keyword is a string because JSON numbers
 * lose a u64's low bits.
 */

#include <stddef.h>

#include "strbuf.h"

/* Each appends the rendering of a record of tracepoint @name with
 * @payload (the bytes after the common fields) to @sb, or leaves @sb as
 * it was and returns -EINVAL (not an EventHeader tracepoint), -EBADMSG
 * (a malformed event) or -ENOMEM, with the reason in *reason. */
int eventheader_format_text(const char *name, size_t name_len, const void *payload, size_t len, struct strbuf *sb,
                            const char **reason);
/* Two members, no braces: "fields":{...},"eventheader":{...}. */
int eventheader_format_json(const char *name, size_t name_len, const void *payload, size_t len, struct strbuf *sb,
                            const char **reason);
