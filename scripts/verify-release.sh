#!/usr/bin/env bash
# Checks a release directory: every file's minisign signature (against the project's public
# key, or the one given), and SHA256SUMS (itself signed) against the files.
#
#   scripts/verify-release.sh DIST [PUBLIC_KEY]   (default: packaging/minisign.pub)
set -euo pipefail
dist="$1"
key="${2:-$(dirname "$0")/../packaging/minisign.pub}"
passed=0 failed=0
for file in "$dist"/*; do
    case "$file" in *.minisig | */throwaway.pub) continue ;; esac
    if minisign -V -q -p "$key" -m "$file"; then
        passed=$((passed + 1))
    else
        echo "FAIL signature of $(basename "$file")"
        failed=$((failed + 1))
    fi
done
if (cd "$dist" && sha256sum --check --quiet SHA256SUMS); then
    passed=$((passed + 1))
else
    echo "FAIL SHA256SUMS"
    failed=$((failed + 1))
fi
echo "verify: $passed passed, $failed failed"
[ "$failed" = 0 ]
