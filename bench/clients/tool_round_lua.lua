-- The panto Lua client of the tool round (bench/README.md, "Tool round"): ROUNDS turns on one
-- agent, each a message asking for the host tool `wait` three times, whose handler sleeps
-- 200 ms with panto.sleep (which yields: the module runs each handler in a coroutine, so the
-- calls of a round overlap unless MODE is "sequential"), then a text answer.
--
--     lua5.4 tool_round_lua.lua BASE_URL MODE ROUNDS
--
-- Prints {"mode": MODE, "wall_ms": W} per round, W timed with panto.monotonic().
local base_url, mode, rounds = arg[1], arg[2], tonumber(arg[3] or "")
if not base_url or (mode ~= "parallel" and mode ~= "sequential") or not rounds then
  io.stderr:write("usage: lua5.4 tool_round_lua.lua BASE_URL parallel|sequential ROUNDS\n")
  os.exit(1)
end
local panto = require("panto")

local agent, message = panto.Agent{
  provider = "anthropic", model = "bench-model", api_key = "bench-key", base_url = base_url,
  tool_execution = mode,
  tools = { {
    name = "wait", description = "Waits 200 ms.", params = { i = { type = "integer", required = false } },
    handler = function()
      panto.sleep(0.2)
      return "ok"
    end,
  } },
}
if not agent then
  io.stderr:write("tool_round_lua: ", tostring(message), "\n")
  os.exit(1)
end

for r = 1, rounds do
  local start = panto.monotonic()
  local ok, msg = pcall(agent.complete, agent, "round " .. r)
  local wall_ms = (panto.monotonic() - start) * 1000
  if not ok then
    io.stderr:write("tool_round_lua: round ", r, ": ", tostring(msg), "\n")
    os.exit(1)
  end
  if msg.text ~= "done" then
    io.stderr:write("tool_round_lua: round ", r, ": the answer was ", string.format("%q", msg.text), ", not done\n")
    os.exit(1)
  end
  io.stdout:write(string.format('{"mode": "%s", "wall_ms": %.3f}\n', mode, wall_ms))
  io.stdout:flush()
end
agent:close()
