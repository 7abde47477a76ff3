#!/usr/bin/env bash
# Installs what building and testing panto needs, idempotently: a venv at .venv with the pinned
# Zig and the test tools, Debian's Lua 5.4, luarocks and image codecs when missing, the reference
# MCP server from npm, and a check that Go >= 1.24 exists.
# A second run only checks, and takes well under a second.
set -euo pipefail
cd "$(dirname "$0")/.."

stamp=.venv/.setup-done
if [ ! -f "$stamp" ] || [ requirements-dev.txt -nt "$stamp" ]; then
    echo "setup: installing the pinned Zig and the test tools into .venv (requirements-dev.txt)"
    command -v python3 >/dev/null || { echo "setup: python3 is missing: install Python 3.9 or later" >&2; exit 1; }
    [ -x .venv/bin/python ] || python3 -m venv .venv
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
    touch "$stamp"
fi

# The model catalog's pinned source (scripts/gen_catalog.py), so that tests/python/test_catalog.py
# checks the checked-in data against it rather than skipping: litellm's wheel, read as a zip
# (nothing of it runs), its sha256 checked.
# Fetched once; later runs only check the sha256 (about 0.1 s).
.venv/bin/python scripts/gen_catalog.py --fetch >/dev/null

if ! command -v lua5.4 >/dev/null || [ ! -f /usr/include/lua5.4/lua.h ]; then
    echo "setup: installing Debian's lua5.4 and liblua5.4-dev"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq lua5.4 liblua5.4-dev >/dev/null
fi

# The media pipeline's codecs, linked statically into libpanto (build.zig: addMediaCodecs).
codec_dir=/usr/lib/$(uname -m)-linux-gnu
missing_codecs=0
for lib in png16 jpeg webp webpdemux gif stb z; do
    [ -f "$codec_dir/lib$lib.a" ] || missing_codecs=1
done
if [ "$missing_codecs" = 1 ]; then
    echo "setup: installing Debian's image codecs (libpng, libjpeg-turbo, libwebp, giflib, stb, zlib)"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq libpng-dev libjpeg-dev libwebp-dev libgif-dev libstb-dev zlib1g-dev >/dev/null
fi

# apt-get install, as root or through sudo, after an update (the blocks above could use it too).
apt_install() {
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

# The aarch64 wheel (bindings-py/setup.py, PANTO_TARGET=aarch64-linux-gnu.2.17) and its test
# (tests/packaging/aarch64.sh): Debian's arm64 codec archives and C library, and qemu-user.
arm64_codecs=(/usr/lib/aarch64-linux-gnu/lib{png16,jpeg,webp,webpdemux,gif,stb,z}.a)
if [ "$(uname -m)" = x86_64 ] && ! { command -v qemu-aarch64 && ls "${arm64_codecs[@]}"; } >/dev/null 2>&1; then
    echo "setup: installing qemu-user and Debian's arm64 image codecs (dpkg --add-architecture arm64)"
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
        if [ "$(id -u)" -eq 0 ]; then dpkg --add-architecture arm64; else sudo dpkg --add-architecture arm64; fi
    fi
    apt_install qemu-user libc6:arm64 libpng-dev:arm64 libjpeg-dev:arm64 libwebp-dev:arm64 libgif-dev:arm64 \
        libstb-dev:arm64 zlib1g-dev:arm64
fi

# The Lua rock's install test (tests/packaging/lua.sh) and `luarocks lint` (tests/lua/test_rockspec.lua).
if ! command -v luarocks >/dev/null; then
    echo "setup: installing Debian's luarocks"
    apt_install luarocks
fi

# The reference MCP server the MCP tests run over stdio and Streamable HTTP (npm
# @modelcontextprotocol/server-everything, pinned with its dependencies by
# tests/mcp/package-lock.json), into tests/mcp/node_modules.
mcp_stamp=tests/mcp/node_modules/.setup-done
if [ ! -f "$mcp_stamp" ] || [ tests/mcp/package-lock.json -nt "$mcp_stamp" ]; then
    command -v npm >/dev/null || { echo "setup: npm is missing: install Node.js 20 or later (the MCP tests run a reference server)" >&2; exit 1; }
    echo "setup: installing the reference MCP server into tests/mcp/node_modules (tests/mcp/package-lock.json)"
    npm ci --prefix tests/mcp --no-audit --no-fund --silent
    touch "$mcp_stamp"
fi

if ! command -v go >/dev/null; then
    echo "setup: Go is missing: install Go 1.24 or later (https://go.dev/dl/) and put it on PATH" >&2
    exit 1
fi
go_version=$(go env GOVERSION | sed 's/^go//')
if [ "$(printf '%s\n1.24\n' "$go_version" | sort -V | head -n1)" != "1.24" ]; then
    echo "setup: Go $go_version is too old: panto's Go binding needs Go 1.24 or later (range-over-func iterators, runtime.AddCleanup)" >&2
    exit 1
fi

