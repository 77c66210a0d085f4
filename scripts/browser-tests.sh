#!/usr/bin/env bash
# Browser end-to-end tests of the web console (tests/browser, Playwright on Debian's Chromium).
#
#   scripts/browser-tests.sh [playwright test arguments...]
#
# Uses the built binary ($ULTICODE_BIN, default /var/cache/ulticode/target/debug/ulticode): it
# does not build. Installs Chromium (and CJK fonts for the Japanese/Chinese pages) from Debian
# when missing; Playwright never downloads a browser. The last line is always
# `browser: N passed, N failed`; the exit status is non-zero when a test failed.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
suite="$root/tests/browser"
report="$suite/test-results/results.json"
chromium="${CHROMIUM_PATH:-/usr/bin/chromium}"
export ULTICODE_BIN="${ULTICODE_BIN:-/var/cache/ulticode/target/debug/ulticode}"
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

summary_printed=0
summary() {
  summary_printed=1
  echo "browser: $1 passed, $2 failed"
}
# Whatever stops the script, its last line is the summary.
trap 'status=$?; if [ "$summary_printed" = 0 ]; then summary 0 "$([ "$status" = 0 ] && echo 0 || echo 1)"; fi' EXIT

apt_install() {
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "not root or no apt-get"
    return 1
  fi
  local log
  log="$(mktemp)"
  if DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$log" 2>&1 \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >>"$log" 2>&1; then
    rm -f "$log"
    return 0
  fi
  tail -n 3 "$log" | tr '\n' ' '
  rm -f "$log"
  return 1
}

if [ ! -x "$chromium" ]; then
  echo "browser-tests: $chromium is missing: installing chromium and fonts-noto-cjk"
  if ! reason="$(apt_install chromium fonts-noto-cjk)" || [ ! -x "$chromium" ]; then
    echo "UNAVAILABLE chromium: ${reason:-apt-get install did not provide $chromium}"
    summary 0 0
    exit 0
  fi
elif ! dpkg -s fonts-noto-cjk >/dev/null 2>&1; then
  # Not fatal: without them the Japanese and Chinese pages render as boxes in screenshots.
  apt_install fonts-noto-cjk >/dev/null || echo "browser-tests: warning: fonts-noto-cjk could not be installed"
fi

if [ ! -x "$ULTICODE_BIN" ]; then
  echo "browser-tests: no ulticode binary at $ULTICODE_BIN (build it first, or set ULTICODE_BIN)" >&2
  exit 1
fi

cd "$suite"
npm ci --no-audit --no-fund --loglevel=error

rm -f "$report"
set +e
npx --no-install playwright test "$@"
playwright_status=$?
set -e

counts="$(node -e '
  const fs = require("fs");
  let passed = 0, failed = 0;
  try {
    const r = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
    passed = (r.stats.expected || 0) + (r.stats.flaky || 0);
    failed = (r.stats.unexpected || 0) + (r.errors || []).length;
  } catch (e) {
    console.error(`browser-tests: no readable report at ${process.argv[1]}: ${e.message}`);
  }
  console.log(`${passed} ${failed}`);
' "$report")"
passed="${counts% *}"
failed="${counts#* }"
if [ "$playwright_status" != 0 ] && [ "$failed" = 0 ]; then
  failed=1
fi
summary "$passed" "$failed"
[ "$failed" = 0 ]
