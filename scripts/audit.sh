#!/usr/bin/env bash
# The supply-chain audit, offline: cargo-deny checks every dependency against the RustSec
# advisory database snapshot (ULTICODE_ADVISORY_DB, default ../shared/advisory-db), the
# licence allow-list, the bans and the allowed sources of deny.toml. Fails on any finding that
# deny.toml does not handle. Closing line: `audit: N passed, N failed` (one per check).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/tools.sh
ensure_cargo_tool cargo-deny 0.20.2

snapshot="${ULTICODE_ADVISORY_DB:-}"
if [ -z "$snapshot" ]; then
    for candidate in ../shared/advisory-db /work/shared/advisory-db; do
        if [ -d "$candidate/crates" ]; then snapshot="$candidate"; break; fi
    done
fi

checks=(bans licenses sources)
db_root="$(mktemp -d)"
trap 'rm -rf "$db_root"' EXIT
if [ -n "$snapshot" ] && [ -d "$snapshot/crates" ]; then
    # cargo-deny opens its database as a git repository under a name derived from the URL
    # (`advisory-db-<hash of https://github.com/RustSec/advisory-db>`).
    db="$db_root/advisory-db-3157b0e258782691"
    cp -r "$snapshot" "$db"
    git -C "$db" init -q -b main
    git -C "$db" add -A
    git -C "$db" -c user.name=ulticode -c user.email=audit@ulticode.invalid \
        commit -q -m "RustSec snapshot: $(head -c 200 "$snapshot/SNAPSHOT" 2>/dev/null | head -n1)"
    echo "advisories: $(head -n1 "$snapshot/SNAPSHOT" 2>/dev/null || echo "snapshot at $snapshot")"
    checks=(advisories "${checks[@]}")
else
    echo "UNAVAILABLE advisory-db: no RustSec snapshot (set ULTICODE_ADVISORY_DB); advisories not checked"
fi
export ULTICODE_ADVISORY_DB_ROOT="$db_root"

# The crate graph of every platform (cargo-deny reads it whole); crates.io is reachable, the
# advisory database is not fetched (`--offline` below).
cargo fetch --locked --quiet

passed=0 failed=0
for check in "${checks[@]}"; do
    if cargo deny --offline --locked check --show-stats "$check"; then
        passed=$((passed + 1))
    else
        echo "audit: $check FAILED"
        failed=$((failed + 1))
    fi
done
echo "audit: $passed passed, $failed failed"
[ "$failed" = 0 ]
