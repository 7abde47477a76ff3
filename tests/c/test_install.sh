#!/usr/bin/env bash
# `zig build install --prefix P` gives a usable C package: the shared and static libraries,
# panto.h and a pkg-config file; the header compiles as C99 and as C++; the C example builds
# with nothing but pkg-config and runs against the emulator. And libpanto works as a Zig
# dependency (tests/zig-consumer).
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
# The static library links too (no libpanto.so needed at run time), with what pkg-config
# --static says it needs beside itself (libm and libpthread, for the image codecs inside it).
static_deps=$(pkg-config --libs-only-l --static panto | sed 's/-lpanto//')
cc -std=c99 examples/c/first_turn.c -I"$prefix/include" "$prefix/lib/libpanto.a" $static_deps -o build/first_turn_static
if ldd build/first_turn_static | grep -q libpanto; then echo "FAIL: the static build loads libpanto.so"; exit 1; fi

for program in build/first_turn_pkgconfig build/first_turn_static; do
    out=$(env -u LD_LIBRARY_PATH scripts/with-emulator.sh "$program")
    case "$out" in *"Hello from panto"*) ;; *) echo "FAIL: $program printed: $out"; exit 1 ;; esac
done
out=$(cd tests/zig-consumer && ../../scripts/with-emulator.sh sh -c '../../.venv/bin/python -m ziglang build run -- "$PANTO_BASE_URL"')
case "$out" in *"[zig] Hello from panto"*) ;; *) echo "FAIL: the Zig consumer printed: $out"; exit 1 ;; esac
echo "install: 2 passed, 0 failed"
