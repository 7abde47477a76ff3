#!/usr/bin/env bash
# C, as the README's Install section says: `zig build install --prefix P`, then a program in a
# folder outside the tree built with nothing but pkg-config, linked dynamically and statically;
# neither has an executable stack, and each streams a turn against the emulator with no
# LD_LIBRARY_PATH. The header's version is the library's.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${PANTO_PACKAGING_DIR:-${TMPDIR:-/tmp}/panto-packaging}/c
rm -rf "$work" && mkdir -p "$work/app"
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

(cd "$root" && .venv/bin/python -m ziglang build install --prefix "$work/prefix")
cp "$root/examples/c/first_turn.c" "$root/examples/c/example_config.h" "$work/app/"
cat >"$work/app/version.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include "panto.h"
int main(void) {
    printf("%s %d.%d.%d\n", PANTO_VERSION, PANTO_VERSION_MAJOR, PANTO_VERSION_MINOR, PANTO_VERSION_PATCH);
    return strcmp(PANTO_VERSION, panto_version()) != 0;
}
EOF
cd "$work/app"
export PKG_CONFIG_PATH=$work/prefix/lib/pkgconfig
unset LD_LIBRARY_PATH PANTO_LIBRARY

# Links a program, failing on a linker warning about the stack; then its stack must not be
# executable (GNU_STACK RW, not RWE).
link() {
    local out=$1; shift
    local log; log=$(cc -std=c99 -Wall -Wextra -Werror -pedantic "$@" -o "$out" 2>&1) || { fail "$out did not link: $log"; return 1; }
    case "$log" in *"executable stack"*) fail "$out: the linker says: $log" ;; esac
    local stack; stack=$(readelf -lW "$out" | awk '$1 == "GNU_STACK" {print $7}')
    [ "$stack" = RW ] || fail "$out: GNU_STACK is '$stack', not RW"
}

# Dynamic: the prefix is not a system one, so the program carries its own rpath.
link first_turn_dynamic first_turn.c $(pkg-config --cflags --libs panto) -Wl,-rpath,"$(pkg-config --variable=libdir panto)"
# (Outputs captured before grep -q: under pipefail, grep's early exit would fail the pipe.)
deps=$(ldd first_turn_dynamic)
case "$deps" in *"$work/prefix/lib/libpanto.so"*) ;; *) fail "first_turn_dynamic does not load the prefix's libpanto.so: $deps" ;; esac
# Static: the whole program, libc too, from libpanto.a and what `pkg-config --static` adds.
# (glibc warns that the dlopen libpanto calls in a shared library needs glibc's own libraries at
# run time; a static program never reaches it.)
link first_turn_static -static first_turn.c $(pkg-config --static --cflags --libs panto)
kind=$(file first_turn_static)
case "$kind" in *"statically linked"*) ;; *) fail "first_turn_static is not static: $kind" ;; esac

for program in first_turn_dynamic first_turn_static; do
    out=$("$root/scripts/with-emulator.sh" "./$program" 2>&1) || fail "$program failed: $out"
    case "$out" in *"[c] Hello from panto!"*"(end_turn, 17 tokens out)"*) ;; *) fail "$program printed: $out" ;; esac
done

link version version.c $(pkg-config --cflags --libs panto) -Wl,-rpath,"$(pkg-config --variable=libdir panto)"
want=$("$root/.venv/bin/python" "$root/scripts/version.py" show)
out=$(./version) || fail "panto_version() is not PANTO_VERSION: $out"
[ "$out" = "$want $want" ] || fail "the header says '$out', want '$want $want'"

[ "$failed" = 0 ] || { echo "packaging c: $failed failed"; exit 1; }
echo "packaging c: passed"
