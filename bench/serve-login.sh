#!/usr/bin/env bash
# `opsai serve` memory under failed logins (issue 25 hardening 3): the server's RSS before and after
# a burst of wrong passwords, sent CONCURRENCY at a time from many loopback addresses (127.0.0.2 …)
# and for many names, so the login throttle lets every one through to a real argon2 check.
#
#   bench/serve-login.sh                      # 430 failed logins, 16 at a time
#   LOGINS=1000 CONCURRENCY=32 bench/serve-login.sh
#   OPSAI_BIN=target/release/opsai bench/serve-login.sh   # default: target/debug/opsai (cargo build)
#
# Before the fix (issue 25): about 430 failed logins took the server from 11 MB to 868 MB RSS.
# Prints RSS (kB, from /proc/PID/status) before, after the burst, and after a second burst; flat
# means the second burst adds nothing. Needs curl and Linux (/proc, 127.0.0.0/8 on lo).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
LOGINS=${LOGINS:-430}
CONCURRENCY=${CONCURRENCY:-16}
BIN=${OPSAI_BIN:-target/debug/opsai}
[ -n "${OPSAI_BIN:-}" ] || cargo build -q
HOME_DIR=$(mktemp -d)
trap 'kill "$PID" 2>/dev/null || true; rm -rf "$HOME_DIR"' EXIT
export OPSAI_HOME=$HOME_DIR OPSAI_SANDBOX=off
echo "a-long-password" | "$BIN" serve user add alice --role operator --users "$HOME_DIR/users.json" >/dev/null
"$BIN" serve --users "$HOME_DIR/users.json" --listen 127.0.0.1:0 >"$HOME_DIR/out" 2>"$HOME_DIR/err" &
PID=$!
for _ in $(seq 100); do grep -q "open" "$HOME_DIR/out" 2>/dev/null && break; sleep 0.1; done
URL=$(sed -n 's/^opsai serve: open //p' "$HOME_DIR/out")
rss() { awk '/^VmRSS/ {print $2}' "/proc/$PID/status"; }

burst() {
    seq "$LOGINS" | xargs -P "$CONCURRENCY" -I{} sh -c '
        n={}; ip="127.0.$(( n / 200 + 1 )).$(( n % 200 + 2 ))"
        curl -s -o /dev/null -w "%{http_code}\n" --interface "$ip" -H "Content-Type: application/json" \
            -d "{\"username\":\"user$n\",\"password\":\"wrong-password\"}" "$0api/v2/auth/login"' "$URL" |
        sort | uniq -c | tr '\n' ' '
}

before=$(rss)
echo "RSS before:            ${before} kB"
codes=$(burst)
echo "RSS after $LOGINS logins:  $(rss) kB   (answers: $codes)"
codes=$(burst)
echo "RSS after $((LOGINS * 2)) logins:  $(rss) kB   (answers: $codes)"
