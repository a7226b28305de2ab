#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# build-test-kernel.sh [--cached-only] OUTDIR
#
# Builds Debian bookworm's Linux 6.1 (linux-source-6.1; installed with
# apt-get when missing and running as root) with the kernel provider in
# this directory built in (apply.sh; CONFIG_USER_EVENTS_V1=y, upstream's
# CONFIG_USER_EVENTS off), configured for QEMU by `tinyconfig`,
# tests/vm/kernel.config and test-kernel.config, and leaves OUTDIR/bzImage
# (and OUTDIR/config).
#
# Cache (tests/vm/kernel-lib.sh's directory, shared with the vm tier):
#   <cache>/v1-tree-<key>/     the configured source tree, kept so a change
#                              to kernel/ rebuilds only what it touches
#   <cache>/v1-<key2>/bzImage  the image for exactly these sources: reused
#                              without running make at all
# <key> hashes the source version and both fragments; <key2> adds the
# provider's files. Progress goes to stderr. Exit 77 when the source or a
# build tool is missing and cannot be installed; with --cached-only, exit 1
# when the image is not in the cache. Environment: UEBROKER_VM_JOBS (default
# nproc), UEBROKER_VM_CACHE (see kernel-lib.sh).

set -euo pipefail

recipe=1   # bump when the steps below change what gets built
here="$(cd "$(dirname "$0")" && pwd)"
vm="$here/../tests/vm"
cached_only=
if [ "${1:-}" = "--cached-only" ]; then cached_only=1; shift; fi
out="${1:?usage: $0 [--cached-only] OUTDIR}"
src_tar="${UEBROKER_KERNEL_V1_SOURCE:-/usr/src/linux-source-6.1.tar.xz}"
jobs="${UEBROKER_VM_JOBS:-$(nproc)}"
fragments=("$vm/kernel.config" "$here/test-kernel.config")
provider_files=(apply.sh include/uapi/linux/user_events.h trace/trace_user_events_v1.c trace/Kconfig.user_events_v1)

KERNEL_LOG_TAG="build-test-kernel"
# shellcheck source=tests/vm/kernel-lib.sh
. "$vm/kernel-lib.sh"
cache="$(kernel_cache_dir)"

if [ ! -r "$src_tar" ] && [ -z "$cached_only" ] && [ "$(id -u)" = 0 ] &&
   [ "$src_tar" = /usr/src/linux-source-6.1.tar.xz ]; then
        kernel_log "installing linux-source-6.1"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends linux-source-6.1 >&2 ||
                kernel_log "apt-get install linux-source-6.1 failed"
fi
if [ ! -r "$src_tar" ]; then
        kernel_log "no kernel source at $src_tar (apt-get install linux-source-6.1, or build-aux/install-deps.sh)"
        exit 77
fi

src_version="$(kernel_source_version "$src_tar")"
tree_key="$( { echo "recipe $recipe"; echo "source $src_version"; cat "${fragments[@]}"; } | sha256sum | cut -c1-16)"
image_key="$( { echo "$tree_key"; (cd "$here" && cat "${provider_files[@]}"); } | sha256sum | cut -c1-16)"
tree="$cache/v1-tree-$tree_key"
dir="$cache/v1-$image_key"

publish() {
        mkdir -p "$out"
        cp "$dir/bzImage" "$out/bzImage.tmp" && mv "$out/bzImage.tmp" "$out/bzImage"
        cp "$dir/config" "$out/config"
        kernel_log "$1: $out/bzImage ($src_version, image $image_key)"
}

if [ -s "$dir/bzImage" ]; then
        publish cached
        exit 0
fi
if [ -n "$cached_only" ]; then
        kernel_log "no cached kernel at $dir/bzImage"
        exit 1
fi
r=0
kernel_check_tools || r=$?
[ $r = 0 ] || exit $r

mkdir -p "$cache"
# One build per tree at a time; a second caller waits, then finds the image.
exec 9>"$cache/v1-tree-$tree_key.lock"
flock 9
if [ -s "$dir/bzImage" ]; then
        publish "cached (built meanwhile)"
        exit 0
fi

start=$(date +%s)
if [ ! -e "$tree/.configured" ]; then
        kernel_log "extracting and configuring $src_version in $tree"
        rm -rf "$tree"
        mkdir -p "$tree"
        tar -xf "$src_tar" -C "$tree" --strip-components=1
        "$here/apply.sh" "$tree"
        (cd "$tree" && kernel_configure "${fragments[@]}") || exit 1
        touch "$tree/.configured"
else
        kernel_log "reusing $tree"
        "$here/apply.sh" "$tree"
fi

kernel_log "building ($jobs jobs, nice 10)"
(cd "$tree" && nice -n 10 make -s ARCH=x86_64 -j"$jobs" bzImage >&2)
mkdir -p "$dir"
cp "$tree/.config" "$dir/config"
cp "$tree/arch/x86/boot/bzImage" "$dir/bzImage.tmp"
mv "$dir/bzImage.tmp" "$dir/bzImage"
echo "$src_version" > "$dir/source-version"
# older images of this tree are superseded by this one
for old in "$cache"/v1-*/; do
        old="${old%/}"
        case "$old" in "$dir"|"$cache"/v1-tree-*) continue ;; esac
        [ "$(cat "$old/tree" 2>/dev/null)" = "$tree_key" ] && rm -rf "$old"
done
echo "$tree_key" > "$dir/tree"
kernel_log "built in $(( $(date +%s) - start )) s"
publish built
