-- A conversation from Lua: two turns on one agent; the second one sees the first (the agent
-- keeps the conversation and sends it whole). See examples/README.md.
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
  system = "Answer in one short sentence.",
})

for number, prompt in ipairs{"Hi, my name is Ada.", "What is my name?"} do
  io.write(string.format("[lua] turn %d: ", number))
  for ev in agent:run(prompt):events() do
    if ev.kind == "content_delta" and ev.block_kind == "text" then io.write(ev.text); io.flush() end
  end
end

local roles = {}
for _, message in ipairs(panto.json_decode(agent:conversation())) do roles[#roles + 1] = message.role end
print(string.format("[lua] conversation: %d messages (%s)", #roles, table.concat(roles, ", ")))
