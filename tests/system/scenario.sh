#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The system tier's scenario, run as root by uebroker-system-test.service
# in the booted Debian guest (systemd PID 1, the real system bus and
# polkitd, the project's Debian packages installed by apt-get here). Users: tester (uid 1000)
# and tracer (uid 1001, group tracing). One TAP line per check; the TAP, the
# details and the daemon's journal go to the serial console between
# markers, then the guest powers off (ExecStopPost= of the test unit).

T=/sys/kernel/tracing
tap=/run/uebroker-system.tap
details=/run/uebroker-system.log
: > $tap
: > $details
exec 2>> $details

n=0
ok() { n=$((n + 1)); echo "ok $n - $*" >> $tap; }
not_ok() { n=$((n + 1)); echo "not ok $n - $*" >> $tap; }
# check "TEXT" COMMAND...: ok when COMMAND succeeds
check() { local text="$1"; shift; if "$@" >&2; then ok "$text"; else not_ok "$text"; fi; }
info() { echo "scenario: $*" >&2; }
not() { ! "$@"; }
matches() { printf '%s\n' "$1" | grep -Eq -e "$2"; }   # matches TEXT ERE
waitfor() {     # waitfor TENTHS COMMAND...: polls COMMAND
        local w=$1; shift
        while [ "$w" -gt 0 ]; do "$@" 2>/dev/null && return 0; sleep 0.1; w=$((w - 1)); done
        return 1
}
# as USER COMMAND...: COMMAND as USER with its groups, no login session
as() { local u=$1; shift; setpriv --reuid="$u" --regid="$u" --init-groups --reset-env "$@"; }
call() {        # call USER METHOD ARGS...: dbus-send's reply or error, one line
        local u=$1 method=$2; shift 2
        as "$u" dbus-send --system --print-reply --reply-timeout=20000 --dest=org.uebroker1 /org/uebroker1 \
                "org.uebroker1.Broker.$method" "$@" 2>&1 | tr '\n' ' '
}
bus_get() {     # bus_get PROPERTY: the broker's property, as busctl prints it
        busctl --system get-property org.uebroker1 /org/uebroker1 org.uebroker1.Broker "$1" 2>&1
}
# registrations EVENT: how many ListEvents reports ("" when not listed)
registrations() {
        busctl --system --json=short call org.uebroker1 /org/uebroker1 org.uebroker1.Broker ListEvents 2>/dev/null |
                sed -n 's/.*\["'"$1"'","[^"]*",[0-9]*,\([0-9]*\),[a-z]*\].*/\1/p'
}
run_autopkgtest() {      # run_autopkgtest NAME RESTRICTIONS
        local tmp out err rc
        tmp=$(mktemp -d) out=/run/autopkgtest-$1.out err=/run/autopkgtest-$1.err
        AUTOPKGTEST_TMP=$tmp "$tests_dir/$1" > $out 2> $err
        rc=$?
        info "debian/tests/$1 (exit $rc): $(cat $out) stderr: $(cat $err)"
        if matches "$2" 'allow-stderr'; then
                check "debian/tests/$1 passes ($(tail -n 1 $out))" test $rc = 0
        else
                check "debian/tests/$1 passes, nothing on stderr ($(tail -n 1 $out))" test $rc = 0 -a ! -s $err
        fi
        rm -rf "$tmp"
}
REFUSED='^Error org\.freedesktop\.DBus\.Error\.(AccessDenied|InteractiveAuthorizationRequired)'
finish() {
        echo "1..$n" >> $tap
        {
                echo
                echo "===== uebroker-system: begin TAP ====="
                cat $tap
                echo "===== uebroker-system: end TAP ====="
                echo "===== uebroker-system: begin log ====="
                cat $details
                echo "--- systemctl status uebrokerd"
                systemctl status --no-pager --lines=0 uebrokerd 2>&1
                echo "--- journalctl -u uebrokerd"
                journalctl --no-pager -o short-monotonic -u uebrokerd 2>&1 | tail -n 60
                echo "--- warnings of this boot"
                journalctl --no-pager -o short-monotonic -b -p warning 2>&1 | tail -n 40
                echo "--- failed units"
                systemctl --failed --no-pager --no-legend 2>&1
                echo "===== uebroker-system: end log ====="
        } > /dev/ttyS0
}
trap 'info "done at $(cut -d" " -f1 /proc/uptime) s"; finish' EXIT
info "booted: $(systemctl is-system-running 2>&1), $(uname -r), $(cut -d' ' -f1 /proc/uptime) s"
# The system bus: dbus-daemon, or dbus-broker where run-system.sh enabled it.
case "$(systemctl show -P Id dbus.service)" in
dbus-broker.service) system_bus=dbus-broker ;;
*) system_bus=dbus-daemon ;;
esac
check "the system bus is $system_bus (${UEBROKER_SYSTEM_BUS:-dbus-daemon} asked)" \
        test "$system_bus" = "${UEBROKER_SYSTEM_BUS:-dbus-daemon}"

