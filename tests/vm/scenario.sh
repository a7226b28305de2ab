#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The vm tier's scenario, run as root by /init inside the guest once the
# system bus, polkitd and `uebrokerd --system` run. Real tracefs, real
# polkitd; an unprivileged user, tester (uid 1000), is the client. One TAP
# line per check on stdout, the plan at the end; details on stderr.
#
# On a kernel with upstream user_events (CONFIG_USER_EVENTS=y) the broker
# must pick the upstream provider; on the kernel provider's 6.1 kernel
# (kernel/, the original interface: run-vm.sh --kernel=v1) the v1 provider.
# The checks that need the kernel's user_events say so in their text and
# fail with any other provider; where the two interfaces differ (Record,
# persistent events, user_events_max) each gets its own checks.

T=/sys/kernel/tracing
EV=vmtest
CMD="$EV u32 a; char[8] b"
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; last_info=; }
# A failure's TAP line is followed by what the scenario said last since the
# previous check (a TAP comment), so that the few lines a CI log keeps say
# why; nothing from an earlier check's step.
not_ok() {
        n=$((n + 1)); echo "not ok $n - $*"
        [ -n "$last_info" ] && printf '# said before it: %s\n' "$last_info" | cut -c1-1000
        last_info=
}
# check "TEXT" COMMAND...: ok when COMMAND succeeds
check() { text="$1"; shift; if "$@" >&2; then ok "$text"; else not_ok "$text"; fi; }
not() { ! "$@"; }
as_tester() { su -s /bin/sh tester -c "$*"; }
# artifact NAME FILE: FILE goes to the host as NAME (run-vm.sh --host-check)
artifact() { mkdir -p /run/artifacts && cp "$2" "/run/artifacts/$1"; }
info() { last_info="$*"; echo "scenario: $*" >&2; }
matches() { printf '%s\n' "$1" | grep -Eq "$2"; }   # matches TEXT ERE
waitfor() {     # waitfor TENTHS COMMAND...: polls COMMAND
        w=$1; shift
        while [ "$w" -gt 0 ]; do "$@" && return 0; sleep 0.1; w=$((w - 1)); done
        return 1
}
bus_get() {     # bus_get PROPERTY: the broker's property, as busctl prints it
        busctl --system get-property org.uebroker1 /org/uebroker1 org.uebroker1.Broker "$1" 2>&1
}
# the registrations ListEvents reports for $EV ("" when not listed)
registrations() {
        busctl --system --json=short call org.uebroker1 /org/uebroker1 org.uebroker1.Broker ListEvents 2>/dev/null |
                sed -n 's/.*\["'$EV'","[^"]*",[0-9]*,\([0-9]*\),[a-z]*\].*/\1/p'
}

# 1. the broker runs on the system bus and says which provider it uses
provider=$(bus_get Provider)
info "Provider: $provider"
provider=$(echo "$provider" | sed -n 's/^s "\(.*\)"$/\1/p')
check "uebrokerd runs on the system bus, Provider=${provider:-?}" test -n "$provider"

# 2. on a user_events kernel that provider is the kernel's: the original
#    interface prints "Max: 4096" in its status text, upstream's does not
kernel=upstream
grep -q '^Max: 4096$' $T/user_events_status 2>/dev/null && kernel=v1
info "kernel interface: $kernel"
if [ -e $T/user_events_data ]; then
        check "Provider is $kernel on this user_events kernel (got '${provider:-?}')" test "$provider" = "$kernel"
else
        not_ok "this kernel has no $T/user_events_data: the vm kernel must have CONFIG_USER_EVENTS=y"
fi
# 2b. the 6.12 kernel stock or with the restricted handles of
#     kernel/upstream-6.12/ (run-vm.sh says which it booted): the broker
#     finds out by itself
booted=$(sed -n 's/.*uebroker\.kernel=\([a-z0-9]*\).*/\1/p' /proc/cmdline)
info "booted kernel: ${booted:-?}"
if [ "$booted" = patched ]; then
        check "patched kernel: the broker hands clients restricted handles (its log says so)" \
                grep -q 'clients get restricted handles' /run/uebrokerd.log
elif [ "$kernel" = upstream ]; then
        check "stock kernel: the broker finds no restricted handles and hands out the data file (its log says so)" \
                grep -q 'this kernel has no restricted handles' /run/uebrokerd.log
fi

# 3. an unprivileged user registers through the broker and receives two fds
#    (polkit's org.uebroker1.register, allow_any=yes, asked of the real polkitd)
uid=$(as_tester id -u)
reply=$(as_tester busctl --system call org.uebroker1 /org/uebroker1 org.uebroker1.Broker Register s "'$CMD'" 2>&1)
info "tester (uid $uid) Register: $reply"
check "uid $uid registers '$CMD' with busctl and receives data and status fds ($reply)" \
        matches "$uid $reply" '^1000 hhuu [0-9]+ [0-9]+ [0-9]+ [0-9]+$'

# 4. a libuebroker client of uid 1000 holds the event while the checks run:
#    waits to be enabled, writes a record, then a payload too short for the
#    event's fields, and stays registered until killed.
out=/tmp/vm-client.out
as_tester "vm-client '$CMD' fds wait-enabled 30 write a=7 b=client raw 01 hold > $out 2>&1 &"
waitfor 100 grep -q '^registered\|^register failed' $out
info "vm-client: $(cat $out)"
check "a libuebroker client of uid 1000 registers" grep -q '^registered' $out
client_pid=$(pidof vm-client)
if [ "$booted" = patched ]; then
        # a restricted handle: a file of its own kind, not user_events_data
        check "its data fd is a restricted handle (patched)" grep -q "^fd [0-9]* -> anon_inode:\[user_events_handle\]\$" $out
elif [ "$kernel" = v1 ]; then
        check "its data fd is the v1 kernel's write-only handle" grep -q "^fd [0-9]* -> anon_inode:\[user_events_writer\]\$" $out
else
        check "its data fd is the kernel's user_events_data (upstream)" grep -q "^fd [0-9]* -> $T/user_events_data\$" $out
fi

# 5. the kernel has the event in tracefs
check "tracefs has events/user_events/$EV (upstream)" test -e $T/events/user_events/$EV/enable

