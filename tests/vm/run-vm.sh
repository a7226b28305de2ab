#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-vm.sh [--kernel=upstream|patched|debug|v1] [--scenario=FILE] [--guest-bin=FILE...]
#           [--host-check="PROG [ARG...]"] BUILD_DIR [SOURCE_ROOT]
#
# The vm test tier: boots QEMU (TCG) on a test kernel with an initramfs
# holding the project from BUILD_DIR, a real system bus and polkitd
# (tests/vm/make-initramfs.sh), and checks the TAP lines the guest's
# scenario prints on the console.
#   --kernel=upstream  (default) Linux 6.12 with upstream user_events
#                      (tests/vm/build-kernel.sh, cached; built when missing)
#   --kernel=patched   the same with the series of kernel/upstream-6.12/
#                      (restricted handles; build-kernel.sh --patched), and
#                      the series' kselftests with the kernel's runner in
#                      /usr/libexec/uebroker-vm/kselftest/
#   --kernel=debug     the patched kernel with SMP, preemption, KASAN and
#                      lockdep (build-kernel.sh --debug), booted with two
#                      vCPUs, 2 GiB and panic_on_warn: a splat ends the run
#                      and fails it (uebroker.kernel=debug for the guest)
#   --kernel=v1        Linux 6.1 with the project's kernel provider
#                      (kernel/build-test-kernel.sh, into BUILD_DIR/kernel-v1)
#   --scenario=FILE    the guest's scenario (default tests/vm/scenario.sh)
#   --guest-bin=FILE   a program the scenario runs, put in
#                      /usr/libexec/uebroker-vm/ (repeatable)
#   --host-check="PROG [ARG...]"
#                      after the guest, PROG ARG... ARTIFACT_DIR checks what
#                      the scenario left there (artifact NAME FILE in the
#                      guest: /run/artifacts/NAME); anything but exit 0
#                      fails the run (77 too: nothing may skip here)
#   --skip=REASON      a program the scenario runs could not be built
#                      (tests/vm/meson.build says why): skip (77), saying so
#
# Exit 0 when every check passed, 1 otherwise, 77 (skip, with the reason)
# only when a tool is missing (or, --skip, a program that needs one to be
# built). Environment:
#   UEBROKER_VM_KERNEL   a bzImage to boot instead of building/caching one
#   UEBROKER_VM_TIMEOUT  seconds the guest may run (default 300)
#   UEBROKER_VM_CPUS     vCPUs (default 1; the debug kernel: 2)
#   UEBROKER_VM_KEEP     a directory to keep the initramfs and console log in

set -euo pipefail

kernel_kind=upstream
scenario=
guest_bins=()
host_check=
skip_reason=
while [ $# -gt 0 ]; do
        case "$1" in
        --kernel=upstream|--kernel=patched|--kernel=debug|--kernel=v1) kernel_kind="${1#--kernel=}" ;;
        --scenario=*) scenario="${1#--scenario=}" ;;
        --guest-bin=*) guest_bins+=("${1#--guest-bin=}") ;;
        --host-check=*) host_check="${1#--host-check=}" ;;
        --skip=*) skip_reason="${1#--skip=}" ;;
        --*) echo "run-vm.sh: unknown option $1" >&2; exit 2 ;;
        *) break ;;
        esac
        shift
done
build="$(cd "${1:?usage: $0 [OPTIONS] BUILD_DIR [SOURCE_ROOT]}" && pwd)"
here="$(cd "$(dirname "$0")" && pwd)"
src="$(cd "${2:-$here/../..}" && pwd)"
scenario="${scenario:-$src/tests/vm/scenario.sh}"
timeout_s="${UEBROKER_VM_TIMEOUT:-300}"

skip() { echo "SKIP: $*"; exit 77; }
t0=$(date +%s)