# 1. the packages, installed with apt-get as an administrator does (no
#    network: what they depend on is in the root already): a lower
#    version first, which enables and starts the unit; then the upgrade,
#    which restarts the daemon, keeps the events registered, and updates
#    the journal's catalog through systemd's trigger.
debs=/var/lib/uebroker-system/debs
apt_install() {         # apt_install DEB...: apt-get's output in the details
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >&2
}
version_of() { dpkg-query -W -f '${Version}' "$1" 2>/dev/null; }
if [ -d $debs/older ]; then
        check "apt-get installs the lower version's packages ($(cd $debs/older && echo *.deb))" \
                apt_install $debs/older/*.deb
        check "the package enabled uebrokerd.service, with the bus alias dbus-org.uebroker1.service" \
                test "$(systemctl is-enabled uebrokerd 2>&1)" = enabled -a -e /etc/systemd/system/dbus-org.uebroker1.service
        check "and started it" systemctl is-active uebrokerd
        older_version=$(version_of uebrokerd)
        older_pid=$(systemctl show -P MainPID uebrokerd)
        r=$(as tester busctl --system call org.uebroker1 /org/uebroker1 org.uebroker1.Broker Register s \
                "pkg_upgrade u32 a" 2>&1)
        check "tester registers pkg_upgrade on the lower version ($older_version: $r)" \
                matches "$r" '^hhuu [0-9]+ [0-9]+ [0-9]+ [0-9]+$'
fi
check "apt-get installs the packages under test ($(cd $debs/new && echo *.deb))" apt_install $debs/new/*.deb
new_version=$(version_of uebrokerd)
check "uebrokerd $new_version is installed, as its .deb says" \
        test "$new_version" = "$(dpkg-deb -f $debs/new/uebrokerd_*.deb Version)"
check "uebrokerd --version and uebctl --version say ${new_version%%-*}" \
        sh -c "uebrokerd --version | grep -qw '${new_version%%-*}' && uebctl --version | grep -qw '${new_version%%-*}'"
check "uebrokerd.service is enabled, with the bus alias, and active" \
        sh -c "test \"\$(systemctl is-enabled uebrokerd)\" = enabled && test -e /etc/systemd/system/dbus-org.uebroker1.service && systemctl is-active uebrokerd"
if [ -n "${older_pid:-}" ]; then
        new_pid=$(systemctl show -P MainPID uebrokerd)
        check "the upgrade ($older_version -> $new_version) restarted the daemon (MainPID $older_pid -> $new_pid)" \
                test "$new_pid" != "$older_pid" -a "$new_pid" != 0
        check "and the restarted daemon still lists pkg_upgrade (its event table kept in /run/uebroker)" \
                test -n "$(registrations pkg_upgrade)"
        journalctl --no-pager -b -u uebrokerd -n 20 >&2
fi
catalog_id=$(sed -n 's/^-- \([0-9a-f]\{32\}\)$/\1/p' /usr/lib/systemd/catalog/uebroker.catalog | head -n 1)
check "the journal's catalog knows uebrokerd's messages (systemd's trigger ran journalctl --update-catalog: $catalog_id)" \
        sh -c "test -n '$catalog_id' && journalctl --list-catalog 2>/dev/null | grep -qi '^$catalog_id'"
# polkitd reads the package's actions by itself: 9. grants by them.

# 1b. debian/tests, as autopkgtest runs them on a testbed with the
#     packages installed: each test of debian/tests/control, as root (they
#     need it), in a fresh AUTOPKGTEST_TMP; it passes when it exits 0 and,
#     unless it allows stderr, writes nothing there.
tests_dir=/usr/local/lib/uebroker-system/debian/tests
while IFS= read -r line; do
        case "$line" in
        Tests:*) names="${line#Tests:}" ;;
        Restrictions:*) restrictions="${line#Restrictions:}" ;;
        "") for name in ${names:-}; do run_autopkgtest "$name" "${restrictions:-}"; done; names= restrictions= ;;
        esac
done < <(cat $tests_dir/control; echo)
# The original interface (the kernel provider's 6.1 kernel) says "Max:
# 4096" in its status text, upstream's does not.
kernel=upstream
grep -q '^Max: 4096$' $T/user_events_status 2>/dev/null && kernel=v1
provider=$(busctl --system get-property org.uebroker1 /org/uebroker1 org.uebroker1.Broker Provider 2>&1)
check "the broker uses the $kernel provider on this user_events kernel ($provider)" \
        test "$provider" = "s \"$kernel\""

# 2. busctl introspect, as an unprivileged user
r=$(as tester busctl --system introspect org.uebroker1 /org/uebroker1 2>&1)
info "introspect: $r"
check "busctl introspect org.uebroker1 /org/uebroker1 (as tester) lists Register" \
        matches "$r" '^\.Register +method +s +hhuu'

# 3. D-Bus activation: stopped, the first call starts it through systemd
check "systemctl stop uebrokerd" systemctl stop uebrokerd
check "uebrokerd is inactive after the stop" test "$(systemctl is-active uebrokerd 2>&1)" = inactive
r=$(call tester ListEvents)
info "tester ListEvents while stopped: $r"
check "the first D-Bus call (tester's ListEvents) is answered ($r)" matches "$r" '^method return'
check "and systemd started uebrokerd.service for it" systemctl is-active uebrokerd
if [ "$system_bus" = dbus-daemon ]; then
        check "dbus-daemon activated it through systemd" \
                journalctl --no-pager -b -u dbus -g "Activating via systemd: service name='org.uebroker1'"
else
        check "dbus-broker activated it through systemd (uebrokerd.service started after the stop)" \
                journalctl --no-pager -b -u uebrokerd -g "Start(ing|ed) uebrokerd"
fi

# 4. tester registers with busctl and receives the two descriptors
r=$(as tester busctl --system call org.uebroker1 /org/uebroker1 org.uebroker1.Broker Register s \
        "sysbus u32 a; char[8] b" 2>&1)
info "tester Register with busctl: $r"
check "tester registers 'sysbus u32 a; char[8] b' with busctl: data and status fds ($r)" \
        matches "$r" '^hhuu [0-9]+ [0-9]+ [0-9]+ [0-9]+$'

# 5. the example program, as tester, holds hello_tick and its descriptors
hello_out=/run/hello-events.out
as tester /usr/local/bin/hello-events --count=0 --interval=100 --message="from the system tier" \
        > $hello_out 2>&1 &
waitfor 200 grep -q 'hello_tick registered' $hello_out
hello_pid=$(pidof hello-events)
info "hello-events: $(cat $hello_out)"
check "the example program (hello-events, as tester) registers hello_tick" grep -q 'hello_tick registered' $hello_out
fds=$(ls -l /proc/"$hello_pid"/fd 2>&1)
info "hello-events fds: $fds"
if [ "$kernel" = v1 ]; then
        # the kernel provider's write-only handle: a file of its own kind
        check "it holds the kernel's write-only handle from the broker (v1)" matches "$fds" "-> anon_inode:\[user_events_writer\]\$"
else
        check "it holds the kernel's user_events_data from the broker" matches "$fds" "-> $T/user_events_data\$"
fi
maps=$(grep uebroker-status /proc/"$hello_pid"/maps 2>&1)
info "hello-events status page mapping: $maps"
if [ "$kernel" = v1 ]; then
        maps=$(grep user_events_status /proc/"$hello_pid"/maps 2>&1)
        check "and maps the kernel's own status page read-only (v1: $maps)" matches "$maps" " r--s .*$T/user_events_status"
else
        check "and maps the broker's status page read-only ($maps)" matches "$maps" ' r--s .*/memfd:uebroker-status'
