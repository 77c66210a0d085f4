#!/usr/bin/env bash
# The contract tier: Schemathesis (a fuzzer nobody here wrote) runs every check over every
# operation of the OpenAPI document against a real `ulticode up`, as a user, as a setter and
# as an admin (the admin run adds the stateful phase over the links it infers); then, as a
# throwaway admin, the operations that end the caller's own powers (logout, password change,
# role changes), which would otherwise cut the other runs short. Prints
# `contract: N passed, N failed` (test cases) and fails on any failure or error.
#
#   scripts/contract-tests.sh [ULTICODE_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET="${CARGO_TARGET_DIR:-${ULTICODE_CACHE_DIR:-/var/cache/ulticode}/target}"
BINARY="${1:-$TARGET/debug/ulticode}"
VENV="${ULTICODE_CACHE_DIR:-/var/cache/ulticode}/venv-schemathesis"
if [ ! -x "$VENV/bin/schemathesis" ]; then
    echo "UNAVAILABLE schemathesis: not installed in $VENV (scripts/test.sh installs it)"
    echo "contract: 0 passed, 0 failed"
    exit 0
fi

WORK="$(mktemp -d)"
# Reports stay where CONTRACT_REPORTS says (for a look after a failure), else go with $WORK.
REPORTS="${CONTRACT_REPORTS:-$WORK/reports}"
. scripts/lib/up.sh
cleanup() {
    stop_up
    rm -rf "$WORK"
}
trap cleanup EXIT
start_up "$BINARY" "$WORK"

# Tokens for the three roles (and a throwaway admin), through the API itself.
tokens="$("$VENV/bin/python" tests/contract/accounts.py "$BASE" "$PASSWORD")"
USER_TOKEN="$(echo "$tokens" | sed -n 's/^user //p')"
SETTER_TOKEN="$(echo "$tokens" | sed -n 's/^setter //p')"
ADMIN_TOKEN="$(echo "$tokens" | sed -n 's/^admin //p')"
SPARE_TOKEN="$(echo "$tokens" | sed -n 's/^spare //p')"

SELF_ENDING=(--include-path /api/v1/auth/logout --include-path /api/v1/auth/password
    --include-path '/api/v1/admin/users/{id}/role')
EXCLUDE_SELF_ENDING=(--exclude-path /api/v1/auth/logout --exclude-path /api/v1/auth/password
    --exclude-path '/api/v1/admin/users/{id}/role')

status=0
run() {
    local name="$1" token="$2"
    shift 2
    echo "== contract: as $name"
    # One worker: Schemathesis's worker threads parse lambdas' source with `ast.parse`
    # concurrently, which CPython 3.11 answers, now and then, with "SystemError: AST constructor
    # recursion depth mismatch" (its depth counter is not per thread). A second worker bought
    # no time anyway: the run waits on the streams' read timeouts, not on the CPU.
    if ! "$VENV/bin/schemathesis" --config-file tests/contract/schemathesis.toml run \
        "$BASE/api/openapi.json" --checks all -H "Authorization: Bearer $token" \
        --workers 1 --seed 20261202 --report ndjson --report-dir "$REPORTS/$name" \
        --no-color "$@" >"$WORK/$name.txt" 2>&1; then
        status=1
    fi
    # The failures and errors in full, then the summary.
    sed -n '/^=* \(FAILURES\|ERRORS\) =*$/,/^=* SUMMARY =*$/p' "$WORK/$name.txt" | head -400
    sed -n '/^=* SUMMARY =*$/,$p' "$WORK/$name.txt" | grep -v '^$' || tail -20 "$WORK/$name.txt"
}
# CONTRACT_RUNS picks some of the runs (to look into one).
RUNS="${CONTRACT_RUNS:-user setter admin self-ending}"
for name in $RUNS; do
    case "$name" in
    user | setter)
        token="$USER_TOKEN"
        [ "$name" = setter ] && token="$SETTER_TOKEN"
        run "$name" "$token" --max-examples 5 --phases examples,coverage,fuzzing \
            "${EXCLUDE_SELF_ENDING[@]}"
        ;;
    admin) run admin "$ADMIN_TOKEN" --max-examples 10 "${EXCLUDE_SELF_ENDING[@]}" ;;
    self-ending)
        run self-ending "$SPARE_TOKEN" --max-examples 10 --phases examples,coverage,fuzzing \
            "${SELF_ENDING[@]}"
        ;;
    *) echo "unknown run $name" >&2 && exit 2 ;;
    esac
done

"$VENV/bin/python" tests/contract/summary.py "$REPORTS"/*/*.ndjson || status=1
exit $status
