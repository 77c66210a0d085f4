#!/usr/bin/env bash
# Builds a release from this checkout into dist/: the auditable release binary, the Debian
# package, the OCI image, the SBOMs (binary and console), SOURCE, SHA256SUMS, and a minisign
# signature of each. The signing key comes from ULTICODE_MINISIGN_KEY (the secret key file's
# contents) or ULTICODE_MINISIGN_KEY_FILE; without either a throwaway key is made and said to
# be one. Needs root (buildah; the image check runs the sandbox).
#
#   scripts/release.sh [--skip-image-check] [--with-toolchains]
# (--with-toolchains adds the larger image with the language toolchains: debootstrap from the
# Debian mirror, a few minutes and about 1 GB more.)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/tools.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-${ULTICODE_CACHE_DIR:-/var/cache/ulticode}/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
check_image=true toolchains=false
for option in "$@"; do
    case "$option" in
    --skip-image-check) check_image=false ;;
    --with-toolchains) toolchains=true ;;
    *) echo "release: unknown option $option" >&2; exit 2 ;;
    esac
done

if [ -n "$(git status --porcelain)" ]; then
    echo "release: the checkout has uncommitted changes; a release is built from a commit" >&2
    exit 1
fi
revision="$(git rev-parse HEAD)"
version="$(cargo metadata --no-deps --format-version 1 --locked |
    python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"]=="ulticode"))')"
# Reproducible timestamps: the commit's time.
export SOURCE_DATE_EPOCH="$(git log -1 --format=%ct)"

ensure_debian_packages minisign buildah dpkg-dev binutils
ensure_cargo_tool cargo-auditable 0.7.7
ensure_cargo_tool cargo-deb 3.8.0
ensure_cargo_tool cargo-cyclonedx 0.5.9

dist="dist"
rm -rf "$dist"
mkdir -p "$dist"

echo "== binary (cargo auditable, release profile)"
cargo auditable build --release --locked -p ulticode
binary="$CARGO_TARGET_DIR/release/ulticode"
objcopy --strip-debug "$binary" "$dist/ulticode-$version-x86_64-linux"
objdump -h "$dist/ulticode-$version-x86_64-linux" | grep -q '\.dep-v0' ||
    { echo "release: the dependency list is not embedded (.dep-v0 missing)" >&2; exit 1; }

echo "== Debian package"
cargo deb -p ulticode --no-build --locked --output "$dist/"

echo "== OCI image"
scripts/build-image.sh "$binary" "$dist/ulticode-image-$version.tar" "$revision"
if $toolchains; then
    ensure_debian_packages debootstrap
    scripts/build-image.sh --toolchains "$binary" "$dist/ulticode-image-$version-toolchains.tar" "$revision"
fi
if $check_image; then
    for image in "$dist"/ulticode-image-*.tar; do
        scripts/verify-image.sh "$image" "$binary"
    done
fi

echo "== SBOMs"
# cargo-cyclonedx writes one SBOM beside each member's manifest: the binary's is the
# composition root's (its graph is the whole binary's).
CARGO_NET_OFFLINE=true cargo cyclonedx --format json --spec-version 1.5 --override-filename ulticode.cdx
mv crates/ulticode/ulticode.cdx.json "$dist/ulticode-$version.cdx.json"
find crates -maxdepth 2 -name 'ulticode.cdx.json' -delete
(cd crates/web/assets && npm ci --no-audit --no-fund --loglevel=error >/dev/null &&
    npx --yes @cyclonedx/cyclonedx-npm@6.0.1 --omit dev --output-reproducible \
        --output-format JSON --spec-version 1.5 --output-file "$OLDPWD/$dist/ulticode-console-$version.cdx.json" >/dev/null)

cat >"$dist/SOURCE" <<SOURCE
ulticode $version
commit $revision
built $(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ) (commit time)
$(rustc --version)
cargo-auditable 0.7.7
$(cargo deb --version 2>/dev/null || echo cargo-deb 3.8.0)
$(buildah --version)
SOURCE

echo "== digests and signatures"
(cd "$dist" && sha256sum -- * >SHA256SUMS)
key_dir="$(mktemp -d)"
trap 'rm -rf "$key_dir"' EXIT
chmod 700 "$key_dir"
public_key=packaging/minisign.pub
if [ -n "${ULTICODE_MINISIGN_KEY:-}" ]; then
    (umask 077 && printf '%s\n' "$ULTICODE_MINISIGN_KEY" >"$key_dir/secret.key")
    secret_key="$key_dir/secret.key"
elif [ -n "${ULTICODE_MINISIGN_KEY_FILE:-}" ]; then
    secret_key="$ULTICODE_MINISIGN_KEY_FILE"
else
    echo "release: no ULTICODE_MINISIGN_KEY: signing with a THROWAWAY key (dist/throwaway.pub), not the project's"
    minisign -G -W -p "$key_dir/throwaway.pub" -s "$key_dir/secret.key" >/dev/null
    secret_key="$key_dir/secret.key"
    cp "$key_dir/throwaway.pub" "$dist/throwaway.pub"
    public_key="$dist/throwaway.pub"
fi
for file in "$dist"/*; do
    case "$file" in *.minisig | */throwaway.pub) continue ;; esac
    minisign -S -s "$secret_key" -m "$file" -t "ulticode $version $(basename "$file") commit $revision" >/dev/null
done
scripts/verify-release.sh "$dist" "$public_key"
echo "release: $dist/"
ls -l "$dist"