# 5b. what the client's data fd lets it do behind the broker's back: on the
#     patched kernel nothing (a write-only handle), on the stock one
#     anything (README "Which kernels"); on v1 nothing (its write-only
#     handle answers the original interface's ioctls only, but refuses these)
if [ "$kernel" = upstream ]; then
        evil=$(as_tester "vm-client '$CMD' ioctls" 2>&1 | grep '^ioctls')
        info "vm-client ioctls: $evil"
        if [ "$booted" = patched ]; then
                check "patched: DIAG_IOCSREG and DIAG_IOCSDEL on the data fd Register gave are EPERM ($evil)" \
                        matches "$evil" '^ioctls fd [0-9]+ reg -EPERM del -EPERM$'
                check "patched: and the kernel has no ${EV}_evil" not test -e $T/events/user_events/${EV}_evil
        else
                check "stock: the data fd Register gave registers what its holder likes ($evil)" \
                        matches "$evil" '^ioctls fd [0-9]+ reg 0 del -EBUSY$'
        fi
fi

# 6. disabled: uebctl emit (uid 1000) writes nothing
emit() { as_tester uebctl emit "'$CMD'" "$@" 2>&1; }
r=$(emit a=1 b=off)
info "emit before enabling: $r"
check "before enabling, uebctl emit says not enabled ($r)" matches "$r" "^$EV: not enabled"

# 7. echo 1 > enable flips the status byte the clients see
echo 1 > $T/events/user_events/$EV/enable 2>/dev/null
check "echo 1 > events/user_events/$EV/enable succeeds (upstream)" grep -q 1 $T/events/user_events/$EV/enable
waitfor 50 grep -q '^enabled' $out
check "the holding client sees its status byte set (enabled through tracefs)" grep -q '^enabled 1' $out
r=$(emit a=42 b=vmhi)
info "emit after enabling: $r"
check "after enabling, uebctl emit says written ($r)" matches "$r" "^$EV: written"

# 8. the records are in the ftrace buffer, decoded with the right values
waitfor 50 grep -q '^write' $out
info "trace: $(grep " $EV:" $T/trace 2>&1)"
check "the client's write succeeded ($(grep '^write' $out))" grep -q '^write 0$' $out
# 6.12 prints an unsigned field as "a=0x2a (42)", older kernels "a=42"
check "trace shows '$EV: a=42 b=vmhi' from uebctl emit" grep -Eq " $EV: a=(0x2a \(42\)|42) b=vmhi\$" $T/trace
check "trace shows '$EV: a=7 b=client' from the client" grep -Eq " $EV: a=(0x7 \(7\)|7) b=client\$" $T/trace
check "nothing written while disabled reached the trace" not grep -q " $EV: a=1 b=off" $T/trace

# 9. a bad payload (1 byte where 12 are due) is refused
waitfor 50 grep -q '^raw' $out
check "a 1-byte payload is refused with EINVAL ($(grep '^raw' $out))" grep -q '^raw -22 ' $out
check "the refused payload did not reach the trace" test "$(grep -c " $EV: " $T/trace 2>/dev/null)" = 2

# 9b. Record through the kernel (upstream and v1): uebctl record (root) gets the events from a
#     tracefs instance of the broker's; the instance alone enables the event
#     (the status byte shows the recorder), and goes with the stream.
echo 0 > $T/events/user_events/$EV/enable 2>/dev/null
instances() { ls -d $T/instances/uebroker-record-* 2>/dev/null; }
rec=/tmp/record.out
uebctl record --count=2 $EV > $rec 2>&1 &
rec_pid=$!
waitfor 100 instances
check "Record creates a tracefs instance ($(instances))" test -n "$(instances)"
r=$(emit a=11 b=rec1)
info "emit while recording: $r"
check "while uebctl record runs, the event is enabled for writers ($r)" matches "$r" "^$EV: written"
emit a=12 b=rec2 >&2
waitfor 100 test "$(grep -c " $EV: " $rec)" -ge 2
info "uebctl record: $(cat $rec)"
check "uebctl record prints '[written TIME tid N] $EV: a=11 b=rec1' from the kernel's trace" \
        grep -Eq "^\[written [0-9T:.-]+Z tid [0-9]+\] $EV: a=11 b=rec1\$" $rec
check "uebctl record prints the second record too" grep -Eq "^\[written [0-9T:.-]+Z tid [0-9]+\] $EV: a=12 b=rec2\$" $rec
waitfor 50 not kill -0 $rec_pid
check "uebctl record --count=2 exits after two records" not kill -0 $rec_pid
waitfor 50 not instances
check "the stream's end removes its tracefs instance" not instances
r=$(emit a=1 b=off)
check "without a recorder the event is disabled again ($r)" matches "$r" "^$EV: not enabled"

# 9b-dat. uebctl record -o FILE.dat on the kernel: a trace.dat file of the
#     kernel's own pages (RecordKernelPages, uebctl-tracedat.h), with the
#     format files of the broker's instance (the kernel's event IDs), that
#     trace-cmd report reads, beside a JSON recorder: the same thread and
#     time (its DATE offset is uebctl's, the stream's is the broker's:
#     within 20 ms, two readings of two clocks each under TCG).
dat=/tmp/record.dat
uebctl record --count=2 -o $dat $EV > /tmp/record-dat.err 2>&1 &
dat_pid=$!
uebctl record --count=2 --json=short $EV > /tmp/record-dat.json 2>/dev/null &
json_pid=$!
waitfor 100 test "$(instances | wc -l)" -ge 2
emit a=21 b=dat1 >&2
emit a=22 b=dat2 >&2
waitfor 100 not kill -0 $dat_pid
waitfor 50 not kill -0 $json_pid
info "uebctl record -o $dat: $(cat /tmp/record-dat.err)"
check "uebctl record -o FILE.dat writes two records in the kernel's pages" \
        grep -Eq "^Wrote 2 records to the trace.dat file $dat in the kernel's pages \([0-9]+ pages? of 1 CPU\)\$" \
        /tmp/record-dat.err
trace-cmd dump --events -i $dat > /tmp/record-dat.events 2>&1
info "trace-cmd dump --events: $(cat /tmp/record-dat.events)"
check "the file has the kernel's format file of $EV (ID $(cat $T/events/user_events/$EV/id))" \
        grep -q "^ID: $(cat $T/events/user_events/$EV/id)\$" /tmp/record-dat.events
