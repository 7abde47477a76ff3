-- Canceling a turn from Lua: after the first text arrives, stream:cancel_after(100) arms a
-- native timer that cancels the turn 100 ms later, even while next() waits for the provider.
-- The partial answer stays in the conversation, marked aborted, and the next turn works.
-- See examples/README.md.
local panto = require("panto")

local function env(name) local v = os.getenv(name); if v ~= "" then return v end end

local provider = env("PANTO_PROVIDER")
  or ((env("OPENAI_API_KEY") and not env("ANTHROPIC_API_KEY")) and "openai" or "anthropic")
local agent <close> = assert(panto.Agent{
  provider = provider,
  model = env("PANTO_MODEL") or (provider == "openai" and "gpt-4o-mini" or "claude-sonnet-4-5"),
  base_url = env("PANTO_BASE_URL"),
  api_key = env("PANTO_API_KEY"),
  max_tokens = 300,
})

local stream = agent:run("Tell me a very long story.")
io.write("[lua] partial: ")
local armed = false
local ok, err = pcall(function()
  for ev in stream:events() do
    if ev.kind == "content_delta" and ev.block_kind == "text" then
      io.write(ev.text); io.flush()
      if not armed then stream:cancel_after(100); armed = true end
    end
  end
end)
if ok then io.stderr:write("\n[lua] the turn was not canceled\n"); os.exit(1) end
if type(err) ~= "table" or err.code ~= "canceled" then error(err, 0) end
print(string.format("\n[lua] error: %s (%s)", err.code, err.message))

local conversation = panto.json_decode(agent:conversation())
local last = conversation[#conversation]
local kept = {}
for _, block in ipairs(last.content) do
  if block.type == "text" then kept[#kept + 1] = block.text end
end
print(string.format('[lua] kept: %s "%s"', last.stop_reason, table.concat(kept)))

io.write("[lua] second turn: ")
for ev in agent:run("Then tell me the short version."):events() do
  if ev.kind == "content_delta" and ev.block_kind == "text" then io.write(ev.text); io.flush() end
end
print(string.format("[lua] conversation: %d messages", #panto.json_decode(agent:conversation())))
