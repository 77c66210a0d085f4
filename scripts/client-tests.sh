#!/usr/bin/env bash
# The typed-client tier: the TypeScript client in clients/typescript (openapi-typescript types
# of the served OpenAPI document, called through openapi-fetch) against a real `ulticode up`.
# Fails when the served document differs from the committed one (the client was not
# regenerated), when the client's scenario no longer compiles against the types, or when it
# fails at run time. Prints `client: N passed, N failed`.
#
#   scripts/client-tests.sh [--regenerate] [ULTICODE_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."

MODE=--check
if [ "${1:-}" = --regenerate ]; then
    MODE=""
    shift
fi
TARGET="${CARGO_TARGET_DIR:-${ULTICODE_CACHE_DIR:-/var/cache/ulticode}/target}"
BINARY="${1:-$TARGET/debug/ulticode}"

WORK="$(mktemp -d)"
. scripts/lib/up.sh
cleanup() {
    stop_up
    rm -rf "$WORK"
}
trap cleanup EXIT

(cd clients/typescript && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
start_up "$BINARY" "$WORK"

cd clients/typescript
if ! node generate.mjs "$BASE" $MODE; then
    echo "client: 0 passed, 1 failed (the committed client is not the served document's)"
    exit 1
fi
if ! ./node_modules/.bin/tsc -p .; then
    echo "client: 0 passed, 1 failed (the scenario does not compile against the client)"
    exit 1
fi
node dist/test/scenario.js "$BASE" "$PASSWORD"
