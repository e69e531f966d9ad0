#!/usr/bin/env bash
# Keeps the README true: runs its curl walk-through, as written, against a fresh server
# on each database (SQLite in a temp dir, then a fresh PostgreSQL database; blobs in a
# temp dir, a free loopback port) and fails on the first command that fails. Needs curl,
# jq and psql.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log_prefix=readme-walkthrough
# shellcheck source=scripts/lib/common.sh
source "$repo/scripts/lib/common.sh"
# free_port and wait_ready only: this walk reads the credentials the server prints on
# its first start, as the README does, and runs on PostgreSQL too.
# shellcheck source=scripts/lib/server.sh
source "$repo/scripts/lib/server.sh"
bin="${CONSULAR_BIN:-$repo/target/debug/consular}"
[ -x "$bin" ] || (cd "$repo" && cargo build -q -p consular-app)

tmp=""
server_pid=""
pg_db=""
cleanup() {
    local status=$?
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
    if [ "$status" -ne 0 ] && [ -n "$tmp" ]; then
        echo "readme-walkthrough: FAILED; the last lines it printed:" >&2
        tail -n 40 "$tmp/walk.out" >&2 || true
        tail -n 40 "$tmp/server.log" >&2 || true
    fi
    [ -n "$pg_db" ] && psql -q "$pg_admin" -c "DROP DATABASE IF EXISTS $pg_db" >/dev/null 2>&1
    [ -n "$tmp" ] && rm -rf "$tmp"
    exit "$status"
}
trap cleanup EXIT

# Runs the walk-through against a fresh server on `database_url` (blobs in a temp dir).
walk() {
    local backend=$1 database_url=$2
    local port kek
    port="$(free_port)"
    # A fresh key-encryption key: PostgreSQL refuses to start without one (docs/operations.md
    # "Signing keys"), and the SQLite walk runs the same way.
    kek="$(head -c 32 /dev/urandom | base64)"
    (cd "$tmp" && CONSULAR_BIND="127.0.0.1:$port" CONSULAR_DATABASE_URL="$database_url" \
        CONSULAR_KEY_ENCRYPTION_KEY="$kek" \
        CONSULAR_STORAGE_URL="file://$tmp/data/blobs" exec "$bin" serve >"$tmp/server.out" 2>"$tmp/server.log") &
    server_pid=$!
    wait_ready "$server_pid" "http://127.0.0.1:$port"
    ADMIN_ID=$(awk '$1 == "client_id:" {print $2}' "$tmp/server.out")
    ADMIN_SECRET=$(awk '$1 == "client_secret:" {print $2}' "$tmp/server.out")
    [ -n "$ADMIN_ID" ] && [ -n "$ADMIN_SECRET" ] || { echo "no admin credentials printed" >&2; exit 1; }

    {
        echo "set -euo pipefail"
        echo "ADMIN_ID=$ADMIN_ID; ADMIN_SECRET=$ADMIN_SECRET"
        sed -n '/^## Walk-through/,$p' "$repo/README.md" | awk '/^```sh/{f=1;next} /^```/{f=0} f' \
            | sed "s#API=http://127.0.0.1:8080#API=http://127.0.0.1:$port#"
    } >"$tmp/walk.sh"
    (cd "$tmp" && bash "$tmp/walk.sh" >"$tmp/walk.out" 2>&1)
    # README_WALK_OUT=path keeps what the walk-through printed (path.sqlite, path.postgresql),
    # to refresh the README's sample outputs.
    [ -n "${README_WALK_OUT:-}" ] && cp "$tmp/walk.out" "$README_WALK_OUT.$backend"
    steps=$(grep -c '^# [0-9]*\. ' "$tmp/walk.sh" || true)
    kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
    server_pid=""
    echo "readme-walkthrough: all $steps steps of the README walk-through ran against a fresh server on $backend"
}

# SQLite, the embedded default: nothing to start.
tmp="$(mktemp -d "${TMPDIR:-/tmp}/consular-readme.XXXXXX")"
walk sqlite "sqlite://$tmp/data/consular.db"
rm -rf "$tmp"

# PostgreSQL: a fresh database in the test cluster (started if needed; `make test` stops
# it at the end), or in the server DATABASE_URL names.
tmp="$(mktemp -d "${TMPDIR:-/tmp}/consular-readme.XXXXXX")"
if [ -n "${DATABASE_URL:-}" ]; then
    pg_admin="$DATABASE_URL"
else
    pg_admin="$(cd "$repo" && cargo run -q -p consular-testkit --bin pg-test-cluster -- start)"
fi
pg_db="readme_$(date +%s)_$$"
psql -q "$pg_admin" -c "CREATE DATABASE $pg_db" >/dev/null
walk postgresql "$(python3 -c 'import sys, urllib.parse as u; p = u.urlsplit(sys.argv[1]); print(u.urlunsplit(p._replace(path="/" + sys.argv[2])))' "$pg_admin" "$pg_db")"
