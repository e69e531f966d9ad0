#!/usr/bin/env bash
# Usage: scripts/timed.sh NAME COMMAND [ARGS...]
# Runs COMMAND, then prints how long phase NAME took; exits with COMMAND's status.
set -uo pipefail

if [ "$#" -lt 2 ]; then
    echo "usage: $0 NAME COMMAND [ARGS...]" >&2
    exit 2
fi
name=$1
shift

start=$(date +%s)
printf '\n==> [%s] %s\n' "$name" "$*"
"$@"
status=$?
elapsed=$(($(date +%s) - start))
if [ "$status" -eq 0 ]; then
    printf '<== [%s] ok in %dm%02ds\n' "$name" $((elapsed / 60)) $((elapsed % 60))
else
    printf '<== [%s] FAILED (exit %d) after %dm%02ds\n' "$name" "$status" $((elapsed / 60)) $((elapsed % 60)) >&2
fi
exit "$status"
