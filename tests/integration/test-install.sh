#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-install.sh BUILD_DIR SOURCE_DIR
#
# `meson install --destdir` of the build into a scratch directory, then the
# tree it made: every file the project installs at the path a distribution
# expects and nothing else, the directories other programs read agreeing
# with what their pkg-config files say, the paths inside the installed files
# (unit, bus activation, the daemon's built-in configuration path) pointing
# at installed files, the XML well-formed, the man pages rendering. Then a
# configure-only build with every directory option overridden, checked with
# `meson introspect --installed`.
#
# The expected directories come from the build (UEB_* variables set by
# tests/integration/meson.build) and are checked against pkg-config here.
set -u

build="${1:?usage: test-install.sh BUILD_DIR SOURCE_DIR}"
src="${2:?usage: test-install.sh BUILD_DIR SOURCE_DIR}"
failures=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
check() { # check DESCRIPTION EXPECTED ACTUAL
        if [ "$2" = "$3" ]; then ok "$1"; else fail "$1: expected '$2', got '$3'"; fi
}

for v in UEB_PREFIX UEB_SBINDIR UEB_BINDIR UEB_LIBDIR UEB_INCLUDEDIR UEB_DATADIR UEB_MANDIR UEB_CONFIG_FILE \
         UEB_UNIT_DIR UEB_CATALOG_DIR UEB_DBUS_POLICY_DIR UEB_DBUS_SERVICES_DIR UEB_DBUS_INTERFACES_DIR UEB_POLKIT_ACTIONS_DIR \
         UEB_POLKIT_RULES_DIR UEB_POLKIT_EXAMPLE_RULES UEB_COMPLETIONS_DIR UEB_MAN UEB_OPTIONS_SET; do
        [ -n "${!v+x}" ] || { echo "test-install: $v is not set (run me from meson test)" >&2; exit 2; }
done
command -v meson >/dev/null || { echo "test-install: meson is not on PATH" >&2; exit 2; }

dest="$(mktemp -d "${TMPDIR:-/tmp}/uebroker-install.XXXXXX")" || exit 2
scratch=""
trap 'rm -rf "$dest" ${scratch:+"$scratch"}' EXIT

if ! meson install -C "$build" --destdir "$dest" --no-rebuild --quiet >"$dest.log" 2>&1; then
        cat "$dest.log" >&2
        rm -f "$dest.log"
        echo "FAIL: meson install --destdir"
        exit 1
fi
rm -f "$dest.log"
ok "meson install --destdir $dest"

# The directories other programs read, as their pkg-config files say, when
# the build did not override them.
pc_dir() { # pc_dir PACKAGE VARIABLE [SUBDIR]
        local d
        d="$(pkg-config --variable="$2" "$1" 2>/dev/null)" || return 1
        [ -n "$d" ] || return 1
        d="${d%/}"
        echo "${d}${3:+/$3}"
}
if [ "$UEB_OPTIONS_SET" = "no" ]; then
        for spec in "systemd systemdsystemunitdir - UEB_UNIT_DIR" \
                    "systemd catalogdir - UEB_CATALOG_DIR" \
                    "dbus-1 datadir dbus-1/system.d UEB_DBUS_POLICY_DIR" \
                    "dbus-1 system_bus_services_dir - UEB_DBUS_SERVICES_DIR" \
                    "dbus-1 interfaces_dir - UEB_DBUS_INTERFACES_DIR" \
                    "polkit-gobject-1 policydir - UEB_POLKIT_ACTIONS_DIR" \
                    "bash-completion completionsdir - UEB_COMPLETIONS_DIR"; do
                read -r pkg var sub name <<<"$spec"
                [ "$sub" = "-" ] && sub=""
                if want="$(pc_dir "$pkg" "$var" "$sub")"; then
                        check "$name is pkg-config $pkg $var${sub:+/$sub}" "$want" "${!name}"
                else
                        echo "# no pkg-config file for $pkg: $name is the fallback ${!name}"
                fi
        done
