#!/usr/bin/env bash
# make demo: the same five programs (first turn, tool round trip, cancel, multi-turn
# conversation, an image in and out) from C, Python, Go and Lua.
# Without ANTHROPIC_API_KEY or OPENAI_API_KEY the turns go to the provider emulator (started
# here, stopped on exit); with one of them they go to the real API.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PANTO_LIBRARY=$root/zig-out/lib/libpanto.so
export LD_LIBRARY_PATH=$root/zig-out/lib
export LUA_CPATH="$root/zig-out/lib/lua/?.so;;"
export PYTHONPATH=$root/bindings-py
mkdir -p build/examples

echo "demo: building the examples"
examples="first_turn tool_use cancel multi_turn image"
for example in $examples; do
    cc -std=c99 -Wall -Wextra -Werror -pedantic -pthread -Iinclude "examples/c/$example.c" \
        -Lzig-out/lib -lpanto -Wl,-rpath,"$root/zig-out/lib" -o "build/examples/${example}_c"
    (cd examples/go && go build -o "$root/build/examples/${example}_go" "./$example")
done

# run_example LANG NAME
run_example() {
    case "$1" in
        c) "build/examples/$2_c" ;;
        python) .venv/bin/python "examples/python/$2.py" ;;
        go) "build/examples/$2_go" ;;
        lua) lua5.4 "examples/lua/$2.lua" ;;
    esac
}
export -f run_example

real_api=false
if [ -n "${ANTHROPIC_API_KEY:-}" ] || [ -n "${OPENAI_API_KEY:-}" ] || [ -n "${PANTO_BASE_URL:-}" ]; then
    real_api=true
    echo "demo: talking to ${PANTO_BASE_URL:-the real API}"
else
    echo "demo: no API key set, so the turns go to the provider emulator"
fi

for example in $examples; do
    echo
    echo "demo: $example"
    for lang in c python go lua; do
        if $real_api; then
            run_example "$lang" "$example"
        else
            # A fresh emulator per run: each one plays its scenario from the start.
            PANTO_SCENARIO="examples/${example/first_turn/demo}-scenario.json" \
                scripts/with-emulator.sh bash -c "run_example $lang $example"
        fi
    done
done

# The `panto` command (docs/cli.md): one turn in print mode, streamed to stdout.
echo
echo "demo: the panto command (panto -p)"
if $real_api; then
    zig-out/bin/panto --no-session ${PANTO_BASE_URL:+--base-url "$PANTO_BASE_URL"} -p "Say hello in one sentence."
else
    scripts/with-emulator.sh bash -c 'ANTHROPIC_BASE_URL=$PANTO_BASE_URL OPENAI_BASE_URL=$PANTO_BASE_URL \
        ANTHROPIC_API_KEY=$PANTO_API_KEY OPENAI_API_KEY=$PANTO_API_KEY \
        zig-out/bin/panto --no-session -p "Say hello in one sentence."'
fi
