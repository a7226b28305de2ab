#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# extract-kernel-sample.sh TARBALL OUTDIR EXAMPLE STAMP
#
# The kernel's user_events sample, unchanged, from Debian's
# linux-source-6.12 tarball (bookworm-backports; build-aux/install-deps.sh
# installs it): samples/user_events/example.c as EXAMPLE, and the uapi
# header it includes as OUTDIR/kernel-sample-include/linux/user_events.h
# (the build machine's own <linux/user_events.h> may be 6.1's, whose
# struct user_reg is another layout under the same name). STAMP is written
# last. Exit 1 when the tarball lacks them.
set -eu
tar_file="$1"
out="$2"
example="$3"
stamp="$4"
top="$(tar -tf "$tar_file" 2>/dev/null | head -n 1 | cut -d/ -f1)"
stage="$out/kernel-sample-stage"
rm -rf "$stage" "$out/kernel-sample-include"
mkdir -p "$stage" "$out/kernel-sample-include/linux"
tar -xf "$tar_file" -C "$stage" --strip-components=1 \
	"$top/samples/user_events/example.c" "$top/include/uapi/linux/user_events.h"
mv "$stage/include/uapi/linux/user_events.h" "$out/kernel-sample-include/linux/user_events.h"
mv "$stage/samples/user_events/example.c" "$example"
rm -rf "$stage"
: > "$stamp"
