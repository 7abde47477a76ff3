#!/usr/bin/env bash
# The aarch64 wheel, built on this machine as a release would build it: `pip wheel` with
# PANTO_TARGET=aarch64-linux-gnu.2.17 (Zig cross-compiles libpanto for glibc 2.17 with Debian's
# :arm64 codec archives), checked by check_wheel.py (tag manylinux2014_aarch64, an aarch64 ELF,
# auditwheel: manylinux_2_17 or older). Then the library from inside the wheel drives two C
# examples cross-compiled with `zig cc -target aarch64-linux-gnu.2.17`, run under Debian's
# qemu-user with Debian's arm64 C library: first_turn streams a turn from the emulator, image
# sends pictures through the arm64 codecs.
# Standalone: tests/packaging/aarch64.sh (scripts/setup.sh installs qemu-user and the :arm64
# packages). Exits non-zero on the first failure.
set -euo pipefail
source "$(dirname "$0")/wheel_steps.bash"

arm_libc=/usr/lib/aarch64-linux-gnu
command -v qemu-aarch64 >/dev/null || fail "qemu-aarch64 is missing (Debian: qemu-user; scripts/setup.sh installs it)"
[ -e "$arm_libc/libc.so.6" ] && [ -e /lib/ld-linux-aarch64.so.1 ] ||
    fail "Debian's arm64 C library is missing (dpkg --add-architecture arm64; apt-get install libc6:arm64; scripts/setup.sh does it)"

# With .venv's build requirements (ziglang, setuptools: requirements-dev.txt) and the checkout's
# Zig cache; python.sh builds in pip's isolated environment.
step "wheel (pip wheel, PANTO_TARGET=aarch64)" \
    env PANTO_TARGET=aarch64-linux-gnu.2.17 "$py" -m pip wheel "$root/bindings-py" --no-deps -q \
    --no-build-isolation --disable-pip-version-check -w "$work/wheelhouse"
wheel=$(echo "$work"/wheelhouse/panto-*.whl)
step "check_wheel.py (auditwheel show)" "$py" "$root/tests/packaging/check_wheel.py" "$wheel" aarch64

# The library as the wheel ships it, under the name its SONAME asks for.
"$py" -m zipfile -e "$wheel" "$work/wheel"
lib=$work/wheel/panto/_lib
ln -s libpanto.so "$lib/libpanto.so.0"

cross() {
    for example in "$@"; do
        "$py" -m ziglang cc -target aarch64-linux-gnu.2.17 -std=c99 -Wall -Wextra -Werror \
            -I"$root/include" "$root/examples/c/$example.c" -L"$lib" -lpanto -o "$work/$example" || return
    done
}
step "zig cc first_turn.c image.c (aarch64)" cross first_turn image

# Runs an example under qemu-aarch64 against the emulator playing SCENARIO, its output into
# $work/EXAMPLE.out. -L: the root of the arm64 C library (Debian's multiarch libc6:arm64 lives
# under /); the guest finds libpanto.so.0 in the wheel's folder.
run_arm() {
    PANTO_SCENARIO=$root/examples/$2 "$root/scripts/with-emulator.sh" \
        qemu-aarch64 -L / -E LD_LIBRARY_PATH="$lib:$arm_libc" "$work/$1" >"$work/$1.out"
}
step "first_turn under qemu-aarch64" run_arm first_turn demo-scenario.json
grep -qF "[c] $(demo_text)" "$work/first_turn.out" || fail "first_turn printed: $(cat "$work/first_turn.out")"

step "image under qemu-aarch64 (arm64 codecs)" run_arm image image-scenario.json
# The emulator describes the media that arrived: the example's BMP went as a PNG, and so did
# the tool's 32x32 picture (examples/README.md, as tests/python/test_docs.py checks natively).
for line in "[c] Received 1 attachment: image/png " "  <- image image/png, 32x32, " \
            "Received 1 attachment: image/png 32x32. Both arrived; thank you."; do
    grep -qF -- "$line" "$work/image.out" || fail "image printed (no \"$line\"): $(cat "$work/image.out")"
done
echo "$script: ok: $(basename "$wheel") streams a turn and encodes images under qemu-aarch64"
