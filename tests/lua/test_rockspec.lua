-- Checks libpanto-lua/panto-*.rockspec without LuaRocks: it loads as a rockspec (plain Lua
-- assignments, no globals used), has the fields `luarocks lint` wants, builds with the pinned
-- Zig and installs panto.so as the module `panto`; its version is build.zig.zon's. When
-- `luarocks` is on PATH, `luarocks lint` runs too.
--
--   lua5.4 tests/lua/test_rockspec.lua
--
-- Prints `N passed, N failed`; exits non-zero when a check failed.

local script_dir = (arg and arg[0] or ""):match("^(.*)[/\\]") or "."
local root = script_dir .. "/../.."

local passed, failed = 0, 0
local function check(name, cond, detail)
  if cond then
    passed = passed + 1
  else
    failed = failed + 1
    print("FAIL " .. name .. (detail and (": " .. tostring(detail)) or ""))
  end
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- The one rockspec.
local ls = assert(io.popen('ls "' .. root .. '/libpanto-lua/"'))
local rockspecs = {}
for name in ls:lines() do
  if name:match("%.rockspec$") then rockspecs[#rockspecs + 1] = name end
end
ls:close()
check("one rockspec in libpanto-lua/", #rockspecs == 1, table.concat(rockspecs, ", "))
local file = rockspecs[1] or "panto-0.1.0-1.rockspec"
local path = root .. "/libpanto-lua/" .. file

-- Loaded as LuaRocks does: text only, in an empty environment.
local spec = {}
local chunk, err = loadfile(path, "t", spec)
check("parses as Lua", chunk ~= nil, err)
if chunk then
  local ok, run_err = pcall(chunk)
  check("runs in an empty environment", ok, run_err)
end

check("rockspec_format 3.0", spec.rockspec_format == "3.0", spec.rockspec_format)
check("package panto", spec.package == "panto", spec.package)
local version = type(spec.version) == "string" and spec.version or ""
check("version is VERSION-REVISION", version:match("^[%w.]+%-%d+$") ~= nil, version)
check("file name is package-version.rockspec", file == ("panto-" .. version .. ".rockspec"), file)
local zon_version = read(root .. "/build.zig.zon"):match('%.version%s*=%s*"([^"]+)"')
check("version matches build.zig.zon", zon_version ~= nil and version:match("^(.-)%-%d+$") == zon_version,
  tostring(zon_version) .. " vs " .. version)

check("source.url", type(spec.source) == "table" and type(spec.source.url) == "string" and spec.source.url ~= "")
local desc = spec.description or {}
check("description.summary", type(desc.summary) == "string" and #desc.summary > 0 and #desc.summary < 100)
check("description.license", type(desc.license) == "string" and desc.license ~= "")

local lua_dep = false
for _, dep in ipairs(spec.dependencies or {}) do
  if dep:match("^lua%s*>=%s*5%.4") then lua_dep = true end
end
check("depends on lua >= 5.4", lua_dep)

local build = spec.build or {}
check("build.type command", build.type == "command", build.type)
local cmd = type(build.build_command) == "string" and build.build_command or ""
check("builds with the pinned Zig (python -m ziglang build)", cmd:find("-m ziglang", 1, true) ~= nil
  and cmd:find(" build ", 1, true) ~= nil)
check("passes LuaRocks' Lua headers", cmd:find("-Dlua-include=$(LUA_INCDIR)", 1, true) ~= nil)
-- LuaRocks substitutes $(NAME); any other $( would be a shell command substitution it mangles.
for var in cmd:gmatch("%$%(([^)]*)%)") do
  check("only LuaRocks variables in build_command: $(" .. var .. ")", var:match("^[%u_]+$") ~= nil)
end
local prefix = cmd:match('%-%-prefix%s+"?%$PWD/([^"%s]+)')
check("installs into a --prefix under the source folder", prefix ~= nil, cmd)
local lib = ((build.install or {}).lib or {}).panto
check("install.lib.panto is the built module", prefix ~= nil and lib == prefix .. "/lib/lua/panto.so", tostring(lib))

if os.execute("command -v luarocks >/dev/null 2>&1") then
  local ok = os.execute('luarocks lint "' .. path .. '" >/dev/null 2>&1')
  check("luarocks lint", ok)
end

print(string.format("%d passed, %d failed", passed, failed))
os.exit(failed == 0 and 0 or 1)
