#!/usr/bin/env bash
# The whole test suite, as `make test` runs it: formatting, clippy, the nextest suite
# (profile `ci` from .config/nextest.toml), the README walk-through, schemathesis against
# a live server, and the SDK check (generated clients and the document's linters,
# scripts/sdk-check.sh).
# Phases stop at the first failure; whatever happens, the shared PostgreSQL test cluster
# the tests may have started is stopped at the end and the first failure's status is kept.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

CARGO="${CARGO:-cargo}"
NEXTEST_PROFILE="${NEXTEST_PROFILE:-ci}"
timed=(bash "$repo/scripts/timed.sh")
suite_start=$(date +%s)

finish() {
    local status=$?
    trap - EXIT INT TERM
    if ! "${timed[@]}" pg-stop "$CARGO" run -q -p consular-testkit --bin pg-test-cluster -- stop; then
        echo "make test: warning: could not stop the shared PostgreSQL test cluster" >&2
    fi
    local elapsed=$(($(date +%s) - suite_start))
    if [ "$status" -eq 0 ]; then
        printf '\nmake test: all phases passed in %dm%02ds\n' $((elapsed / 60)) $((elapsed % 60))
    else
        printf '\nmake test: FAILED (exit %d) after %dm%02ds\n' "$status" $((elapsed / 60)) $((elapsed % 60)) >&2
    fi
    exit "$status"
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"${timed[@]}" fmt "$CARGO" fmt --all -- --check
"${timed[@]}" clippy "$CARGO" clippy --workspace --all-targets -- -D warnings
"${timed[@]}" nextest "$CARGO" nextest run --workspace --profile "$NEXTEST_PROFILE"
"${timed[@]}" readme bash "$repo/scripts/readme-walkthrough.sh"
"${timed[@]}" schemathesis bash "$repo/scripts/schemathesis.sh"
"${timed[@]}" sdk-check bash "$repo/scripts/sdk-check.sh"