fi

# 5b. a user who sends and never reads its replies stalls only itself
#    : tracer sends 4 x 5000 Registers and 16 x 100 ListEvents
#     and reads nothing; root and tester are still answered.
unread=/usr/local/lib/uebroker-system/unread-client
mkfifo /run/unread.in
as tracer $unread 4 5000 Register "unread_sys u32 a" < /run/unread.in > /run/unread-register.out 2>&1 &
unread_register=$!
as tracer $unread 16 100 ListEvents < /run/unread.in > /run/unread-list.out 2>&1 &
unread_list=$!
exec 7> /run/unread.in         # their stdin, open until the end of this section
waitfor 600 grep -q '^sent' /run/unread-register.out
waitfor 600 grep -q '^sent' /run/unread-list.out
info "the unread clients: $(cat /run/unread-register.out /run/unread-list.out | tr '\n' ' ')"
sleep 3
start=$(date +%s%N)
r=$(busctl --system --timeout=25 call org.uebroker1 /org/uebroker1 org.uebroker1.Broker GetStatus 2>&1 | head -c 200)
ms=$(( ($(date +%s%N) - start) / 1000000 ))
info "root GetStatus under the unread clients, $ms ms: $r"
check "root's GetStatus is answered while tracer reads none of its replies ($ms ms)" matches "$r" '^s "'
start=$(date +%s%N)
r=$(as tester busctl --system --timeout=25 call org.uebroker1 /org/uebroker1 org.uebroker1.Broker Register s \
        "during_unread u32 a" 2>&1)
