-- The panto Lua consumer of `make bench`: streams one turn and counts the content_delta
-- events, summing their text length. With STREAMS > 1 it opens that many streams (one agent
-- each) and reads them round-robin, one event at a time, from the one Lua thread.
--
--     lua5.4 panto_lua.lua PROVIDER BASE_URL [STREAMS]
--
-- It speaks the harness protocol on stdout (bench/README.md); os.clock() is the process CPU.
local provider, base_url, streams = arg[1], arg[2], tonumber(arg[3] or "1")
local panto = require("panto")
local models = {openai = "gpt-4o-mini", ["openai-responses"] = "gpt-4o-mini", gemini = "gemini-2.5-flash",
                bedrock = "anthropic.claude-sonnet-4-5-20250929-v1:0"}
local model = models[provider] or "claude-sonnet-4-6"
-- Bedrock signs (SigV4) with the AWS_* keys the harness puts in the environment: no api_key.
local api_key = provider ~= "bedrock" and "bench" or nil
local out = io.stdout

local agents = {}
for i = 1, streams do
  agents[i] = assert(panto.Agent{provider = provider, model = model, base_url = base_url,
                                 api_key = api_key, max_tokens = 1024})
end

out:write(string.format("READY %.6f\n", os.clock())); out:flush()
local events, bytes = 0, 0
if streams == 1 then
  for ev in agents[1]:run("Hello"):events() do
    if ev.kind == "content_delta" then
      if events == 0 then out:write("FIRST\n"); out:flush() end
      events = events + 1
      bytes = bytes + #ev.text
    end
  end
else
  local open = {}
  for i = 1, streams do open[i] = agents[i]:run("Hello") end
  while #open > 0 do
    local i = 1
    while i <= #open do
      local ev = open[i]:next()
      if ev == nil then
        table.remove(open, i)
      else
        if ev.kind == "content_delta" then
          if events == 0 then out:write("FIRST\n"); out:flush() end
          events = events + 1
          bytes = bytes + #ev.text
        end
        i = i + 1
      end
    end
  end
end
out:write(string.format("END %d %d %.6f\n", events, bytes, os.clock())); out:flush()
for i = 1, streams do agents[i]:close() end
