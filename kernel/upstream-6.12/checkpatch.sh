#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# checkpatch.sh TARBALL PATCH...
#
# Runs linux-source-6.12's scripts/checkpatch.pl (--strict, no tree) on the
# series: the kernel's own style check, as the tracing maintainers would.
# Exit 0 when every patch is clean (no error, warning or check), 77 when
# the tarball or perl is missing. bash, not sh: CI runs the unit suite
# under valgrind, which finds dash's own leaks.
set -eu
tar_file="$1"
shift
[ -r "$tar_file" ] || { echo "SKIP: no $tar_file (apt-get install linux-source-6.12)"; exit 77; }
command -v perl > /dev/null || { echo "SKIP: no perl"; exit 77; }
# No trap on EXIT: bash leaks its parse of the trap under valgrind, which
# CI runs the unit suite in.
work="$(mktemp -d "${TMPDIR:-/tmp}/uebroker-checkpatch.XXXXXX")"
top="$(tar -tf "$tar_file" 2>/dev/null | head -n 1 | cut -d/ -f1)"
if ! tar -xf "$tar_file" -C "$work" --strip-components=1 \
	"$top/scripts/checkpatch.pl" "$top/scripts/spelling.txt" "$top/scripts/const_structs.checkpatch"; then
	rm -rf "$work"
	exit 1
fi
status=0
for p in "$@"; do
	out="$(perl "$work/scripts/checkpatch.pl" --no-tree --strict --color=never "$p" 2>&1)" || true
	echo "$out"
	case "$out" in
	*"total: 0 errors, 0 warnings, 0 checks"*) ;;
	*) status=1 ;;
	esac
done
rm -rf "$work"
exit "$status"
