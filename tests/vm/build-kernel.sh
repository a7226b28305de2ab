#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# build-kernel.sh [--cached-only] [--patched]
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
#
# Cache (tests/vm/kernel-lib.sh's directory), keyed by a hash of the config
# fragment, this recipe's version and the source version:
#   <cache>/tree-<key>/               the stock tree, configured and built,
#                                     kept so the patched one starts from it
#   <cache>/<key>/bzImage             the stock image
#   <cache>/patched-tree-<key>/       a copy of the built stock tree with the
#                                     series applied: a change to the series
#                                     rebuilds only the files it touches
#   <cache>/patched-<key2>/bzImage    the patched image (key2 adds the series)
# A missing stock image is built (8-14 min on 2 cores), the patched one then
# in a minute or two; with --cached-only a missing image is an error (exit 1).
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
while [ $# -gt 0 ]; do
        case "$1" in
        --cached-only) cached_only=1 ;;
        --patched) patched=1 ;;
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
key="$( { echo "recipe $recipe"; echo "source $src_version"; cat "$fragment"; } | sha256sum | cut -c1-16)"
tree="$cache/tree-$key"
stock_dir="$cache/$key"
series=("$series_dir"/*.patch)
[ -e "${series[0]}" ] || series=()
patched_key="$( { echo "$key"; cat ${series[@]+"${series[@]}"}; } | sha256sum | cut -c1-16)"
ptree="$cache/patched-tree-$key"
patched_dir="$cache/patched-$patched_key"

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

mkdir -p "$cache"
# One build per tree at a time; a second caller waits and then finds the image.
exec 9>"$cache/tree-$key.lock"
flock 9
start=$(date +%s)
if [ ! -s "$stock_dir/bzImage" ]; then
        if [ ! -e "$tree/.configured" ]; then
                log "extracting and configuring $src_version in $tree"
                rm -rf "$tree"
                mkdir -p "$tree"
                tar -xf "$src_tar" -C "$tree" --strip-components=1
                (cd "$tree" && kernel_configure "$fragment") || exit 1
                touch "$tree/.configured"
        fi
        log "building the stock kernel, key $key, in $tree ($jobs jobs, nice 10)"
        (cd "$tree" && nice -n 10 make -s ARCH=x86_64 -j"$jobs" bzImage >&2)
        publish "$tree" "$stock_dir"
        log "built $stock_dir/bzImage in $(( $(date +%s) - start )) s"
fi
if [ -z "$patched" ]; then
        echo "$image"
        exit 0
fi

if [ ${#series[@]} = 0 ]; then
        log "no patches in $series_dir"
        exit 1
fi
if [ ! -e "$ptree/.copied" ]; then
        log "copying the built stock tree to $ptree"
        rm -rf "$ptree"
        cp -a "$tree" "$ptree"
        touch "$ptree/.copied"
fi
# Apply the series to pristine copies of the files it touches (from the
# stock tree), then install only what differs: make rebuilds what changed.
stage="$(mktemp -d "${TMPDIR:-/tmp}/uebroker-kpatch.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
files="$(sed -n 's|^+++ b/||p' "${series[@]}" | sort -u)"
for f in $files; do
        mkdir -p "$stage/$(dirname "$f")"
        if [ -e "$tree/$f" ]; then cp "$tree/$f" "$stage/$f"; fi
done
for p in "${series[@]}"; do
        patch -s -d "$stage" -p1 --no-backup-if-mismatch < "$p" >&2 ||
                { log "$(basename "$p") does not apply to $src_version"; exit 1; }
done
for f in $files; do
        cmp -s "$stage/$f" "$ptree/$f" || cp "$stage/$f" "$ptree/$f"
done
# files an earlier series touched and this one does not: back to stock
if [ -e "$ptree/.series-files" ]; then
        for f in $(cat "$ptree/.series-files"); do
                case " $files " in *" $f "*) continue ;; esac
                if [ -e "$tree/$f" ]; then cmp -s "$tree/$f" "$ptree/$f" || cp "$tree/$f" "$ptree/$f"
                else rm -f "$ptree/$f"; fi
        done
fi
echo "$files" > "$ptree/.series-files"
log "building the patched kernel, key $patched_key, in $ptree ($jobs jobs, nice 10)"
(cd "$ptree" && nice -n 10 make -s ARCH=x86_64 -j"$jobs" bzImage >&2)
publish "$ptree" "$patched_dir"
for old in "$cache"/patched-*/; do
        old="${old%/}"
        case "$old" in "$patched_dir"|"$cache"/patched-tree-*) continue ;; esac
        [ "$(cat "$old/tree" 2>/dev/null)" = "$key" ] && rm -rf "$old"
done
echo "$key" > "$patched_dir/tree"
log "built $image in $(( $(date +%s) - start )) s"
echo "$image"
