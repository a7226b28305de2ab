#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The source release: `meson dist` of the committed tree (a clean git
# checkout), then the tarball built and tested from itself, alone in a
# directory of its own: warnings as errors, the unit and integration
# suites (the vm and system tiers boot kernels under QEMU for minutes; run
# them from a checkout).
#   build-aux/make-dist.sh BUILD_DIR
# Leaves BUILD_DIR/meson-dist/uebroker-VERSION.tar.xz and its .sha256sum.
# UEBROKER_LINUXTRACEPOINTS=PATH: a LinuxTracepoints checkout for the
# uebroker-run tests (without it they skip and say so).
set -euo pipefail

build="${1:?usage: build-aux/make-dist.sh BUILD_DIR}"
meson dist -C "$build" --no-tests --formats xztar
version="$(meson introspect --projectinfo "$build" | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')"
tarball="$build/meson-dist/uebroker-$version.tar.xz"
[ -f "$tarball" ] || { echo "make-dist: no $tarball" >&2; exit 1; }

work="$(mktemp -d "${TMPDIR:-/tmp}/uebroker-dist.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# The integration tests run programs as other uids from the build tree.
chmod 0755 "$work"
tar -xf "$tarball" -C "$work"
src="$work/uebroker-$version"
options=(-Dwerror=true)
[ -n "${UEBROKER_LINUXTRACEPOINTS:-}" ] && options+=("-Dlinuxtracepoints=$UEBROKER_LINUXTRACEPOINTS")
meson setup "$work/build" "$src" "${options[@]}"
ninja -C "$work/build"
meson test -C "$work/build" --suite unit --suite integration --num-processes 2 --print-errorlogs
echo "make-dist: $tarball builds and passes the unit and integration suites from itself"
