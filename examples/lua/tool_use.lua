-- A tool round trip from Lua: the model asks for the weather, panto runs the tool while we
-- iterate, and the model answers with the result. See examples/README.md.
local panto = require("panto")

local function env(name) local v = os.getenv(name); if v ~= "" then return v end end

local get_weather = {
  name = "get_weather",
  description = "Current weather for a city.",
  params = { city = { type = "string", description = 'The city, e.g. "Paris"' } },
  handler = function(input) return "Sunny, 21 degrees in " .. input.city end,
}

local provider = env("PANTO_PROVIDER")
  or ((env("OPENAI_API_KEY") and not env("ANTHROPIC_API_KEY")) and "openai" or "anthropic")
local agent = assert(panto.Agent{
  provider = provider,
  model = env("PANTO_MODEL") or (provider == "openai" and "gpt-4o-mini" or "claude-sonnet-4-5"),
  base_url = env("PANTO_BASE_URL"),
  api_key = env("PANTO_API_KEY"),
  max_tokens = 300,
  tools = { get_weather },
})

io.write("[lua] ")
local ok, err = pcall(function()
  for ev in agent:run("What is the weather in Paris?"):events() do
    if ev.kind == "tool_call_start" then
      print(string.format("\n  -> %s(%s)", ev.name, ev.input_json))
    elseif ev.kind == "tool_result" then
      print("  <- " .. ev.content)
    elseif ev.kind == "content_delta" and ev.block_kind == "text" then
      io.write(ev.text); io.flush()
    end
  end
end)
agent:close()
if not ok then io.stderr:write("\nturn failed: ", tostring(err), "\n"); os.exit(1) end
