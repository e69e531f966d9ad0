#!/usr/bin/env bash
# Property-based API tests: starts a throwaway `consular` server (SQLite and blob storage
# in a temp dir, a free loopback port), creates an admin client, gets a token, and runs
# schemathesis with every check against /api/v1/openapi.json. Exits non-zero on any
# finding; prints the server log on failure.
#
# Knobs (environment):
#   SCHEMATHESIS_MAX_EXAMPLES  test cases per operation (30)
#   SCHEMATHESIS_WORKERS       concurrent workers (1: with 2, CPython 3.11's ast.parse, which
#                              hypothesis calls from both worker threads, can fail at random
#                              with "SystemError: AST constructor recursion depth mismatch",
#                              cpython gh-106905; one worker is as fast on 2 cores and makes a
#                              seeded run repeatable)
#   SCHEMATHESIS_SEED          random seed (fixed, for reproducible runs; `random` for a new one)
#   SCHEMATHESIS_TIMEOUT       hard limit on the schemathesis run, seconds (900)
#   SCHEMATHESIS_VERSION       schemathesis version installed in the venv (4.32.5)
#   SCHEMATHESIS_VENV          venv location (<target>/.venv-schemathesis)
#   SCHEMATHESIS_REPORT_DIR    JUnit report and server log (<target>/schemathesis-report)
#   CONSULAR_BIN               use this binary instead of building crates/app
# Extra arguments are passed to `schemathesis run` (e.g. `--phases examples,coverage`).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

max_examples="${SCHEMATHESIS_MAX_EXAMPLES:-30}"
workers="${SCHEMATHESIS_WORKERS:-1}"
seed="${SCHEMATHESIS_SEED:-20261101}"
time_limit="${SCHEMATHESIS_TIMEOUT:-900}"
st_version="${SCHEMATHESIS_VERSION:-4.32.5}"
ready_timeout=60
log_lines="${SCHEMATHESIS_LOG_LINES:-400}"

log() { printf 'schemathesis.sh: %s\n' "$*" >&2; }

for tool in python3 curl; do
    command -v "$tool" >/dev/null || { log "$tool is required"; exit 1; }
done

target_dir="$(cargo metadata --format-version 1 --no-deps \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
venv="${SCHEMATHESIS_VENV:-$target_dir/.venv-schemathesis}"
report_dir="${SCHEMATHESIS_REPORT_DIR:-$target_dir/schemathesis-report}"

# --- schemathesis, in its own venv --------------------------------------------------
if ! "$venv/bin/schemathesis" --version 2>/dev/null | grep -qx "schemathesis, version $st_version"; then
    log "installing schemathesis==$st_version into $venv"
    if [ ! -x "$venv/bin/python" ]; then
        python3 -m venv "$venv"
    fi
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "schemathesis==$st_version"
fi

# --- the server binary ----------------------------------------------------------------
if [ -n "${CONSULAR_BIN:-}" ]; then
    bin="$CONSULAR_BIN"
else
    log "building consular (debug)"
    cargo build -p consular-app
    bin="$target_dir/debug/consular"
fi
[ -x "$bin" ] || { log "no executable at $bin"; exit 1; }

# --- a throwaway environment ----------------------------------------------------------
tmp="$(mktemp -d "${TMPDIR:-/tmp}/consular-schemathesis.XXXXXX")"
server_log="$tmp/server.log"
st_output="$tmp/schemathesis.out"
: >"$server_log"
: >"$st_output"
server_pid=""

# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
    local status=$?
    trap - EXIT INT TERM
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid" 2>/dev/null || true
        for _ in $(seq 1 50); do
            kill -0 "$server_pid" 2>/dev/null || break
            sleep 0.2
        done
        kill -KILL "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    mkdir -p "$report_dir"
    cp "$server_log" "$report_dir/server.log" 2>/dev/null || true
    if [ "$status" -ne 0 ]; then
        log "FAILED (exit $status)"
        echo "----- server log: last $log_lines lines (whole log: $report_dir/server.log) -----" >&2
        tail -n "$log_lines" "$server_log" >&2 || true
        echo "----- end of server log -----" >&2
        # CI keeps only the tail of a job's output: repeat schemathesis' findings after
        # the server log so that they are what a reader of that tail sees.
        if [ -s "$st_output" ]; then
            echo "----- schemathesis findings (repeated from above) -----" >&2
            # From the first "=== ERRORS ===" or "=== FAILURES ===" banner to the end;
            # lines are cut, as a traceback may quote a whole source file in one.
            if grep -qE '= (ERRORS|FAILURES) =' "$st_output"; then
                sed -n -E '/= (ERRORS|FAILURES) =/,$p' "$st_output" | cut -c1-1000 | head -n 400 >&2
            else
                tail -n 80 "$st_output" | cut -c1-1000 >&2
            fi
            echo "----- end of schemathesis findings -----" >&2
        fi
    fi
    rm -rf "$tmp"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
