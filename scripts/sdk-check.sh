#!/usr/bin/env bash
# The OpenAPI document as an SDK (docs/api.md "Generating a client"): starts a throwaway
# `consular` server (scripts/lib/server.sh), takes its live /api/v1/openapi.json, and
#   - lints it with Spectral's `oas` ruleset (sdk/.spectral.yaml) and Redocly's
#     `recommended` (sdk/redocly.yaml): errors fail, warnings are printed;
#   - generates a Python client with openapi-python-client (default configuration) and
#     runs sdk/python/journey.py with it;
#   - generates TypeScript types with openapi-typescript (default options), compiles
#     sdk/ts/journey.ts (openapi-fetch) with `tsc --strict` and runs it with node.
# Each journey: a token (client credentials), a submission, an upload, a list with a
# two-valued filter, a booking, and a problem response parsed into the Problem type.
# Every step runs even when one before it failed (a journey needs its client); the
# summary lists each step's outcome, and the script exits non-zero if any failed.
#
# Tools, pinned, installed on first use and again only when their pins change:
#   sdk/python/requirements.txt  into <target>/.venv-sdk-python (pip)
#   sdk/ts/package-lock.json     into <target>/sdk/ts/node_modules (npm ci; needs node >= 18.18)
# Everything generated goes to <target>/sdk/.
#
# Knobs (environment):
#   SDK_CHECK_VENV   the Python venv (<target>/.venv-sdk-python)
#   CONSULAR_BIN     use this binary instead of building crates/app
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
log_prefix=sdk-check
# shellcheck source=scripts/lib/common.sh
source "$repo/scripts/lib/common.sh"
# shellcheck source=scripts/lib/server.sh
source "$repo/scripts/lib/server.sh"

check_start=$SECONDS

for tool in python3 curl node npm; do
    command -v "$tool" >/dev/null || {
        log "$tool is required (bash .ci/run installs what is missing; or apt-get install nodejs npm python3-venv curl)"
        exit 1
    }
done
node_version="$(node --version)"
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 18 || (a === 18 && b >= 18) ? 0 : 1)'; then
    log "node $node_version is too old: the pinned tools need 18.18 or newer"
    exit 1
fi

target="$(target_dir)"
work="$target/sdk"
venv="${SDK_CHECK_VENV:-$target/.venv-sdk-python}"
mkdir -p "$work"

# --- tools ----------------------------------------------------------------------------
install_start=$SECONDS
requirements="$repo/sdk/python/requirements.txt"
venv_ensure "$venv" "$(sha256sum "$requirements" | cut -d' ' -f1)" --requirement "$requirements"

# The npm project is copied to <target>/sdk/ts, where its node_modules, the generated types
# and the compiled journey live; `npm ci` runs when the lock file (or node's major version)
# changed. Install scripts are not needed by these tools and are not run.
ts="$work/ts"
mkdir -p "$ts"
cp "$repo/sdk/ts/package.json" "$repo/sdk/ts/package-lock.json" "$repo/sdk/ts/tsconfig.json" "$repo/sdk/ts/journey.ts" "$ts/"
npm_stamp="$(sha256sum "$repo/sdk/ts/package-lock.json" | cut -d' ' -f1) node ${node_version%%.*}"
if [ ! -f "$ts/node_modules/.consular-stamp" ] || [ "$(cat "$ts/node_modules/.consular-stamp")" != "$npm_stamp" ]; then
    npm_start=$SECONDS
    log "npm ci in $ts (node $node_version, npm $(npm --version))"
    (cd "$ts" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    printf '%s' "$npm_stamp" >"$ts/node_modules/.consular-stamp"
    log "npm ci took $((SECONDS - npm_start))s"
fi
bin_dir="$ts/node_modules/.bin"
log "tools ready in $((SECONDS - install_start))s"

# --- the server and its document -------------------------------------------------------
server_setup sdk-check
server_start
document="$work/openapi.json"
curl -fsS --max-time 10 "$server_base/api/v1/openapi.json" -o "$server_tmp/openapi.json"
# Indented, so that the linters' line numbers point somewhere readable.
python3 -m json.tool --indent 2 "$server_tmp/openapi.json" >"$document"
log "the document: $document"

# --- the steps ------------------------------------------------------------------------
step_names=()
step_results=()
# Usage: step NAME COMMAND [ARGS...]: runs it, records its outcome and time, never stops.
step() {
    local name=$1 start=$SECONDS status=0
    shift
    printf '\n==> %s\n' "$name"
    "$@" || status=$?
    local outcome="ok"
    [ "$status" -eq 0 ] || outcome="FAILED (exit $status)"
    step_names+=("$name")
    step_results+=("$outcome in $((SECONDS - start))s")
    printf '<== %s: %s\n' "$name" "$outcome"
    return "$status"
}
# A step that needs an earlier one: recorded as skipped when that one failed.
skip() {
    step_names+=("$1")
    step_results+=("skipped ($2 failed)")
    printf '\n==> %s: skipped (%s failed)\n' "$1" "$2"
}

export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true NO_UPDATE_NOTIFIER=1

step "spectral lint (oas)" \
    "$bin_dir/spectral" lint "$document" --ruleset "$repo/sdk/.spectral.yaml" --fail-severity error || true
step "redocly lint (recommended)" \
    "$bin_dir/redocly" lint "$document" --config "$repo/sdk/redocly.yaml" || true

python_client="$work/python/client"
rm -rf "$work/python"
mkdir -p "$work/python"
if step "openapi-python-client generate" \
    env PATH="$venv/bin:$PATH" openapi-python-client generate --path "$document" \
    --output-path "$python_client" --fail-on-warning; then
    step "python journey" \
        env PYTHONPATH="$python_client" PYTHONUNBUFFERED=1 "$venv/bin/python" "$repo/sdk/python/journey.py" \
        "$server_base" "$server_client_id" "$server_client_secret" || true
else
    skip "python journey" "openapi-python-client generate"
fi

rm -rf "$ts/build" "$ts/schema.d.ts"
if step "openapi-typescript" "$bin_dir/openapi-typescript" "$document" --output "$ts/schema.d.ts"; then
    if step "tsc --strict" "$bin_dir/tsc" --strict --project "$ts/tsconfig.json"; then
        step "typescript journey" \
            node "$ts/build/journey.js" "$server_base" "$server_client_id" "$server_client_secret" || true
    else
        skip "typescript journey" "tsc --strict"
    fi
else
    skip "tsc --strict" "openapi-typescript"
    skip "typescript journey" "openapi-typescript"
fi

# --- summary --------------------------------------------------------------------------
failed=0
echo
echo "=== sdk-check"
for i in "${!step_names[@]}"; do
    printf '  %-34s %s\n' "${step_names[$i]}" "${step_results[$i]}"
    [[ "${step_results[$i]}" == ok* ]] || failed=$((failed + 1))
done
printf '  %-34s %ss\n' "total" "$((SECONDS - check_start))"
if [ "$failed" -ne 0 ]; then
    log "$failed of ${#step_names[@]} steps did not pass"
    exit 1
fi
log "all ${#step_names[@]} steps passed"
