#!/usr/bin/env bash
# The Lua rock: `luarocks --lua-version 5.4 make` (Debian's luarocks, scripts/setup.sh) installs
# libpanto-lua's rockspec into a temporary tree, and examples/lua/first_turn.lua, copied to
# another folder, runs a turn against the emulator with the module from that tree. Prints how
# long the install took. docs/lua.md shows the same steps.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rockspec=$(ls libpanto-lua/*.rockspec)

start=$SECONDS
luarocks --lua-version 5.4 --tree "$tmp/tree" make "$rockspec" >"$tmp/luarocks.log" 2>&1 ||
    { cat "$tmp/luarocks.log"; echo "FAIL: luarocks make"; exit 1; }
seconds=$((SECONDS - start))
luarocks --lua-version 5.4 --tree "$tmp/tree" list --porcelain | grep '^panto	' >/dev/null ||
    { echo "FAIL: panto is not in the tree's list"; exit 1; }

# From another folder, with only the tree's paths (none of make's, none of the checkout's).
mkdir "$tmp/elsewhere"
cp examples/lua/first_turn.lua "$tmp/elsewhere/"
cd "$tmp/elsewhere"
unset LUA_PATH LUA_CPATH LUA_PATH_5_4 LUA_CPATH_5_4 LD_LIBRARY_PATH PANTO_LIBRARY
eval "$(luarocks --lua-version 5.4 --tree "$tmp/tree" path)"
found=$(lua5.4 -e 'print(package.searchpath("panto", package.cpath))')
case "$found" in "$tmp/tree/"*) ;; *) echo "FAIL: require('panto') would load $found"; exit 1 ;; esac
out=$("$root/scripts/with-emulator.sh" lua5.4 first_turn.lua)
case "$out" in *"[lua] Hello from panto"*) ;; *) echo "FAIL: first_turn.lua printed: $out"; exit 1 ;; esac

echo "lua packaging: 1 passed, 0 failed (luarocks make: ${seconds}s)"
