# Sourced by the tiers that need a running `ulticode up`: `start_up BINARY DIR` starts one on
# a free port with its data in DIR and sets BASE (its URL), PASSWORD (the admin's) and
# SERVER_PID; `stop_up` ends it. The caller's EXIT trap should call `stop_up`.
SERVER_PID=""
start_up() {
    local binary="$1" dir="$2"
    mkdir -p "$dir"
    ULTICODE_LOG=warn "$binary" up --listen 127.0.0.1:0 --data-dir "$dir/data" >"$dir/up.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 360); do
        grep -q "^admin account created" "$dir/up.log" && break
        kill -0 "$SERVER_PID" 2>/dev/null || { cat "$dir/up.log"; return 1; }
        sleep 0.5
    done
    BASE="$(sed -n 's/^UltiCode is serving on \(http[^ ]*\).*/\1/p' "$dir/up.log")"
    PASSWORD="$(sed -n 's/^admin account created: username admin, password \([^ ]*\) .*/\1/p' "$dir/up.log")"
    [ -n "$BASE" ] && [ -n "$PASSWORD" ] || { cat "$dir/up.log"; return 1; }
}
stop_up() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=""
    fi
}