fi
# Never under a private prefix: polkitd and the system bus only look in
# their own directories.
case "$UEB_DBUS_POLICY_DIR $UEB_DBUS_SERVICES_DIR $UEB_POLKIT_ACTIONS_DIR $UEB_UNIT_DIR" in
*/usr/local/*) [ "$UEB_OPTIONS_SET" = "no" ] && fail "a bus, polkit or unit directory is under /usr/local" ;;
*) ok "bus, polkit and unit directories are outside /usr/local" ;;
esac
check "configuration file in sysconfdir" "uebroker/uebrokerd.conf" "${UEB_CONFIG_FILE#*/etc/}"

# The tree: exactly these files.
expected=(
        "$UEB_SBINDIR/uebrokerd"
        "$UEB_BINDIR/uebctl"
        "$UEB_BINDIR/uebroker-run"
        "$UEB_LIBDIR/uebroker/libuebroker-preload.so"
        "$UEB_LIBDIR/libuebroker.so"
        "$UEB_LIBDIR/libuebroker.so.1"
        "$UEB_LIBDIR/libuebroker.so.1.2.0"
        "$UEB_LIBDIR/pkgconfig/uebroker.pc"
        "$UEB_INCLUDEDIR/uebroker.h"
        "$UEB_INCLUDEDIR/uebroker-record.h"
        "$UEB_INCLUDEDIR/uebroker-event.h"
        "$UEB_CONFIG_FILE"
        "$UEB_UNIT_DIR/uebrokerd.service"
        "$UEB_CATALOG_DIR/uebroker.catalog"
        "$UEB_DBUS_POLICY_DIR/org.uebroker1.conf"
        "$UEB_DBUS_SERVICES_DIR/org.uebroker1.service"
        "$UEB_DBUS_INTERFACES_DIR/org.uebroker1.Broker.xml"
        "$UEB_DBUS_INTERFACES_DIR/org.uebroker1.Session.xml"
        "$UEB_POLKIT_ACTIONS_DIR/org.uebroker1.policy"
        "$UEB_DATADIR/doc/uebroker/README.md"
        "$UEB_DATADIR/doc/uebroker/DESIGN.md"
        "$UEB_DATADIR/doc/uebroker/DECISIONS.md"
        "$UEB_DATADIR/doc/uebroker/CONFIGURATION.md"
        "$UEB_COMPLETIONS_DIR/uebctl"
)
if [ "$UEB_POLKIT_EXAMPLE_RULES" = "true" ]; then
        expected+=("$UEB_POLKIT_RULES_DIR/50-uebroker-example.rules")
else
        expected+=("$UEB_DATADIR/doc/uebroker/examples/50-uebroker-example.rules")
fi
man_pages=(man8/uebrokerd.8 man5/uebrokerd.conf.5 man1/uebctl.1 man3/libuebroker.3 man5/org.uebroker1.5
           man7/uebroker-event-command.7 man1/uebroker-run.1)
if [ "$UEB_MAN" = "true" ]; then
        for m in "${man_pages[@]}"; do
                expected+=("$UEB_MANDIR/$m")
        done
fi

actual="$(cd "$dest" && find . ! -type d | sed 's|^\.||' | sort)"
want="$(printf '%s\n' "${expected[@]}" | sed 's|//*|/|g' | sort)"
if [ "$actual" = "$want" ]; then
        ok "the installed tree holds exactly the ${#expected[@]} expected files"
else
        fail "the installed tree differs from the expected one (< expected, > installed):"
        diff <(echo "$want") <(echo "$actual") | grep '^[<>]' | sed 's/^/    /'
fi

# uebroker-run preloads the library where it was installed.
if grep -qaF "$UEB_LIBDIR/uebroker/libuebroker-preload.so" "$dest$UEB_BINDIR/uebroker-run"; then
        ok "uebroker-run preloads the installed libuebroker-preload.so"
else
        fail "uebroker-run does not name $UEB_LIBDIR/uebroker/libuebroker-preload.so"
fi

