#!/usr/bin/env bash
# The Python package as it is published and installed (README, "Install: Python"): the sdist
# (`python -m build --sdist bindings-py`: the package and the Zig sources), unpacked in a folder
# outside the tree and built into a wheel there (`pip wheel`: Zig 0.16.0 from the ziglang wheel,
# libpanto for x86_64-linux-gnu.2.17); check_wheel.py (tag manylinux2014_x86_64, auditwheel:
# manylinux_2_17 or older); the wheel installed into a fresh venv in another folder, where
# examples/python/first_turn.py streams a turn from the emulator, loading the library from the
# installed package.
# Standalone: tests/packaging/python.sh. Exits non-zero on the first failure.
# The sdist is unpacked at a fixed place, $scratch/panto-sdist-build (one run at a time), and
# builds with the Zig cache build/sdist-zig-cache: Zig's cache keys hold the sources' paths, so
# a second run hits it. PANTO_SDIST_COLD=1 builds with an empty cache, as a user's first install.
set -euo pipefail
source "$(dirname "$0")/wheel_steps.bash"
arch=$(uname -m)
case "$arch" in x86_64|aarch64) ;; *) fail "no manylinux2014 wheel for $arch" ;; esac

# (No isolated environment: making an sdist needs setuptools, not Zig; the wheel's build below
# is isolated, as a user's.)
step "sdist (python -m build --sdist)" "$py" -m build --sdist --no-isolation --outdir "$work/dist" "$root/bindings-py" -q
sdist=$(echo "$work"/dist/panto-*.tar.gz)
tar -tzf "$sdist" >"$work/sdist.txt"
for member in zig-src/build.zig zig-src/build.zig.zon zig-src/include/panto.h zig-src/libpanto/src/panto.zig \
              zig-src/libpanto-c/src/root.zig panto/__init__.py panto/emulator/server.py panto/emulator/README.md setup.py; do
    grep -q "^panto-[^/]*/$member\$" "$work/sdist.txt" || fail "$member is not in $(basename "$sdist")"
done
! grep -q "/_lib/\|\.zig-cache\|zig-out" "$work/sdist.txt" || fail "$(basename "$sdist") carries build outputs"

# Built where no checkout is near: the sdist's own folder, outside the tree.
unpacked=$scratch/panto-sdist-build
rm -rf "$unpacked" && mkdir -p "$unpacked"
trap 'rm -rf "$work" "$unpacked"' EXIT
tar -xzf "$sdist" -C "$unpacked"
src=$(echo "$unpacked"/panto-*)
cache=$root/build/sdist-zig-cache
[ "${PANTO_SDIST_COLD:-0}" = 1 ] && cache=$work/zig-cache
build_wheel() {
    cd "$work" && ZIG_LOCAL_CACHE_DIR=$cache "$py" -m pip wheel "$src" --no-deps -q --disable-pip-version-check -w "$work/wheelhouse"
}
step "wheel from the sdist (pip wheel, isolated)" build_wheel
wheel=$(echo "$work"/wheelhouse/panto-*.whl)
step "check_wheel.py (auditwheel show)" "$py" "$root/tests/packaging/check_wheel.py" "$wheel" "$arch"

# A fresh venv from the base interpreter (not the project's .venv), the wheel alone.
base_python=$("$py" -c 'import sys; print(getattr(sys, "_base_executable", sys.executable))')
step "fresh venv" "$base_python" -m venv "$work/venv"
step "pip install the wheel" "$work/venv/bin/python" -m pip install -q --no-index --no-deps \
    --disable-pip-version-check "$wheel"

mkdir "$work/app"
cp "$root/examples/python/first_turn.py" "$work/app/"
turn() {
    cd "$work/app" && "$root/scripts/with-emulator.sh" "$work/venv/bin/python" first_turn.py >"$work/turn.out"
}
step "first_turn.py in the venv (emulator)" turn
grep -qF "[python] $(demo_text)" "$work/turn.out" || fail "first_turn.py printed: $(cat "$work/turn.out")"
loaded=$(cd "$work/app" && "$work/venv/bin/python" -c 'import panto; print(panto.library_path())')
case "$loaded" in "$work/venv/"*/panto/_lib/libpanto.so) ;; *) fail "the package loaded $loaded, not its own library" ;; esac

# requires-python says >=3.9: the wheel also runs a turn on the oldest Python it admits and on
# the newest one here (pyenv's, or python3.X on PATH), when the machine has them.
pythons() {
    local p
    for p in $(pyenv root 2>/dev/null)/versions/*/bin/python3 $(compgen -c | grep -E '^python3\.[0-9]+$' | sort -u); do
        "$p" -c 'import sys; sys.exit(sys.version_info < (3, 9))' >/dev/null 2>&1 &&
            "$p" -c 'import sys; print("%d %d %s" % (sys.version_info[:2] + (sys.executable,)))'
    done | sort -t ' ' -k1,1n -k2,2n -u | awk 'NR == 1 { first = $0 } { last = $0 } END { if (first) print first; if (last != first) print last }'
}
other_python_turn() {
    local python=$1 env=$work/venv-$2
    "$python" -m venv "$env" && "$env/bin/python" -m pip install -q --no-index --no-deps \
        --disable-pip-version-check "$wheel" &&
        (cd "$work/app" && "$root/scripts/with-emulator.sh" "$env/bin/python" first_turn.py >"$work/turn-$2.out") &&
        grep -qF "[python] $(demo_text)" "$work/turn-$2.out"
}
found=$(pythons) || true  # (no such Python: an empty list)
[ -n "$found" ] || echo "$script: no other Python 3.9+ here: the wheel ran on $("$base_python" -V) only"
while read -r major minor python; do
    [ -n "$python" ] || continue
    if [ "$major.$minor" = 3.9 ] || [ "$python" != "$base_python" ]; then
        step "first_turn.py on Python $major.$minor" other_python_turn "$python" "$major.$minor"
    fi
done <<<"$found"
echo "$script: ok: $(basename "$wheel") from $(basename "$sdist") streams a turn from a fresh venv"
