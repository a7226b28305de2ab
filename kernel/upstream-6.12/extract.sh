#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# extract.sh TARBALL SERIES_DIR OUTDIR STAMP
#
# What the selftests of the 6.12 series build against, from Debian's
# linux-source-6.12 tarball and this directory's patches, into OUTDIR:
#   stock-include/linux/user_events.h     the tarball's uapi header
#   patched-include/linux/user_events.h   the same with the series applied
#   tools/testing/selftests/{kselftest.h,kselftest_harness.h,user_events/}
#                                          the tarball's user_events selftests
# and the selftests' sources once more as OUTDIR/ue612_NAME.c (the build
# compiles those). STAMP is written last. Exit 1 when anything is missing
# or a patch does not apply.
set -eu
tar_file="$1"
series_dir="$2"
out="$3"
stamp="$4"
top=linux-source-6.12
header=include/uapi/linux/user_events.h

rm -rf "$out/stock-include" "$out/patched-include" "$out/tools"
mkdir -p "$out/stock-include/linux" "$out/patched-include/linux"
tar -xf "$tar_file" -C "$out" --strip-components=1 \
	"$top/$header" \
	"$top/tools/testing/selftests/kselftest.h" \
	"$top/tools/testing/selftests/kselftest_harness.h" \
	"$top/tools/testing/selftests/user_events"
mv "$out/$header" "$out/stock-include/linux/user_events.h"
rm -rf "$out/include"

# The series' hunks for the uapi header alone, applied to a copy of it.
stage="$out/patched-stage"
rm -rf "$stage"
mkdir -p "$stage/include/uapi/linux"
cp "$out/stock-include/linux/user_events.h" "$stage/$header"
for p in "$series_dir"/*.patch; do
	awk -v want="diff --git a/$header b/$header" '
		/^diff --git / { on = ($0 == want) }
		/^-- $/ { on = 0 }
		on { print }' "$p" > "$stage/hunk"
	[ -s "$stage/hunk" ] || continue
	patch -s -p1 -d "$stage" --no-backup-if-mismatch < "$stage/hunk"
done
mv "$stage/$header" "$out/patched-include/linux/user_events.h"
rm -rf "$stage"

for t in ftrace_test dyn_test perf_test abi_test; do
	cp "$out/tools/testing/selftests/user_events/$t.c" "$out/ue612_$t.c"
done
: > "$stamp"
