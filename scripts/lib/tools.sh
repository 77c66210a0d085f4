# Release and audit tools from crates.io, pinned, installed once into the cache outside the
# repository (a fresh machine builds them; later runs reuse them). Source this file.

TOOLS_ROOT="${ULTICODE_CACHE_DIR:-/var/cache/ulticode}/tools"
export PATH="$TOOLS_ROOT/bin:$PATH"

# ensure_cargo_tool CRATE VERSION [BINARY]: installs CRATE@VERSION unless BINARY (default
# CRATE) of that version is already there.
ensure_cargo_tool() {
    local crate="$1" version="$2" binary="${3:-$1}"
    if [ -x "$TOOLS_ROOT/bin/$binary" ] && [ -f "$TOOLS_ROOT/.$crate-$version" ]; then
        return 0
    fi
    echo "installing $crate $version into $TOOLS_ROOT"
    CARGO_TARGET_DIR="$TOOLS_ROOT/target" cargo install --locked --quiet \
        --root "$TOOLS_ROOT" "$crate@$version" &&
        touch "$TOOLS_ROOT/.$crate-$version"
}

# ensure_debian_packages PACKAGE...: installs what is missing (needs root and the Debian mirror).
ensure_debian_packages() {
    local missing=()
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
            missing+=("$package")
    done
    if [ "${#missing[@]}" -gt 0 ]; then
        echo "installing Debian packages: ${missing[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
            { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
    fi
}
