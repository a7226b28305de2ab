#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-vm-bench.sh BUILD_DIR [MAX_ENABLERS]
#
# The benches that need a kernel this machine does not run: boots the vm
# tier's patched 6.12 kernel (kernel/upstream-6.12, tests/vm/build-kernel.sh
# --patched; built and cached when missing) under QEMU TCG with two vCPUs and
# runs bench-withdrawal there (withdrawing a grant of 1k, 10k, 100k enablers,
# and what an unrelated registration waits meanwhile, as ratios to a plain
# DIAG_IOCSREG of the same run). Prints the guest's figures; see README.md.
set -euo pipefail
build="$(cd "${1:?usage: run-vm-bench.sh BUILD_DIR [MAX_ENABLERS]}" && pwd)"
max="${2:-100000}"
here="$(cd "$(dirname "$0")" && pwd)"
[ -x "$build/bench/bench-withdrawal" ] || { echo "run-vm-bench: build first (ninja -C $build)" >&2; exit 2; }
scenario="$(mktemp "${TMPDIR:-/tmp}/uebroker-vm-bench.XXXXXX")"
trap 'rm -f "$scenario"' EXIT
cat > "$scenario" <<SCENARIO
#!/bin/sh
# the figures as TAP comments, one check that the bench ran
out=\$(/usr/libexec/uebroker-vm/bench-withdrawal $max 2>&1)
rc=\$?
echo "\$out" | sed 's/^/# /'
[ \$rc = 0 ] && echo "ok 1 - bench-withdrawal ($(nproc 2>/dev/null || echo ?) host CPUs, 2 vCPUs)" || echo "not ok 1 - bench-withdrawal exited with \$rc"
echo "1..1"
SCENARIO
chmod +x "$scenario"
UEBROKER_VM_CPUS=2 UEBROKER_VM_TIMEOUT="${UEBROKER_VM_TIMEOUT:-1800}" \
        "$here/../tests/vm/run-vm.sh" --kernel=patched --scenario="$scenario" \
        --guest-bin="$build/bench/bench-withdrawal" "$build" "$here/.."
