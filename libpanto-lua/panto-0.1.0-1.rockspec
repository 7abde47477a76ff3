-- The panto Lua 5.4 module as a rock (docs/lua.md, Install). From the repository root:
--   luarocks --lua-version 5.4 make libpanto-lua/panto-0.1.0-1.rockspec
-- (--lua-version 5.4: Debian's luarocks defaults to Lua 5.1.) It builds panto.so alone
-- (`zig build lua`, ReleaseSafe) with Zig 0.16.0: $ZIG, else `zig` on PATH, else the checkout's
-- .venv, else `python3 -m ziglang` (`pip install ziglang==0.16.0`); in a checkout already
-- built, Zig's cache makes it a matter of seconds.
rockspec_format = "3.0"
package = "panto"
version = "0.1.0-1"

source = {
   -- `luarocks make` builds the folder it runs in; `luarocks install` fetches this tag.
   url = "git+https://github.com/panto-dev/panto.git",
   tag = "v0.1.0",
}

description = {
   summary = "panto, an LLM-agent runtime: pull-shaped streaming turns, tools, Anthropic and OpenAI",
   detailed = [[
A Lua 5.4 C module written in Zig. panto is compiled into it; it uses the lua_* symbols of
the interpreter that loads it and exports only luaopen_panto.
]],
   homepage = "https://panto.dev",
   license = "MIT",
   labels = { "llm", "agent", "anthropic", "openai", "streaming" },
}

dependencies = {
   "lua >= 5.4, < 5.5",
}

build = {
   type = "command",
   build_command = [[
set -e
pinned=0.16.0
works() { [ "`$1 version 2>/dev/null`" = "$pinned" ]; }
if [ -n "${ZIG:-}" ]; then zig=$ZIG
elif works zig; then zig=zig
elif works ".venv/bin/python -m ziglang"; then zig=".venv/bin/python -m ziglang"
elif works "python3 -m ziglang"; then zig="python3 -m ziglang"
else
   echo "panto: building needs Zig $pinned, found neither \`zig\` $pinned on PATH nor the Python package ziglang==$pinned." >&2
   echo "panto: install one (pip install ziglang==$pinned) or set ZIG to a Zig $pinned command, then run luarocks again." >&2
   exit 1
fi
$zig build lua -Doptimize=ReleaseSafe "-Dlua-include=$(LUA_INCDIR)" --prefix "$PWD/build/luarocks"
]],
   install = {
      lib = {
         panto = "build/luarocks/lib/lua/panto.so",
      },
   },
}
