#!/usr/bin/env bash
# Every test tier, cheapest first: static checks (format, lints), unit tests, integration tests
# against the real sandbox (and PostgreSQL and Redis, which are started when they are down).
# Needs root: the sandbox creates namespaces and cgroups.
set -euo pipefail
cd "$(dirname "$0")/.."

# The build cache lives outside the repository, so a fresh clone reuses earlier builds.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-${ULTICODE_CACHE_DIR:-/var/cache/ulticode}/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

source scripts/lib/tools.sh

if [ "$(id -u)" != 0 ]; then
    echo "scripts/test.sh: the sandbox tests need root (namespaces, cgroups)" >&2
    exit 1
fi

# Services the integration tiers use, started the way the machine starts them.
if command -v pg_isready >/dev/null && ! pg_isready -q -h 127.0.0.1 -p 5432; then
    echo "starting PostgreSQL"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start
fi
if command -v redis-cli >/dev/null && ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
    echo "starting Redis"
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
        --dir /var/lib/redis --logfile /var/log/redis/ci.log
fi

# The language toolchains (Debian's packages) the judge and its tests run every language with.
if ! scripts/install-toolchains.sh; then
    echo "some toolchains could not be installed: their languages are listed as unavailable"
fi

# problemtools, the package format's reference verifier, for the differential tier
# (crates/ulticode/tests/differential.rs); pinned, in a venv beside the build cache.
PROBLEMTOOLS_VENV="${ULTICODE_CACHE_DIR:-/var/cache/ulticode}/venv-problemtools"
if [ ! -x "$PROBLEMTOOLS_VENV/bin/verifyproblem" ]; then
    echo "installing problemtools into $PROBLEMTOOLS_VENV"
    if ! { python3 -m venv "$PROBLEMTOOLS_VENV" &&
        "$PROBLEMTOOLS_VENV/bin/pip" install --quiet "problemtools==1.20260907"; }; then
        echo "problemtools could not be installed: the differential tests will say UNAVAILABLE"
    fi
fi

# aiosmtpd, a real SMTP server the notification tests deliver mail to; pinned, in a venv.
SMTP_VENV="${ULTICODE_CACHE_DIR:-/var/cache/ulticode}/venv-aiosmtpd"
if [ ! -x "$SMTP_VENV/bin/aiosmtpd" ]; then
    echo "installing aiosmtpd into $SMTP_VENV"
    if ! { python3 -m venv "$SMTP_VENV" &&
        "$SMTP_VENV/bin/pip" install --quiet "aiosmtpd==1.4.6"; }; then
        echo "aiosmtpd could not be installed: the mail tests will say UNAVAILABLE"
    fi
fi

# The official Judge0 Python SDK, which the Judge0 API's tests run unchanged; pinned, in a
# venv (the test installs it too when missing).
JUDGE0_VENV="${ULTICODE_CACHE_DIR:-/var/cache/ulticode}/venv-judge0"
if [ ! -x "$JUDGE0_VENV/bin/python" ] || ! "$JUDGE0_VENV/bin/python" -c "import judge0" 2>/dev/null; then
    echo "installing the judge0 SDK into $JUDGE0_VENV"
    if ! { python3 -m venv "$JUDGE0_VENV" &&
        "$JUDGE0_VENV/bin/pip" install --quiet "judge0==0.0.8" "httpx==0.28.1" "pydantic==2.14.4"; }; then
        echo "the judge0 SDK could not be installed: its test will say UNAVAILABLE"
    fi
fi

# Schemathesis, the OpenAPI fuzzer of the contract tier (scripts/contract-tests.sh); pinned.
SCHEMATHESIS_VENV="${ULTICODE_CACHE_DIR:-/var/cache/ulticode}/venv-schemathesis"
if [ ! -x "$SCHEMATHESIS_VENV/bin/schemathesis" ]; then
    echo "installing schemathesis into $SCHEMATHESIS_VENV"
    if ! { python3 -m venv "$SCHEMATHESIS_VENV" &&
        "$SCHEMATHESIS_VENV/bin/pip" install --quiet "schemathesis==4.32.5"; }; then
        echo "schemathesis could not be installed: the contract tier will say UNAVAILABLE"
    fi
fi

# checktestdata (PyPI's implementation) for .ctd input validators: pure Python, unpacked
# into the cache and run inside the sandbox by its Python (judge/src/input_validation.rs).
CHECKTESTDATA_DIR="${ULTICODE_CACHE_DIR:-/var/cache/ulticode}/checktestdata"
if [ ! -d "$CHECKTESTDATA_DIR/checktestdata" ]; then
    echo "installing checktestdata into $CHECKTESTDATA_DIR"
    if ! python3 -m pip install --quiet --no-deps --target "$CHECKTESTDATA_DIR" "checktestdata==2026.9.2"; then
        echo "checktestdata could not be installed: .ctd input validators will say UNAVAILABLE"
    fi
fi

echo "== static checks"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings

# The supply chain, offline: advisories (RustSec snapshot), licences, bans, sources.
echo "== supply-chain audit"
scripts/audit.sh

# The browser bundle is committed (so `cargo run` needs no Node): rebuild it from the pinned
# npm project and fail if it differs from what is committed.
echo "== browser bundle"
(cd crates/web/assets && npm ci --no-audit --no-fund --loglevel=error && npm run --silent build)
if ! git diff --quiet -- crates/web/static || [ -n "$(git status --porcelain -- crates/web/static)" ]; then
    git status --short -- crates/web/static
    echo "bundle: 0 passed, 1 failed (crates/web/static differs from its build: run npm run build in crates/web/assets and commit)"
    exit 1
fi
echo "bundle: 1 passed, 0 failed"

echo "== unit and integration tests"
if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run --workspace --locked --profile ci
else
    cargo test --workspace --locked
fi

cargo build --locked -p ulticode

# The API contract: Schemathesis over every operation of the OpenAPI document.
echo "== API contract"
scripts/contract-tests.sh "$CARGO_TARGET_DIR/debug/ulticode"

# The typed client generated from that document, compiled and run against the server.
echo "== typed client"
scripts/client-tests.sh "$CARGO_TARGET_DIR/debug/ulticode"

# The Debian package: installed with dpkg, its embedded unit run and ready, removed leaving
# the data.
echo "== Debian package"
scripts/package-tests.sh

# The OCI image: built with buildah (no engine), unpacked and its binary run in the sandbox.
echo "== OCI image"
ensure_debian_packages buildah
image_dir="$(mktemp -d)"
scripts/build-image.sh "$CARGO_TARGET_DIR/debug/ulticode" "$image_dir/ulticode-image.tar" "$(git rev-parse HEAD)"
scripts/verify-image.sh "$image_dir/ulticode-image.tar" "$CARGO_TARGET_DIR/debug/ulticode"
rm -rf "$image_dir"

# Browser end-to-end: Debian's Chromium (Playwright without its browser download) against a
# real `ulticode up`.
echo "== browser end-to-end"
ULTICODE_BIN="$CARGO_TARGET_DIR/debug/ulticode" scripts/browser-tests.sh
