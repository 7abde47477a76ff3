-- The Lua crash driver (tests/crash/README.md): `lua5.4 crash_driver.lua BASE_URL SESSION_DIR
-- SESSION_ID START`.
--
-- Opens (or resumes) the session SESSION_ID in SESSION_DIR and runs turns "turn START",
-- "turn START+1", ... until it is killed, printing `user n` once run() returned (the user
-- message is committed), `assistant n` once the turn's message_end was read (the assistant
-- message is committed) and `done n` after the turn, each line flushed. The harness kills it
-- at random instants and checks that the session holds every message printed. Finds panto.so
-- through LUA_CPATH, then the checkout's zig-out/lib/lua.

local script_dir = (arg and arg[0] or ""):match("^(.*)[/\\]") or "."
package.cpath = package.cpath .. ";" .. script_dir .. "/../../../zig-out/lib/lua/?.so"

local panto = require("panto")

local base_url, dir, id, start = arg[1], arg[2], arg[3], tonumber(arg[4])
if not (base_url and dir and id and math.type(start) == "integer") then
  io.stderr:write("usage: lua5.4 crash_driver.lua BASE_URL SESSION_DIR SESSION_ID START\n")
  os.exit(2)
end

local function say(what, n)
  io.stdout:write(what, " ", n, "\n")
  io.stdout:flush()
end

local agent = assert(panto.Agent{
  provider = "anthropic", model = "claude-test", api_key = "k", base_url = base_url,
  session = { dir = dir, id = id },
})
local n = start
while true do
  local stream <close> = agent:run("turn " .. n)
  say("user", n)
  for ev in stream:events() do
    if ev.kind == "message_end" then say("assistant", n) end
  end
  say("done", n)
  n = n + 1
end
