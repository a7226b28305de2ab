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

log() { printf 'build-kernel: %s\n' "$*" >&2; }

if [ -n "${UEBROKER_VM_CACHE:-}" ]; then
        cache="$UEBROKER_VM_CACHE"
elif [ -n "${XDG_CACHE_HOME:-}" ]; then
        cache="$XDG_CACHE_HOME/uebroker-vm"
elif mkdir -p /var/cache/uebroker-vm 2>/dev/null && [ -w /var/cache/uebroker-vm ]; then
        cache=/var/cache/uebroker-vm
else
        cache="$HOME/.cache/uebroker-vm"
fi

if [ ! -r "$src_tar" ]; then
        log "no kernel source at $src_tar (install linux-source-6.12 from bookworm-backports: build-aux/install-deps.sh)"
        exit 77
fi

# The source version: the owning package's version, else the tarball's hash.
src_version=""
if owner="$(dpkg-query -S "$src_tar" 2>/dev/null | cut -d: -f1)" && [ -n "$owner" ]; then
        src_version="$owner=$(dpkg-query -W -f='${Version}' "$owner")"
else
        src_version="sha256:$(sha256sum "$src_tar" | cut -d' ' -f1)"
fi
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

for tool in make gcc bc bison flex tar xz perl; do
        command -v "$tool" >/dev/null || { log "missing build tool: $tool"; exit 77; }
done
[ -e /usr/include/libelf.h ] || { log "missing libelf-dev"; exit 77; }
[ -e /usr/include/openssl/ssl.h ] || { log "missing libssl-dev"; exit 77; }

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

make -s tinyconfig >&2
enable=() disable=()
while IFS= read -r line; do
        case "$line" in
        CONFIG_*=y) s="${line%%=*}"; enable+=("${s#CONFIG_}") ;;
        "# CONFIG_"*" is not set") s="${line#\# CONFIG_}"; disable+=("${s% is not set}") ;;
        esac
done < "$fragment"
# Some options appear only once their parents are on: apply twice.
for pass in 1 2; do
        args=()
        for s in "${enable[@]}"; do args+=(--enable "$s"); done
        for s in "${disable[@]}"; do args+=(--disable "$s"); done
        ./scripts/config --file .config "${args[@]}"
        make -s olddefconfig >&2
done
missing=0
for s in "${enable[@]}"; do
        grep -q "^CONFIG_$s=y\$" .config || { log "MISSING after olddefconfig: CONFIG_$s"; missing=1; }
done
for s in "${disable[@]}"; do
        grep -q "^# CONFIG_$s is not set\$" .config || { log "NOT OFF after olddefconfig: CONFIG_$s"; missing=1; }
done
[ $missing = 0 ] || exit 1

make -s -j"$jobs" bzImage >&2
cp .config "$dir/config"
cp arch/x86/boot/bzImage "$image.tmp"
mv "$image.tmp" "$image"
echo "$src_version" > "$dir/source-version"
cd /
rm -rf "$build"
log "built $image in $(( $(date +%s) - start )) s"
echo "$image"
