# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# kernel-lib.sh: what the vm tier's kernel builds share, sourced (bash) by
# tests/vm/build-kernel.sh (Linux 6.12, upstream user_events) and
# kernel/build-test-kernel.sh (Linux 6.1 with the project's kernel
# provider): where the cache lives, the source's version, the build tools,
# and `tinyconfig` plus config fragments with every requested option
# checked. Progress goes to stderr through kernel_log, which each script
# names with KERNEL_LOG_TAG.

kernel_log() { printf '%s: %s\n' "${KERNEL_LOG_TAG:-kernel}" "$*" >&2; }

# The cache directory for built kernels:
# $UEBROKER_VM_CACHE, else $XDG_CACHE_HOME/uebroker-vm, else
# /var/cache/uebroker-vm when writable, else ~/.cache/uebroker-vm.
kernel_cache_dir() {
        if [ -n "${UEBROKER_VM_CACHE:-}" ]; then
                echo "$UEBROKER_VM_CACHE"
        elif [ -n "${XDG_CACHE_HOME:-}" ]; then
                echo "$XDG_CACHE_HOME/uebroker-vm"
        elif mkdir -p /var/cache/uebroker-vm 2>/dev/null && [ -w /var/cache/uebroker-vm ]; then
                echo /var/cache/uebroker-vm
        else
                echo "$HOME/.cache/uebroker-vm"
        fi
}

# kernel_source_version TARBALL: the owning package and its version, else
# the tarball's hash.
kernel_source_version() {
        local owner
        if owner="$(dpkg-query -S "$1" 2>/dev/null | cut -d: -f1)" && [ -n "$owner" ]; then
                echo "$owner=$(dpkg-query -W -f='${Version}' "$owner")"
        else
                echo "sha256:$(sha256sum "$1" | cut -d' ' -f1)"
        fi
}

# Returns 77 (after saying what) when a build tool is missing.
kernel_check_tools() {
        local tool
        for tool in make gcc bc bison flex tar xz perl; do
                command -v "$tool" >/dev/null || { kernel_log "missing build tool: $tool"; return 77; }
        done
        [ -e /usr/include/libelf.h ] || { kernel_log "missing libelf-dev"; return 77; }
        [ -e /usr/include/openssl/ssl.h ] || { kernel_log "missing libssl-dev"; return 77; }
}

# kernel_configure FRAGMENT...: in the current (source) directory,
# `make ARCH=x86_64 tinyconfig`, then every CONFIG_X=y and
# "# CONFIG_X is not set" line of the fragments, in order (a later line for
# the same option wins), applied twice because some options appear only
# once their parents are on; fails naming each option olddefconfig dropped.
kernel_configure() {
        local line s missing=0
        local -A want=()
        local -a order=() args=()

        for f in "$@"; do
                while IFS= read -r line; do
                        case "$line" in
                        CONFIG_*=y) s="${line%%=*}"; s="${s#CONFIG_}"; [ -n "${want[$s]:-}" ] || order+=("$s"); want[$s]=y ;;
                        "# CONFIG_"*" is not set") s="${line#\# CONFIG_}"; s="${s% is not set}"; [ -n "${want[$s]:-}" ] || order+=("$s"); want[$s]=n ;;
                        esac
                done < "$f"
        done
        ARCH=x86_64 make -s tinyconfig >&2   # plain tinyconfig would give a 32-bit kernel
        for _ in 1 2; do
                args=()
                for s in "${order[@]}"; do
                        if [ "${want[$s]}" = y ]; then args+=(--enable "$s"); else args+=(--disable "$s"); fi
                done
                ./scripts/config --file .config "${args[@]}"
                ARCH=x86_64 make -s olddefconfig >&2
        done
        for s in "${order[@]}"; do
                if [ "${want[$s]}" = y ]; then
                        grep -q "^CONFIG_$s=y\$" .config || { kernel_log "MISSING after olddefconfig: CONFIG_$s"; missing=1; }
                else
                        # off: "is not set", or absent when its dependencies are off
                        ! grep -q "^CONFIG_$s=" .config || { kernel_log "NOT OFF after olddefconfig: CONFIG_$s"; missing=1; }
                fi
        done
        return $missing
}