# Paths inside the installed files point at installed files.
unit="$dest$UEB_UNIT_DIR/uebrokerd.service"
service="$dest$UEB_DBUS_SERVICES_DIR/org.uebroker1.service"
if [ -f "$unit" ] && [ -f "$service" ]; then
        exec_start="$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$unit")"
        check "unit ExecStart= is the installed daemon" "$UEB_SBINDIR/uebrokerd" "$exec_start"
        if [ -x "$dest$exec_start" ]; then
                ok "ExecStart= binary is installed and executable"
        else
                fail "$exec_start is not installed executable"
        fi
        # shellcheck disable=SC2016 # $MAINPID is systemd's, literally
        check "unit ExecReload= sends SIGHUP" 'ExecReload=/bin/kill -HUP $MAINPID' "$(grep '^ExecReload=' "$unit")"
        check "unit BusName= is the activation file's Name=" "$(sed -n 's/^Name=//p' "$service")" \
                "$(sed -n 's/^BusName=//p' "$unit")"
        check "activation file's SystemdService= is the installed unit" "uebrokerd.service" \
                "$(sed -n 's/^SystemdService=//p' "$service")"
        bus_exec="$(sed -n 's/^Exec=\([^ ]*\).*/\1/p' "$service")"
        check "activation Exec= is the installed daemon" "$UEB_SBINDIR/uebrokerd" "$bus_exec"
        docs="$(sed -n 's/^Documentation=//p' "$unit")"
        if [ "$UEB_MAN" = "true" ]; then
                for page in $docs; do
                        case "$page" in
                        man:*\(*\))
                                name="${page#man:}"; section="${name#*(}"; section="${section%)}"; name="${name%(*}"
                                if [ -f "$dest$UEB_MANDIR/man$section/$name.$section" ]; then
                                        ok "Documentation= $page is installed"
                                else
                                        fail "Documentation= $page is not installed"
                                fi
                                ;;
                        *) fail "Documentation= $page is not a man: page" ;;
                        esac
                done
        fi
fi

# The journal catalog explains every MESSAGE_ID the daemon uses: journalctl
# builds its database from the staged tree (which adds that database file,
# so after the tree check) and lists them.
ids="$(sed -n 's/^#define UEB_MESSAGE_[A-Z_]* "\([0-9a-f]*\)"$/\1/p' "$src/daemon/bus/message-ids.h")"
if [ "$(echo "$ids" | wc -w)" -lt 4 ]; then
        fail "no message ids found in daemon/bus/message-ids.h"
elif ! journalctl --root="$dest" --update-catalog 2>&1; then
        fail "journalctl --update-catalog rejects the installed catalog"
else
        catalog="$(journalctl --root="$dest" --list-catalog 2>&1)"
        for id in $ids; do
                if echo "$catalog" | grep -q "^$id uebroker: "; then
                        ok "the catalog explains MESSAGE_ID=$id"
                else
                        fail "MESSAGE_ID=$id is not in the catalog: $catalog"
                fi
        done
fi

# The installed daemon reads the configuration path it was built with.
daemon="$dest$UEB_SBINDIR/uebrokerd"
if [ -x "$daemon" ]; then
        help="$("$daemon" --help)"
        case "$help" in
        *"(default $UEB_CONFIG_FILE "*) ok "uebrokerd --help names $UEB_CONFIG_FILE as its configuration" ;;
        *) fail "uebrokerd --help does not name $UEB_CONFIG_FILE: $help" ;;
        esac
fi

# Well-formed XML; the bus policy and actions name the bus name.
if command -v xmllint >/dev/null; then
        for f in "$UEB_DBUS_POLICY_DIR/org.uebroker1.conf" "$UEB_DBUS_INTERFACES_DIR/org.uebroker1.Broker.xml" \
                 "$UEB_DBUS_INTERFACES_DIR/org.uebroker1.Session.xml" "$UEB_POLKIT_ACTIONS_DIR/org.uebroker1.policy"; do
                [ -f "$dest$f" ] || continue
                if xmllint --noout "$dest$f" 2>&1; then
                        ok "$f is well-formed XML"
                else
                        fail "$f is not well-formed XML"
                fi
        done
else
        fail "xmllint (libxml2-utils) is missing"
fi