ms=$(( ($(date +%s%N) - start) / 1000000 ))
info "tester Register under the unread clients, $ms ms: $r"
check "tester's Register is answered with its descriptors, polkit asked ($ms ms)" matches "$r" '^hhuu [0-9]+ [0-9]+ '
if [ "$system_bus" = dbus-daemon ]; then
        owner=$(busctl --system call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus GetNameOwner s \
                org.uebroker1 | sed 's/^s "\(.*\)"$/\1/')
        stats=$(busctl --system call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.Debug.Stats \
                GetConnectionStats s "$owner" 2>&1)
        fds=$(printf '%s\n' "$stats" | sed -n 's/.*"IncomingFDs" u \([0-9]*\).*/\1/p')
        info "dbus-daemon's counters of the broker ($owner): $stats"
        check "dbus-daemon holds fewer than its 64 descriptors of the broker's (${fds:-?})" test "${fds:-64}" -lt 64
fi
info "Delivery: $(bus_get Delivery)"
# dbus-daemon tells the broker what it holds for each client; dbus-broker
# does not (it accounts per user itself), and the broker holds nothing back.
[ "$system_bus" = dbus-daemon ] && want_stats=1 || want_stats=0
check "the broker confirms deliveries through the bus's statistics: $want_stats on $system_bus" \
        matches "$(bus_get Delivery)" "\"bus-statistics\" $want_stats"
exec 7>&-
waitfor 100 not kill -0 $unread_register
waitfor 100 not kill -0 $unread_list
check "the unread clients are gone, the broker is still active" systemctl is-active uebrokerd

# 6. its events in ftrace, once enabled there
check "tracefs has events/user_events/hello_tick" test -e $T/events/user_events/hello_tick/enable
echo 1 > $T/events/user_events/hello_tick/enable
traced() { grep -q 'hello_tick: count=[0-9a-fx()]* *.*msg=from the system tier' $T/trace; }
waitfor 100 traced
info "trace: $(grep hello_tick $T/trace | tail -n 3)"
check "enabled in ftrace, its records are in $T/trace" traced

# 7. uebctl record as root
r=$(timeout 20 uebctl record --count=2 hello_tick 2>&1)
rc=$?
info "uebctl record (root): rc $rc: $r"
check "uebctl record as root sees tester's hello_tick records through the kernel (rc $rc)" \
        matches "$r" 'hello_tick: count=[0-9a-fx()]* *.*msg=from the system tier'