trace-cmd dump --head-page -i $dat > /tmp/record-dat.head 2>&1
info "trace-cmd dump --head-page: $(cat /tmp/record-dat.head); the kernel's: $(cat $T/events/header_page)"
check "and the kernel's header_page" grep -q "$(grep commit $T/events/header_page | head -n 1)" /tmp/record-dat.head
trace-cmd report -t $dat > /tmp/record-dat.report 2>&1
info "trace-cmd report $dat: $(cat /tmp/record-dat.report)"
check "trace-cmd report reads it: '$EV: a=21 b=dat1', then a=22 b=dat2" \
        test "$(grep -Ec " $EV: +a=2[12] b=dat[12]\$" /tmp/record-dat.report)" = 2
dat_line=$(grep -E " $EV: +a=21 b=dat1\$" /tmp/record-dat.report)
json_line=$(grep '"a":21' /tmp/record-dat.json)
# "COMM-TID [CPU]": the writer's name where uebctl could read it
dat_tid=$(echo "$dat_line" | sed -n 's/^ *[^ ]*-\([0-9][0-9]*\) *\[.*/\1/p')
json_tid=$(echo "$json_line" | sed -n 's/.*"tid":\([0-9]*\).*/\1/p')
dat_ns=$(echo "$dat_line" | sed -n 's/.*\] \([0-9]*\)\.\([0-9]\{9\}\): .*/\1\2/p')
json_ns=$(echo "$json_line" | sed -n 's/.*"timestamp_ns":\([0-9]*\).*/\1/p')
diff_ns=$(( ${dat_ns:-0} - ${json_ns:-0} ))
check "the file's record has the writing thread ($dat_tid) and time ($dat_ns) the JSON recorder has ($json_tid, $json_ns)" \
        test -n "$dat_tid" -a "$dat_tid" = "$json_tid" -a -n "$dat_ns" -a -n "$json_ns" \
        -a "$diff_ns" -lt 20000000 -a "$diff_ns" -gt -20000000
waitfor 50 not instances

# 9b-lost. A trace.dat recording that stops reading (SIGSTOP) while a
#     client writes 20000 records (some 120 pages): the pages its stream
#     cannot take are counted lost by the broker (or, when the broker
#     itself falls behind, dropped by the kernel's ring); either way
#     trace-cmd report shows the drop, and the record written after it.
lost=/tmp/lost.dat
uebctl record -o $lost $EV > /tmp/lost.err 2>&1 &
lost_pid=$!
waitfor 100 grep -q '^Recording' /tmp/lost.err
kill -STOP $lost_pid
r=$(vm-client "$CMD" wait-enabled 10 burst 20000 a=5 b=burst 2>&1 | tail -n 1)
info "a client's burst while the recorder is stopped: $r"
kill -CONT $lost_pid
sleep 2
emit a=99 b=after >&2
sleep 2
kill -TERM $lost_pid
waitfor 100 not kill -0 $lost_pid
info "uebctl record -o $lost: $(cat /tmp/lost.err)"
check "the burst's 20000 writes succeed while the recorder is stopped ($r)" matches "$r" '^burst 20000 written 20000$'
trace-cmd report $lost > /tmp/lost.report 2>&1
info "trace-cmd report $lost: $(grep -v ' $EV: ' /tmp/lost.report | head -n 5); $(grep -c " $EV: " /tmp/lost.report) records"
check "trace-cmd report shows events dropped where the pages went missing" grep -q 'EVENTS DROPPED\]' /tmp/lost.report
check "and the record written after the loss ('$EV: a=99 b=after')" grep -Eq " $EV: +a=(0x63 \(99\)|99) b=after\$" /tmp/lost.report
waitfor 50 not instances

# 9b'. RecordMatching on the kernel: a pattern recording started before its
#      events exist takes each event registered later (two here: more than
#      one event in one instance), and both reach the consumer.
prec=/tmp/record-pattern.out
uebctl record --count=2 'vmpat_*' > $prec 2>&1 &
prec_pid=$!
waitfor 100 instances
emit_pat() { as_tester uebctl emit "'$1 u32 a; char[8] b'" "$2" "$3" 2>&1; }
r1=$(emit_pat vmpat_one a=31 b=first)
r2=$(emit_pat vmpat_two a=32 b=second)
info "emits of new events while a pattern recording runs: $r1 / $r2"
check "a new event matching the recording's pattern is enabled for writers at once ($r1)" matches "$r1" "^vmpat_one: written"
waitfor 100 test "$(grep -c ' vmpat_' $prec)" -ge 2
info "uebctl record 'vmpat_*': $(cat $prec)"
check "RecordMatching delivers the first event registered after it started" \
        grep -Eq "^\[written [0-9T:.-]+Z tid [0-9]+\] vmpat_one: a=31 b=first\$" $prec
check "... and the second, from the same tracefs instance" \
        grep -Eq "^\[written [0-9T:.-]+Z tid [0-9]+\] vmpat_two: a=32 b=second\$" $prec
waitfor 50 not kill -0 $prec_pid
waitfor 50 not instances
check "the pattern recording's end removes its instance and enablers" not instances
r=$(emit_pat vmpat_one a=1 b=off)
check "with no recorder, vmpat_one is disabled again ($r)" matches "$r" "^vmpat_one: not enabled"

# 9c. perf sees the events: perf_event_open on the event's id, raw samples
id=$(cat $T/events/user_events/$EV/id 2>/dev/null)
perf_out=/tmp/perf.out
vm-perf "$id" 20 1 > $perf_out 2>&1 &
perf_pid=$!
waitfor 100 grep -q '^open' $perf_out
r=$(emit a=13 b=perf)
info "emit while perf listens: $r; vm-perf: $(cat $perf_out)"
check "with perf listening, the event is enabled for writers ($r)" matches "$r" "^$EV: written"
waitfor 100 grep -q '^sample' $perf_out
check "perf receives the record: a=13 b=perf as raw bytes ($(grep '^sample' $perf_out | head -n1))" \
        grep -Eq '^sample pid [0-9]+ tid [0-9]+ raw 0d0000007065726600000000' $perf_out
kill $perf_pid 2>/dev/null
wait $perf_pid 2>/dev/null

# 9d. Delete while a client holds the event is refused, for root too
r=$(dbus-send --system --print-reply --dest=org.uebroker1 /org/uebroker1 \
        org.uebroker1.Broker.Delete string:$EV boolean:false 2>&1)
info "root Delete while held: $r"
check "root's Delete while a client holds $EV is refused with Busy ($(echo "$r" | head -n1))" \
        matches "$r" '^Error org\.uebroker1\.Error\.Busy'

# 10. polkit (the real polkitd) denies an unprivileged Delete: admin only
r=$(as_tester dbus-send --system --print-reply --dest=org.uebroker1 /org/uebroker1 \
        org.uebroker1.Broker.Delete string:$EV boolean:false 2>&1)
