#!/usr/bin/env bash
# make demo: one streamed turn from C, Python, Go and Lua. Without ANTHROPIC_API_KEY or
# OPENAI_API_KEY the turns go to the provider emulator (started here, stopped on exit);
# with one of them they go to the real API.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PANTO_LIBRARY=$root/zig-out/lib/libpanto.so
export LD_LIBRARY_PATH=$root/zig-out/lib
export LUA_CPATH="$root/zig-out/lib/lua/?.so;;"
export PYTHONPATH=$root/bindings-py
mkdir -p build/examples

echo "demo: building the examples"
cc -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude examples/c/first_turn.c \
    -Lzig-out/lib -lpanto -Wl,-rpath,"$root/zig-out/lib" -o build/examples/first_turn_c
(cd examples/go && go build -o "$root/build/examples/first_turn_go" ./first_turn)

run_examples() {
    build/examples/first_turn_c
    .venv/bin/python examples/python/first_turn.py
    build/examples/first_turn_go
    lua5.4 examples/lua/first_turn.lua
}

if [ -z "${ANTHROPIC_API_KEY:-}" ] && [ -z "${OPENAI_API_KEY:-}" ] && [ -z "${PANTO_BASE_URL:-}" ]; then
    echo "demo: no API key set, so the turns go to the provider emulator"
    echo
    export -f run_examples
    scripts/with-emulator.sh bash -c run_examples
else
    echo "demo: talking to the real API"
    echo
    run_examples
fi
