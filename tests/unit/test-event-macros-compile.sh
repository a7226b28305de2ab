#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-event-macros-compile.sh INCLUDE_DIR CC...
#
# UEB_EVENT()'s write calls are type-checked by the compiler: a call with
# the right C types compiles, a call with a wrong type or the wrong number
# of arguments, or a field of an unknown type, does not. Compiled with the
# project's warning flags (-Wall -Wextra -Werror), as a user's build would.
set -u

include="$1"
shift
compiler=("$@")
dir="$(mktemp -d "${TMPDIR:-/tmp}/uebroker-macros.XXXXXX")" || exit 1
trap 'rm -rf "$dir"' EXIT
failures=0

# try EXPECT NAME BODY: EXPECT is "compiles" or "refused".
try() {
        local expect="$1" name="$2" body="$3" got
        cat >"$dir/t.c" <<C
#include <stdint.h>
#include "uebroker-event.h"
UEB_EVENT(hello_tick, UEB_FIELD(u32, count), UEB_STRING(msg))
UEB_EVENT(arrays, UEB_ARRAY(u16, w), UEB_CHAR_ARRAY(tag, 8))
int use(struct ueb_event *e);
int use(struct ueb_event *e) {
        const uint16_t w[2] = { 1, 2 };
        (void) w;
        $body
}
C
        if "${compiler[@]}" -std=gnu11 -Wall -Wextra -Werror -I"$include" -fsyntax-only "$dir/t.c" >"$dir/out" 2>&1; then
                got=compiles
        else
                got=refused
        fi
        if [ "$got" = "$expect" ]; then
                echo "ok: $name: $got"
        else
                echo "FAIL: $name: $got, expected $expect"
                sed 's/^/    /' "$dir/out"
                failures=$((failures + 1))
        fi
}

try compiles "right types" 'return ueb_write_hello_tick(e, 1u, "hi") + ueb_write_arrays(e, w, 2, "tag");'
try refused "string for u32" 'return ueb_write_hello_tick(e, "1", "hi");'
try refused "integer for a string" 'return ueb_write_hello_tick(e, 1u, 2);'
try refused "too few arguments" 'return ueb_write_hello_tick(e, 1u);'
try refused "too many arguments" 'return ueb_write_hello_tick(e, 1u, "hi", 3);'
try refused "array of the wrong type" 'const uint32_t v[1] = { 1 }; return ueb_write_arrays(e, v, 1, "t");'
try refused "array without its count" 'return ueb_write_arrays(e, w, "tag");'
try refused "no event handle" 'return ueb_write_hello_tick(1u, "hi");'

# A field type UEB_FIELD does not know.
cat >"$dir/bad.c" <<'C'
#include "uebroker-event.h"
UEB_EVENT(bad, UEB_FIELD(u31, x))
C
if "${compiler[@]}" -std=gnu11 -Wall -Wextra -Werror -I"$include" -fsyntax-only "$dir/bad.c" >"$dir/out" 2>&1; then
        echo "FAIL: UEB_FIELD(u31, x) compiles"
        failures=$((failures + 1))
elif grep -q 'u31' "$dir/out"; then
        echo "ok: unknown field type refused"
else
        echo "FAIL: UEB_FIELD(u31, x) refused for another reason:"
        sed 's/^/    /' "$dir/out"
        failures=$((failures + 1))
fi

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