info "tester Delete: $r"
check "uid 1000 Delete is denied by polkit ($(echo "$r" | head -n1))" \
        matches "$r" '^Error org\.freedesktop\.DBus\.Error\.(AccessDenied|InteractiveAuthorizationRequired)'
check "polkitd still runs (the answers came from it)" pidof polkitd

# 11. the client's exit releases its registration. Disable first: an event
#     enabled in ftrace keeps a kernel reference of its own.
echo 0 > $T/events/user_events/$EV/enable 2>/dev/null
before=$(registrations)
[ -n "$client_pid" ] && kill -KILL $client_pid
released() { [ "$(registrations)" = 0 ]; }
waitfor 50 released
after=$(registrations)
info "registrations of $EV: $before while held, $after after kill -9"
check "kill -9 of the client releases its registration (ListEvents: $before -> $after)" \
        test "$before:$after" = 1:0

# upstream events are not PERSIST: the kernel drops it with its last reference
# (events/user_events itself goes with the last user event); v1 events
# persist until deleted
gone() { [ -e $T/user_events_data ] && [ ! -e $T/events/user_events/$EV ]; }
if [ "$kernel" = upstream ]; then
        waitfor 50 gone
        check "with its last registration gone, events/user_events/$EV leaves tracefs (upstream)" gone
        gone || info "still in tracefs: $(ls $T/events/user_events 2>&1); user_events_status: $(cat $T/user_events_status 2>&1); enable: $(cat $T/events/user_events/$EV/enable 2>&1)"
else
        check "with its last registration gone, events/user_events/$EV stays until deleted (v1)" \
                test -e $T/events/user_events/$EV/enable
fi

# 12. root may delete it (polkit authorizes uid 0)
r=$(dbus-send --system --print-reply --dest=org.uebroker1 /org/uebroker1 \
        org.uebroker1.Broker.Delete string:$EV boolean:false 2>&1)
info "root Delete: $r"
check "root's Delete succeeds" not matches "$r" '^Error'
check "ListEvents no longer lists $EV" test -z "$(registrations)"
[ "$kernel" = v1 ] && check "Delete removed events/user_events/$EV from the kernel (v1)" gone


# 12b. the kernel's own refusals reach callers as the contract's errors: a
#      name defined in the kernel with other fields (outside the broker) is
#      NameInUse; beyond kernel.user_events_max, QuotaExceeded.
echo 'u:vmclash u64 x' >> $T/dynamic_events 2>/dev/null
register_error() {      # register_error COMMAND: tester's Register, the error line
        as_tester dbus-send --system --print-reply --dest=org.uebroker1 /org/uebroker1 \
                org.uebroker1.Broker.Register "string:'$1'" 2>&1 | head -n1
}
r=$(register_error 'vmclash u32 a')
info "Register of a name the kernel has with other fields: $r"
nameinuse='^Error org\.uebroker1\.Error\.NameInUse: .*kernel already has'
[ "$kernel" = v1 ] && nameinuse='^Error org\.uebroker1\.Error\.NameInUse: .*vmclash'
check "a name the kernel defines otherwise is refused with NameInUse ($r)" matches "$r" "$nameinuse"

r=$(as_tester busctl --system call org.uebroker1 /org/uebroker1 org.uebroker1.Broker ListEvents 2>&1)
check "the refused event is not listed by the broker" not matches "$r" 'vmclash'
echo '!u:vmclash' >> $T/dynamic_events 2>/dev/null
# kernel.user_events_max is upstream's; the original interface's limit is
# its page (4095 events, kernel/selftests/reg_test)
if [ "$kernel" = upstream ]; then
max_before=$(cat /proc/sys/kernel/user_events_max 2>/dev/null)
echo 0 > /proc/sys/kernel/user_events_max 2>/dev/null
r=$(register_error 'vmlimit u32 a')
info "Register beyond user_events_max=0 (was $max_before): $r"
check "beyond kernel.user_events_max the kernel's EMFILE is QuotaExceeded ($r)" \
        matches "$r" '^Error org\.uebroker1\.Error\.QuotaExceeded: .*user_events_max'

echo "$max_before" > /proc/sys/kernel/user_events_max 2>/dev/null
r=$(as_tester busctl --system call org.uebroker1 /org/uebroker1 org.uebroker1.Broker Register s "'vmlimit u32 a'" 2>&1)
check "with the limit back, the same Register succeeds ($r)" matches "$r" '^hhuu '
fi

# 13. a broker restart under a running libuebroker client: while the broker
#     is away the library shows the event disabled (its enablers went with
#     the broker's mm; the old page would keep a stale byte) and writes
#     nothing; the new broker gets the registration back by itself, with a
#     new data file and page the kernel drives.
EV2=vmrestart
CMD2="$EV2 u32 a; char[8] b"
out2=/tmp/vm-client-restart.out
as_tester "vm-client '$CMD2' wait-lost 60 wait-registered 60 fds wait-enabled 60 write a=21 b=again hold > $out2 2>&1 &"
waitfor 100 grep -q '^registered' $out2
echo 1 > $T/events/user_events/$EV2/enable 2>/dev/null
old_pid=$(cat /run/uebrokerd.pid)
kill -TERM "$old_pid"
waitfor 100 not kill -0 "$old_pid"
waitfor 100 grep -q '^lost' $out2
info "client while the broker is away: $(tr '\n' ' ' < $out2)"
check "the broker's exit is seen by the client (lost 1)" grep -q '^lost 1' $out2
check "while the broker is away the client's event reads disabled (enabled 0)" grep -q '^enabled 0' $out2
uebrokerd --system >> /run/uebrokerd.log 2>&1 &
echo $! > /run/uebrokerd.pid
waitfor 200 grep -q '^registered 1' $out2
check "the client registers again with the new broker by itself (registered 1)" grep -q '^registered 1' $out2
echo 1 > $T/events/user_events/$EV2/enable 2>/dev/null
waitfor 100 grep -q '^write' $out2
info "client after the restart: $(tr '\n' ' ' < $out2)"
check "its new status byte is driven by the kernel (enabled 1)" grep -q '^enabled 1' $out2
check "its write after the restart succeeds ($(grep '^write' $out2))" grep -q '^write 0$' $out2
check "trace shows '$EV2: a=21 b=again' written after the restart" grep -Eq " $EV2: a=(0x15 \(21\)|21) b=again\$" $T/trace
echo 0 > $T/events/user_events/$EV2/enable 2>/dev/null

