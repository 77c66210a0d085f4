#!/usr/bin/env bash
# The Debian package as an operator meets it, on this machine: installed with dpkg, the
# sandbox daemon and the embedded service started the way their systemd units start them
# (this machine runs no systemd: each unit's EnvironmentFile, Environment, User,
# WorkingDirectory and ExecStart, read from the installed unit), the service (as `ulticode`)
# ready on /health/ready and running programs through the daemon, stopped with SIGTERM, then
# removed and purged — with the data left where it was. Closing line:
# `package: N passed, N failed`.
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
server="" daemon=""
cleanup() {
    [ -n "$server" ] && kill -9 "$server" 2>/dev/null || true
    [ -n "$daemon" ] && kill -9 "$daemon" 2>/dev/null || true
    dpkg --purge ulticode >/dev/null 2>&1 || true
    rm -rf /var/lib/ulticode /etc/ulticode /run/ulticode "$work"
    userdel ulticode 2>/dev/null || true
    groupdel ulticode 2>/dev/null || true
}
trap cleanup EXIT

echo "installing $(basename "$deb") ($(du -h "$deb" | cut -f1))"
check "dpkg -i installs it" dpkg -i "$deb"
check "the binary runs: $(/usr/bin/ulticode --version 2>&1)" /usr/bin/ulticode --version
check "the ulticode system user exists" sh -c 'id -u ulticode >/dev/null && [ "$(id -u ulticode)" -lt 1000 ]'
check "/var/lib/ulticode belongs to it" test "$(stat -c %U:%a /var/lib/ulticode)" = ulticode:750
for unit in ulticode ulticode-sandbox ulticode-serve ulticode-dispatcher ulticode-judge-worker ulticode-search-worker; do
    check "unit $unit.service is installed" test -f "/lib/systemd/system/$unit.service"
done
check "the configuration files are conffiles" sh -c \
    "dpkg-query -W -f='\${Conffiles}' ulticode | grep -q /etc/ulticode/ulticode.env && dpkg-query -W -f='\${Conffiles}' ulticode | grep -q /etc/ulticode/distributed.env"
check "the distributed configuration (secrets) is root:ulticode 640" \
    test "$(stat -c %U:%G:%a /etc/ulticode/distributed.env)" = root:ulticode:640

for unit in ulticode ulticode-serve ulticode-judge-worker; do
    check "unit $unit.service runs as ulticode through the sandbox daemon" sh -c \
        "grep -qx 'User=ulticode' /lib/systemd/system/$unit.service && grep -qx 'Requires=ulticode-sandbox.service' /lib/systemd/system/$unit.service"
done
check "only the sandbox daemon's unit runs as root" sh -c \
    "[ \"\$(grep -lx 'User=root' /lib/systemd/system/ulticode*.service)\" = /lib/systemd/system/ulticode-sandbox.service ]"

# A unit, started as systemd would start it: its EnvironmentFile and Environment lines, its
# User (and that user's groups), its WorkingDirectory, its ExecStart.
field() { sed -n "s/^$2=//p" "/lib/systemd/system/$1.service" | tail -n1; }
start_unit() { # UNIT LOG
    local unit="$1" envfile user
    envfile="$(field "$unit" EnvironmentFile)"
    user="$(field "$unit" User)"
    (
        cd "$(field "$unit" WorkingDirectory)" 2>/dev/null || cd /
        set -a
        # shellcheck disable=SC1090
        if [ -n "$envfile" ]; then . "$envfile"; fi
        while IFS= read -r assignment; do export "${assignment?}"; done \
            < <(sed -n 's/^Environment=//p' "/lib/systemd/system/$unit.service")
        set +a
        # shellcheck disable=SC2046
        exec setpriv --reuid "$user" --regid "$(id -g "$user")" --init-groups $(field "$unit" ExecStart)
    ) >"$2" 2>&1 &
}

start_unit ulticode-sandbox "$work/sandbox.log"
daemon=$!
socket_up=false
for _ in $(seq 1 100); do
    if [ -S /run/ulticode/sandbox.sock ]; then socket_up=true; break; fi
    sleep 0.1
done
check "the sandbox daemon listens on a socket for root and the ulticode group only" sh -c \
    "$socket_up && [ \"\$(stat -c %U:%G:%a /run/ulticode/sandbox.sock)\" = root:ulticode:660 ]"

