#!/usr/bin/env bash
# `zig build install --prefix P` gives a usable C package: the shared and static libraries,
# panto.h and a pkg-config file; with no -Doptimize it builds ReleaseSafe; the header compiles
# as C99 and as C++; panto.pc states the version and the flags. (tests/packaging/c.sh builds
# and runs programs against such a prefix, outside the tree.)
set -euo pipefail
cd "$(dirname "$0")/../.."
zig=(.venv/bin/python -m ziglang)
optimize=${OPTIMIZE:-ReleaseSafe}
prefix=$PWD/build/prefix
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
rm -rf "$prefix" "$prefix.explicit"

if [ "$optimize" = ReleaseSafe ]; then
    # The default: what an install without -Doptimize builds is what -Doptimize=ReleaseSafe builds.
    "${zig[@]}" build install --prefix "$prefix"
    "${zig[@]}" build install --prefix "$prefix.explicit" -Doptimize=ReleaseSafe -Dlua=false
    for f in lib/libpanto.a lib/libpanto.so; do
        cmp -s "$prefix/$f" "$prefix.explicit/$f" || fail "$f without -Doptimize is not the ReleaseSafe build"
    done
    rm -rf "$prefix.explicit"
else
    "${zig[@]}" build install --prefix "$prefix" -Doptimize="$optimize"
fi

for f in lib/libpanto.so lib/libpanto.a include/panto.h lib/pkgconfig/panto.pc lib/lua/panto.so; do
    [ -e "$prefix/$f" ] || fail "$f was not installed"
done

export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
version=$(.venv/bin/python scripts/version.py show)
[ "$(pkg-config --modversion panto)" = "$version" ] || fail "panto.pc's version is $(pkg-config --modversion panto), not $version"
[ "$(pkg-config --variable=libdir panto)" = "$prefix/lib" ] || fail "panto.pc's libdir is $(pkg-config --variable=libdir panto)"
libs=$(echo $(pkg-config --libs panto))  # without the trailing space
[ "$libs" = "-L$prefix/lib -lpanto" ] || fail "pkg-config --libs gives '$libs'"
case "$libs" in *rpath*) fail "panto.pc's Libs carry an rpath: $libs" ;; esac
static=$(echo $(pkg-config --static --libs panto))
[ "$static" = "-L$prefix/lib -lpanto -lm -lpthread" ] || fail "pkg-config --static --libs gives '$static'"

echo '#include "panto.h"' | g++ -x c++ -std=c++11 -Wall -Wextra -Werror -pedantic -fsyntax-only $(pkg-config --cflags panto) - || fail "panto.h as C++11"
echo '#include "panto.h"' | cc -x c -std=c99 -Wall -Wextra -Werror -pedantic -fsyntax-only $(pkg-config --cflags panto) - || fail "panto.h as C99"

[ "$failed" = 0 ] || { echo "install: $failed failed"; exit 1; }
echo "install: passed"
