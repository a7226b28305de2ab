#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The Debian packages, as a packager builds them: the committed tree
# (git archive HEAD: what a clean clone holds), its build dependencies
# from debian/control (apt-get build-dep), dpkg-buildpackage -us -uc -b
# (dh_auto_test runs the unit and integration suites), then bookworm's
# lintian, failing on any error or warning.
#   build-aux/build-debs.sh [--older] [--quick] OUT_DIR
# Leaves the .deb, .changes and .buildinfo files in OUT_DIR. --older: the
# same tree as a version lower than debian/changelog's (dch --local
# "~older"), without its tests, for build-aux/test-debs-lifecycle.sh and
# the system tier to upgrade from. --quick: without the tests and lintian
# (the system tier's own build of the packages it boots with).
set -euo pipefail

older=false
quick=false
while :; do
        case "${1:-}" in
        --older) older=true; shift ;;
        --quick) quick=true; shift ;;
        *) break ;;
        esac
done
out="${1:?usage: build-aux/build-debs.sh [--older] [--quick] OUT_DIR}"
top="$(cd "$(dirname "$0")/.." && pwd)"
version="$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)"
work="$(mktemp -d "${TMPDIR:-/tmp}/uebroker-debs.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# The integration tests run programs as other uids from the build tree.
chmod 0755 "$work"

tree="$work/uebroker-${version%-*}"
mkdir "$tree"
git -C "$top" archive HEAD | tar -x -C "$tree"
if $older; then
        (cd "$tree" && DEBFULLNAME="uebroker maintainers" \
                DEBEMAIL="maintainers@users.noreply.a-seed-d343ba21.example" \
                dch --local '~older' --distribution unstable "The same tree, a lower version: the upgrade test's start.")
fi
if $older || $quick; then
        export DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:+$DEB_BUILD_OPTIONS }nocheck"
fi
if [ "$(id -u)" = 0 ]; then
        apt-get build-dep -y -q "$tree" >/dev/null
fi
(cd "$tree" && dpkg-buildpackage -us -uc -b)
$quick || lintian --fail-on error,warning --tag-display-limit 0 "$work"/*.changes
mkdir -p "$out"
cp "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$out"/
echo "build-debs: $(cd "$out" && ls -- *.deb | tr '\n' ' ')"