# Tools (build-aux/install-deps.sh installs them all; CI refuses skips).
[ -z "$skip_reason" ] || skip "$skip_reason"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is missing (apt-get install qemu-system-x86)"
[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 || skip "no static /bin/busybox (apt-get install busybox-static)"
[ -x /usr/bin/dbus-daemon ] || skip "dbus-daemon is missing (apt-get install dbus-daemon)"
[ -x /usr/lib/polkit-1/polkitd ] || skip "polkitd is missing (apt-get install polkitd)"
command -v busctl >/dev/null && command -v dbus-send >/dev/null || skip "busctl or dbus-send is missing (systemd, dbus-bin)"
command -v trace-cmd >/dev/null || skip "trace-cmd is missing (apt-get install trace-cmd): the guest reads uebctl's trace.dat with it"
for f in daemon/uebrokerd tools/uebctl tests/vm/vm-client tests/vm/vm-perf tests/vm/vm-grant; do
        [ -x "$build/$f" ] || { echo "not built: $build/$f" >&2; exit 1; }
done

work="$(mktemp -d "${TMPDIR:-/tmp}/uebroker-vm.XXXXXX")"
trap 'rm -rf "$work"' EXIT

if [ -n "${UEBROKER_VM_KERNEL:-}" ]; then
        kernel="$UEBROKER_VM_KERNEL"
elif [ "$kernel_kind" = v1 ]; then
        set +e
        "$src/kernel/build-test-kernel.sh" "$build/kernel-v1"
        r=$?
        set -e
        [ $r = 77 ] && skip "cannot build the kernel provider's test kernel (see above: its source or a build tool is missing)"
        [ $r = 0 ] || { echo "building the kernel provider's test kernel failed ($r)" >&2; exit 1; }
        kernel="$build/kernel-v1/bzImage"
else
        set +e
        build_args=()
        [ "$kernel_kind" = patched ] && build_args=(--patched)
        [ "$kernel_kind" = debug ] && build_args=(--debug)
        kernel="$("$here/build-kernel.sh" ${build_args[@]+"${build_args[@]}"})"
        r=$?
        set -e
        [ $r = 77 ] && skip "cannot build the test kernel (see above: its source or a build tool is missing)"
        [ $r = 0 ] || { echo "building the test kernel failed ($r)" >&2; exit 1; }
fi
t_kernel=$(date +%s)

# A patched kernel's kselftests (build-kernel.sh installs them beside it)
initramfs_args=()
kernel_dir="$(dirname "$kernel")"
if [ "$kernel_kind" = patched ] || [ "$kernel_kind" = debug ]; then
        [ -x "$kernel_dir/kselftest/run_kselftest.sh" ] && initramfs_args=("--kselftest=$kernel_dir/kselftest")
fi
"$here/make-initramfs.sh" ${initramfs_args[@]+"${initramfs_args[@]}"} "$build" "$src" "$work/initrd.gz" "$scenario" \
        ${guest_bins[@]+"${guest_bins[@]}"}
t_initrd=$(date +%s)
echo "kernel: $kernel"
echo "initramfs: $(stat -c %s "$work/initrd.gz") bytes"

console="$work/console.log"
set +e
machine=(-m 1024 -smp "${UEBROKER_VM_CPUS:-1}")
guest_kind="$kernel_kind"
extra_append=
if [ "$kernel_kind" = debug ]; then
        machine=(-m 2048 -smp "${UEBROKER_VM_CPUS:-2}")
        guest_kind=debug
        extra_append=" panic_on_warn=1"
fi
timeout --foreground -k 10 "$timeout_s" qemu-system-x86_64 -accel tcg "${machine[@]}" -nographic -no-reboot \
        -nic none -monitor none -serial stdio \
        -kernel "$kernel" -initrd "$work/initrd.gz" \
        -append "console=ttyS0 panic=-1 quiet uebroker.kernel=$guest_kind$extra_append" < /dev/null > "$console" 2>&1
qrc=$?
set -e
t_boot=$(date +%s)
# Without the carriage returns and the firmware's terminal escapes.
sed -e 's/\r//g' -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e 's/\x1bc//g' < "$console" > "$console.txt"

if [ -n "${UEBROKER_VM_KEEP:-}" ]; then
        mkdir -p "$UEBROKER_VM_KEEP"
        cp "$work/initrd.gz" "$console.txt" "$UEBROKER_VM_KEEP/"
fi

tap="$work/tap"
sed -n '/===== uebroker-vm: begin TAP =====$/,/^===== uebroker-vm: end TAP =====$/p' "$console.txt" |
        sed '1d;$d' > "$tap"
echo "----- guest log"
sed -n '/===== uebroker-vm: begin log =====$/,/^===== uebroker-vm: end log =====$/p' "$console.txt" | sed '1d;$d'
echo "----- TAP"
cat "$tap"
echo "-----"
echo "timings: kernel ready $((t_kernel - t0)) s, initramfs $((t_initrd - t_kernel)) s, boot to result $((t_boot - t_initrd)) s (qemu exit $qrc)"

fail() {
        echo "FAIL: $*"
        echo "----- console (last 60 lines)"
        tail -n 60 "$console.txt"
        exit 1
}
[ $qrc = 124 ] || [ $qrc = 137 ] && fail "the guest did not finish within $timeout_s s"
grep -q '^===== uebroker-vm: end TAP =====$' "$console.txt" || fail "the guest printed no complete result"
plan="$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$tap")"
[ -n "$plan" ] || fail "no TAP plan"
oks=$(grep -c '^ok [0-9]' "$tap" || true)
not_oks=$(grep -c '^not ok [0-9]' "$tap" || true)
[ $((oks + not_oks)) = "$plan" ] || fail "plan 1..$plan but $oks ok and $not_oks not ok"
[ "$not_oks" = 0 ] || fail "$not_oks of $plan checks failed"
# A sanitizer build reports to the daemon's log in the guest, which the
# console carries: any report fails the run.
if grep -Eq 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$console.txt"; then
        grep -E -A20 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$console.txt" | head -n 60
        fail "a sanitizer reported an error in the guest"
fi
# The artifacts: each between its markers, in base64.
artifacts="$work/artifacts"
mkdir -p "$artifacts"
awk -v dir="$artifacts" '
        /^===== uebroker-vm: artifact [A-Za-z0-9._-]+ =====$/ { name = $4; next }
        /^===== uebroker-vm: end artifact =====$/ { name = ""; next }
        name != "" { print > (dir "/" name ".b64") }' "$console.txt"
for a in "$artifacts"/*.b64; do
        [ -f "$a" ] || continue
        base64 -d < "$a" > "${a%.b64}" || fail "artifact ${a##*/} does not decode"
        rm -f "$a"
done
[ -z "${UEBROKER_VM_KEEP:-}" ] || cp -r "$artifacts" "$UEBROKER_VM_KEEP/"
if [ -n "$host_check" ]; then
        echo "----- host check: $host_check $artifacts ($(ls "$artifacts" | tr '\n' ' '))"
        read -ra host_check_argv <<< "$host_check"     # PROG and its arguments, split at spaces
        rc=0
        "${host_check_argv[@]}" "$artifacts" || rc=$?
        [ $rc = 0 ] || fail "the host check $host_check failed (exit $rc)"
fi
echo "PASS: $plan checks"
