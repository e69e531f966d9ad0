# shellcheck shell=bash
# Helpers shared by the scripts that install tools and run them against a throwaway
# server (scripts/schemathesis.sh, scripts/sdk-check.sh). Source it; it defines functions
# only. The sourcing script sets `log_prefix` (what its messages start with).

log() { printf '%s: %s\n' "${log_prefix:-${0##*/}}" "$*" >&2; }

# Prints Cargo's target directory (CARGO_TARGET_DIR or the workspace's target/).
target_dir() {
    cargo metadata --format-version 1 --no-deps \
        | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])'
}

# Usage: venv_ensure VENV STAMP PIP_INSTALL_ARGS...
# Makes VENV (python3 -m venv) and pip-installs PIP_INSTALL_ARGS into it, unless the
# last successful install there was made for the same STAMP (a string naming what is
# pinned: a version, a requirements file's checksum). Prints how long an install took.
venv_ensure() {
    local venv=$1 stamp=$2
    shift 2
    if [ -f "$venv/.consular-stamp" ] && [ "$(cat "$venv/.consular-stamp")" = "$stamp" ] \
        && [ -x "$venv/bin/python" ]; then
        return 0
    fi
    local start=$SECONDS
    log "installing $* into $venv"
    if [ ! -x "$venv/bin/python" ]; then
        python3 -m venv "$venv"
    fi
    rm -f "$venv/.consular-stamp"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
    printf '%s' "$stamp" >"$venv/.consular-stamp"
    log "installed into $venv in $((SECONDS - start))s"
}
