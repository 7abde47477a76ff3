-- Checks libpanto-lua/panto-*.rockspec without LuaRocks: it loads as a rockspec (plain Lua
-- assignments, no globals used), has the fields `luarocks lint` wants and real license,
-- homepage and source values, builds the Lua module alone with the pinned Zig and installs
-- panto.so as the module `panto`; its version is build.zig.zon's. Its build command finds
-- Zig as docs/lua.md says (run here with fake `zig` and `python3` commands), or fails with a
-- message naming what to install. When `luarocks` is on PATH, `luarocks lint` runs too.
-- (tests/packaging/lua.sh installs the rock with luarocks and runs a turn.)
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

local source = type(spec.source) == "table" and spec.source or {}
check("source.url is a git URL", type(source.url) == "string" and source.url:match("^git%+https://") ~= nil, source.url)
check("source.tag is v<version>", source.tag == "v" .. tostring(zon_version), source.tag)
local desc = spec.description or {}
check("description.summary", type(desc.summary) == "string" and #desc.summary > 0 and #desc.summary < 100)
local license = read(root .. "/LICENSE")
check("description.license is the LICENSE file's (MIT)", desc.license == "MIT" and license:match("^MIT License") ~= nil,
  desc.license)
check("description.homepage", type(desc.homepage) == "string" and desc.homepage:match("^https://") ~= nil, desc.homepage)
check("no placeholder left", not read(path):find("PLACEHOLDER", 1, true) and not read(path):find("TBD", 1, true))

local lua_dep = false
for _, dep in ipairs(spec.dependencies or {}) do
  if dep:match("^lua%s*>=%s*5%.4") then lua_dep = true end
end
check("depends on lua >= 5.4", lua_dep)

local build = spec.build or {}
check("build.type command", build.type == "command", build.type)
local cmd = type(build.build_command) == "string" and build.build_command or ""
local required_zig = read(root .. "/build.zig"):match('required_zig = "([^"]+)"')
check("pins build.zig's Zig", required_zig ~= nil and cmd:find("pinned=" .. required_zig .. "\n", 1, true) ~= nil,
  tostring(required_zig))
check("builds the Lua module alone, ReleaseSafe", cmd:find(" build lua -Doptimize=ReleaseSafe ", 1, true) ~= nil)
check("passes LuaRocks' Lua headers", cmd:find("-Dlua-include=$(LUA_INCDIR)", 1, true) ~= nil)
-- LuaRocks substitutes $(NAME); any other $( would be a shell command substitution it mangles.
for var in cmd:gmatch("%$%(([^)]*)%)") do
  check("only LuaRocks variables in build_command: $(" .. var .. ")", var:match("^[%u_]+$") ~= nil)
end
local prefix = cmd:match('%-%-prefix%s+"?%$PWD/([^"%s]+)')
check("installs into a --prefix under the source folder", prefix ~= nil, cmd)
local lib = ((build.install or {}).lib or {}).panto
check("install.lib.panto is the built module", prefix ~= nil and lib == prefix .. "/lib/lua/panto.so", tostring(lib))

-- The build command as LuaRocks runs it (sh, in the source folder, $(VAR) substituted), with
-- PATH holding only the given fake commands: each prints `version` as given and logs its
-- other calls. Returns the exit status, the output and the logged calls.
local tmp = os.tmpname()
os.remove(tmp)
assert(os.execute('mkdir -p "' .. tmp .. '/bin"'))
local function write(file, text)
  local f = assert(io.open(file, "wb"))
  f:write(text)
  f:close()
end
local function run_build(fakes)
  os.execute('rm -f "' .. tmp .. '"/bin/* "' .. tmp .. '/calls"')
  for name, version in pairs(fakes) do
    local prefix = name == "python3" and "-m ziglang " or ""
    write(tmp .. "/bin/" .. name, "#!/bin/sh\n" ..
      'if [ "$*" = "' .. prefix .. 'version" ]; then echo ' .. version .. '; exit 0; fi\n' ..
      'echo "' .. name .. ' $*" >>"' .. tmp .. '/calls"\n')
    assert(os.execute('chmod +x "' .. tmp .. "/bin/" .. name .. '"'))
  end
  write(tmp .. "/build.sh", (cmd:gsub("%$%(LUA_INCDIR%)", "/lua/include")))
  local p = assert(io.popen('cd "' .. tmp .. '" && env -i PATH="' .. tmp .. '/bin" /bin/sh build.sh 2>&1; echo "exit $?"'))
  local out = p:read("a")
  p:close()
  local status = tonumber(out:match("exit (%d+)%s*$"))
  local f = io.open(tmp .. "/calls", "rb")
  local calls = f and f:read("a") or ""
  if f then f:close() end
  return status, out, calls
end
local build_args = " build lua -Doptimize=ReleaseSafe -Dlua-include=/lua/include --prefix " .. tmp .. "/build/luarocks\n"
if required_zig then
  local status, out, calls = run_build({ zig = required_zig, python3 = required_zig })
  check("finds `zig` on PATH first", status == 0 and calls == "zig" .. build_args, out .. calls)
  status, out, calls = run_build({ zig = "0.15.1", python3 = required_zig })
  check("else `python3 -m ziglang` (a zig of another version is passed over)",
    status == 0 and calls == "python3 -m ziglang" .. build_args, out .. calls)
  status, out, calls = run_build({ zig = "0.15.1", python3 = "0.15.1" })
  check("else fails, saying what to install", status == 1 and calls == ""
    and out:find("ziglang==" .. required_zig, 1, true) ~= nil, out .. calls)
end
os.execute('rm -rf "' .. tmp .. '"')

if os.execute("command -v luarocks >/dev/null 2>&1") then
  local ok = os.execute('luarocks lint "' .. path .. '" >/dev/null 2>&1')
  check("luarocks lint", ok)
end

print(string.format("%d passed, %d failed", passed, failed))
os.exit(failed == 0 and 0 or 1)