# Man pages render without warnings; the completion script loads in bash.
if [ "$UEB_MAN" = "true" ]; then
        for m in "${man_pages[@]}"; do
                f="$dest$UEB_MANDIR/$m"
                [ -f "$f" ] || continue
                warnings="$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null)"
                text="$(LC_ALL=C.UTF-8 MANWIDTH=80 man -l "$f" 2>/dev/null)"
                if [ -z "$warnings" ] && [ "$(echo "$text" | wc -l)" -gt 10 ]; then
                        ok "$m renders ($(echo "$text" | wc -l) lines)"
                else
                        fail "$m: $(echo "$text" | wc -l) lines, warnings: $warnings"
                fi
        done
fi
completion="$dest$UEB_COMPLETIONS_DIR/uebctl"
if [ -f "$completion" ]; then
        if bash -c 'source "$1" && complete -p uebctl' _ "$completion" >/dev/null 2>&1; then
                ok "the bash completion defines a completion for uebctl"
        else
                fail "sourcing $UEB_COMPLETIONS_DIR/uebctl does not define a completion for uebctl"
        fi
        # Completing as bash-completion would: "uebctl re<TAB>", "uebctl --s<TAB>",
        # "uebctl record --<TAB>".
        complete_words() {
                # compopt works only inside a real completion: a no-op here.
                bash -c 'source /usr/share/bash-completion/bash_completion && source "$1" && shift &&
                         compopt() { :; } &&
                         COMP_WORDS=("$@") && COMP_CWORD=$(($# - 1)) && COMP_LINE="$*" && COMP_POINT=${#COMP_LINE} &&
                         _uebctl uebctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}";
                         echo "${COMPREPLY[*]}"' _ "$completion" "$@" 2>&1
        }
        if [ -f /usr/share/bash-completion/bash_completion ]; then
                check "completes commands" "record" "$(complete_words uebctl re)"
                check "completes global options" "--system --session" "$(complete_words uebctl --s)"
                check "completes record's options" "--count=" "$(complete_words uebctl record --c)"
                check "completes delete's options" "--no-ask-password" "$(complete_words uebctl delete --no)"
                check "completes --json= values" "pretty" "$(complete_words uebctl list --json=p)"
                check "completes no option a command lacks" "" "$(complete_words uebctl emit --no)"
        else
                fail "bash-completion is not installed"
        fi
fi

# Every directory option, overridden, on a configure-only build (no
# compilation: meson introspect reads the install plan).
scratch="$(mktemp -d "${TMPDIR:-/tmp}/uebroker-install-opts.XXXXXX")" || exit 2
if meson setup "$scratch/b" "$src" -Dprefix=/usr -Dtests=disabled -Dman=disabled \
        -Dsystemdsystemunitdir=/o/unit -Dsystemd_catalog_dir=/o/catalog -Ddbus_system_policy_dir=/o/policy -Ddbus_system_services_dir=/o/services \
        -Ddbus_interfaces_dir=/o/interfaces -Dpolkit_actions_dir=/o/actions -Dpolkit_rules_dir=/o/rules \
        -Dpolkit_example_rules=true -Dbash_completions_dir=/o/completions >"$scratch/setup.log" 2>&1; then
        plan="$(meson introspect "$scratch/b" --installed)"
        for pair in "uebrokerd.service:/o/unit" "uebroker.catalog:/o/catalog" "org.uebroker1.conf:/o/policy" "org.uebroker1.service:/o/services" \
                    "org.uebroker1.Broker.xml:/o/interfaces" "org.uebroker1.policy:/o/actions" \
                    "50-uebroker-example.rules:/o/rules" "uebctl:/o/completions" "uebrokerd.conf:/etc/uebroker"; do
                file="${pair%%:*}"; dir="${pair#*:}"
                if echo "$plan" | grep -q "\"$dir/$file\""; then
                        ok "option puts $file in $dir"
                else
                        fail "option did not put $file in $dir: $plan"
                fi
        done
        if grep -q '"/etc/uebroker/uebrokerd.conf"' "$scratch/b/build-paths.h"; then
                ok "prefix /usr: the daemon is built to read /etc/uebroker/uebrokerd.conf"
        else
                fail "prefix /usr: build-paths.h has $(cat "$scratch/b/build-paths.h")"
        fi
else
        cat "$scratch/setup.log"
        fail "meson setup with every directory option overridden"
fi

echo "$failures failures"
[ "$failures" -eq 0 ]
