#!/usr/bin/env bash
# The Go module without this checkout: a copy of just the module folder (libpanto-go/, with
# the libpanto.a that `zig build go-lib` put in lib/<goos>_<goarch>/) in a temporary folder,
# and a module there (examples/go's first_turn) that requires panto.dev/panto through a
# `replace` to that copy.
# It builds with the network off, runs a turn against the emulator with the copy deleted, as
# a fully static binary too, from a vendored module, (-tags panto_pkgconfig) against an
# installed libpanto found by pkg-config, and cross-compiled for linux/arm64 under qemu, with
# the module's stepped tests there too.
# docs/go.md shows the same steps.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
export PATH=$PATH:/usr/local/go/bin
optimize=${OPTIMIZE:-ReleaseSafe}
platform=$(go env GOOS)_$(go env GOARCH)

.venv/bin/python -m ziglang build go-lib -Doptimize="$optimize"
# linux/arm64 too (link_linux_arm64.go), for glibc 2.17 as the wheels (the codecs are Debian's
# arm64 archives, and qemu-user runs the program: scripts/setup.sh installs them).
.venv/bin/python -m ziglang build go-lib -Dtarget=aarch64-linux-gnu.2.17 -Doptimize="$optimize"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r libpanto-go "$tmp/panto"
# The examples' module (examples/go/: first_turn and what it imports), its replace pointed at
# the copy.
mkdir "$tmp/app"
cp -r examples/go/first_turn examples/go/internal "$tmp/app/"
sed 's#^replace panto.dev/panto => .*#replace panto.dev/panto => ../panto#' examples/go/go.mod >"$tmp/app/go.mod"
grep -qx 'replace panto.dev/panto => ../panto' "$tmp/app/go.mod" || { echo "FAIL: examples/go/go.mod has no replace to rewrite"; exit 1; }
cd "$tmp/app"

# Nothing from the network, no workspace, no library path of the tree's.
export GOFLAGS=-mod=mod GOPROXY=off GOWORK=off
unset LD_LIBRARY_PATH PANTO_LIBRARY

passed=0
turn() { # command: runs it against the emulator from the temporary folder
    local out
    out=$("$root/scripts/with-emulator.sh" "$@")
    case "$out" in *"[go] Hello from panto"*) ;; *) echo "FAIL: $* printed: $out"; exit 1 ;; esac
}

go build -o app ./first_turn
if ldd app | grep libpanto >/dev/null; then echo "FAIL: the program loads libpanto.so"; exit 1; fi
if readelf -d app | grep -E 'RPATH|RUNPATH' >/dev/null; then echo "FAIL: the program has a run path"; readelf -d app | grep -E 'RPATH|RUNPATH'; exit 1; fi
mv ../panto ../panto.moved # the program needs the module copy no more
turn ./app
mv ../panto.moved ../panto
passed=$((passed + 1))

go build -ldflags '-extldflags -static' -o app-static ./first_turn
ldd app-static >/dev/null 2>&1 && { echo "FAIL: app-static is dynamically linked"; exit 1; }
turn ./app-static
passed=$((passed + 1))

# `go mod vendor` keeps lib/<goos>_<goarch>/ (a package, imported by the link file).
go mod vendor
[ -f "vendor/panto.dev/panto/lib/$platform/libpanto.a" ] || { echo "FAIL: go mod vendor left out lib/$platform/libpanto.a"; exit 1; }
GOFLAGS=-mod=vendor go build -o app-vendored ./first_turn
turn ./app-vendored
rm -rf vendor
passed=$((passed + 1))

# -tags panto_pkgconfig: the installed library, found by pkg-config (the run path is the
# program author's choice: here the prefix's lib folder).
(cd "$root" && .venv/bin/python -m ziglang build install -Dlua=false -Doptimize="$optimize" --prefix "$tmp/prefix")
export PKG_CONFIG_PATH=$tmp/prefix/lib/pkgconfig
CGO_LDFLAGS="-Wl,-rpath,$(pkg-config --variable=libdir panto)" go build -tags panto_pkgconfig -o app-pkgconfig ./first_turn
ldd app-pkgconfig | grep "$tmp/prefix/lib/libpanto.so" >/dev/null || { echo "FAIL: app-pkgconfig does not load the installed libpanto.so"; ldd app-pkgconfig; readelf -d app-pkgconfig | grep -E "RPATH|RUNPATH|NEEDED"; exit 1; }
turn ./app-pkgconfig
passed=$((passed + 1))

# linux/arm64: cross-compiled with zig cc as cgo's compiler and linker, run under qemu.
printf '#!/bin/sh\nexec "%s" -m ziglang cc -target aarch64-linux-gnu.2.17 "$@"\n' "$root/.venv/bin/python" >"$tmp/cc-aarch64"
chmod +x "$tmp/cc-aarch64"
unset PKG_CONFIG_PATH
GOARCH=arm64 CGO_ENABLED=1 CC=$tmp/cc-aarch64 go build -o app-arm64 ./first_turn
readelf -h app-arm64 | grep 'Machine: *AArch64' >/dev/null || { echo "FAIL: app-arm64 is not an aarch64 program"; exit 1; }
turn qemu-aarch64 ./app-arm64
passed=$((passed + 1))

# The module's stepped tests (stepped_test.go: turns parked in the netpoller, canceled, timed
# out, under signals and GC) for linux/arm64 under qemu: the fiber's aarch64 context switch,
# which goroutines resume on any thread (docs/design/native-async.md). From the module's
# folder, where TestMain finds the emulator (../.venv).
(cd "$root/libpanto-go" && GOARCH=arm64 CGO_ENABLED=1 CC=$tmp/cc-aarch64 go test -c -o "$tmp/panto-arm64.test" .)
(cd "$root/libpanto-go" && qemu-aarch64 -L / "$tmp/panto-arm64.test" -test.run 'Stepped|Stepping|ManyTurnsWait|AgentAnswersWhile') ||
    { echo "FAIL: the stepped Go tests under qemu-aarch64"; exit 1; }
passed=$((passed + 1))

echo "go packaging: $passed passed, 0 failed"
