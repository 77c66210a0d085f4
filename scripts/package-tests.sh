#!/usr/bin/env bash
# The Debian package as an operator meets it, on this machine: installed with dpkg, the
# embedded service started the way its systemd unit starts it (this machine runs no
# systemd: the unit's EnvironmentFile, User, WorkingDirectory and ExecStart, read from the
# installed unit), ready on /health/ready, stopped with SIGTERM, then removed and purged —
# with the data left where it was. Closing line: `package: N passed, N failed`.
#
#   scripts/package-tests.sh [PACKAGE.deb]   (default: package the debug build with cargo-deb)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/tools.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-${ULTICODE_CACHE_DIR:-/var/cache/ulticode}/target}"

passed=0 failed=0
check() { # NAME COMMAND...
    local name="$1"; shift
    if "$@"; then echo "ok   $name"; passed=$((passed + 1)); else echo "FAIL $name"; failed=$((failed + 1)); fi
}
finish() { echo "package: $passed passed, $failed failed"; [ "$failed" = 0 ]; }

if dpkg-query -W -f='${Status}' ulticode 2>/dev/null | grep -q installed || [ -e /var/lib/ulticode ]; then
    # Never touch an installation (or data) this test did not make.
    echo "UNAVAILABLE package-install: ulticode is installed here already (or /var/lib/ulticode exists)"
    finish
    exit
fi

work="$(mktemp -d)"
deb="${1:-}"
if [ -z "$deb" ]; then
    ensure_cargo_tool cargo-deb 3.8.0
    ensure_debian_packages dpkg-dev
    # The debug build the other tiers use (a release build would add many minutes): the
    # package's contents and scripts are what is tested here, not the binary's speed.
    cargo deb -p ulticode --no-build --profile dev --quiet --output "$work/" 2>&1 |
        grep -v "dev profile is not supported" || true
    deb="$(ls "$work"/ulticode_*.deb)"
fi
server=""
cleanup() {
    [ -n "$server" ] && kill -9 "$server" 2>/dev/null || true
    dpkg --purge ulticode >/dev/null 2>&1 || true
    rm -rf /var/lib/ulticode /etc/ulticode "$work"
    userdel ulticode 2>/dev/null || true
    groupdel ulticode 2>/dev/null || true
}
trap cleanup EXIT

echo "installing $(basename "$deb") ($(du -h "$deb" | cut -f1))"
check "dpkg -i installs it" dpkg -i "$deb"
check "the binary runs: $(/usr/bin/ulticode --version 2>&1)" /usr/bin/ulticode --version
check "the ulticode system user exists" sh -c 'id -u ulticode >/dev/null && [ "$(id -u ulticode)" -lt 1000 ]'
check "/var/lib/ulticode belongs to it" test "$(stat -c %U:%a /var/lib/ulticode)" = ulticode:750
for unit in ulticode ulticode-serve ulticode-dispatcher ulticode-judge-worker ulticode-search-worker; do
    check "unit $unit.service is installed" test -f "/lib/systemd/system/$unit.service"
done
check "the configuration files are conffiles" sh -c \
    "dpkg-query -W -f='\${Conffiles}' ulticode | grep -q /etc/ulticode/ulticode.env && dpkg-query -W -f='\${Conffiles}' ulticode | grep -q /etc/ulticode/distributed.env"
check "the distributed configuration (secrets) is root:ulticode 640" \
    test "$(stat -c %U:%G:%a /etc/ulticode/distributed.env)" = root:ulticode:640

# The embedded unit, run as systemd would run it. The operator's one edit: a free port.
unit=/lib/systemd/system/ulticode.service
field() { sed -n "s/^$1=//p" "$unit" | tail -n1; }
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
sed -i "s/^ULTICODE_LISTEN=.*/ULTICODE_LISTEN=127.0.0.1:$port/" "$(field EnvironmentFile)"
user="$(field User)"
log="$work/service.log"
(
    cd "$(field WorkingDirectory)"
    set -a
    # shellcheck disable=SC1090
    . "$(field EnvironmentFile)"
    set +a
    # shellcheck disable=SC2046
    exec setpriv --reuid "$user" --regid "$(id -g "$user")" --init-groups $(field ExecStart)
) >"$log" 2>&1 &
server=$!
ready=false
for _ in $(seq 1 600); do
    if /usr/bin/ulticode health --url "http://127.0.0.1:$port" --timeout-s 2 >/dev/null 2>&1; then ready=true; break; fi
    kill -0 "$server" 2>/dev/null || break
    sleep 0.5
done
check "the unit's service answers /health/ready" $ready
check "its first admin password is in a 0600 file, not in the journal" sh -c \
    "test \"\$(stat -c %a /var/lib/ulticode/admin-password)\" = 600 && ! grep -qF \"\$(cat /var/lib/ulticode/admin-password)\" '$log'"
kill -TERM "$server"
stopped=false
for _ in $(seq 1 400); do kill -0 "$server" 2>/dev/null || { stopped=true; break; }; sleep 0.1; done
wait "$server" 2>/dev/null && clean=true || clean=false
server=""
check "SIGTERM stops it cleanly" sh -c "$stopped && $clean"
data="$(cd /var/lib/ulticode && find . -name '*.db' | sort | tr '\n' ' ')"
check "it wrote its databases under /var/lib/ulticode ($data)" test -n "$data"

check "dpkg -r removes it" dpkg -r ulticode
check "the binary is gone" test ! -e /usr/bin/ulticode
check "the data stays after removal" test "$(cd /var/lib/ulticode && find . -name '*.db' | sort | tr '\n' ' ')" = "$data"
check "dpkg --purge purges it" dpkg --purge ulticode
check "the data stays after purge" test "$(cd /var/lib/ulticode && find . -name '*.db' | sort | tr '\n' ' ')" = "$data"
check "the configuration is gone after purge" test ! -e /etc/ulticode/ulticode.env
if [ "$ready" != true ]; then tail -n 30 "$log"; fi
finish
