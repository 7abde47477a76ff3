-- The Lua cancel-soak driver: `lua5.4 soak_driver.lua CONFIG_JSON TOOL_JSON`.
--
-- Speaks the line protocol of tests/soak/README.md on stdin/stdout: one agent, turns canceled
-- by the module's native timer (stream:cancel_after(ms), from its own OS thread), the tool's
-- handler busy for a given time (Lua cannot sleep), one JSON reply a line. Finds json.lua next
-- to the conformance driver and panto.so through LUA_CPATH.

local script_dir = (arg and arg[0] or ""):match("^(.*)[/\\]") or "."
package.path = script_dir .. "/../../conformance/drivers/?.lua;" .. package.path
package.cpath = package.cpath .. ";" .. script_dir .. "/../../../zig-out/lib/lua/?.so"

local json = require("json")
local panto = require("panto")

local config = json.decode(arg[1])
local spec = json.decode(arg[2])
local tool_sleep_s = 0

local function lookup(input)
  -- A handler slow enough for a cancel to land in it (busy: Lua has no sleep).
  local until_clock = os.clock() + tool_sleep_s
  while os.clock() < until_clock do end
  return "found " .. tostring(input.q)
end

local function new_agent(old)
  if old then old:close() end
  local c = {}
  for k, v in pairs(config) do c[k] = v end
  c.tools = { { name = spec.name, description = spec.description,
                schema = json.encode(spec.input_schema), handler = lookup } }
  local agent, message = panto.Agent(c)
  if not agent then error("the agent could not be made: " .. tostring(message)) end
  return agent
end

local function turn(agent, cancel_us, sleep_us, pad, text)
  tool_sleep_s = sleep_us / 1e6
  local stream <close> = agent:run(text .. string.rep("x", pad))
  if cancel_us >= 0 then stream:cancel_after(cancel_us / 1000) end
  local events, seen, texts = json.array(), {}, json.array()
  local end_, message = "done", ""
  while true do
    local ok, ev = pcall(stream.next, stream)
    if not ok then
      if type(ev) ~= "table" then error(ev, 0) end -- not a panto error: a bug, fail loudly
      end_, message = ev.code, ev.message
      break
    end
    if ev == nil then break end
    events[#events + 1] = ev.kind
    if ev.kind == "content_delta" and ev.block_kind == "text" then
      seen[#seen + 1] = ev.text
    elseif ev.kind == "block_complete" and ev.block_kind == "text" then
      texts[#texts + 1] = ev.text
    end
  end
  stream:close()
  local reply = json.encode({ ["end"] = end_, message = message, events = events,
                              seen_text = table.concat(seen), texts = texts })
  -- The conversation is JSON text already: spliced in as it is.
  return reply:sub(1, -2) .. ', "conversation": ' .. assert(agent:conversation()) .. "}"
end

local agent
for line in io.lines() do
  local op, rest = line:match("^(%S+) ?(.*)$")
  local reply
  if op == "agent" then
    agent = new_agent(agent)
    reply = '{"ok": true}'
  elseif op == "config" then
    local ok, message, code = agent:set_config(json.decode(rest))
    reply = ok and '{"ok": true}' or json.encode({ ok = false, code = code, message = message })
  elseif op == "connections" then
    local counts = agent:connections()
    reply = json.encode({ opened = counts.opened, reused = counts.reused })
  elseif op == "turn" then
    local c, s, p, text = rest:match("^(%-?%d+) (%d+) (%d+) (.*)$")
    reply = turn(agent, tonumber(c), tonumber(s), tonumber(p), text)
  else
    io.stderr:write("soak_driver.lua: unknown command ", tostring(op), "\n")
    os.exit(2)
  end
  io.stdout:write(reply, "\n")
  io.stdout:flush()
end
if agent then agent:close() end
