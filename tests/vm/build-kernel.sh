#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# build-kernel.sh [--cached-only] [--patched|--debug]
#
# Prints the path of a bzImage for the vm test tier: Debian's own
# linux-source-6.12 (bookworm-backports; build-aux/install-deps.sh installs
# it), `make ARCH=x86_64 tinyconfig` plus tests/vm/kernel.config
# (CONFIG_USER_EVENTS=y, a serial console, and what systemd as PID 1 needs
# for the system tier).
#   (default)   the stock kernel: upstream user_events as Debian ships it
#   --patched   the same kernel with the project's patch series
#               kernel/upstream-6.12/*.patch applied (restricted handles,
#               kernel/upstream-6.12/README.md)
#   --debug     the patched kernel built with tests/vm/kernel-debug.config
#               too (SMP, preemption, KASAN, lockdep, userfaultfd, FUSE),
#               in a tree of its own; no stock image of that tree is built
#
# Cache (tests/vm/kernel-lib.sh's directory), keyed by a hash of the config
# fragment, this recipe's version and the source version:
#   <cache>/tree-<key>/               the configured tree, kept: stock, or
#                                     with the series applied (its
#                                     .series-files says which files differ)
#   <cache>/<key>/bzImage             the stock image
#   <cache>/patched-<key2>/bzImage    the patched image (key2 adds the series)
#   <cache>/patched-<key2>/kselftest/ the series' user_events kselftests with
#                                     the kernel's runner (run_kselftest.sh)
# The patched kernel is built in the same tree after the stock one (kbuild
# records absolute paths, so a copy of the tree would rebuild everything):
# the series is applied to pristine copies of the files it touches, only
# what differs is installed, and make rebuilds only that. A missing stock
# image is built (8-14 min on 2 cores), the patched one then in a minute or
# two; with --cached-only a missing image is an error (exit 1).
#
# Environment: UEBROKER_VM_KERNEL_SOURCE (the source tarball, default
# /usr/src/linux-source-6.12.tar.xz), UEBROKER_VM_JOBS (default nproc).
# Progress goes to stderr, the path alone to stdout. Exit 77 when the
# source or a build tool is missing.

set -euo pipefail

recipe=2   # bump when the steps below change what gets built
here="$(cd "$(dirname "$0")" && pwd)"
series_dir="$here/../../kernel/upstream-6.12"
fragment="$here/kernel.config"
src_tar="${UEBROKER_VM_KERNEL_SOURCE:-/usr/src/linux-source-6.12.tar.xz}"
jobs="${UEBROKER_VM_JOBS:-$(nproc)}"
cached_only=
patched=
debug=
while [ $# -gt 0 ]; do
        case "$1" in
        --cached-only) cached_only=1 ;;
        --patched) patched=1 ;;
        --debug) patched=1; debug=1 ;;
        *) echo "build-kernel.sh: unknown argument $1" >&2; exit 2 ;;
        esac
        shift
done

KERNEL_LOG_TAG="build-kernel"
# shellcheck source=tests/vm/kernel-lib.sh
. "$here/kernel-lib.sh"
log() { kernel_log "$@"; }
cache="$(kernel_cache_dir)"

if [ ! -r "$src_tar" ]; then
        log "no kernel source at $src_tar (install linux-source-6.12 from bookworm-backports: build-aux/install-deps.sh)"
        exit 77
fi

src_version="$(kernel_source_version "$src_tar")"
fragments=("$fragment")
[ -n "$debug" ] && fragments+=("$here/kernel-debug.config")
key="$( { echo "recipe $recipe"; echo "source $src_version"; cat "${fragments[@]}"; } | sha256sum | cut -c1-16)"
tree="$cache/tree-$key"
stock_dir="$cache/$key"
# the series, in order, without its cover letter
series=()
for p in "$series_dir"/*.patch; do
        [ -e "$p" ] && [ "${p##*/}" != 0000-cover-letter.patch ] && series+=("$p")
done
patched_key="$( { echo "$key"; cat ${series[@]+"${series[@]}"}; } | sha256sum | cut -c1-16)"
patched_dir="$cache/patched-$patched_key"
[ -n "$debug" ] && patched_dir="$cache/debug-$patched_key"

if [ -n "$patched" ]; then dir="$patched_dir"; else dir="$stock_dir"; fi
image="$dir/bzImage"
if [ -s "$image" ]; then
        log "cached: $image ($src_version${patched:+, patched})"
        echo "$image"
        exit 0
fi
if [ -n "$cached_only" ]; then
        log "no cached kernel at $image"
        exit 1
fi

r=0
kernel_check_tools || r=$?
[ $r = 0 ] || exit $r

# publish TREE DIR: copies the built image and config out of TREE into DIR.
publish() {
        mkdir -p "$2"
        cp "$1/.config" "$2/config"
        cp "$1/arch/x86/boot/bzImage" "$2/bzImage.tmp"
        mv "$2/bzImage.tmp" "$2/bzImage"
        echo "$src_version" > "$2/source-version"
}

