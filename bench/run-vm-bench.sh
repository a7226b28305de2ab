#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-vm-bench.sh BUILD_DIR [MAX_ENABLERS]
#
# The benches that need a kernel this machine does not run: boots the vm
# tier's patched 6.12 kernel (kernel/upstream-6.12, tests/vm/build-kernel.sh
# --patched; built and cached when missing) under QEMU TCG with two vCPUs,
# once, and runs there
#   bench-handle-write   a write through the write-only and the granting
#                        handle vs root's writev() on the data file (rounds
#                        in turn, medians and the file's own spread)
#   bench-withdrawal     withdrawing a grant of 1k, 10k, 100k (MAX_ENABLERS)
#                        enablers, and what an unrelated registration waits
#                        meanwhile, as ratios to a plain DIAG_IOCSREG of the
#                        same run
# Prints the guest's figures; see README.md.
set -euo pipefail
build="$(cd "${1:?usage: run-vm-bench.sh BUILD_DIR [MAX_ENABLERS]}" && pwd)"
max="${2:-100000}"
here="$(cd "$(dirname "$0")" && pwd)"
for b in bench-handle-write bench-withdrawal; do
        [ -x "$build/bench/$b" ] || { echo "run-vm-bench: build first (ninja -C $build)" >&2; exit 2; }
done
scenario="$(mktemp "${TMPDIR:-/tmp}/uebroker-vm-bench.XXXXXX")"
trap 'rm -f "$scenario"' EXIT
cat > "$scenario" <<SCENARIO
#!/bin/sh
# the figures as TAP comments, one check per bench that it ran
n=0
for bench in "bench-handle-write" "bench-withdrawal $max"; do
        n=\$((n + 1))
        out=\$(/usr/libexec/uebroker-vm/\$bench 2>&1)
        rc=\$?
        echo "\$out" | sed 's/^/# /'
        [ \$rc = 0 ] && echo "ok \$n - \$bench ($(nproc 2>/dev/null || echo ?) host CPUs, 2 vCPUs)" ||
                echo "not ok \$n - \$bench exited with \$rc"
done
echo "1..\$n"
SCENARIO
chmod +x "$scenario"
UEBROKER_VM_CPUS=2 UEBROKER_VM_TIMEOUT="${UEBROKER_VM_TIMEOUT:-1800}" \
        "$here/../tests/vm/run-vm.sh" --kernel=patched --scenario="$scenario" \
        --guest-bin="$build/bench/bench-handle-write" --guest-bin="$build/bench/bench-withdrawal" "$build" "$here/.."
