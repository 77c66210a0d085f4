#!/usr/bin/env bash
# Checks a built image without a container runtime (crun cannot run here: it is refused
# setrlimit): unpacks the archive's layers into a root filesystem, checks its configuration
# (non-root user, health check, source revision) and runs the image's own binary, with the
# image's own dynamic loader and libraries, inside UltiCode's sandbox.
#
#   scripts/verify-image.sh IMAGE.tar ULTICODE   (ULTICODE: the host binary that sandboxes)
set -euo pipefail
image="$1" ulticode="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
check() { # NAME COMMAND...
    local name="$1"; shift
    if "$@"; then echo "ok   $name"; passed=$((passed + 1)); else echo "FAIL $name"; failed=$((failed + 1)); fi
}

tar -xf "$image" -C "$work"
root="$work/rootfs"
mkdir -p "$root"
# docker-archive: manifest.json names the config and the layers, bottom first.
python3 - "$work" "$root" <<'PY'
import json, os, shutil, sys, tarfile
work, root = sys.argv[1], sys.argv[2]
manifest = json.load(open(os.path.join(work, "manifest.json")))[0]
for layer in manifest["Layers"]:
    with tarfile.open(os.path.join(work, layer)) as t:
        for member in t.getmembers():
            head, name = os.path.split(member.name)
            if name.startswith(".wh."):  # a whiteout deletes what a lower layer put there
                target = os.path.join(root, head, name[4:])
                shutil.rmtree(target, ignore_errors=True) if os.path.isdir(target) else (os.path.exists(target) and os.remove(target))
                continue
            t.extract(member, root, set_attrs=True, numeric_owner=True, filter="fully_trusted")
shutil.copy(os.path.join(work, manifest["Config"]), os.path.join(work, "config.json"))
PY

config() { python3 -c "import json,sys; c=json.load(open('$work/config.json'))['config']; print(eval(sys.argv[1]))" "$1"; }
user="$(config 'c.get("User","")')"
check "runs as a non-root user ($user)" test -n "$user" -a "${user%%:*}" != 0 -a "${user%%:*}" != root
check "has a health check" test "$(config '" ".join((c.get("Healthcheck") or {}).get("Test", []))')" = "CMD /usr/bin/ulticode health --url http://127.0.0.1:8080"
revision="$(config 'c.get("Labels",{}).get("org.opencontainers.image.revision","")')"
check "is labelled with its source revision ($revision)" test -n "$revision" -a "$revision" != unknown

# The image's binary through the image's loader and libraries, in the sandbox (the host's
# /usr is mounted read-only too, but nothing of it is used: the library path is the image's).
# A path resolved inside the image (its symlinks may be absolute: resolved against the
# image's root, never the host's); prints it relative to the root, or nothing if missing.
inside() {
    python3 - "$root" "$1" <<'PY'
import os, sys
root, path = sys.argv[1], sys.argv[2]
for _ in range(40):
    parts, here = path.strip("/").split("/"), "/"
    for i, part in enumerate(parts):
        step = os.path.join(here, part)
        if os.path.islink(root + step):
            target = os.readlink(root + step)
            rest = "/".join(parts[i + 1:])
            path = os.path.normpath(os.path.join(target if target.startswith("/") else os.path.join(here, target), rest))
            break
        here = step
    else:
        if os.path.exists(root + path):
            print(path.lstrip("/"))
        break
PY
}
loader="$(inside /lib64/ld-linux-x86-64.so.2)"
in_image() {
    "$ulticode" sandbox run --memory-limit 1024 --bind "$root:/image" -- \
        "/image/$loader" --inhibit-cache --library-path /image/lib/x86_64-linux-gnu:/image/usr/lib/x86_64-linux-gnu \
        /image/usr/bin/ulticode "$@"
}
version_output="$(in_image --version 2>&1 || true)"
check "its binary runs in the sandbox: $version_output" grep -q '^ulticode [0-9]' <<<"$version_output"
health_output="$(in_image health --url http://127.0.0.1:9 --timeout-s 2 2>&1; echo "exit=$?")"
check "its health probe answers 'not ready' with nothing listening" grep -q 'not ready.*exit=1' <<<"$(tr '\n' ' ' <<<"$health_output")"
tags="$(python3 -c "import json; print(' '.join(json.load(open('$work/manifest.json'))[0].get('RepoTags') or []))")"
if [[ "$tags" == *-toolchains* ]]; then
    for tool in gcc g++ python3 java javac node; do
        resolved="$(inside "/usr/bin/$tool")"
        check "the toolchains variant has $tool (/$resolved)" test -n "$resolved" -a -x "$root/$resolved"
    done
fi
echo "image: $passed passed, $failed failed"
[ "$failed" = 0 ]
