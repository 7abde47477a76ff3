-- One streamed turn from Lua: print the text as it arrives. See examples/README.md.
local panto = require("panto")

local function env(name) local v = os.getenv(name); if v ~= "" then return v end end

local provider = env("PANTO_PROVIDER")
  or ((env("OPENAI_API_KEY") and not env("ANTHROPIC_API_KEY")) and "openai" or "anthropic")
local agent, message = panto.Agent{
  provider = provider,
  model = env("PANTO_MODEL") or (provider == "openai" and "gpt-4o-mini" or "claude-sonnet-4-5"),
  base_url = env("PANTO_BASE_URL"),
  api_key = env("PANTO_API_KEY"),
  max_tokens = 300,
}
if not agent then io.stderr:write("config refused: ", message, "\n"); os.exit(1) end

local stream = agent:run("Say hello from Lua in one sentence.")
io.write("[lua] ")
local ok, err = pcall(function()
  for ev in stream:events() do
    if ev.kind == "content_delta" and ev.block_kind == "text" then
      io.write(ev.text); io.flush()
    elseif ev.kind == "message_complete" then
      print(string.format("    (%s, %d tokens out)", ev.stop_reason, ev.usage.output_tokens))
    end
  end
end)
agent:close()
if not ok then io.stderr:write("\nturn failed: ", tostring(err), "\n"); os.exit(1) end
