# Sourced by tests/packaging/python.sh and aarch64.sh (not a test itself: not *.sh): the
# repository's paths, a scratch folder outside the tree removed on exit, and `step NAME CMD...`,
# which runs CMD and says how long it took (the costs the README quotes).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
py=$root/.venv/bin/python
script=$(basename "$0")
# (run.sh's PANTO_PACKAGING_DIR when it runs us, else $TMPDIR)
scratch=${PANTO_PACKAGING_DIR:-${TMPDIR:-/tmp}}
mkdir -p "$scratch"
work=$(mktemp -d "$scratch/panto-${script%.sh}.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() { echo "$script: FAIL: $*" >&2; exit 1; }

step() {
    local name=$1 start=$EPOCHREALTIME
    shift
    "$@" || fail "$name: \`$*\` exited with $?"
    awk -v s="$script" -v n="$name" -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%s: %-44s %6.1f s\n", s, n, b - a }'
}

# A user's shell: nothing points at this checkout (make exports these for the in-tree tests).
unset PANTO_LIBRARY PYTHONPATH LD_LIBRARY_PATH LUA_CPATH VIRTUAL_ENV

# The text the demo scenario streams, which the examples print after their "[lang] " prefix.
demo_text() {
    "$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["responses"][0]["message"]["content"][0]["text"].strip())' \
        "$root/examples/demo-scenario.json"
}
