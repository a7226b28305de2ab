#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# apply.sh LINUX_TREE
#
# Puts the kernel provider into a Linux 6.1 source tree: copies the uapi
# header and the implementation, and hooks Kconfig.user_events_v1 and the
# object into kernel/trace/{Kconfig,Makefile} (once; running it again only
# refreshes the copied files). Then enable CONFIG_USER_EVENTS_V1.
set -eu
tree="${1:?usage: $0 LINUX_TREE}"
here="$(cd "$(dirname "$0")" && pwd)"
[ -f "$tree/kernel/trace/Kconfig" ] || { echo "apply.sh: $tree is not a Linux tree" >&2; exit 1; }

# cp only when the content differs: an unchanged file keeps its mtime, so
# make rebuilds only what changed
install_file() {
        cmp -s "$1" "$2" || cp "$1" "$2"
}
install_file "$here/include/uapi/linux/user_events.h" "$tree/include/uapi/linux/user_events.h"
install_file "$here/trace/trace_user_events_v1.c" "$tree/kernel/trace/trace_user_events_v1.c"
install_file "$here/trace/Kconfig.user_events_v1" "$tree/kernel/trace/Kconfig.user_events_v1"

# kernel/trace/Kconfig ends with "endif # FTRACE" and "endif # TRACING_SUPPORT":
# source ours inside both, right before the first of them.
if ! grep -q 'Kconfig.user_events_v1' "$tree/kernel/trace/Kconfig"; then
        sed -i '0,/^endif # FTRACE/s//source "kernel\/trace\/Kconfig.user_events_v1"\n\nendif # FTRACE/' \
                "$tree/kernel/trace/Kconfig"
        grep -q 'Kconfig.user_events_v1' "$tree/kernel/trace/Kconfig" ||
                { echo "apply.sh: no 'endif # FTRACE' in kernel/trace/Kconfig" >&2; exit 1; }
fi
if ! grep -q 'trace_user_events_v1.o' "$tree/kernel/trace/Makefile"; then
        # shellcheck disable=SC2016 # a make variable, written as is
        printf 'obj-$(CONFIG_USER_EVENTS_V1) += trace_user_events_v1.o\n' >> "$tree/kernel/trace/Makefile"
fi
