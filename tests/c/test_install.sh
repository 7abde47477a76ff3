#!/usr/bin/env bash
# `zig build install --prefix P` gives a usable C package: the shared and static libraries,
# panto.h and a pkg-config file; the header compiles as C99 and as C++; the C example builds
# with nothing but pkg-config and runs against the emulator.
set -euo pipefail
cd "$(dirname "$0")/../.."
prefix=$PWD/build/prefix
rm -rf "$prefix"
.venv/bin/python -m ziglang build install --prefix "$prefix" -Doptimize="${OPTIMIZE:-ReleaseSafe}"
for f in lib/libpanto.so lib/libpanto.a include/panto.h lib/pkgconfig/panto.pc lib/lua/panto.so; do
    [ -e "$prefix/$f" ] || { echo "FAIL: $f was not installed"; exit 1; }
done
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
echo '#include "panto.h"' | g++ -x c++ -std=c++11 -Wall -Wextra -Werror -pedantic -fsyntax-only $(pkg-config --cflags panto) -
echo '#include "panto.h"' | cc -x c -std=c99 -Wall -Wextra -Werror -pedantic -fsyntax-only $(pkg-config --cflags panto) -
cc -std=c99 -Wall -Wextra -Werror -pedantic examples/c/first_turn.c $(pkg-config --cflags --libs panto) -o build/first_turn_pkgconfig
# The static library links too (no libpanto.so needed at run time).
cc -std=c99 examples/c/first_turn.c -I"$prefix/include" "$prefix/lib/libpanto.a" -lpthread -o build/first_turn_static
if ldd build/first_turn_static | grep -q libpanto; then echo "FAIL: the static build loads libpanto.so"; exit 1; fi

log=build/install-emulator.log
PYTHONPATH=bindings-py .venv/bin/python -m panto.emulator --port 0 --scenario examples/demo-scenario.json >"$log" 2>&1 &
emulator=$!
trap 'kill $emulator 2>/dev/null; wait $emulator 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q listening "$log" && break; sleep 0.05; done
export PANTO_BASE_URL=$(head -n1 "$log" | awk '{print $NF}') PANTO_API_KEY=test-key
unset ANTHROPIC_API_KEY OPENAI_API_KEY
for program in build/first_turn_pkgconfig build/first_turn_static; do
    out=$(env -u LD_LIBRARY_PATH "$program")
    case "$out" in *"Hello from panto"*) ;; *) echo "FAIL: $program printed: $out"; exit 1 ;; esac
done
echo "install: 1 passed, 0 failed"
