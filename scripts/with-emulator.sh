#!/usr/bin/env bash
# Runs a command with the provider emulator serving examples/demo-scenario.json (or
# $PANTO_SCENARIO): PANTO_BASE_URL and PANTO_API_KEY point the examples at it. The emulator
# stops when the command ends.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$root/build"
log=$(mktemp "$root/build/emulator.XXXXXX.log")
PYTHONPATH=$root/bindings-py "$root/.venv/bin/python" -m panto.emulator --port 0 \
    --scenario "${PANTO_SCENARIO:-$root/examples/demo-scenario.json}" >"$log" 2>&1 &
emulator=$!
trap 'kill $emulator 2>/dev/null; wait $emulator 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 200); do grep -q listening "$log" && break; sleep 0.05; done
PANTO_BASE_URL=$(head -n1 "$log" | awk '{print $NF}')
[ -n "$PANTO_BASE_URL" ] || { cat "$log" >&2; echo "with-emulator: the emulator did not start" >&2; exit 1; }
export PANTO_BASE_URL PANTO_API_KEY=demo-key
unset ANTHROPIC_API_KEY OPENAI_API_KEY
"$@"