# The embedded unit. The operator's one edit: a free port.
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
sed -i "s/^ULTICODE_LISTEN=.*/ULTICODE_LISTEN=127.0.0.1:$port/" "$(field ulticode EnvironmentFile)"
log="$work/service.log"
start_unit ulticode "$log"
server=$!
ready=false
for _ in $(seq 1 600); do
    if /usr/bin/ulticode health --url "http://127.0.0.1:$port" --timeout-s 2 >/dev/null 2>&1; then ready=true; break; fi
    kill -0 "$server" 2>/dev/null || break
    sleep 0.5
done
check "the unit's service answers /health/ready" $ready
service_uid="$(ps -o uid= -p "$server" | tr -d ' ')"
check "the service runs as ulticode (uid $service_uid)" test "$service_uid" = "$(id -u ulticode)"
sandbox_checks() {
    local token
    token="$(curl -sf -H 'content-type: application/json' \
        -d "{\"username\":\"admin\",\"password\":\"$(cat /var/lib/ulticode/admin-password)\"}" \
        "http://127.0.0.1:$port/api/v1/auth/login" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')" || return 1
    curl -sf -H "authorization: Bearer $token" "http://127.0.0.1:$port/api/v1/admin/system" |
        python3 -c '
import json, sys
checks = {c["name"]: c for c in json.load(sys.stdin)["sandbox"]["checks"]}
for name in ("run", "identity", "seccomp_enforced"):
    print(name, checks[name]["ok"], checks[name]["detail"])
sys.exit(0 if all(checks[n]["ok"] for n in ("run", "identity", "seccomp_enforced")) else 1)'
}
check "its programs run in the sandbox through the daemon (run, identity, seccomp probes)" sandbox_checks
judged_through_the_daemon() { # a C submission compiled and judged by the service as ulticode
    python3 - "$port" "$(cat /var/lib/ulticode/admin-password)" "$PWD/examples/problems/aplusb/submissions/accepted/sum.c" <<'PY'
import json, sys, time, urllib.request
port, password, source = sys.argv[1], sys.argv[2], open(sys.argv[3]).read()
base = f"http://127.0.0.1:{port}/api/v1"
def call(path, body=None, token=None):
    request = urllib.request.Request(base + path, data=None if body is None else json.dumps(body).encode())
    request.add_header("content-type", "application/json")
    if token:
        request.add_header("authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)
token = call("/auth/login", {"username": "admin", "password": password})["access_token"]
submission = call("/submissions", {"problem": "aplusb", "language": "c", "source": source}, token)
for _ in range(240):
    view = call(f"/submissions/{submission['id']}", token=token)
    status = view["status"]
    if status["state"] == "done":
        print("verdict", status["verdict"], view.get("message") or "", view.get("compile_output") or "")
        sys.exit(0 if status["verdict"] == "AC" else 1)
    time.sleep(0.5)
print("not judged within 2 minutes:", status)
sys.exit(1)
PY
}
check "a C submission is compiled and judged accepted through the daemon" judged_through_the_daemon
check "its first admin password is in a 0600 file, not in the journal" sh -c \
    "test \"\$(stat -c %a /var/lib/ulticode/admin-password)\" = 600 && ! grep -qF \"\$(cat /var/lib/ulticode/admin-password)\" '$log'"
kill -TERM "$server"
stopped=false
for _ in $(seq 1 400); do kill -0 "$server" 2>/dev/null || { stopped=true; break; }; sleep 0.1; done
wait "$server" 2>/dev/null && clean=true || clean=false
server=""
check "SIGTERM stops it cleanly" sh -c "$stopped && $clean"
kill -TERM "$daemon" 2>/dev/null || true
wait "$daemon" 2>/dev/null || true
daemon=""
data="$(cd /var/lib/ulticode && find . -name '*.db' | sort | tr '\n' ' ')"
check "it wrote its databases under /var/lib/ulticode ($data)" test -n "$data"

check "dpkg -r removes it" dpkg -r ulticode
check "the binary is gone" test ! -e /usr/bin/ulticode
check "the data stays after removal" test "$(cd /var/lib/ulticode && find . -name '*.db' | sort | tr '\n' ' ')" = "$data"
check "dpkg --purge purges it" dpkg --purge ulticode
check "the data stays after purge" test "$(cd /var/lib/ulticode && find . -name '*.db' | sort | tr '\n' ' ')" = "$data"
check "the configuration is gone after purge" test ! -e /etc/ulticode/ulticode.env
if [ "$ready" != true ]; then tail -n 30 "$log"; tail -n 10 "$work/sandbox.log"; fi
finish