base="http://127.0.0.1:$port"

export CONSULAR_DATABASE_URL="sqlite://$tmp/db.sqlite"
export CONSULAR_STORAGE_URL="file://$tmp/blobs"
export CONSULAR_BIND="127.0.0.1:$port"
export CONSULAR_ACCESS_TOKEN_TTL_SECS=7200
# Every request gets its own token (scripts/schemathesis_hooks.py).
export CONSULAR_TOKEN_RATE_LIMIT_PER_MINUTE=1000000

log "migrating $CONSULAR_DATABASE_URL"
echo "### consular migrate" >>"$server_log"
"$bin" migrate >>"$server_log" 2>&1

log "creating an admin client"
echo "### consular clients create" >>"$server_log"
client_json="$("$bin" clients create --name schemathesis --scope admin --json 2>>"$server_log")"
# Prints "<client_id> <client_secret>", each form-urlencoded as RFC 6749 §2.3.1 asks
# before Basic auth (a no-op for the usual URL-safe identifiers).
# shellcheck disable=SC2016 # Python source, not shell
credentials="$(printf '%s' "$client_json" | python3 -c '
import json, sys, urllib.parse
text = sys.stdin.read()
try:
    obj = json.loads(text)
except ValueError:
    obj = None
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                obj = json.loads(line)
                break
            except ValueError:
                pass
if not isinstance(obj, dict) or not obj.get("client_id") or not obj.get("client_secret"):
    sys.exit("`consular clients create --json` printed no JSON object with client_id and client_secret")
print(urllib.parse.quote_plus(str(obj["client_id"])), urllib.parse.quote_plus(str(obj["client_secret"])))
')" || {
    printf '### clients create printed on stdout:\n%s\n' "$client_json" >>"$server_log"
    exit 1
}
client_id="${credentials%% *}"
client_secret="${credentials#* }"

log "starting consular serve on $CONSULAR_BIND"
echo "### consular serve" >>"$server_log"
"$bin" serve >>"$server_log" 2>&1 &
server_pid=$!

deadline=$((SECONDS + ready_timeout))
until curl -fs -o /dev/null --max-time 2 "$base/health/ready"; do
    if ! kill -0 "$server_pid" 2>/dev/null; then
        log "the server exited before it became ready"
        exit 1
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
        log "$base/health/ready did not answer 200 within ${ready_timeout}s"
        exit 1
    fi
    sleep 0.5
done
log "server ready"

token_status="$(curl -sS --max-time 10 -o "$tmp/token.json" -w '%{http_code}' \
    -u "$client_id:$client_secret" \
    --data-urlencode grant_type=client_credentials \
    "$base/api/v1/auth/token")"
if [ "$token_status" != "200" ]; then
    log "POST /api/v1/auth/token answered $token_status: $(head -c 2000 "$tmp/token.json")"
    exit 1
fi
token="$(python3 -c '
import json, sys
token = json.load(open(sys.argv[1])).get("access_token")
if not isinstance(token, str) or not token:
    sys.exit("the token response has no access_token")
print(token)
' "$tmp/token.json")"

# --- schemathesis ---------------------------------------------------------------------
seed_args=()
if [ "$seed" != "random" ]; then
    seed_args=(--seed "$seed")
fi
color_args=()
if [ ! -t 1 ]; then
    color_args=(--no-color)
fi
mkdir -p "$report_dir"
rm -f "$report_dir/junit.xml"

log "running schemathesis $st_version (max ${max_examples} examples per operation, ${workers} workers, seed ${seed}, limit ${time_limit}s)"
set +e
# From target/: schemathesis keeps its crash cache (for `st replay`) in ./.schemathesis.
(cd "$target_dir" && timeout --kill-after=30 "$time_limit" \
    env PYTHONPATH="$repo/scripts" SCHEMATHESIS_HOOKS=schemathesis_hooks \
        CONSULAR_ST_BASE_URL="$base" CONSULAR_ST_CLIENT_ID="$client_id" CONSULAR_ST_CLIENT_SECRET="$client_secret" \
    "$venv/bin/schemathesis" "${color_args[@]}" --config-file "$repo/scripts/schemathesis.toml" \
    run "$base/api/v1/openapi.json" \
    --checks all \
    --max-examples "$max_examples" \
    --workers "$workers" \
    "${seed_args[@]}" \
    --suppress-health-check all \
    --generation-database none \
    --request-timeout 10 \
    --report junit \
    --report-dir "$report_dir" \
    --report-junit-path "$report_dir/junit.xml" \
    "$@") 2>&1 | tee "$st_output"
status=${PIPESTATUS[0]}
set -e

if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    log "schemathesis did not finish within ${time_limit}s"
elif [ "$status" -ne 0 ]; then
    log "schemathesis reported findings (exit $status); JUnit report: $report_dir/junit.xml"
fi
exit "$status"
