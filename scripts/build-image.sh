#!/usr/bin/env bash
# Builds the OCI image without a container engine: buildah (as root, storage of its own in
# a temp directory, vfs driver) assembles a root filesystem from scratch holding the binary,
# the shared libraries it links (from this machine) and a non-root `ulticode` user, then
# writes it as an image archive (docker format, which keeps the HEALTHCHECK).
#
# With --toolchains, the larger variant: a Debian bookworm root file system (debootstrap from
# the Debian mirror) with the judge's main language toolchains (C, C++, Python, Java,
# JavaScript), tagged `<version>-toolchains`.
#
#   scripts/build-image.sh [--toolchains] BINARY OUT.tar [REVISION]
set -euo pipefail
variant=minimal
if [ "${1:-}" = --toolchains ]; then variant=toolchains; shift; fi
binary="$1" out="$2" revision="${3:-unknown}"
version="$("$binary" --version | awk '{print $2}')"
tag="$version"
[ "$variant" = toolchains ] && tag="$version-toolchains"

work="$(mktemp -d)"
trap 'buildah --root "$work/storage" --runroot "$work/run" --storage-driver vfs rm --all >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
export BUILDAH_FORMAT=docker
B=(buildah --root "$work/storage" --runroot "$work/run" --storage-driver vfs)
policy="$work/policy.json"
echo '{"default":[{"type":"insecureAcceptAnything"}]}' >"$policy"

# The root filesystem.
rootfs="$work/rootfs"
if [ "$variant" = toolchains ]; then
    debootstrap --variant=minbase \
        --include=ca-certificates,gcc,g++,python3,openjdk-17-jdk-headless,nodejs \
        bookworm "$rootfs" "${ULTICODE_DEBIAN_MIRROR:-http://deb.debian.org/debian}" >"$work/debootstrap.log" ||
        { tail -n 20 "$work/debootstrap.log"; exit 1; }
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/*
    chroot "$rootfs" useradd --uid 10001 --user-group --home-dir /var/lib/ulticode \
        --no-create-home --shell /usr/sbin/nologin ulticode
    install -d "$rootfs/var/lib/ulticode"
else
    install -d "$rootfs/usr/bin" "$rootfs/etc/ssl/certs" "$rootfs/tmp" "$rootfs/var/lib/ulticode"
    # Exactly the libraries the dynamic loader resolves for the binary, at the same paths.
    ldd "$binary" | awk '/=> \//{print $3} /^\s*\//{print $1}' | while read -r lib; do
        install -D -m 0755 "$(readlink -f "$lib")" "$rootfs$lib"
    done
    cat >"$rootfs/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/usr/sbin/nologin
ulticode:x:10001:10001:UltiCode:/var/lib/ulticode:/usr/sbin/nologin
PASSWD
    cat >"$rootfs/etc/group" <<'GROUP'
root:x:0:
ulticode:x:10001:
GROUP
    if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
        install -m 0644 /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/"
    fi
fi
install -m 0755 "$binary" "$rootfs/usr/bin/ulticode"
strip --strip-debug "$rootfs/usr/bin/ulticode" 2>/dev/null || true
chmod 1777 "$rootfs/tmp"
chown 10001:10001 "$rootfs/var/lib/ulticode"
chmod 0750 "$rootfs/var/lib/ulticode"

container="$("${B[@]}" from --signature-policy "$policy" scratch)"
"${B[@]}" copy --preserve-ownership "$container" "$rootfs/" / >/dev/null 2>&1 ||
    "${B[@]}" copy "$container" "$rootfs/" /
"${B[@]}" config \
    --user 10001:10001 \
    --workingdir /var/lib/ulticode \
    --env ULTICODE_DATA_DIR=/var/lib/ulticode \
    --env ULTICODE_LISTEN=0.0.0.0:8080 \
    --port 8080 \
    --volume /var/lib/ulticode \
    --entrypoint '["/usr/bin/ulticode"]' \
    --cmd serve \
    --healthcheck 'CMD /usr/bin/ulticode health --url http://127.0.0.1:8080' \
    --healthcheck-interval 30s --healthcheck-timeout 5s --healthcheck-retries 3 \
    --label org.opencontainers.image.title=ulticode \
    --label org.opencontainers.image.description="UltiCode online judge" \
    --label org.opencontainers.image.version="$version" \
    --label org.opencontainers.image.revision="$revision" \
    --label org.opencontainers.image.source=https://github.com/ulticode/ulticode \
    --label org.opencontainers.image.licenses=Apache-2.0 \
    "$container"
mkdir -p "$(dirname "$out")"
rm -f "$out"
"${B[@]}" commit --signature-policy "$policy" --format docker --timestamp 0 --quiet \
    "$container" "localhost/ulticode:$tag" >/dev/null
"${B[@]}" push --signature-policy "$policy" --quiet \
    "localhost/ulticode:$tag" "docker-archive:$out:localhost/ulticode:$tag"
echo "image: $out (localhost/ulticode:$tag, $(du -h "$out" | cut -f1), revision $revision)"
