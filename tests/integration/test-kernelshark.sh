#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# KernelShark opens what uebctl record -o FILE.dat writes (a smoke test):
# records from a real broker (broker-harness.sh, embedded provider) go to a
# trace.dat file; KernelShark 2.2 starts on it under Xvfb, and once its
# window is titled with the file (it has loaded it) a screenshot of the
# screen is kept in $TEST_LOG_DIR (the path is printed), its output must
# name no error, and it is killed.
#
# As root KernelShark opens a modal "running with Root privileges" dialog
# first, so there it runs as nobody (setpriv) in a directory of its own.
# Its plugins sched_events and kvm_combo say they "failed to initialize"
# on any trace without scheduler or KVM events (a user_events recording
# has neither); those two lines are expected. (Unregistering them, -u,
# crashes KernelShark 2.2.1.)
set -u

UEBCTL="${UEBCTL:?UEBCTL must name the uebctl binary}"
dir="${UEBROKER_HARNESS_DIR:?run me through broker-harness.sh}"
log_dir="${TEST_LOG_DIR:-$dir}"
for tool in kernelshark:kernelshark Xvfb:xvfb xwininfo:x11-utils import:imagemagick; do
        if ! command -v "${tool%%:*}" >/dev/null 2>&1; then
                echo "${tool%%:*} is not installed (apt-get install ${tool#*:}), skipping" >&2
                exit 77
        fi
done

. "$(dirname "$0")/recorder-lib.sh"
xvfb_pid=""
ks_pid=""
work=""
cleanup() {
        [ -n "$ks_pid" ] && kill "$ks_pid" 2>/dev/null
        [ -n "$xvfb_pid" ] && kill "$xvfb_pid" 2>/dev/null
        [ -n "$work" ] && rm -rf "$work"
        kill_recorders
}
trap cleanup EXIT

# A few records from three writers.
"$UEBCTL" record -o "$dir/ks.dat" --count=6 'ks_*' >/dev/null 2>"$dir/rec.err" &
rec_pid=$!
pids+=("$rec_pid")
wait_recording "$dir/rec.err" "$rec_pid"
for i in 1 2 3; do
        "$UEBCTL" emit 'ks_tick u32 n; __data_loc char[] what' n="$i" what="tick $i" >/dev/null || fail "emit ks_tick $i"
        "$UEBCTL" emit 'ks_tock s64 delta' delta="-$i" >/dev/null || fail "emit ks_tock $i"
        sleep 0.05
done
wait_exit "$rec_pid" && grep -q "^Wrote 6 records" "$dir/rec.err" && ok "recorded 6 records into ks.dat" ||
        fail "recording: $(cat "$dir/rec.err")"

# KernelShark's own directory: the file, a home and a runtime directory
# for the user it runs as.
work="$(mktemp -d /tmp/uebroker-kernelshark.XXXXXX)"
chmod 0755 "$work"
mkdir -m 0700 "$work/home" "$work/runtime"
cp "$dir/ks.dat" "$work/ks.dat"
chmod 0644 "$work/ks.dat"
as=()
if [ "$(id -u)" -eq 0 ]; then
        chown 65534:65534 "$work/home" "$work/runtime"
        as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi

# Xvfb picks a free display and tells it on a descriptor.
Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$work/display" 2>"$work/xvfb.log" &
xvfb_pid=$!
for _ in $(seq 1 100); do
        [ -s "$work/display" ] && break
        sleep 0.1
done
display=":$(head -n1 "$work/display")"
[ "$display" != ":" ] || { fail "Xvfb did not start: $(cat "$work/xvfb.log")"; exit 1; }

"${as[@]}" env HOME="$work/home" XDG_RUNTIME_DIR="$work/runtime" DISPLAY="$display" \
        kernelshark -geometry 1200x760+0+0 "$work/ks.dat" >"$log_dir/kernelshark.log" 2>&1 &
ks_pid=$!
# Loaded: its main window is titled with the file.
loaded=false
for _ in $(seq 1 300); do
        if DISPLAY="$display" xwininfo -root -tree 2>/dev/null | grep -qF "\"Kernel Shark ($work/ks.dat)\""; then
                loaded=true
                break
        fi
        kill -0 "$ks_pid" 2>/dev/null || break
        sleep 0.1
done
$loaded && ok "KernelShark loaded the file (its window names it)" ||
        fail "KernelShark did not load the file: $(cat "$log_dir/kernelshark.log")"
sleep 2         # it paints the graph and the table after the title
shot="$log_dir/kernelshark-screenshot.png"
DISPLAY="$display" import -window root "$shot" 2>"$work/import.log" && ok "screenshot: $shot" ||
        fail "no screenshot: $(cat "$work/import.log")"
kill -0 "$ks_pid" 2>/dev/null && ok "KernelShark is still running" || fail "KernelShark exited: $(cat "$log_dir/kernelshark.log")"
kill "$ks_pid" 2>/dev/null
wait "$ks_pid" 2>/dev/null
ks_pid=""

echo "KernelShark's output ($log_dir/kernelshark.log):"
cat "$log_dir/kernelshark.log"
unexpected="$(grep -v -E '^Loading +"'"$work"'/ks\.dat"$|^plugin "(sched_events|kvm_combo)" failed to initialize on stream '"$work"'/ks\.dat$' \
        "$log_dir/kernelshark.log" | grep -i -E 'error|fail|warn|cannot|could not|unable|invalid|abort|segmentation')"
[ -z "$unexpected" ] && ok "KernelShark's output names no error" || fail "KernelShark says: $unexpected"
grep -q "^Loading" "$log_dir/kernelshark.log" && ok "KernelShark says it loaded the file" ||
        fail "KernelShark did not say it loaded the file"

# Not an empty screen: the window, its graph and table have many colours.
colors="$(convert "$shot" -format %k info: 2>/dev/null || echo 0)"
[ "$colors" -gt 50 ] && ok "the screenshot shows a window ($colors colours)" || fail "the screenshot looks empty ($colors colours)"

finish
