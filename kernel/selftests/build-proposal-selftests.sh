#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# build-proposal-selftests.sh check TARBALL UAPI_DIR WORKDIR CC...
# build-proposal-selftests.sh build TARBALL UAPI_DIR WORKDIR OUTDIR CC...
#
# The user_events selftests that Debian's linux-source-6.1 carries
# (tools/testing/selftests/user_events/), compiled unchanged against this
# directory's uapi header (UAPI_DIR/linux/user_events.h) the way their
# Makefile does (-Wall, -lrt -lpthread -lm), as a new user would.
#
# They are the revision of the interface that Linux 5.18 to 6.3 carried
# (depending on BROKEN), later than the v10 proposal this provider
# implements: `struct user_reg` there names its third field `status_bit`, a
# bit number in a bitmap status page, where v10 (and this header) has
# `status_index`, a byte of the page (kernel/README.md). So:
#   dyn_test.c     uses only what both have: it must build;
#   ftrace_test.c, perf_test.c
#                  must fail to build on `status_bit` and on nothing else,
#                  and build and link once that one name is mapped to
#                  `status_index` on the command line (-D): everything else
#                  they take from the header (struct iovec through
#                  <sys/uio.h>, DYN_LOC, the ioctls) is there.
# `build` builds the three that way, dyn_test.c unchanged and the other two
# with that one -D, as OUTDIR/proposal_{dyn,ftrace,perf}_test for the vm
# tier's run on the 6.1 kernel (proposal_selftests.sh).
# `check` also runs 6.1's scripts/headers_install.sh and
# usr/include/headers_check.pl on the header and compiles the result the
# way usr/include/Makefile's header test does (C90, included twice).
#
# `check` prints TAP and exits 0 when every check passed, 1 otherwise.
# Both exit 77 when TARBALL is missing (apt-get install linux-source-6.1;
# build-aux/install-deps.sh installs it). The files are extracted once
# into WORKDIR (again when the tarball changes).

set -u

mode="${1:?usage: $0 check|build TARBALL UAPI_DIR WORKDIR [OUTDIR] CC...}"
tarball="$2"
uapi="$(cd "$3" && pwd)" || exit 1
work="$4"
shift 4
outdir=
if [ "$mode" = build ]; then
        outdir="$1"
        shift
