-- The panto Lua consumer of the latency benchmark (bench/latency.py): one agent, one tool turn
-- (its `ping` tool has a handler, so the module runs the tool loop), then TURNS plain turns.
--
--     lua5.4 panto_lua_turns.lua PROVIDER BASE_URL TURNS
--
-- It prints the latency protocol of bench/clients/turnsproto.py, with `-` for the seconds:
-- Lua has no wall clock finer than a second (os.clock() is CPU time), so the harness times
-- each turn from the arrival of the line before it to the arrival of its own.
local provider, base_url, turns = arg[1], arg[2], tonumber(arg[3])
local panto = require("panto")
local model = provider == "openai" and "gpt-4o-mini" or "claude-sonnet-4-6"
local out = io.stdout

local calls = 0
local ping = {
  name = "ping",
  description = "Answers pong.",
  schema = '{"type":"object","properties":{"round":{"type":"integer"}}}',
  handler = function() calls = calls + 1; return "pong" end,
}
local agent = assert(panto.Agent{provider = provider, model = model, base_url = base_url,
                                 api_key = "bench", max_tokens = 1024, tools = {ping}})

local function turn(prompt)
  local bytes = 0
  for ev in agent:run(prompt):events() do
    if ev.kind == "content_delta" and ev.block_kind == "text" then bytes = bytes + #ev.text end
  end
  return bytes
end

out:write(string.format("READY %.6f\n", os.clock())); out:flush()
calls = 0
local bytes = turn("Call ping until you are done (tool rounds: 3).")
out:write(string.format("TOOL - %d %d\n", calls, bytes)); out:flush()
for _ = 1, turns do
  bytes = turn("Hello")
  out:write(string.format("TURN - %d\n", bytes)); out:flush()
end
out:write(string.format("END %.6f\n", os.clock())); out:flush()
agent:close()
