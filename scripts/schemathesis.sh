#!/usr/bin/env bash
# Property-based API tests: starts a throwaway `consular` server (scripts/lib/server.sh:
# SQLite and blob storage in a temp dir, a free loopback port, an admin client), gets a
# token, and runs schemathesis with every check against /api/v1/openapi.json. Exits
# non-zero on any finding; prints the server log on failure.
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
#   SCHEMATHESIS_LOG_LINES     server log lines printed on failure (400)
#   CONSULAR_BIN               use this binary instead of building crates/app
# Extra arguments are passed to `schemathesis run` (e.g. `--phases examples,coverage`).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
log_prefix=schemathesis.sh
# shellcheck source=scripts/lib/common.sh
source "$repo/scripts/lib/common.sh"
# shellcheck source=scripts/lib/server.sh
source "$repo/scripts/lib/server.sh"

max_examples="${SCHEMATHESIS_MAX_EXAMPLES:-30}"
workers="${SCHEMATHESIS_WORKERS:-1}"
seed="${SCHEMATHESIS_SEED:-20261101}"
time_limit="${SCHEMATHESIS_TIMEOUT:-900}"
st_version="${SCHEMATHESIS_VERSION:-4.32.5}"
export SERVER_LOG_LINES="${SCHEMATHESIS_LOG_LINES:-400}"

for tool in python3 curl; do
    command -v "$tool" >/dev/null || { log "$tool is required"; exit 1; }
done

target="$(target_dir)"
venv="${SCHEMATHESIS_VENV:-$target/.venv-schemathesis}"
report_dir="${SCHEMATHESIS_REPORT_DIR:-$target/schemathesis-report}"
export SERVER_LOG_DIR="$report_dir"

# --- schemathesis, in its own venv --------------------------------------------------
venv_ensure "$venv" "schemathesis==$st_version" "schemathesis==$st_version"

# --- a throwaway server (scripts/lib/server.sh) ----------------------------------------
server_setup schemathesis
st_output="$server_tmp/schemathesis.out"
: >"$st_output"

# shellcheck disable=SC2317 # invoked by server_cleanup on failure
server_after_failure() {
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
}

export CONSULAR_ACCESS_TOKEN_TTL_SECS=7200
# Every request gets its own token (scripts/schemathesis_hooks.py).
export CONSULAR_TOKEN_RATE_LIMIT_PER_MINUTE=1000000
server_start
base="$server_base"
# Form-urlencoded, as RFC 6749 §2.3.1 asks before Basic auth (a no-op for the usual
# URL-safe identifiers).
# shellcheck disable=SC2016 # Python source, not shell
read -r client_id client_secret < <(python3 -c '
import sys, urllib.parse
print(urllib.parse.quote_plus(sys.argv[1]), urllib.parse.quote_plus(sys.argv[2]))
' "$server_client_id" "$server_client_secret")

token_status="$(curl -sS --max-time 10 -o "$server_tmp/token.json" -w '%{http_code}' \
    -u "$client_id:$client_secret" \
    --data-urlencode grant_type=client_credentials \
    "$base/api/v1/auth/token")"
if [ "$token_status" != "200" ]; then
    log "POST /api/v1/auth/token answered $token_status: $(head -c 2000 "$server_tmp/token.json")"
    exit 1
fi
python3 -c '
import json, sys
token = json.load(open(sys.argv[1])).get("access_token")
if not isinstance(token, str) or not token:
    sys.exit("the token response has no access_token")
' "$server_tmp/token.json"

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
(cd "$target" && timeout --kill-after=30 "$time_limit" \
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