fi
compiler=("$@")
[ ${#compiler[@]} -gt 0 ] || { echo "$0: no compiler given" >&2; exit 2; }
export LC_ALL=C

if [ ! -r "$tarball" ]; then
        echo "SKIP: no kernel source at $tarball (apt-get install linux-source-6.1, or build-aux/install-deps.sh)"
        exit 77
fi

members=(tools/testing/selftests/user_events/ftrace_test.c
         tools/testing/selftests/user_events/dyn_test.c
         tools/testing/selftests/user_events/perf_test.c
         tools/testing/selftests/kselftest_harness.h
         tools/testing/selftests/kselftest.h
         scripts/headers_install.sh
         scripts/unifdef.c
         usr/include/headers_check.pl)
src="$work/linux"
sel="$src/tools/testing/selftests/user_events"

# extract: the members above into $src, unless already there from this tarball
extract() {
        local stamp patterns=() m
        stamp="$(stat -c '%n %s %Y' "$tarball") ${members[*]}"
        [ "$(cat "$src/.stamp" 2>/dev/null)" = "$stamp" ] && return 0
        rm -rf "$src" "$src.tmp"
        mkdir -p "$src.tmp" || return 1
        for m in "${members[@]}"; do
                patterns+=("*/$m")
        done
        tar -xJf "$tarball" -C "$src.tmp" --strip-components=1 --wildcards "${patterns[@]}" || return 1
        for m in "${members[@]}"; do
                [ -f "$src.tmp/$m" ] || { echo "$tarball has no $m" >&2; return 1; }
        done
        echo "$stamp" > "$src.tmp/.stamp"
        mv "$src.tmp" "$src"
}

# compile NAME OUT [CFLAGS...]: builds the selftest NAME.c as its Makefile does
compile() {
        local name="$1" out="$2"
        shift 2
        "${compiler[@]}" -Wall "$@" -I"$uapi" -o "$out" "$sel/$name.c" -lrt -lpthread -lm
}

mkdir -p "$work" || exit 1
exec 9>"$work/.lock"
flock 9
extract || { echo "extracting from $tarball failed" >&2; exit 1; }

if [ "$mode" = build ]; then
        compile dyn_test "$outdir/proposal_dyn_test" &&
                compile ftrace_test "$outdir/proposal_ftrace_test" -Dstatus_bit=status_index &&
                compile perf_test "$outdir/proposal_perf_test" -Dstatus_bit=status_index
        exit
fi
[ "$mode" = check ] || { echo "$0: unknown mode $mode" >&2; exit 2; }

tmp="$(mktemp -d "${TMPDIR:-/tmp}/uebroker-proposal.XXXXXX")" || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
failures=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failures=$((failures + 1)); echo "not ok $n - $*"; }
show() { head -n 60 "$1" | sed 's/^/# /'; }

# The header as an exported uapi header.
header="$tmp/usr/include/linux/user_events.h"
mkdir -p "$tmp/scripts" "$(dirname "$header")"
if ! "${compiler[@]}" -o "$tmp/scripts/unifdef" "$src/scripts/unifdef.c" >"$tmp/log" 2>&1; then
        show "$tmp/log"
        not_ok "6.1's scripts/unifdef builds"
elif (cd "$tmp" && sh "$src/scripts/headers_install.sh" "$uapi/linux/user_events.h" "$header") >"$tmp/log" 2>&1 &&
     [ -s "$header" ]; then
        ok "scripts/headers_install.sh installs the header (SPDX note, no CONFIG_ leak)"
        if grep -q 'uio\.h' "$header" && ! grep -q 'linux/uio\.h' "$header"; then
                ok "the installed header includes <sys/uio.h>, not the kernel's <linux/uio.h>"
        else
                grep -n 'uio' "$header" | sed 's/^/# /'
                not_ok "the installed header includes <sys/uio.h>, not the kernel's <linux/uio.h>"
        fi
        if perl "$src/usr/include/headers_check.pl" /usr/include x86 "$header" >"$tmp/log" 2>&1; then
                ok "usr/include/headers_check.pl accepts it"
        else
                show "$tmp/log"
                not_ok "usr/include/headers_check.pl accepts it"
        fi
        if "${compiler[@]}" -std=c90 -Wall -Werror=implicit-function-declaration -fsyntax-only \
                -I"$tmp/usr/include" -x c /dev/null -include "$header" -include "$header" >"$tmp/log" 2>&1; then
                ok "it compiles alone as C90, included twice (usr/include/Makefile's header test)"
        else
                show "$tmp/log"
                not_ok "it compiles alone as C90, included twice (usr/include/Makefile's header test)"
        fi
else
        show "$tmp/log"
        not_ok "scripts/headers_install.sh installs the header (SPDX note, no CONFIG_ leak)"
fi

# dyn_test.c: unchanged, it builds.
if compile dyn_test "$tmp/dyn_test" >"$tmp/log" 2>&1; then
        ok "dyn_test.c builds unchanged against the header"
else
        show "$tmp/log"
        not_ok "dyn_test.c builds unchanged against the header"
fi

# ftrace_test.c and perf_test.c: status_bit is all they miss.
for name in ftrace_test perf_test; do
        compile "$name" "$tmp/$name" >"$tmp/log" 2>&1
        rc=$?
        errors="$(grep -cE ': (fatal )?error: ' "$tmp/log")"
        others="$(grep -E ': (fatal )?error: ' "$tmp/log" | grep -cvE "member named .status_bit.")"
        if [ $rc != 0 ] && [ "$errors" -gt 0 ] && [ "$others" = 0 ]; then
                ok "$name.c unchanged: its only errors ($errors) are the 5.18-6.3 field status_bit"
        else
                grep -E ': (fatal )?error: ' "$tmp/log" | grep -vE "member named .status_bit." > "$tmp/others"
                show "$tmp/others"
                not_ok "$name.c unchanged: its only errors are the 5.18-6.3 field status_bit (exit $rc, $others other errors)"
        fi
        if compile "$name" "$tmp/$name" -Dstatus_bit=status_index >"$tmp/log" 2>&1; then
                ok "$name.c builds and links with -Dstatus_bit=status_index"
        else
                show "$tmp/log"
                not_ok "$name.c builds and links with -Dstatus_bit=status_index"
        fi
done

echo "1..$n"
[ $failures = 0 ]