# 8. polkit refuses the unprivileged user Delete and Record
r=$(call tester Delete string:hello_tick boolean:false)
info "tester Delete: $r"
check "polkit refuses tester's Delete ($r)" matches "$r" "$REFUSED"
r=$(call tester Record array:string:hello_tick)
info "tester Record: $r"
check "polkit refuses tester's Record ($r)" matches "$r" "$REFUSED"
check "polkitd answered (polkit.service is active)" systemctl is-active polkit

# 9. the example rules grant group tracing: tracer is refused before them
#    and allowed after an administrator installs them
r=$(call tracer Delete string:sysbus boolean:false)
info "tracer Delete before the rules: $r"
check "without the example rules, polkit refuses tracer's Delete too ($r)" matches "$r" "$REFUSED"
cp /usr/share/doc/uebrokerd/examples/50-uebroker-example.rules /etc/polkit-1/rules.d/
granted() { ! matches "$(call tracer Delete string:sysbus boolean:false)" "$REFUSED"; }
waitfor 100 granted
r=$(busctl --system --json=short call org.uebroker1 /org/uebroker1 org.uebroker1.Broker ListEvents 2>&1)
info "after tracer's Delete, ListEvents: $r"
check "with the example rules, tracer (group tracing) deletes sysbus" not matches "$r" '"sysbus"'
r=$(call tracer Record array:string:hello_tick)
info "tracer Record: $r"
check "and polkit lets tracer Record ($r)" not matches "$r" "$REFUSED|^Error org\.freedesktop\.DBus\.Error\.(ServiceUnknown|NoReply)"
r=$(call tester Delete string:hello_tick boolean:false)
check "tester, not in the group, is still refused Delete ($r)" matches "$r" "$REFUSED"

# 10. systemctl reload with changed limits: new calls see them, the
#     sessions held stay; a bad file keeps the settings in force
pid_before=$(systemctl show -P MainPID uebrokerd)
max_before=$(bus_get MaxEvents)
dropin=/etc/uebroker/uebrokerd.conf.d/50-system-test.conf
mkdir -p /etc/uebroker/uebrokerd.conf.d
printf '[Limits]\nEvents=100\nClientsPerUser=1\n' > $dropin
check "systemctl reload uebrokerd, with a drop-in setting Events=100, ClientsPerUser=1" systemctl reload uebrokerd
check "the same process answers (MainPID $pid_before)" test "$(systemctl show -P MainPID uebrokerd)" = "$pid_before"
r=$(bus_get MaxEvents)
check "MaxEvents follows Events= ($max_before -> $r)" test "$r" = "u 100"
r=$(as tester busctl --system call org.uebroker1 /org/uebroker1 org.uebroker1.Broker Register s "sysreload u32 a" 2>&1)
info "tester Register while hello-events holds its one session: $r"
check "a second session of tester is refused by ClientsPerUser=1 ($r)" matches "$r" 'ClientsPerUser|[Qq]uota'
check "while hello-events keeps its registration (ListEvents: $(registrations hello_tick))" \
        test "$(registrations hello_tick)" = 1
count_before=$(grep -c 'hello_tick: count=' $T/trace)
more_traced() { [ "$(grep -c 'hello_tick: count=' $T/trace)" -gt "$count_before" ]; }
waitfor 50 more_traced
check "and its records still reach the trace after the reload" more_traced
echo 'Events=many' >> $dropin
check "systemctl reload with a malformed drop-in still succeeds" systemctl reload uebrokerd
check "the settings in force stay (MaxEvents $(bus_get MaxEvents))" test "$(bus_get MaxEvents)" = "u 100"
check "and the journal says why" \
        journalctl --no-pager -u uebrokerd -g "Reloading failed, keeping the configuration in force.*50-system-test.conf"
rm -f $dropin
check "systemctl reload without the drop-in" systemctl reload uebrokerd
check "restores the defaults (MaxEvents $(bus_get MaxEvents))" test "$(bus_get MaxEvents)" = "$max_before"

# 11. the daemon's messages in the journal, with their fields
j=$(journalctl --no-pager -o cat -u uebrokerd 2>&1)
# the system tier's kernel is the stock 6.12: no restricted handles
provider_line="^Upstream provider: user_events in $T, clients get the data file \(this kernel has no restricted handles\)\.\$"
[ "$kernel" = v1 ] && provider_line="^v1 provider: the original user_events interface in $T\.\$"
check "journalctl -u uebrokerd has the provider line" matches "$j" "$provider_line"
check "journalctl -u uebrokerd has the start line" \
        matches "$j" "^uebrokerd .* serving org\.uebroker1 with the $kernel provider\.\$"
