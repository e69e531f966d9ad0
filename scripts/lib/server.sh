# shellcheck shell=bash disable=SC2034 # the server_* variables are for the sourcing script
# A throwaway `consular` server for the scripts that test it from outside
# (scripts/schemathesis.sh, scripts/sdk-check.sh): SQLite and blob storage in a temp dir,
# a free loopback port, an admin client created with the CLI, stopped and removed on
# exit, its log printed when the script fails. Source scripts/lib/common.sh first.
#
#   server_setup NAME      the temp dir ($server_tmp, also for the caller's own files) and
#                          the EXIT trap; call it first
#   server_start           builds (or takes CONSULAR_BIN), migrates, creates the admin
#                          client, serves and waits for /health/ready; sets
#                          $server_base (http://127.0.0.1:PORT), $server_client_id,
#                          $server_client_secret
#   free_port, wait_ready  its two steps that scripts/readme-walkthrough.sh also takes
#
# Extra CONSULAR_* settings exported before server_start reach the server. Knobs:
#   SERVER_LOG_DIR     where server.log is copied on exit (none: not kept)
#   SERVER_LOG_LINES   lines of the server log printed on failure (400)
# A caller may define `server_after_failure`, run on failure after the server log is
# printed (schemathesis.sh repeats its findings there, so they end a CI job's output).

server_tmp=""
server_log=""
server_pid=""
server_base=""
server_client_id=""
server_client_secret=""

server_setup() {
    local name=$1
    server_tmp="$(mktemp -d "${TMPDIR:-/tmp}/consular-$name.XXXXXX")"
    server_log="$server_tmp/server.log"
    : >"$server_log"
    trap server_cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

# shellcheck disable=SC2317 # invoked by the EXIT trap
server_cleanup() {
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
    local kept=""
    if [ -n "${SERVER_LOG_DIR:-}" ] && [ -n "$server_log" ]; then
        mkdir -p "$SERVER_LOG_DIR"
        cp "$server_log" "$SERVER_LOG_DIR/server.log" 2>/dev/null && kept=" (whole log: $SERVER_LOG_DIR/server.log)"
    fi
    if [ "$status" -ne 0 ]; then
        local lines="${SERVER_LOG_LINES:-400}"
        log "FAILED (exit $status)"
        if [ -s "$server_log" ]; then
            echo "----- server log: last $lines lines$kept -----" >&2
            tail -n "$lines" "$server_log" >&2 || true
            echo "----- end of server log -----" >&2
        fi
        if declare -F server_after_failure >/dev/null; then
            server_after_failure || true
        fi
    fi
    [ -n "$server_tmp" ] && rm -rf "$server_tmp"
    exit "$status"
}

# The server binary: CONSULAR_BIN, or crates/app built (debug) in the target directory.
server_binary() {
    if [ -n "${CONSULAR_BIN:-}" ]; then
        printf '%s' "$CONSULAR_BIN"
    else
        log "building consular (debug)"
        cargo build -p consular-app >&2
        printf '%s/debug/consular' "$(target_dir)"
    fi
}

server_start() {
    local bin
    bin="$(server_binary)"
    [ -x "$bin" ] || { log "no executable at $bin"; return 1; }

    local port
    port="$(free_port)"
    server_base="http://127.0.0.1:$port"
    export CONSULAR_DATABASE_URL="sqlite://$server_tmp/db.sqlite"
    export CONSULAR_STORAGE_URL="file://$server_tmp/blobs"
    export CONSULAR_BIND="127.0.0.1:$port"

    log "migrating $CONSULAR_DATABASE_URL"
    echo "### consular migrate" >>"$server_log"
    "$bin" migrate >>"$server_log" 2>&1

    log "creating an admin client"
    echo "### consular clients create" >>"$server_log"
    local client_json credentials
    client_json="$("$bin" clients create --name "${log_prefix:-throwaway}" --scope admin --json 2>>"$server_log")"
    # Prints "<client_id> <client_secret>" (the CLI's identifiers and secrets have no spaces).
    # shellcheck disable=SC2016 # Python source, not shell
    credentials="$(printf '%s' "$client_json" | python3 -c '
import json, sys
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
print(obj["client_id"], obj["client_secret"])
')" || {
        printf '### clients create printed on stdout:\n%s\n' "$client_json" >>"$server_log"
        return 1
    }
    server_client_id="${credentials%% *}"
    server_client_secret="${credentials#* }"

    log "starting consular serve on $CONSULAR_BIND"
    echo "### consular serve" >>"$server_log"
    "$bin" serve >>"$server_log" 2>&1 &
    server_pid=$!

    wait_ready "$server_pid" "$server_base"
    log "server ready at $server_base"
}

# A free TCP port on the loopback interface.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Usage: wait_ready PID BASE_URL: waits until BASE_URL/health/ready answers 200; fails
# when the process PID exits first or after 60 s.
wait_ready() {
    local pid=$1 base=$2 ready_timeout=60
    local deadline=$((SECONDS + ready_timeout))
    until curl -fs -o /dev/null --max-time 2 "$base/health/ready"; do
        if ! kill -0 "$pid" 2>/dev/null; then
            log "the server exited before it became ready"
            return 1
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            log "$base/health/ready did not answer 200 within ${ready_timeout}s"
            return 1
        fi
        sleep 0.5
    done
}
