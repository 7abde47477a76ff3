#!/usr/bin/env bash
# `make packaging-test`: every tests/packaging/*.sh but this one, each installing one package
# outside the tree and running a turn against the emulator. Runs them all, then says which
# failed and how long each took. `tests/packaging/run.sh c zig` runs some.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export PANTO_PACKAGING_DIR=${PANTO_PACKAGING_DIR:-${TMPDIR:-/tmp}/panto-packaging}
if [ $# -gt 0 ]; then scripts=("${@/%/.sh}"); scripts=("${scripts[@]/#/$here/}")
else scripts=("$here"/*.sh); fi

failed=() summary=()
for script in "${scripts[@]}"; do
    name=$(basename "$script" .sh)
    [ "$name" = run ] && continue
    [ -x "$script" ] || { failed+=("$name (missing or not executable)"); continue; }
    echo "== packaging: $name"
    start=$SECONDS
    if "$script"; then status=ok; else status=FAILED; failed+=("$name"); fi
    summary+=("$(printf '%-10s %-6s %4ds' "$name" "$status" $((SECONDS - start)))")
done
echo "== packaging summary"
printf '   %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then echo "packaging: failed: ${failed[*]}"; exit 1; fi
echo "packaging: all passed"