# 14. typed writes: ueb_write_values() lays out a __data_loc string (the
#     location word, the bytes from the caller's memory, the NUL) that the
#     kernel accepts and ftrace decodes; a value too long for a char[N] is
#     refused by the library before the kernel sees it.
EV3=vmtyped
CMD3="$EV3 u32 a; __data_loc char[] s; char[4] t"
out3=/tmp/vm-client-typed.out
as_tester "vm-client '$CMD3' wait-enabled 30 typed a=5 s=typed-hello t=abcd typed a=6 s=second t=toolong typed a=7 hold > $out3 2>&1 &"
waitfor 100 grep -q '^registered\|^register failed' $out3
check "a libuebroker client registers '$CMD3'" grep -q '^registered' $out3
echo 1 > $T/events/user_events/$EV3/enable 2>/dev/null
waitfor 100 test "$(grep -c '^typed' $out3)" -ge 3
info "typed client: $(tr '\n' ' ' < $out3); trace: $(grep " $EV3:" $T/trace 2>&1)"
check "ueb_write_values succeeds ($(grep '^typed' $out3 | head -n1))" test "$(sed -n '/^typed/{p;q}' $out3)" = "typed 0"
check "a 7-byte value for char[4] is refused by the library ($(grep '^typed' $out3 | sed -n 2p))" \
        matches "$(grep '^typed' $out3 | sed -n 2p)" '^typed -90 '
check "trace shows '$EV3: a=5 s=typed-hello t=abcd' from ueb_write_values (upstream)" \
        grep -Eq " $EV3: a=(0x5 \(5\)|5) s=typed-hello t=abcd\$" $T/trace
check "trace shows the third write, empty string and char[4] (upstream)" grep -Eq " $EV3: a=(0x7 \(7\)|7) s= t=\$" $T/trace
check "the refused value did not reach the trace" not grep -Eq " $EV3: a=(0x6 \(6\)|6) " $T/trace
echo 0 > $T/events/user_events/$EV3/enable 2>/dev/null

