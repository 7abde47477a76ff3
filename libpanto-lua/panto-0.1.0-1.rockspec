-- The panto Lua 5.4 module as a rock. From the repository root:
--   luarocks --lua-version 5.4 make libpanto-lua/panto-0.1.0-1.rockspec
-- builds zig-out's panto.so with the pinned Zig (0.16.0: $ZIG, else the repository's
-- .venv/bin/python -m ziglang, else python3 -m ziglang; `pip install ziglang==0.16.0`) and
-- installs it into the tree's Lua cpath, so `require("panto")` finds it.
rockspec_format = "3.0"
package = "panto"
version = "0.1.0-1"

source = {
   -- PLACEHOLDER URL (the project has no public home yet). `luarocks make` builds the
   -- checkout it is run in (build.zig at its root) and does not fetch this URL.
   url = "git+https://github.com/panto-dev/panto.git",
   tag = "v0.1.0",
}

description = {
   summary = "panto, an LLM-agent runtime: pull-shaped streaming turns, tools, Anthropic and OpenAI",
   detailed = [[
A Lua 5.4 C module written in Zig. panto is compiled into it; it uses the lua_* symbols of
the interpreter that loads it and exports only luaopen_panto.
]],
   homepage = "https://github.com/panto-dev/panto", -- PLACEHOLDER, as source.url
   license = "TBD", -- PLACEHOLDER: the repository has no LICENSE file yet
   labels = { "llm", "agent", "anthropic", "openai", "streaming" },
}

dependencies = {
   "lua >= 5.4, < 5.5",
}

build = {
   type = "command",
   build_command = [[
set -e
if [ -n "$ZIG" ]; then zig="$ZIG"
elif [ -x .venv/bin/python ]; then zig=".venv/bin/python -m ziglang"
else zig="python3 -m ziglang"; fi
if ! $zig version >/dev/null 2>&1; then
   echo "panto: Zig 0.16.0 is needed: pip install ziglang==0.16.0 (or set ZIG)" >&2; exit 1
fi
$zig build -Doptimize=ReleaseSafe "-Dlua-include=$(LUA_INCDIR)" --prefix "$PWD/build/luarocks"
]],
   install = {
      lib = {
         panto = "build/luarocks/lib/lua/panto.so",
      },
   },
}