check "journalctl -u uebrokerd has the reload line" \
        matches "$j" '^Reloaded the configuration'
created=b7a0d51fd0b64accaeacf4326e0823ac deleted=c836e09e63754f3d95c28e6903626559
refused=2570cd7e85584e59999940128f203305
j=$(journalctl --no-pager -o export -u uebrokerd UEB_EVENT=hello_tick MESSAGE_ID=$created 2>&1)
info "journal, hello_tick created: $(printf '%s\n' "$j" | grep -E '^(MESSAGE|UEB_[A-Z]+)=' | tr '\n' ' ')"
check "journalctl -u uebrokerd UEB_EVENT=hello_tick finds its creation (MESSAGE_ID=$created)" \
        matches "$j" '^MESSAGE=Event hello_tick created'
check "with UEB_UID=1000 and UEB_PID=$hello_pid" \
        test "$(printf '%s\n' "$j" | grep -cE "^UEB_(UID=1000|PID=$hello_pid)\$")" = 2
j=$(journalctl --no-pager -o export -u uebrokerd UEB_EVENT=sysbus MESSAGE_ID=$deleted 2>&1)
check "journalctl -u uebrokerd UEB_EVENT=sysbus finds tracer's Delete, UEB_UID=1001" \
        matches "$j" '^UEB_UID=1001$'
j=$(journalctl --no-pager -o cat -u uebrokerd MESSAGE_ID=$refused 2>&1)
check "the refusals carry MESSAGE_ID=$refused" matches "$j" '^Refused Delete of :[0-9.]+: org\.freedesktop\.DBus\.Error\.'

# 12. the sandbox, as systemd-analyze rates it on the running system
sec=$(systemd-analyze security --no-pager uebrokerd 2>&1 | tail -n 1)
info "systemd-analyze security uebrokerd: $sec"
figure=$(printf '%s\n' "$sec" | sed -n 's/.*uebrokerd.service: \([0-9.]*\) .*/\1/p')
check "systemd-analyze security uebrokerd rates it at most 1.0 (${figure:-?})" \
        awk -v f="${figure:-9}" 'BEGIN { exit !(f <= 1.0) }'

# 13. the sandbox is applied, not just rated
pid=$(systemctl show -P MainPID uebrokerd)
st=$(grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/"$pid"/status 2>&1 | tr '\t\n' '  ')
info "uebrokerd ($pid) status: $st"
check "uebrokerd runs with no capabilities, NoNewPrivs and a seccomp filter ($st)" \
        matches "$st" 'CapEff: 0000000000000000 CapBnd: 0000000000000000 NoNewPrivs: 1 Seccomp: 2'
check "in a mount namespace of its own" test "$(readlink /proc/"$pid"/ns/mnt)" != "$(readlink /proc/1/ns/mnt)"
check "in a network namespace of its own" test "$(readlink /proc/"$pid"/ns/net)" != "$(readlink /proc/1/ns/net)"
w=$(journalctl --no-pager -o cat -b _PID=1 -g 'uebrokerd' 2>&1 | grep -Ei 'not support|unsupported|ignoring|failed' )
info "systemd about uebrokerd.service: ${w:-nothing unsupported}"
check "systemd applied every directive of the unit (no 'not supported' or 'ignoring' about it)" test -z "$w"

# 14. nothing crashed meanwhile
kill -TERM "$hello_pid" 2>/dev/null
waitfor 50 not kill -0 "$hello_pid"
info "hello-events at exit: $(tail -n 1 $hello_out)"
check "hello-events wrote records ($(tail -n 1 $hello_out))" grep -Eq '^hello-events: [1-9][0-9]* written' $hello_out
check "uebrokerd is still active, never restarted (NRestarts=$(systemctl show -P NRestarts uebrokerd))" \
        test "$(systemctl is-active uebrokerd)/$(systemctl show -P NRestarts uebrokerd)" = active/0