# 15. uebroker-run: programs of the kernel interface, built unchanged from
#     their sources (the kernel's samples/user_events/example.c,
#     LinuxTracepoints' libtracepoint samples and its EventHeader sample,
#     with its perf-collect and perf-decode on the consumer side), as uid
#     1000. On upstream the broker grants each definition (Authorize) and
#     the program's own DIAG_IOCSREG reaches the kernel, which keeps its
#     enable word; on v1 the broker registers and the preload library
#     follows the status byte.
X=/usr/libexec/uebroker-vm
# A sanitizer build's preload library needs ASan's runtime, which comes
# after it in a preloaded program (the host test does the same).
RUN="ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 UEBROKER_PRELOAD=$X/libuebroker-preload.so $X/uebroker-run"
# owner_of NAME: the uid ListEvents gives NAME ("" when not listed)
owner_of() {
        busctl --system --json=short call org.uebroker1 /org/uebroker1 org.uebroker1.Broker ListEvents 2>/dev/null |
                sed -n 's/.*\["'$1'","[^"]*",\([0-9]*\),[0-9]*,[a-z]*\].*/\1/p'
}
# reg_count NAME: the registrations ListEvents gives NAME ("" when not listed)
reg_count() {
        busctl --system --json=short call org.uebroker1 /org/uebroker1 org.uebroker1.Broker ListEvents 2>/dev/null |
                sed -n 's/.*\["'$1'","[^"]*",[0-9]*,\([0-9]*\),[a-z]*\].*/\1/p'
}
if [ -x $X/uebroker-run ]; then
        # 15a. without uebroker-run, tracefs is root's: EACCES (13)
        out=$(echo x | as_tester "$X/tracepoint-api-sample" 2>&1)
        check "without uebroker-run, libtracepoint's api sample gets EACCES as uid 1000" \
                matches "$out" 'tracepoint_open_provider: 13'

        # 15a'. upstream: the broker grants, the kernel refuses (root defined
        #      'test' with other fields outside the broker): the program gets
        #      the kernel's EADDRINUSE (98) and the grant is withdrawn, so
        #      the event holds no registration for it
        if [ "$kernel" = upstream ]; then
                echo 'u:test u64 other' >> $T/dynamic_events
                as_tester "$RUN -d $X/user-events-example < /dev/null > /tmp/example-clash.out 2>&1"
                rc=$?
                info "user-events-example beside a kernel 'test u64 other' (exit $rc): $(cat /tmp/example-clash.out)"
                check "the kernel's refusal reaches the program as EADDRINUSE (exit $rc)" test "$rc" = 98
                if [ "$booted" = patched ]; then
                        # the kernel refused the grant itself (DIAG_IOCSGRANT:
                        # EADDRINUSE), so the broker never kept the event
                        check "patched: the kernel refused the grant, the broker does not list 'test' ($(reg_count test))" \
                                test -z "$(reg_count test)"
                else
                        check "the grant is withdrawn: 'test' holds no registration ($(reg_count test))" \
                                test "$(reg_count test)" = 0
                fi
                # a user event is deleted by its whole definition
                echo '!u:test u64 other' >> $T/dynamic_events
                check "the kernel's own 'test u64 other' is deleted again" not test -e $T/events/user_events/test
        fi

        # 15b. the kernel's sample through uebroker-run, its stdin a fifo
        ex_in=/tmp/example.in ex_out=/tmp/example.out
        mkfifo $ex_in
        as_tester "$RUN -d $X/user-events-example < $ex_in > $ex_out 2>&1" &
        exec 3<> $ex_in          # read-write: never blocks, whatever the program does
        waitfor 100 grep -q "registered 'test u32 count'" $ex_out
        info "user-events-example: $(cat $ex_out)"
        check "the kernel's sample registers 'test u32 count' through uebroker-run as uid 1000" \
                test "$(owner_of test)" = 1000
        if [ "$kernel" = upstream ]; then
                check "upstream: the broker granted it and the sample's own DIAG_IOCSREG reached the kernel" \
                        grep -q "registered 'test u32 count' on the kernel's file" $ex_out
        else
                check "v1: the broker registered it for the sample" grep -q "registered 'test u32 count': write index" $ex_out
        fi
        check "tracefs has events/user_events/test" test -e $T/events/user_events/test/enable
        # The sample's stdout is a file (fully buffered): its writes are
        # counted in the trace, where they land only while its word is set.
        ex_writes() { grep -Ec " test: count=" $T/trace; }
        echo >&3
        sleep 0.3
        check "not enabled: the sample writes nothing" test "$(ex_writes)" = 0
        echo 1 > $T/events/user_events/test/enable
        sleep 0.3       # v1: the library follows the status byte every 20 ms
        echo >&3
        waitfor 50 test "$(ex_writes)" = 1
        check "enabled in ftrace: the sample's enable word (bit 31) is set, and trace shows 'test: count=0'" \
                grep -Eq " test: count=(0x0 \(0\)|0)\$" $T/trace
        echo 0 > $T/events/user_events/test/enable
        sleep 0.3
        echo >&3
        sleep 0.3
        check "disabled again: the word clears, one write only ($(ex_writes))" test "$(ex_writes)" = 1
        kill $(pidof user-events-example) 2>/dev/null
        exec 3>&-
        rm -f $ex_in

        # 15c. libtracepoint's api sample: a name root owns with other fields
        #      is EADDRINUSE (98) in the program, the others are recorded
        busctl --system call org.uebroker1 /org/uebroker1 org.uebroker1.Broker Register s \
                "simple_tracepoint u64 other" > /dev/null 2>&1
        tprec=/tmp/tp-record.out
        uebctl record --count=2 tp_data_loc empty_tracepoint > $tprec 2>&1 &
        tprec_pid=$!
        waitfor 50 grep -q '^Recording' $tprec
        out=$(echo x | as_tester "$RUN $X/tracepoint-api-sample" 2>&1)
        info "tracepoint-api-sample: $out"
        check "libtracepoint opens its provider through uebroker-run" matches "$out" 'tracepoint_open_provider: 0'
        check "a name root owns with other fields: EADDRINUSE (98) in the program" \
                matches "$out" 'tracepoint_connect\(simple_tracepoint\): 98'
        check "its own events connect and write" matches "$out" 'tracepoint_write\(tp_data_loc\): 0'
        waitfor 100 not kill -0 $tprec_pid
        info "uebctl record: $(cat $tprec)"
        check "uebctl record gets 'tp_data_loc: field1=101 field2=field2-str field3=301' from the kernel" \
                grep -q 'tp_data_loc: field1=101 field2=field2-str field3=301' $tprec
        kill $tprec_pid 2>/dev/null

        # 15d. libtracepoint's provider sample, recorded by pattern
        pvrec=/tmp/pv-record.out
        uebctl record --count=4 'my_tracepoint*' > $pvrec 2>&1 &
        pvrec_pid=$!
        waitfor 50 grep -q '^Recording' $pvrec
        check "libtracepoint's provider sample runs through uebroker-run as uid 1000" \
                as_tester "$RUN $X/tracepoint-provider-sample"
        waitfor 100 not kill -0 $pvrec_pid
        info "uebctl record: $(cat $pvrec)"
        check "its four tracepoints are recorded" test "$(grep -c '\] my_tracepoint[1-4]:' $pvrec)" = 4
        kill $pvrec_pid 2>/dev/null

        # 15d'. libtracepoint's own unit tests, unchanged: as root on the
        #      kernel's file, then through uebroker-run as uid 1000; the
        #      same result both ways. Not on v1: libtracepoint
        #      speaks today's interface.
        if [ "$kernel" = upstream ] && [ -x $X/tracepoint-api-utest ]; then
                for t in tracepoint-api-utest tracepoint-provider-utest; do
                        "$X/$t" > /tmp/$t.root 2>&1; root_rc=$?
                        as_tester "$RUN $X/$t" > /tmp/$t.run 2>&1; run_rc=$?
                        info "$t: root exit $root_rc ($(tail -n 1 /tmp/$t.root)), uebroker-run exit $run_rc ($(tail -n 1 /tmp/$t.run))"
                        check "libtracepoint's $t passes as root and through uebroker-run as uid 1000, saying the same" \
                                sh -c "test '$root_rc $run_rc' = '0 0' && cmp -s /tmp/$t.root /tmp/$t.run"
                done
        fi

        # 15e. LinuxTracepoints' EventHeader provider sample (C++,
        #      TraceLoggingProvider.h) through uebroker-run as uid 1000,
        #      collected by root with LinuxTracepoints' perf-collect
        #      (perf_event_open on its tracepoints, into perf.data) and
        #      decoded by perf-decode: the EventHeader payload after the
        #      declared fields arrives intact, its fields by name. The
        #      sample registers and waits on its stdin (a fifo) first:
        #      perf-collect's ":user_events:NAME" takes a tracepoint that
        #      exists (its other forms register the name themselves, as
        #      root, on user_events_data), and an upstream event without
        #      PERSIST lives only while a user holds it. On both kernels.
        if [ -x $X/eventheader-provider-sample ] && [ -x $X/perf-collect ] && [ -x $X/perf-decode ]; then
                EH1=MyProviderName_L4K1 EH2=OtherProviderName_L5K23Gmygroup
                eh_in=/tmp/eh.in eh_out=/tmp/eh.out pc_out=/tmp/perf-collect.out
                pc_data=/tmp/eh-perf.data pd_out=/tmp/perf-decode.out
                mkfifo $eh_in
                as_tester "$RUN $X/eventheader-provider-sample < $eh_in > $eh_out 2>&1" &
                eh_pid=$!
                exec 4<> $eh_in          # read-write: never blocks
                waitfor 100 test "$(owner_of $EH2)" = 1000
                check "the EventHeader sample registers $EH1 and $EH2 through uebroker-run as uid 1000" \
                        test "$(owner_of $EH1)/$(owner_of $EH2)" = 1000/1000
                $X/perf-collect -o $pc_data :user_events:$EH1 :user_events:$EH2 > $pc_out 2>&1 &
                pc_pid=$!
                waitfor 100 grep -q 'info: created' $pc_out
                info "perf-collect: $(cat $pc_out)"
                check "perf-collect (root) collects the sample's two tracepoints" \
                        sh -c "grep -q 'info: created \"$pc_data\"' $pc_out && ! grep -q warning $pc_out"
                # The same run recorded by uebctl too (an instance of the
                # broker's beside perf's events): the host compares its
                # decoding with perf-decode's (compare-eventheader-oracle.py).
                uj_out=/tmp/eh-uebctl.jsonl
                uebctl record --json --count=2 --provider=MyProviderName --provider=OtherProviderName \
                        > $uj_out 2> /tmp/eh-uebctl.err &
                uj_pid=$!
                # Its "Recording" line follows the broker's reply: both
                # events are enabled in the instance by then (the instance
                # itself exists before).
                waitfor 100 grep -q '^Recording events matching 2 patterns (2 events now)' /tmp/eh-uebctl.err
                check "uebctl record --provider (root) records the sample's two providers ($(cat /tmp/eh-uebctl.err))" \
                        grep -q '^Recording events matching 2 patterns (2 events now)' /tmp/eh-uebctl.err
                # The sample's second iteration writes Event1 and Event2
                # (its first found them disabled); then x ends it.
                echo >&4
                echo x >&4
                waitfor 100 not kill -0 $eh_pid 2>/dev/null || kill $eh_pid
                wait $eh_pid
                eh_rc=$?
                info "eventheader-provider-sample (exit $eh_rc): $(cat $eh_out)"
                check "with perf-collect on, the sample found Event1 enabled, and exited 0 ($eh_rc)" \
                        sh -c "test $eh_rc = 0 && grep -q '^$EH1 Event1 status=1\$' $eh_out"
                kill -INT $pc_pid
                waitfor 100 not kill -0 $pc_pid 2>/dev/null || kill -9 $pc_pid
                wait $pc_pid
                pc_rc=$?
                info "perf-collect (exit $pc_rc): $(cat $pc_out)"
                check "SIGINT stops perf-collect (exit $pc_rc), which writes $pc_data" \
                        sh -c "test $pc_rc = 0 && grep -q 'info: woke .* bytes to \"$pc_data\"' $pc_out"
                $X/perf-decode $pc_data > $pd_out 2>&1
                info "perf-decode: $(cat $pd_out)"
                waitfor 100 not kill -0 $uj_pid 2>/dev/null || kill -INT $uj_pid
                wait $uj_pid
                uj_rc=$?
                info "uebctl record --json (exit $uj_rc): $(cat $uj_out /tmp/eh-uebctl.err)"
                check "uebctl record --json gets the sample's two events and exits 0 ($uj_rc)" \
                        sh -c "test $uj_rc = 0 && test \$(wc -l < $uj_out) = 2"
                artifact eh-perf-decode.json $pd_out
                artifact eh-uebctl.jsonl $uj_out
                check "perf-decode: MyProviderName:Event1 with its EventHeader fields (ArgC 1, Structure { ArgCount 1, Arg0 the program }, iteration 2), level 4" \
                        grep -Eq '"n": "MyProviderName:Event1", "ArgC": 1, "Structure": \{ "ArgCount": 1, "Arg0": "[^"]*/eventheader-provider-sample" \}, "iteration": 2, "meta": \{.*"level": 4' $pd_out
                check "perf-decode: OtherProviderName:Event2 with its fields (iteration 2, argv0 the program), level 5" \
                        grep -Eq '"n": "OtherProviderName:Event2", "iteration": 2, .*"argv0": "[^"]*/eventheader-provider-sample".*"level": 5' $pd_out
                exec 4>&-
                rm -f $eh_in
        else
                not_ok "the EventHeader sample, perf-collect and perf-decode are not in the image (tests/vm/meson.build --guest-bin)"
        fi

        # 15f. what real programs do with the file (preload-cases.c),
        #      through uebroker-run as uid 1000 on this kernel, each
        #      bounded (a hang is a failure): a signal handler closing the
        #      file under an ioctl(), fork() while a thread registers,
        #      recycled descriptor numbers, enable words read-only,
        #      unmapped, unmapped later or shared with the program's bits
        #      (enabled here by ftrace, the kernel's own recorder).
        if [ -x $X/preload-cases ]; then
                for c in signal-close fork recycle; do
                        as_tester "timeout 120 env $RUN $X/preload-cases $c" > /tmp/preload-$c.out 2>&1
                        rc=$?
                        info "preload-cases $c: exit $rc, $(tr '\n' ' ' < /tmp/preload-$c.out | cut -c1-300)"
                        # signal-close's alarms (0.1 to 4 ms) mostly beat a
                        # registration under TCG: its test is that nothing
                        # hangs or fails, not how many got through
                        made="! grep -q '^registered 0\$' /tmp/preload-$c.out" said=", registrations made"
                        [ $c = signal-close ] && made=true said=
                        check "preload case $c through uebroker-run on the $kernel kernel: exit 0$said" \
                                sh -c "test $rc = 0 && grep -q '^ok\$' /tmp/preload-$c.out && $made"
                done
                pc_in=/tmp/preload-word.in pc_out=/tmp/preload-enable-word.out
                mkfifo $pc_in
                as_tester "timeout 120 env $RUN $X/preload-cases enable-word < $pc_in > $pc_out 2>&1" &
                pc_pid=$!
                exec 5<> $pc_in
                waitfor 150 grep -q '^ready' $pc_out
                echo 1 > $T/events/user_events/preload_word_a/enable 2>/dev/null
                echo 1 > $T/events/user_events/preload_word_later/enable 2>/dev/null
                echo recording >&5
                waitfor 150 not kill -0 $pc_pid
                wait $pc_pid
                rc=$?
                echo 0 > $T/events/user_events/preload_word_a/enable 2>/dev/null
                echo 0 > $T/events/user_events/preload_word_later/enable 2>/dev/null
                exec 5>&-
                rm -f $pc_in
                info "preload-cases enable-word: exit $rc, $(tr '\n' ' ' < $pc_out | cut -c1-300)"
                check "preload case enable-word through uebroker-run on the $kernel kernel: exit 0, the words as the kernel keeps them" \
                        sh -c "test $rc = 0 && grep -q '^ok\$' $pc_out && ! grep -q '^registered 0\$' $pc_out"
                # 300 files held at once: one bus connection of the
                # process (a data session per file), the uid's share of
                # them registered, a new file registers once they closed.
                pc_in=/tmp/preload-many.in pc_out=/tmp/preload-many-files.out
                mkfifo $pc_in
                as_tester "timeout 120 env $RUN $X/preload-cases many-files < $pc_in > $pc_out 2>&1" &
                pc_pid=$!
                exec 5<> $pc_in
                waitfor 150 grep -q '^ready' $pc_out
                prog=
                for p in /proc/[0-9]*; do
                        [ "$(cat $p/comm 2>/dev/null)" = preload-cases ] && prog=${p#/proc/}
                done
                : > /tmp/preload-many-names
                for name in $(busctl --system list --no-legend --unique 2>/dev/null | awk '{print $1}'); do
                        echo "$name $(busctl --system call org.freedesktop.DBus /org/freedesktop/DBus \
                                org.freedesktop.DBus GetConnectionUnixProcessID s "$name" 2>&1)" >> /tmp/preload-many-names
                done
                conns=$(awk -v p="$prog" '$2 == "u" && $3 == p' /tmp/preload-many-names | wc -l)
                [ "$conns" = 1 ] || info "bus names: $(tr '\n' '|' < /tmp/preload-many-names | cut -c1-2000)"
                echo counted >&5
                waitfor 150 grep -q '^again' $pc_out
                echo counted >&5
                waitfor 150 not kill -0 $pc_pid
                wait $pc_pid
                rc=$?
                exec 5>&-
                rm -f $pc_in
                info "preload-cases many-files: exit $rc, $conns bus connections of pid $prog, $(tr '\n' ' ' < $pc_out | cut -c1-300)"
                check "preload case many-files through uebroker-run on the $kernel kernel: exit 0, one bus connection for 300 files" \
                        sh -c "test $rc = 0 && grep -q '^ok\$' $pc_out && test '$conns' = 1 && ! grep -q '^ready 0 ' $pc_out"
        else
                not_ok "preload-cases is not in the image (tests/vm/meson.build --guest-bin)"
        fi
else
        not_ok "uebroker-run and the user_events programs are not in the image (tests/vm/meson.build --guest-bin)"
fi

# 16. Authorize's descriptor used behind the broker's back (vm-grant, uid
#     1000): its own DIAG_IOCSREG of the granted definition works on both
#     6.12 kernels; on the patched one the kernel refuses anything else and
#     Withdraw cuts the registration off; on the stock one nothing stops it.
if [ "$kernel" = upstream ]; then
        out=/tmp/vm-grant.out
        as_tester "vm-grant vmgrant > $out 2>&1 &"
        waitfor 100 grep -q '^del\|failed' $out
        echo 1 > $T/events/user_events/vmgrant/enable
        waitfor 150 grep -q '^word\|failed' $out
        echo 0 > $T/events/user_events/vmgrant/enable
        info "vm-grant: $(cat $out)"
        check "uid 1000's own DIAG_IOCSREG of the definition Authorize granted succeeds" grep -q '^reg granted 0 ' $out
        check "and its enable word follows ftrace" grep -q '^enabled 1$' $out
        if [ "$booted" = patched ]; then
                check "patched: a definition the broker did not grant is EPERM in the kernel" grep -q '^reg other -EPERM$' $out
                check "patched: and the kernel has no such event" not test -e $T/events/user_events/vmgrant_other
                check "patched: DIAG_IOCSDEL on the granting handle is EPERM" grep -q '^del -EPERM$' $out
                check "patched: Withdraw cuts the registration off: enable word cleared, writes EPERM" \
                        grep -q '^word 0 write -EPERM$' $out
        else
                check "stock: the holder of the data file registers what the broker never granted" \
                        grep -q '^reg other 0$' $out
                check "stock: Withdraw is the broker's word only, the registration keeps writing" \
                        grep -q '^word 1 write 0$' $out
        fi
        # 16b. a client that leaves the bus but keeps Authorize's descriptor
        out=/tmp/vm-grant-leave.out
        as_tester "vm-grant vmleave leave > $out 2>&1 &"
        waitfor 100 grep -q '^del\|failed' $out
        echo 1 > $T/events/user_events/vmleave/enable
        waitfor 150 grep -q '^word\|failed' $out
        echo 0 > $T/events/user_events/vmleave/enable 2>/dev/null
        info "vm-grant leave: $(cat $out)"
        check "a client that leaves keeping its descriptor registered the granted definition, enabled" \
                sh -c "grep -q '^reg granted 0 ' $out && grep -q '^enabled 1\$' $out"
        if [ "$booted" = patched ]; then
                check "patched: its session's end withdraws the grant: enable word cleared, writes EPERM" \
                        grep -q '^word 0 write -EPERM$' $out
        else
                check "stock: its registration outlives its session: it keeps writing" grep -q '^word 1 write 0$' $out
        fi
        # 16c. the broker killed (a crash) under a client that keeps its
        #      granting handle: the kernel cuts the handle off as the
        #      broker's file goes, and the restarted broker finds the event
        #      free (before, the holder kept registering and
        #      writing, and the event stayed pinned)
        if [ "$booted" = patched ]; then
                out=/tmp/vm-grant-crash.out
                as_tester "vm-grant vmcrash stay > $out 2>&1 &"
                waitfor 100 grep -q '^del\|failed' $out
                echo 1 > $T/events/user_events/vmcrash/enable
                waitfor 150 grep -q '^holding\|failed' $out
                old_pid=$(cat /run/uebrokerd.pid)
                kill -KILL "$old_pid"
                waitfor 100 not kill -0 "$old_pid"
                waitfor 350 grep -q '^reg again' $out
                echo 0 > $T/events/user_events/vmcrash/enable 2>/dev/null
                info "vm-grant across a broker crash: $(tr '\n' ' ' < $out)"
                check "patched: a broker killed with -9 cuts its client's granting handle off: enable word cleared, writes EPERM" \
                        grep -q '^word 0 write -EPERM$' $out
                check "patched: and registering through it again is EPERM" grep -q '^reg again -EPERM$' $out
                uebrokerd --system >> /run/uebrokerd.log 2>&1 &
                echo $! > /run/uebrokerd.pid
                waitfor 100 busctl --system status org.uebroker1 > /dev/null 2>&1
                crash_gone() {
                        echo '!u:vmcrash' >> $T/dynamic_events 2>/dev/null
                        [ ! -e $T/events/user_events/vmcrash ]
                }
                waitfor 50 crash_gone
                check "patched: the event the crashed broker granted is not pinned by the holder (deleted)" \
                        not test -e $T/events/user_events/vmcrash
                out=/tmp/vm-grant-after.out
                as_tester "vm-grant vmcrash > $out 2>&1 &"
                waitfor 100 grep -q '^del\|failed' $out
                echo 1 > $T/events/user_events/vmcrash/enable 2>/dev/null
                waitfor 150 grep -q '^word\|failed' $out
                echo 0 > $T/events/user_events/vmcrash/enable 2>/dev/null
                info "vm-grant after the restart: $(tr '\n' ' ' < $out)"
                check "patched: the restarted broker grants the same name to a new client, which registers it" \
                        grep -q '^reg granted 0 ' $out
        fi
fi

check "uebrokerd is still running" kill -0 "$(cat /run/uebrokerd.pid)"

echo "1..$n"
