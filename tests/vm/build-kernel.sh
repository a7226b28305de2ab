#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# build-kernel.sh [--cached-only]
#
# Prints the path of a bzImage for the vm test tier: Debian's own
# linux-source-6.12 (bookworm-backports; build-aux/install-deps.sh installs
# it), `make ARCH=x86_64 tinyconfig` plus tests/vm/kernel.config
# (CONFIG_USER_EVENTS=y, a serial console, and what systemd as PID 1 needs
# for the system tier).
#
# The image is cached outside the build directory, keyed by a hash of the
# config fragment, this recipe's version and the source version:
#   ${UEBROKER_VM_CACHE:-${XDG_CACHE_HOME:-/var/cache}/uebroker-vm}/<hash>/bzImage
# (~/.cache/uebroker-vm when /var/cache is not writable). A missing image is
# built (8-14 min on 2 cores); with --cached-only it is an error (exit 1).
#
# Environment: UEBROKER_VM_KERNEL_SOURCE (the source tarball, default
# /usr/src/linux-source-6.12.tar.xz), UEBROKER_VM_JOBS (default nproc).
# Progress goes to stderr, the path alone to stdout. Exit 77 when the
# source or a build tool is missing.

set -euo pipefail

recipe=1   # bump when the steps below change what gets built
here="$(cd "$(dirname "$0")" && pwd)"
fragment="$here/kernel.config"
src_tar="${UEBROKER_VM_KERNEL_SOURCE:-/usr/src/linux-source-6.12.tar.xz}"
jobs="${UEBROKER_VM_JOBS:-$(nproc)}"

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
dir="$cache/$key"
image="$dir/bzImage"

if [ -s "$image" ]; then
        log "cached: $image ($src_version)"
        echo "$image"
        exit 0
fi
if [ "${1:-}" = "--cached-only" ]; then
        log "no cached kernel at $image"
        exit 1
fi

r=0
kernel_check_tools || r=$?
[ $r = 0 ] || exit $r

mkdir -p "$dir"
# One build per key at a time; a second caller waits and then finds the image.
exec 9>"$dir/.lock"
flock 9
if [ -s "$image" ]; then
        log "cached (built meanwhile): $image"
        echo "$image"
        exit 0
fi

build="$dir/build"
rm -rf "$build"
mkdir -p "$build"
log "building $src_version, key $key, in $build ($jobs jobs)"
start=$(date +%s)
tar -xf "$src_tar" -C "$build" --strip-components=1
cd "$build"
export ARCH=x86_64   # plain tinyconfig would give a 32-bit kernel
kernel_configure "$fragment" || exit 1

make -s -j"$jobs" bzImage >&2
cp .config "$dir/config"
cp arch/x86/boot/bzImage "$image.tmp"
mv "$image.tmp" "$image"
echo "$src_version" > "$dir/source-version"
cd /
rm -rf "$build"
log "built $image in $(( $(date +%s) - start )) s"
echo "$image"
