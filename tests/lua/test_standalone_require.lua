-- Standalone lua5.4: require('panto') is the plain module from package.cpath, without
-- panto.ext (only the panto command's preload loader adds it), and luaopen_panto returns a
-- fresh table on every call, never a shared one.
--
--   zig build && lua5.4 tests/lua/test_standalone_require.lua
--
-- Without LUA_CPATH it finds panto.so in the checkout's zig-out/lib/lua.

local script_dir = (arg and arg[0] or ""):match("^(.*)[/\\]") or "."
local repo = script_dir .. "/../.."
package.cpath = package.cpath .. ";" .. repo .. "/zig-out/lib/lua/?.so"

local passed, failed = 0, 0
local function test(name, f)
  local ok, err = pcall(f)
  if ok then passed = passed + 1; print("ok   " .. name)
  else failed = failed + 1; print("FAIL " .. name .. ": " .. tostring(err)) end
end

test("no preload entry: require finds the C module on package.cpath", function()
  assert(package.preload.panto == nil, "a preload entry in standalone lua")
  local path = assert(package.searchpath("panto", package.cpath))
  assert(path:match("%.so$"), path)
end)

test("require('panto') has no ext", function()
  local panto = require("panto")
  assert(type(panto.Agent) == "function")
  assert(panto.ext == nil, "ext in the standalone module")
end)

test("luaopen_panto returns a fresh table on every call", function()
  local path = assert(package.searchpath("panto", package.cpath))
  local open = assert(package.loadlib(path, "luaopen_panto"))
  local a, b = open("panto"), open("panto")
  assert(type(a) == "table" and type(b) == "table")
  assert(a ~= b, "the same table twice")
  assert(a ~= require("panto"), "the table require cached")
  a.added = true
  assert(b.added == nil, "a change to one table is seen in the other")
  assert(a.Agent == b.Agent, "the functions differ") -- the same C functions, in fresh tables
  assert(a.ext == nil and b.ext == nil)
end)

print(("%d passed, %d failed"):format(passed, failed))
os.exit(failed == 0 and 0 or 1)