# series_files SERIES...: the files the patches touch
series_files() {
        [ $# -gt 0 ] || return 0
        sed -n 's|^+++ b/||p' "$@" | sort -u
}

# install_series SERIES...: makes the tree stock plus SERIES (none: stock).
# Pristine copies come from the tarball; only files that differ are copied
# over, so make rebuilds only what changed.
install_series() {
        local want old f stage p top
        want="$(series_files "$@")"
        old="$(cat "$tree/.series-files" 2>/dev/null || true)"
        [ -n "$want$old" ] || return 0
        stage="$(mktemp -d "${TMPDIR:-/tmp}/uebroker-kpatch.XXXXXX")"
        # members missing from the tarball (files a patch creates) are fine
        # shellcheck disable=SC2046 # one word per path
        top="$(tar -tf "$src_tar" 2>/dev/null | head -n 1 | cut -d/ -f1)"
        tar -xf "$src_tar" -C "$stage" --strip-components=1 \
                $(printf '%s\n' $want $old | sort -u | sed "s|^|$top/|") 2>/dev/null || true
        for p in "$@"; do
                patch -s -d "$stage" -p1 --no-backup-if-mismatch < "$p" >&2 ||
                        { log "$(basename "$p") does not apply to $src_version"; rm -rf "$stage"; return 1; }
        done
        for f in $(printf '%s\n' $want $old | sort -u); do
                if [ -e "$stage/$f" ]; then
                        cmp -s "$stage/$f" "$tree/$f" || cp "$stage/$f" "$tree/$f"
                else
                        rm -f "$tree/$f"
                fi
        done
        printf '%s\n' $want > "$tree/.series-files"
        rm -rf "$stage"
}

# publish DIR: copies the built image and config out of the tree into DIR.
publish() {
        mkdir -p "$1"
        cp "$tree/.config" "$1/config"
        cp "$tree/arch/x86/boot/bzImage" "$1/bzImage.tmp"
        mv "$1/bzImage.tmp" "$1/bzImage"
        echo "$src_version" > "$1/source-version"
}

mkdir -p "$cache"
# One build per tree at a time; a second caller waits and then finds the image.
exec 9>"$cache/tree-$key.lock"
flock 9
start=$(date +%s)
if [ ! -e "$tree/.configured" ]; then
        log "extracting and configuring $src_version in $tree"
        rm -rf "$tree"
        mkdir -p "$tree"
        tar -xf "$src_tar" -C "$tree" --strip-components=1
        (cd "$tree" && kernel_configure "${fragments[@]}") || exit 1
        touch "$tree/.configured"
fi
if [ -z "$debug" ] && [ ! -s "$stock_dir/bzImage" ]; then
        install_series || exit 1
        log "building the stock kernel, key $key, in $tree ($jobs jobs, nice 10)"
        (cd "$tree" && nice -n 10 make -s ARCH=x86_64 -j"$jobs" bzImage >&2)
        publish "$stock_dir"
        log "built $stock_dir/bzImage in $(( $(date +%s) - start )) s"
fi
if [ -z "$patched" ]; then
        echo "$image"
        exit 0
fi
if [ -s "$image" ]; then
        log "cached (built meanwhile): $image"
        echo "$image"
        exit 0
fi

if [ ${#series[@]} = 0 ]; then
        log "no patches in $series_dir"
        exit 1
fi
# Each patch builds on its own: every prefix of the series compiles
# trace_events_user.c warning-free with W=1 (seconds each)
if [ -z "$debug" ]; then
        for ((k = 1; k < ${#series[@]}; k++)); do
                install_series "${series[@]:0:k}" || exit 1
                (cd "$tree" && nice -n 10 make -s ARCH=x86_64 W=1 KCFLAGS=-Werror kernel/trace/trace_events_user.o >&2) ||
                        { log "the series up to $(basename "${series[k - 1]}") does not build"; exit 1; }
        done
        log "each of the ${#series[@]} patches builds on its own (W=1, -Werror)"
fi
install_series "${series[@]}" || exit 1
log "building the patched kernel, key $patched_key, in $tree ($jobs jobs, nice 10)"
(cd "$tree" && nice -n 10 make -s ARCH=x86_64 -j"$jobs" bzImage >&2)
# The series' user_events selftests, built by the kernel's own kselftest
# make against this tree's (patched) uapi headers and installed with its
# runner, run_kselftest.sh: the vm tier runs them as kselftest does.
log "building the user_events kselftests into $patched_dir/kselftest"
rm -rf "$patched_dir/kselftest"
mkdir -p "$patched_dir"
(cd "$tree" && nice -n 10 make -s ARCH=x86_64 headers >&2 &&
        nice -n 10 make -s -C tools/testing/selftests TARGETS=user_events \
                INSTALL_PATH="$patched_dir/kselftest" install >&2) || exit 1
publish "$patched_dir"
for old in "$cache"/patched-*/ "$cache"/debug-*/; do
        old="${old%/}"
        [ "$old" = "$patched_dir" ] && continue
        [ "$(cat "$old/tree" 2>/dev/null)" = "$key" ] && rm -rf "$old"
done
echo "$key" > "$patched_dir/tree"
log "built $image in $(( $(date +%s) - start )) s"
echo "$image"
