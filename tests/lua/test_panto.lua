-- Tests of the Lua module `panto` against the provider emulator. Plain Lua 5.4:
--
--   zig build
--   LUA_CPATH='zig-out/lib/lua/?.so' lua5.4 tests/lua/test_panto.lua [NAME_SUBSTRING]
--
-- It starts the emulator itself (`python -m panto.emulator --port 0`, with the python of
-- $PANTO_PYTHON, else the checkout's .venv/bin/python, else python3) and stops it at the end;
-- or, when $PANTO_TEST_URL is set, it uses the emulator already running there. Scenarios are
-- loaded with POST /_emulator/scenario, sent by that same python (Lua has no HTTP client).
-- Without LUA_CPATH it finds panto.so in the checkout's zig-out/lib/lua. Prints one line per
-- test, then `N passed, N failed`; exits non-zero when a test failed.

local script_dir = (arg and arg[0] or ""):match("^(.*)[/\\]") or "."
local repo = script_dir .. "/../.."
package.path = repo .. "/tests/conformance/drivers/?.lua;" .. package.path
package.cpath = package.cpath .. ";" .. repo .. "/zig-out/lib/lua/?.so"

local json = require("json")
local panto = require("panto")

-- ---- The emulator ---------------------------------------------------------------------------

local function file_exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

local function shell_quote(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

local python = os.getenv("PANTO_PYTHON")
if not python then
  python = repo .. "/.venv/bin/python"
  if not file_exists(python) then python = "python3" end
end

local emulator = { url = os.getenv("PANTO_TEST_URL") }

function emulator.start()
  if emulator.url then return end
  -- Its stderr (a traceback per connection a test cuts) goes to a file, shown if it fails.
  emulator.log = os.tmpname()
  local cmd = "cd " .. shell_quote(repo) .. " && PYTHONPATH=bindings-py exec "
    .. shell_quote(python) .. " -m panto.emulator --port 0 2>" .. shell_quote(emulator.log)
  -- `echo $$` before exec: the pid of the emulator itself, to stop it with kill.
  emulator.pipe = assert(io.popen("sh -c 'echo $$; " .. cmd:gsub("'", "'\\''") .. "'", "r"))
  emulator.pid = assert(tonumber(emulator.pipe:read("l")), "no emulator pid")
  local first = emulator.pipe:read("l") or ""
  emulator.url = first:match("^panto%-emulator listening on (%S+)")
  if not emulator.url then
    local f = io.open(emulator.log, "rb")
    local log = f and f:read("a") or ""
    if f then f:close() end
    emulator.stop()
    error("the emulator did not start: " .. first .. "\n" .. log)
  end
end

function emulator.stop()
  if emulator.pid then
    os.execute("kill " .. emulator.pid)
    emulator.pipe:close() -- waits for it to exit
    emulator.pid = nil
  end
  if emulator.log then
    os.remove(emulator.log)
    emulator.log = nil
  end
end

-- Loads a scenario: `responses` is the list of scripted answers.
function emulator.load(responses)
  local post = shell_quote(python) .. " -c " .. shell_quote(
    "import sys, urllib.request as u; u.urlopen(u.Request(sys.argv[1], data=sys.stdin.buffer.read(), "
    .. "method='POST', headers={'content-type': 'application/json'}), timeout=10).read()"
  ) .. " " .. shell_quote(emulator.url .. "/_emulator/scenario")
  local p = assert(io.popen(post, "w"))
  p:write(json.encode({ responses = responses }))
  assert(p:close(), "loading the scenario failed")
end

-- The provider requests the emulator received since the last load, decoded.
function emulator.requests()
  local get = shell_quote(python) .. " -c " .. shell_quote(
    "import sys, urllib.request as u; sys.stdout.write(u.urlopen(sys.argv[1], timeout=10).read().decode())"
  ) .. " " .. shell_quote(emulator.url .. "/_emulator/requests")
  local p = assert(io.popen(get, "r"))
  local text = p:read("a")
  assert(p:close(), "reading the requests failed")
  return json.decode(text)
end

local function text_answer(text)
  return {
    message = {
      id = "msg_test",
      model = "claude-test",
      content = { { type = "text", text = text } },
      stop_reason = "end_turn",
      usage = { input_tokens = 3, output_tokens = 2 },
    },
  }
end

local function error_answer(status, etype, message)
  return { status = status, error = { type = etype, message = message } }
end

local function new_agent(extra)
  local config = { provider = "anthropic", model = "claude-test", api_key = "test-key",
                   base_url = emulator.url }
  for k, v in pairs(extra or {}) do config[k] = v end
  return assert(panto.Agent(config))
end

-- ---- A tiny harness ---------------------------------------------------------------------------

local tests = {}
local function test(name, fn) tests[#tests + 1] = { name = name, fn = fn } end

local function eq(got, want, what)
  if got ~= want then
    error(("%s: expected %s, got %s"):format(what or "value", tostring(want), tostring(got)), 2)
  end
end

local function raises(pattern, fn, ...)
  local ok, err = pcall(fn, ...)
  if ok then error("expected an error matching " .. pattern, 2) end
  if not tostring(err):find(pattern) then
    error(("expected an error matching %q, got %q"):format(pattern, tostring(err)), 2)
  end
  return err
end

-- ---- Tests ------------------------------------------------------------------------------------

test("module table", function()
  eq(type(panto._VERSION), "string", "_VERSION")
  assert(panto._VERSION:match("^%d+%.%d+%.%d+"), panto._VERSION)
  eq(panto.abi_version, 3, "abi_version")
  eq(type(panto.Agent), "function", "Agent")
end)

test("luaopen_panto returns a fresh table each call", function()
  local path = assert(package.searchpath("panto", package.cpath))
  local open1 = assert(package.loadlib(path, "luaopen_panto"))
  local open2 = assert(package.loadlib(path, "luaopen_panto"))
  local t1, t2 = open1(), open2()
  assert(t1 ~= t2 and t1 ~= panto, "the same table twice")
  eq(t1._VERSION, panto._VERSION, "_VERSION")
  t1.Agent = nil -- changing one does not change the other
  eq(type(t2.Agent), "function", "Agent of the second table")
  -- The metatables are shared: an agent of one load is an agent for all.
  local agent <close> = t2.Agent({ provider = "anthropic", model = "m", api_key = "k" })
  eq(getmetatable(agent), getmetatable(new_agent()), "metatable")
end)

test("text turn", function()
  emulator.load({ text_answer("Hello world") })
  local agent <close> = new_agent({ system = "Be brief.", max_tokens = 64 })
  local stream <close> = agent:run("Hi")
  assert(tostring(stream):match("^panto%.Stream %(0x"), tostring(stream))
  local kinds, deltas, complete = {}, {}, nil
  for ev in stream:events() do
    kinds[#kinds + 1] = ev.kind
    if ev.kind == "message_start" then
      eq(ev.id, "msg_test", "id")
      eq(ev.model, "claude-test", "model")
    elseif ev.kind == "content_delta" then
      eq(ev.index, 0, "index")
      eq(ev.block_kind, "text", "block_kind")
      deltas[#deltas + 1] = ev.text
    elseif ev.kind == "block_complete" then
      eq(ev.text, "Hello world", "block text")
    elseif ev.kind == "message_complete" then
      complete = ev
    end
  end
  eq(kinds[1], "message_start")
  eq(kinds[2], "block_start")
  eq(kinds[#kinds], "message_complete")
  eq(table.concat(deltas), "Hello world", "deltas")
  eq(complete.stop_reason, "end_turn", "stop_reason")
  eq(complete.provider_stop_reason, "end_turn", "provider_stop_reason")
  eq(complete.usage.input_tokens, 3, "input_tokens")
  eq(complete.usage.output_tokens, 2, "output_tokens")
  eq(math.type(complete.usage.cache_read_tokens), "integer", "cache_read_tokens")
  -- The loop ended at DONE: the stream stays readable (its fourth value is to-be-closed, and
  -- closes an unfinished turn only), so final_message works after it.
  assert(tostring(stream):match("^panto%.Stream %(0x.*, done%)$"), tostring(stream))
  eq(stream:next(), nil, "done")
  eq(stream:final_message().text, "Hello world", "final_message after the loop")
  stream:close()
  eq(tostring(stream), "panto.Stream (closed)")

  local conv = json.decode(assert(agent:conversation()))
  eq(#conv, 2, "messages")
  eq(conv[1].role, "user")
  eq(conv[2].role, "assistant")
  eq(conv[2].content[1].text, "Hello world", "assistant text")
end)

test("next() returns nil after DONE, and again", function()
  emulator.load({ text_answer("Hi.") })
  local agent <close> = new_agent()
  local stream <close> = agent:run("Hi")
  local n = 0
  while stream:next() do n = n + 1 end
  assert(n >= 5, "only " .. n .. " events")
  eq(stream:next(), nil, "after DONE")
  eq(stream:next(), nil, "after DONE, again")
  eq(select("#", stream:next()), 1, "number of results")
end)

test("break in for closes the stream; the agent runs again", function()
  emulator.load({ text_answer("first answer"), text_answer("second answer") })
  local agent <close> = new_agent()
  local stream = agent:run("one")
  for ev in stream:events() do
    eq(ev.kind, "message_start")
    break
  end
  eq(tostring(stream), "panto.Stream (closed)")
  raises("closed panto%.Stream", stream.next, stream)
  local text
  for ev in agent:run("two"):events() do
    if ev.kind == "block_complete" then text = ev.text end
  end
  eq(text, "second answer", "second turn")
  -- Nothing of the abandoned message had arrived beyond message_start: nothing was kept, so
  -- its user message was rolled back.
  local conv = json.decode(agent:conversation())
  local roles = {}
  for i, m in ipairs(conv) do roles[i] = m.role end
  eq(table.concat(roles, ","), "user,assistant", "roles")
end)

test("one unfinished stream at a time: run raises busy", function()
  emulator.load({ text_answer("a"), text_answer("b") })
  local agent <close> = new_agent()
  local stream = agent:run("one")
  local err = raises("busy", agent.run, agent, "two")
  eq(type(err), "table", "error type")
  eq(err.code, "busy", "code")
  stream:close()
  stream:close() -- idempotent
  local s2 <close> = agent:run("two")
  assert(s2:next(), "an event")
end)

test("401 raises an error table; errors are sticky", function()
  emulator.load({ error_answer(401, "authentication_error", "bad key") })
  local agent <close> = new_agent()
  local stream <close> = agent:run("Hi")
  local ok, err = pcall(stream.next, stream)
  eq(ok, false, "pcall")
  eq(type(err), "table", "error value")
  eq(err.code, "authentication", "code")
  eq(err.http_status, 401, "http_status")
  eq(err.type, "authentication_error", "type")
  eq(err.message, "bad key", "message")
  eq(type(err.request_id), "string", "request_id")
  local s = tostring(err)
  assert(s:find("authentication", 1, true) and s:find("bad key", 1, true) and s:find("401", 1, true), s)
  local ok2, err2 = pcall(stream.next, stream)
  eq(ok2, false, "second pcall")
  assert(rawequal(err, err2), "the same error again")
  -- A failed turn is over: the agent can run again.
  emulator.load({ text_answer("recovered") })
  local s2 <close> = agent:run("again")
  assert(s2:next(), "an event")
end)

test("errors raised by events() propagate through for", function()
  emulator.load({ error_answer(403, "permission_error", "not for you") })
  local agent <close> = new_agent()
  local err = raises("not for you", function()
    for _ in agent:run("Hi"):events() do end
  end)
  eq(err.code, "permission", "code")
  eq(err.http_status, 403, "http_status")
end)

test("bad config returns nil, message, code", function()
  local a, msg, code = panto.Agent({ provider = "nope", model = "m", api_key = "k" })
  eq(a, nil, "agent")
  eq(type(msg), "string", "message")
  assert(#msg > 0, "empty message")
  eq(code, "config", "code")
  a, msg, code = panto.Agent({ provider = "anthropic", api_key = "k" }) -- no model
  eq(a, nil, "agent without a model")
  eq(code, "config", "code")
  a, msg, code = panto.Agent({ provider = "anthropic", model = "m", max_tokens = "many" })
  eq(a, nil, "agent")
  assert(msg:find("max_tokens", 1, true) and msg:find("integer", 1, true), msg)
  eq(code, "config", "code")
  a, msg = panto.Agent({ provider = "anthropic", model = "m", max_tokens = 1.5 })
  eq(a, nil, "agent")
  assert(msg:find("max_tokens", 1, true), msg)
  -- The options go to panto as JSON, as they are: panto judges them.
  a, msg = panto.Agent({ provider = 42, model = "m" })
  eq(a, nil, "agent")
  assert(msg:find('"provider" must be a string', 1, true), msg)
  a, msg, code = panto.Agent({ provider = "anthropic", model = "m\255" }) -- JSON must be UTF-8
  eq(a, nil, "agent")
  assert(msg:find("config is not valid UTF-8 text", 1, true), msg) -- said by the core
  eq(code, "config", "code")
  -- A float is a float in JSON (64.0), as in Python: not an integer.
  a, msg = panto.Agent({ provider = "anthropic", model = "m", api_key = "k", max_tokens = 64.0 })
  eq(a, nil, "agent")
  assert(msg:find("max_tokens must be an integer", 1, true), msg)
  -- What JSON cannot hold is this module's to refuse.
  a, msg, code = panto.Agent({ provider = "anthropic", model = "m", system = print })
  eq(a, nil, "agent")
  assert(msg:find("option 'system': cannot encode a function", 1, true), msg)
  eq(code, "config", "code")
end)

test("mcp_servers: a Streamable HTTP server's url and headers pass as they are", function()
  local a, msg = panto.Agent({ provider = "anthropic", model = "m", api_key = "k", mcp_servers = {
    docs = { url = "https://example.com/mcp", headers = { Authorization = "Bearer t" } } } })
  assert(a, msg)
  a:close()
  a, msg = panto.Agent({ provider = "anthropic", model = "m", api_key = "k", mcp_servers = {
    docs = { url = "https://example.com/mcp", command = "x" } } })
  eq(a, nil, "agent")
  assert(msg:find('"url" and "command" do not go together', 1, true), msg)
end)

-- An agent with stdio MCP servers (tests/mcp/server.py) and a provider at a closed port: a
-- turn starts the servers (before its request), then fails to connect.
local function mcp_agent(names)
  local servers = {}
  for _, name in ipairs(names) do
    servers[name] = { command = "python3", args = { repo .. "/tests/mcp/server.py" }, tools = { "echo", "add" } }
  end
  return assert(panto.Agent({ provider = "anthropic", model = "m", api_key = "k", base_url = "http://127.0.0.1:9",
                              retry = { max_retries = 0 }, mcp_servers = servers }))
end

local function start_servers(agent)
  local bad = raises("", function() agent:run("go"):next() end)
  eq(bad.code, "connection", "the turn's error")
end

test("agent:mcp_status(): not started, then ready with the server's initialize answer", function()
  local agent <close> = mcp_agent({ "t" })
  local before = agent:mcp_status()
  eq(#before, 1, "servers")
  eq(before[1].state, "not_started", "state")
  eq(before[1].transport, "stdio", "transport")
  start_servers(agent)
  local t = agent:mcp_status()[1]
  eq(t.name, "t", "name")
  eq(t.state, "ready", "state")
  eq(t.protocol_version, "2025-11-25", "protocol_version")
  eq(t.server_name, "panto-test-server", "server_name")
  eq(t.server_version, "1.0.0", "server_version")
  eq(t.tool_count, 2, "tool_count")
  eq(t.error, "", "error")
end)

-- This process's open descriptors and children (zombies too), each counted by a shell whose
-- own descriptor and process are there both times.
local function count(command)
  local stat = io.open("/proc/self/stat")
  local pid = stat:read("*l"):match("^(%d+)")
  stat:close()
  local p = io.popen((command:gsub("PID", pid)))
  local n = tonumber(p:read("*a"))
  p:close()
  return n
end
local fd_count = "ls /proc/PID/fd | wc -l"
local child_count = "awk '$4 == PID' /proc/[0-9]*/stat 2>/dev/null | wc -l"

test("agents with stdio MCP servers made and freed leave no descriptor and no process", function()
  local function once()
    local agent <close> = mcp_agent({ "a", "b" })
    start_servers(agent)
    eq(agent:mcp_status()[2].state, "ready", "b")
  end
  once() -- the library's own descriptors (its watchdog) made once, before counting
  local fds, kids = count(fd_count), count(child_count)
  for _ = 1, 10 do once() end
  eq(count(fd_count), fds, "descriptors")
  eq(count(child_count), kids, "children")
end)

test("unknown option keys are refused", function()
  local a, msg, code = panto.Agent({ provider = "anthropic", model = "m", temprature = 0.5 })
  eq(a, nil, "agent")
  assert(msg:find('unknown config key "temprature"', 1, true), msg)
  eq(code, "config", "code")
  a, msg, code = panto.Agent({ provider = "anthropic", model = "m", "positional" })
  eq(a, nil, "agent")
  assert(msg:find("must be strings", 1, true), msg)
  eq(code, "config", "code")
end)

test("bad arguments raise", function()
  raises("table expected", panto.Agent, "anthropic")
  raises("table expected", panto.Agent)
  local agent <close> = new_agent()
  raises("string or list of parts expected, got number", agent.run, agent, 42)
  raises("panto%.Agent expected", agent.run, {}, "x")
  local stream <close> = agent.run(agent, "x")
  raises("panto%.Stream expected", stream.next, agent)
  raises("panto%.Stream expected", stream.next)
  raises("panto%.Stream expected", stream.next, "x") -- a string has a metatable too
  raises("panto%.Stream expected", stream.next, setmetatable({}, getmetatable(stream)))
  raises("panto%.Stream expected", stream.next, io.stdout) -- another full userdata
end)

test("close is idempotent; a closed agent closes its streams", function()
  emulator.load({ text_answer("x") })
  local agent = new_agent()
  assert(tostring(agent):match("^panto%.Agent %(0x"), tostring(agent))
  local stream = agent:run("Hi")
  agent:close()
  agent:close()
  eq(tostring(agent), "panto.Agent (closed)")
  eq(tostring(stream), "panto.Stream (closed)")
  raises("closed panto%.Agent", agent.run, agent, "again")
  raises("closed panto%.Agent", agent.conversation, agent)
  raises("closed panto%.Stream", stream.next, stream)
  raises("closed panto%.Stream", stream.events, stream)
  stream:close()
  do
    local a <close> = new_agent()
    local s <close> = a:run("x")
  end -- closes s, then a
end)

test("a stream keeps its agent alive", function()
  emulator.load({ text_answer("kept alive") })
  local stream = new_agent():run("Hi") -- no other reference to the agent
  collectgarbage()
  collectgarbage()
  local text
  for ev in stream:events() do
    if ev.kind == "block_complete" then text = ev.text end
  end
  eq(text, "kept alive", "text")
end)

test("garbage collection frees agents and streams", function()
  emulator.load(json.array())
  for _ = 1, 50 do
    local agent = new_agent()
    agent:run("unread") -- an unfinished stream, left to the collector
  end
  collectgarbage()
  collectgarbage()
end)

-- ---- JSON values --------------------------------------------------------------------------------

test("panto.null, panto.array, json_encode and json_decode", function()
  eq(type(panto.null), "userdata", "panto.null")
  eq(panto.json_encode(panto.null), "null")
  eq(panto.json_encode({}), "{}", "an empty table is an object")
  eq(panto.json_encode(panto.array()), "[]", "a marked empty table is an array")
  eq(panto.json_encode({ b = 1, a = { true, false, panto.null }, c = "é\n\0" }),
     '{"a":[true,false,null],"b":1,"c":"é\\n\\u0000"}', "keys sorted, escapes")
  eq(panto.json_encode(2.0), "2.0", "a float stays a float")
  eq(panto.json_encode(0.1), "0.1")
  eq(panto.json_encode(-7), "-7")
  raises("cannot encode a function", panto.json_encode, { f = print })
  raises("must be strings", panto.json_encode, { 1, 2, x = 3 })
  raises("nested more than", panto.json_encode, (function() local t = {}; t.self = t; return t end)())
  eq(panto.json_encode("\255\0"), '"\255\\u0000"', "bytes as they are: UTF-8 is panto's to judge")
  raises("cannot encode inf", panto.json_encode, math.huge)

  local v = panto.json_decode('{"a": [1, null, 2.5, {}, []], "big": 12345678901234567890, "s": "\\u00e9"}')
  eq(v.a[1], 1)
  eq(math.type(v.a[1]), "integer")
  eq(v.a[2], panto.null, "null")
  eq(v.a[3], 2.5)
  eq(#v.a, 5, "length with a null inside")
  eq(math.type(v.big), "float", "an integer beyond 64 bits")
  eq(v.s, "é")
  eq(panto.json_encode(v.a), "[1,null,2.5,{},[]]", "decoded arrays stay arrays, even empty")
  raises("invalid JSON", panto.json_decode, "{")
  raises("invalid JSON", panto.json_decode, "[1] x")
end)

-- ---- Declaring tools ---------------------------------------------------------------------------

local weather = {
  name = "get_weather",
  description = "Current weather for a city.",
  params = {
    city = { type = "string", description = "The city" },
    unit = { type = "string", enum = { "c", "f" }, default = "c" },
  },
  capabilities = { "net" },
}

local weather_schema = '{"type":"object","properties":{"city":{"type":"string","description":"The city"},'
  .. '"unit":{"type":"string","enum":["c","f"],"default":"c"}},"required":["city"]}'

test("tool_schema: params become a JSON Schema, per provider", function()
  eq(panto.tool_schema(weather),
     '{"name":"get_weather","description":"Current weather for a city.","input_schema":' .. weather_schema .. '}')
  eq(panto.tool_schema(weather, "openai"),
     '{"type":"function","function":{"name":"get_weather","description":"Current weather for a city.","parameters":'
     .. weather_schema .. '}}')
  eq(panto.tool_schema(weather, "panto"),
     '{"name":"get_weather","description":"Current weather for a city.","input_schema":' .. weather_schema
     .. ',"capabilities":["net"],"native":false}')
  -- Every parameter form.
  local t = {
    name = "t",
    params = {
      s = "string",
      n = { type = "integer", minimum = 1, maximum = 10, required = false },
      list = { type = "array", items = { type = "object", params = { x = "number", y = { type = "boolean", default = true } } } },
      tags = { type = "array", items = "string", default = {} },
    },
  }
  local schema = json.decode(panto.tool_schema(t)).input_schema
  eq(json.encode(schema.required), '["list","s"]', "required")
  -- json.lua writes a decoded object's keys back in the order panto wrote them.
  eq(json.encode(schema.properties.n), '{"type":"integer","minimum":1,"maximum":10}')
  eq(json.encode(schema.properties.list.items),
     '{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"boolean","default":true}},"required":["x"]}')
  eq(json.encode(schema.properties.tags), '{"type":"array","default":[],"items":{"type":"string"}}')
  -- No params: an empty object schema.
  eq(json.encode(json.decode(panto.tool_schema({ name = "noop" })).input_schema), '{"type":"object","properties":{}}')
  -- A schema as a table or as JSON text.
  local s = { type = "object", properties = { q = { type = "string" } }, required = panto.array({ "q" }) }
  eq(json.decode(panto.tool_schema({ name = "a", schema = s })).input_schema.required[1], "q")
  eq(panto.tool_schema({ name = "a", schema = s }),
     panto.tool_schema({ name = "a", schema = '{"properties":{"q":{"type":"string"}},"required":["q"],"type":"object"}' }))
end)

test("tool declarations: params checked here, the spec by panto", function()
  local function refused(pattern, tool)
    local err = raises(pattern, panto.tool_schema, tool)
    eq(type(err), "table", "a panto.Error")
    eq(err.code, "config", "code")
    eq(tostring(err):sub(1, 14), "panto: config:", "tostring")
  end
  refused("a tool must be a table", "get_weather")
  -- The spec's rules are panto's (panto_tools_add): the keys other than params, schema and
  -- handler go into the spec as they are.
  refused('a tool spec needs "name"', { description = "x" })
  refused("a tool name must be 1 to 64 letters", { name = "has space" })
  refused('unknown tool spec key "hadler"', { name = "x", hadler = "f" })
  refused('tool "x": description must be a string', { name = "x", description = 1 })
  refused('tool "x": capabilities must be an array of strings', { name = "x", capabilities = "net" })
  refused('tool "x": capabilities must be an array of strings', { name = "x", capabilities = { 1 } })
  refused('tool "x": input_schema must be a JSON object', { name = "x", schema = "[1]" })
  refused('tool "x": input_schema must be a JSON object', { name = "x", schema = { 1 } })
  -- What cannot become a spec is this module's to refuse.
  refused("tool 'x': key 'hadler': cannot encode a function", { name = "x", hadler = print })
  refused("tool 'x': 'handler' must be a function", { name = "x", handler = "f" })
  refused("give 'params' or 'schema', not both", { name = "x", params = {}, schema = {} })
  refused("'schema' is not valid JSON", { name = "x", schema = "{" })
  refused("input_schema must describe an object", { name = "x", schema = { type = "string" } }) -- panto's check
  refused("'schema' is not valid JSON", { name = "x", schema = '{}, "name": "y"' }) -- one value
  refused("parameter 'c': unknown type 'strin'", { name = "x", params = { c = "strin" } })
  refused("parameter 'c': unknown key 'typ'", { name = "x", params = { c = { typ = "string" } } })
  refused("parameter 'c': 'type' must be one of", { name = "x", params = { c = { description = "no type" } } })
  refused("parameter 'c': 'default' must be a string, got a number", { name = "x", params = { c = { type = "string", default = 3 } } })
  refused("parameter 'c': 'default' must be an integer, got a number", { name = "x", params = { c = { type = "integer", default = 1.5 } } })
  refused("parameter 'c': enum%[2%] must be a string", { name = "x", params = { c = { type = "string", enum = { "a", 2 } } } })
  refused("parameter 'c': 'enum' must be a non%-empty list", { name = "x", params = { c = { type = "string", enum = {} } } })
  refused("a parameter with a default is optional", { name = "x", params = { c = { type = "string", default = "a", required = true } } })
  refused("'required' must be a boolean", { name = "x", params = { c = { type = "string", required = "yes" } } })
  refused("'items' is for array parameters", { name = "x", params = { c = { type = "string", items = "string" } } })
  refused("'minimum' is for integer and number", { name = "x", params = { c = { type = "string", minimum = 1 } } })
  refused("parameter 'c': items: 'required' is for parameters", { name = "x", params = { c = { type = "array", items = { type = "string", required = true } } } })
  refused("parameter 'o': parameter 'deep': unknown type", { name = "x", params = { o = { type = "object", params = { deep = "nope" } } } })
  refused("parameter names must be strings", { name = "x", params = { "string" } })
  refused("tool 'x': schema: cannot encode a function", { name = "x", schema = { type = "object", f = print } })
  raises("bad argument #2", panto.tool_schema, weather, {})
  eq(raises("format must be", panto.tool_schema, weather, "xml").code, "invalid_argument")
end)

test("tools in the agent options", function()
  local a, msg, code = panto.Agent({ provider = "anthropic", model = "m", api_key = "k", tools = { { name = "x", hadler = 1 } } })
  eq(a, nil, "agent")
  assert(msg:find('unknown tool spec key "hadler"', 1, true), msg)
  eq(code, "config", "code")
  a, msg = panto.Agent({ provider = "anthropic", model = "m", api_key = "k", tools = "get_weather" })
  eq(a, nil, "agent")
  assert(msg:find("option 'tools': must be a list of tools", 1, true), msg)
  a, msg = panto.Agent({ provider = "anthropic", model = "m", api_key = "k", tools = { { name = "x" }, { name = "x" } } })
  eq(a, nil, "agent with two tools of one name")
  assert(msg:find("x", 1, true), msg)
  a, msg = panto.Agent({ provider = "anthropic", model = "m", api_key = "k", capabilities = { "net", 7 } })
  eq(a, nil, "agent")
  assert(msg:find("capabilities must be an array of strings", 1, true), msg)
  a, msg = panto.Agent({ provider = "anthropic", model = "m", api_key = "k", max_tool_iterations = 2.5 })
  eq(a, nil, "agent")
  assert(msg:find("max_tool_iterations must be an integer", 1, true), msg)
  a, msg = panto.Agent({ provider = "anthropic", model = "m", api_key = "k", read_tool = { root = ".", max = 1 } })
  eq(a, nil, "agent")
  assert(msg:find('unknown read_tool key "max"', 1, true), msg)
  -- An empty table is an empty list where panto wants one.
  local none <close> = assert(panto.Agent({ provider = "anthropic", model = "m", api_key = "k", tools = {}, capabilities = {} }))
  a, msg = panto.Agent({ provider = "anthropic", model = "m", api_key = "k", read_tool = { max_bytes = 100 } })
  eq(a, nil, "agent")
  assert(msg:find("root", 1, true), msg) -- panto's own check
end)

test("agent:tools exports what tool_schema and the registry export", function()
  local search = { name = "search", description = "Search the web.", params = { q = "string" }, capabilities = { "net", "web" } }
  local clock = { name = "clock", description = "The time.", handler = function() return "noon" end }
  local agent <close> = assert(panto.Agent({ provider = "openai", model = "m", api_key = "k",
                                             tools = { weather }, capabilities = { "net" } }))
  agent:add_tool(search)
  agent:add_tool(clock)
  local err = raises("clock", agent.add_tool, agent, clock)
  eq(err.code, "config", "a second tool of the same name")
  raises('unknown tool spec key "bad"', agent.add_tool, agent, { name = "x", bad = 1 })
  -- A schema nested deeper than panto takes (128; this binding encodes at most 200 levels of
  -- tables) is a config error, as a table or as JSON text; the agent goes on taking tools.
  local function nested(depth)
    local inner = {}
    for _ = 1, depth - 3 do inner = { inner } end
    return { type = "object", properties = { x = inner } }
  end
  err = raises("nested more than 128 levels deep", agent.add_tool, agent, { name = "deep", schema = nested(150) })
  eq(err.code, "config", "a schema 150 deep")
  err = raises("nested more than 200 deep", agent.add_tool, agent, { name = "deep", schema = nested(300) })
  eq(err.code, "config", "a schema 300 deep")
  local deep_text = '{"type":"object","x":' .. string.rep("[", 300) .. string.rep("]", 300) .. "}"
  err = raises("nested more than 128 levels deep", agent.add_tool, agent, { name = "deep", schema = deep_text })
  eq(err.code, "config", "a schema 300 deep, as JSON text")
  -- Every tool, or the ones the agent may use (search needs "web").
  local all = json.decode(agent:tools("anthropic"))
  eq(#all, 3, "tools")
  eq(all[1].name .. "," .. all[2].name .. "," .. all[3].name, "get_weather,search,clock")
  local allowed = agent:tools("openai", true)
  eq(#json.decode(allowed), 2, "allowed tools")
  eq(allowed, "[" .. panto.tool_schema(weather, "openai") .. "," .. panto.tool_schema(clock, "openai") .. "]")
  eq(agent:tools("panto"), "[" .. panto.tool_schema(weather, "panto") .. "," .. panto.tool_schema(search, "panto")
     .. "," .. panto.tool_schema(clock, "panto") .. "]")
  eq(raises("format must be", agent.tools, agent, "xml").code, "invalid_argument", "an unknown format")
  raises("boolean expected", agent.tools, agent, "panto", 1)

  local reg = panto.Registry({ weather, search })
  eq(reg:register(clock), clock, "register returns the tool")
  eq(#reg, 3, "#registry")
  assert(tostring(reg):find("3 tools", 1, true), tostring(reg))
  eq(reg:get("search"), search, "get")
  eq(reg:get("nope"), nil, "get an unknown name")
  eq(#reg:list(), 3, "list")
  eq(reg:list()[3], clock, "list order")
  eq(raises("already registered", reg.register, reg, { name = "clock" }).code, "config")
  eq(raises('unknown tool spec key "nope"', reg.register, reg, { name = "y", nope = 1 }).code, "config")
  eq(reg:export("anthropic"), agent:tools("anthropic"), "registry export, every tool")
  eq(reg:export("openai", { "net" }), agent:tools("openai", true), "registry export, allowed tools")
  local net = reg:filter({ "net" })
  eq(#net, 2, "filtered")
  eq(net:get("search"), nil, "search needs web")
  eq(#reg:filter({}), 1, "only clock needs nothing")
  eq(net:export("panto"), "[" .. panto.tool_schema(weather, "panto") .. "," .. panto.tool_schema(clock, "panto") .. "]")
  -- An agent takes a registry as its tools.
  local a2 <close> = assert(panto.Agent({ provider = "openai", model = "m", api_key = "k", tools = reg, capabilities = { "net" } }))
  eq(a2:tools("openai", true), agent:tools("openai", true))
end)

-- ---- The tool loop ----------------------------------------------------------------------------

local function tool_answer(calls, text)
  local content = {}
  if text then content[1] = { type = "text", text = text } end
  for _, call in ipairs(calls) do
    content[#content + 1] = { type = "tool_use", id = call[1], name = call[2], input = call[3] or json.object() }
  end
  return { message = { model = "claude-test", content = content, stop_reason = "tool_use",
                       usage = { input_tokens = 10, output_tokens = 5 } } }
end

-- The tool results (id -> {content, is_error}) the request carries, in Anthropic's shape.
local function anthropic_results(request)
  local found = {}
  for _, m in ipairs(request.body.messages) do
    if type(m.content) == "table" then
      for _, b in ipairs(m.content) do
        if b.type == "tool_result" then
          local text = b.content
          if type(text) == "table" then
            local parts = {}
            for _, p in ipairs(text) do parts[#parts + 1] = p.text end
            text = table.concat(parts)
          end
          found[b.tool_use_id] = { content = text, is_error = b.is_error == true }
        end
      end
    end
  end
  return found
end

local function collect(stream)
  local events, kinds = {}, {}
  for ev in stream:events() do
    events[#events + 1] = ev
    kinds[#kinds + 1] = ev.kind
  end
  return events, table.concat(kinds, " ")
end

local function find(events, kind, n)
  n = n or 1
  for _, ev in ipairs(events) do
    if ev.kind == kind then
      n = n - 1
      if n == 0 then return ev end
    end
  end
end

test("a tool round trip: the handler runs, the next request carries its result", function()
  emulator.load({
    tool_answer({ { "toolu_1", "get_weather", { city = "Paris", days = { 1, 2 }, note = json.null } } }, "Let me look."),
    text_answer("Sunny in Paris."),
  })
  local calls = {}
  local tool = {
    name = "get_weather", description = "Weather.", params = weather.params, capabilities = { "net" },
    handler = function(input, call)
      calls[#calls + 1] = { input = input, call = call }
      return "Sunny, 21C in " .. input.city
    end,
  }
  local agent <close> = new_agent({ tools = { tool }, capabilities = { "net" } })
  local events, kinds = collect(agent:run("Weather in Paris?"))
  eq(#calls, 1, "handler calls")
  local input = calls[1].input
  eq(input.city, "Paris", "input.city")
  eq(#input.days, 2, "input.days")
  eq(input.note, panto.null, "JSON null")
  eq(calls[1].call.id, "toolu_1", "the event is the second argument")
  eq(calls[1].call.kind, "tool_call_start")

  local start = find(events, "tool_call_start")
  eq(start.id, "toolu_1")
  eq(start.name, "get_weather")
  eq(start.awaiting_result, true, "awaiting_result")
  eq(json.encode(json.decode(start.input_json)), '{"city":"Paris","days":[1,2],"note":null}', "input_json")
  eq(start.input, input, "the handler got the event's table")
  local details = find(events, "tool_details")
  eq(details.id, "toolu_1")
  eq(details.name, "get_weather")
  eq(details.index, 1, "tool_details index")
  local result = find(events, "tool_result")
  eq(result.id, "toolu_1")
  eq(result.name, "get_weather")
  eq(result.content, "Sunny, 21C in Paris", "content")
  eq(result.is_error, false, "is_error")
  local first_end = find(events, "message_end")
  eq(first_end.stop_reason, "tool_use", "first message_end")
  eq(first_end.usage.output_tokens, 5, "first message usage")
  local second_end = find(events, "message_end", 2)
  eq(second_end.stop_reason, "end_turn", "second message_end")
  local complete = events[#events]
  eq(complete.kind, "message_complete")
  eq(complete.stop_reason, "end_turn")
  eq(complete.usage.input_tokens, 13, "usage summed over the messages")
  assert(kinds:find("message_end tool_call_start tool_result message_start", 1, true), kinds)

  local requests = emulator.requests()
  eq(#requests, 2, "requests")
  eq(requests[1].body.tools[1].name, "get_weather", "the tool was sent")
  eq(json.encode(requests[1].body.tools[1].input_schema), json.encode(json.decode(weather_schema)), "the schema sent")
  local r = anthropic_results(requests[2]).toolu_1
  assert(r, "the second request carries the result")
  eq(r.content, "Sunny, 21C in Paris", "result content sent")
  eq(r.is_error, false, "result is_error sent")
end)

test("handler outcomes: tables as JSON, error() and nil, err as error results", function()
  emulator.load({
    tool_answer({ { "t1", "as_json" }, { "t2", "raises" }, { "t3", "raises_table" }, { "t4", "nil_err" }, { "t5", "nothing" },
                  { "t6", "callable", { n = 4 } } }),
    text_answer("done"),
  })
  local tools = {
    { name = "as_json", handler = function() return { ok = true, n = 2, list = panto.array() } end },
    { name = "raises", handler = function() error("disk on fire", 0) end },
    { name = "raises_table", handler = function() error(setmetatable({}, { __tostring = function() return "custom" end })) end },
    { name = "nil_err", handler = function() return nil, "not found" end },
    { name = "nothing", handler = function() end },
    { name = "callable", handler = setmetatable({ factor = 10 }, { __call = function(self, input) return self.factor * input.n end }) },
  }
  local agent <close> = new_agent({ tools = tools })
  local events = collect(agent:run("go"))
  local want = {
    t1 = { '{"list":[],"n":2,"ok":true}', false },
    t2 = { "disk on fire", true },
    t3 = { "custom", true },
    t4 = { "not found", true },
    t5 = { "null", false },
    t6 = { "40", false },
  }
  local n = 0
  for _, ev in ipairs(events) do
    if ev.kind == "tool_result" then
      n = n + 1
      eq(ev.content, want[ev.id][1], ev.id .. " content")
      eq(ev.is_error, want[ev.id][2], ev.id .. " is_error")
    end
  end
  eq(n, 6, "results")
  local sent = anthropic_results(emulator.requests()[2])
  eq(sent.t2.content, "disk on fire", "error text sent")
  eq(sent.t2.is_error, true, "is_error sent")
  eq(sent.t1.is_error, false, "t1 is_error sent")
end)

test("a handler error with position info, and a result that cannot be sent", function()
  emulator.load({ tool_answer({ { "t1", "pos" }, { "t2", "bad" } }), text_answer("ok") })
  local agent <close> = new_agent({ tools = {
    { name = "pos", handler = function() error("oops") end },
    { name = "bad", handler = function() return { f = print } end },
  } })
  local events = collect(agent:run("go"))
  local r1, r2 = find(events, "tool_result", 1), find(events, "tool_result", 2)
  assert(r1.content:find("test_panto.lua:%d+: oops"), r1.content)
  eq(r1.is_error, true)
  assert(r2.content:find("the result of tool 'bad' cannot be sent: cannot encode a function", 1, true), r2.content)
  eq(r2.is_error, true)
end)

test("manual mode: run_tools=false, result_pending is not sticky, submit_tool_result", function()
  emulator.load({ tool_answer({ { "toolu_1", "get_weather", { city = "Oslo" } } }), text_answer("Cold.") })
  local ran = false
  local agent <close> = new_agent({ tools = { {
    name = "get_weather", params = { city = "string" }, handler = function() ran = true; return "x" end,
  } } })
  local stream <close> = agent:run("Weather?", { run_tools = false })
  local ev
  repeat ev = stream:next() until ev.kind == "tool_call_start"
  eq(ev.awaiting_result, true)
  eq(ev.input.city, "Oslo")
  for _ = 1, 2 do
    local err = raises("awaits its result", stream.next, stream)
    eq(err.code, "result_pending", "code")
  end
  local err = raises("no tool call", stream.submit_tool_result, stream, "toolu_404", "x")
  eq(err.code, "no_such_call", "code")
  stream:tool_progress("toolu_1", "by hand", 0.25)
  eq(raises("no tool call", stream.tool_progress, stream, "toolu_404", "x").code, "no_such_call")
  raises("fraction must be from 0 to 1", stream.tool_progress, stream, "toolu_1", "x", -0.5)
  local progress = stream:next()
  eq(progress.kind, "tool_progress", "progress comes first")
  eq(progress.text, "by hand")
  eq(progress.fraction, 0.25)
  raises("boolean expected", stream.submit_tool_result, stream, "toolu_1", "x", "yes")
  stream:submit_tool_result("toolu_1", { temp = -3 }, true)
  err = raises("no tool call", stream.submit_tool_result, stream, "toolu_1", "again")
  eq(err.code, "no_such_call", "a second result")
  local result = stream:next()
  eq(result.kind, "tool_result")
  eq(result.content, '{"temp":-3}', "content")
  eq(result.is_error, true, "is_error")
  while stream:next() do end
  eq(ran, false, "the handler did not run")
  eq(anthropic_results(emulator.requests()[2]).toolu_1.content, '{"temp":-3}', "sent")
  err = raises("turn is over", stream.submit_tool_result, stream, "toolu_1", "late")
  eq(err.code, "no_such_call")
  stream:close()
  raises("closed panto%.Stream", stream.submit_tool_result, stream, "toolu_1", "x")
  raises("cannot encode a function", agent.run, agent, "x", { temperature = print })
  raises("run_tools must be a boolean", agent.run, agent, "x", { run_tools = 0 })
end)

test("a tool without a handler is answered in the loop; a handler answered by hand does not run", function()
  emulator.load({ tool_answer({ { "a", "manual" }, { "b", "auto" }, { "c", "overridden" } }), text_answer("ok") })
  local overridden_ran = false
  local agent <close> = new_agent({ tools = {
    { name = "manual" },
    { name = "auto", handler = function() return "auto ran" end },
    { name = "overridden", handler = function() overridden_ran = true; return "handler" end },
  } })
  local stream <close> = agent:run("go")
  local results = {}
  for ev in stream:events() do
    if ev.kind == "tool_call_start" and ev.name ~= "auto" then stream:submit_tool_result(ev.id, "by hand " .. ev.id) end
    if ev.kind == "tool_result" then results[ev.id] = ev.content end
  end
  eq(results.a, "by hand a")
  eq(results.b, "auto ran")
  eq(results.c, "by hand c")
  eq(overridden_ran, false, "the handler of a call answered by hand")
end)

test("a tool the agent may not use: the turn fails, the handler does not run", function()
  emulator.load({ tool_answer({ { "toolu_1", "get_weather", { city = "Paris" } } }), text_answer("never") })
  local ran = false
  local tool = { name = "get_weather", params = { city = "string" }, capabilities = { "net" },
                 handler = function() ran = true; return "x" end }
  local agent <close> = new_agent({ tools = { tool }, capabilities = { "fs.read" } })
  eq(agent:tools("anthropic", true), "[]", "not offered to the model")
  local err = raises("get_weather", function()
    for _ in agent:run("Weather?"):events() do end
  end)
  eq(err.code, "capability", "code")
  eq(ran, false, "the handler ran")
  eq(#emulator.requests(), 1, "no second request")
  eq(emulator.requests()[1].body.tools, nil, "no tools sent")
end)

test("input that does not match the schema, and an unknown tool: panto answers", function()
  emulator.load({ tool_answer({ { "t1", "get_weather", { town = "Paris" } }, { "t2", "nope" } }), text_answer("ok") })
  local ran = false
  local agent <close> = new_agent({ tools = { { name = "get_weather", params = { city = "string" },
                                                handler = function() ran = true end } } })
  local events = collect(agent:run("go"))
  local s1, s2 = find(events, "tool_call_start", 1), find(events, "tool_call_start", 2)
  eq(s1.awaiting_result, false, "invalid input: panto answers")
  eq(s2.awaiting_result, false, "unknown tool: panto answers")
  local r1, r2 = find(events, "tool_result", 1), find(events, "tool_result", 2)
  assert(r1.content:find("Invalid input for tool get_weather", 1, true), r1.content)
  eq(r1.is_error, true)
  eq(r2.content, "Unknown tool: nope")
  eq(ran, false, "the handler ran")
end)

test("max_tool_iterations: one round too many fails the turn", function()
  emulator.load({ tool_answer({ { "t1", "ping" } }), tool_answer({ { "t2", "ping" } }), text_answer("never") })
  local n = 0
  local agent <close> = new_agent({ max_tool_iterations = 1, tools = { { name = "ping", handler = function() n = n + 1; return "pong" end } } })
  local err = raises("", function() for _ in agent:run("go"):events() do end end)
  eq(err.code, "tool_loop", "code")
  eq(n, 1, "handler runs")
end)

test("an OpenAI round trip", function()
  emulator.load({ tool_answer({ { "call_1", "add", { a = 2, b = 3.5 } } }), text_answer("5.5") })
  local agent <close> = new_agent({ provider = "openai", tools = { {
    name = "add", params = { a = "number", b = "number" },
    handler = function(input) return input.a + input.b end,
  } } })
  local events = collect(agent:run("2 + 3.5?"))
  eq(find(events, "tool_result").content, "5.5")
  local requests = emulator.requests()
  eq(requests[1].path, "/v1/chat/completions")
  eq(requests[1].body.tools[1]["function"].name, "add")
  local tool_msg
  for _, m in ipairs(requests[2].body.messages) do if m.role == "tool" then tool_msg = m end end
  assert(tool_msg, "a tool message")
  eq(tool_msg.tool_call_id, "call_1")
end)

test("the native read tool", function()
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir " .. shell_quote(dir)))
  local f = assert(io.open(dir .. "/notes.txt", "w"))
  f:write("one\ntwo\nthree\n")
  f:close()
  emulator.load({ tool_answer({ { "r1", "read", { path = "notes.txt", offset = 1, limit = 1 } } }), text_answer("two") })
  local agent <close> = new_agent({ read_tool = { root = dir, max_bytes = 1000 }, capabilities = { "fs.read" } })
  local tools = json.decode(agent:tools("panto"))
  eq(tools[1].name, "read")
  eq(tools[1].native, true)
  local events = collect(agent:run("read it"))
  os.remove(dir .. "/notes.txt")
  os.remove(dir)
  eq(find(events, "tool_call_start").awaiting_result, false, "native")
  local result = find(events, "tool_result")
  eq(result.is_error, false, result.content)
  assert(result.content:find("two", 1, true) and not result.content:find("one", 1, true), result.content)
end)

-- ---- Tools that run at the same time: coroutines, panto.sleep, panto.progress ------------------

-- A to-be-closed value that records, in `log`, that it was closed.
local function close_guard(log, name)
  return setmetatable({}, { __close = function() log[#log + 1] = name .. " closed" end })
end

-- An agent whose tool "slow" records its close in `log`, optionally reports progress, then
-- sleeps for an hour (it never wakes in these tests).
local function sleeping_agent(log, with_progress)
  return new_agent({ tools = { { name = "slow", handler = function(_, call)
    local guard <close> = close_guard(log, call.id)
    if with_progress then panto.progress("sleeping") end
    panto.sleep(3600)
    return "never"
  end } } })
end

test("the handlers of a round run at the same time: each yields in panto.sleep", function()
  emulator.load({ tool_answer({ { "t1", "step" }, { "t2", "step" }, { "t3", "step" } }), text_answer("ok") })
  local log, running, most = {}, 0, 0
  local agent <close> = new_agent({ tools = { {
    name = "step",
    handler = function(_, call)
      running = running + 1
      most = math.max(most, running)
      log[#log + 1] = "start " .. call.id
      panto.sleep(0.05)
      log[#log + 1] = "end " .. call.id
      running = running - 1
      return "done " .. call.id
    end,
  } } })
  local events = collect(agent:run("go"))
  eq(most, 3, "handlers running at once")
  eq(table.concat(log, ","):sub(1, 26), "start t1,start t2,start t3", "all started before any ended")
  local results = {}
  for _, ev in ipairs(events) do
    if ev.kind == "tool_result" then results[#results + 1] = ev.content end
  end
  eq(table.concat(results, ","), "done t1,done t2,done t3", "results in call order")
  local sent = anthropic_results(emulator.requests()[2])
  eq(sent.t3.content, "done t3")
end)

test("coroutine.yield() in a handler lets the others run; results in call order whatever the finish order", function()
  emulator.load({ tool_answer({ { "a", "waiter" }, { "b", "setter" } }), text_answer("ok") })
  local ready = false
  local agent <close> = new_agent({ tools = {
    { name = "waiter", handler = function()
        local turns = 0
        while not ready do turns = turns + 1; coroutine.yield("ignored") end
        return "saw it after " .. (turns > 0 and "yielding" or "nothing")
      end },
    { name = "setter", handler = function() ready = true; return "set" end },
  } })
  local events = collect(agent:run("go"))
  eq(find(events, "tool_result", 1).id, "a", "first result")
  eq(find(events, "tool_result", 1).content, "saw it after yielding")
  eq(find(events, "tool_result", 2).content, "set")
end)

test("a sequential tool runs alone; tool_execution sequential makes every call run alone", function()
  emulator.load({ tool_answer({ { "p1", "par" }, { "s1", "seq" }, { "p2", "par" } }), text_answer("ok") })
  local log, running, overlapped = {}, 0, {}
  local function handler(_, call)
    running = running + 1
    if running > 1 then overlapped[call.id] = true end
    log[#log + 1] = "start " .. call.id
    panto.sleep(0.02)
    if running > 1 then overlapped[call.id] = true end
    log[#log + 1] = "end " .. call.id
    running = running - 1
    return call.id
  end
  local agent <close> = new_agent({ tools = {
    { name = "par", handler = handler },
    { name = "seq", sequential = true, handler = handler },
  } })
  local events = collect(agent:run("go"))
  eq(find(events, "tool_call_start", 2).sequential, true, "the event says so")
  eq(find(events, "tool_call_start", 1).sequential, false)
  eq(overlapped.s1, nil, "the sequential call overlapped")
  eq(table.concat(log, ","), "start p1,end p1,start s1,end s1,start p2,end p2", "order")

  emulator.load({ tool_answer({ { "p1", "par" }, { "p2", "par" } }), text_answer("ok") })
  log, overlapped = {}, {}
  local serial <close> = new_agent({ tool_execution = "sequential", tools = { { name = "par", handler = handler } } })
  events = collect(serial:run("go"))
  eq(find(events, "tool_call_start", 1).sequential, true, "tool_execution")
  eq(table.concat(log, ","), "start p1,end p1,start p2,end p2", "order")
  eq(next(overlapped), nil, "no overlap")
end)

test("panto.progress in a handler: tool_progress events while it runs; a no-op elsewhere", function()
  emulator.load({ tool_answer({ { "t1", "long" } }), text_answer("ok") })
  panto.progress("outside", 0.5) -- nothing to report to
  local agent <close> = new_agent({ tools = { { name = "long", handler = function()
    panto.progress("starting")
    panto.sleep(0.01)
    panto.progress("half", 0.5)
    local ok, err = pcall(panto.progress, "too far", 1.5)
    assert(not ok and tostring(err):find("fraction must be from 0 to 1"), tostring(err))
    return "finished"
  end } } })
  local events, kinds = collect(agent:run("go"))
  assert(kinds:find("tool_call_start tool_progress tool_progress tool_result", 1, true), kinds)
  local p1, p2 = find(events, "tool_progress", 1), find(events, "tool_progress", 2)
  eq(p1.id, "t1")
  eq(p1.name, "long")
  eq(p1.text, "starting")
  eq(p1.fraction, nil, "no fraction")
  eq(p2.text, "half")
  eq(p2.fraction, 0.5)
  eq(find(events, "tool_result").content, "finished")
end)

test("panto.sleep outside a handler sleeps; its argument is checked", function()
  panto.sleep(0)
  panto.sleep(0.001)
  raises("finite number", panto.sleep, -1)
  raises("finite number", panto.sleep, math.huge)
  raises("number expected", panto.sleep, "soon")
end)

test("a cancel while handlers are suspended: the turn fails, their to-be-closed values close, nothing hangs", function()
  emulator.load({ tool_answer({ { "t1", "slow" }, { "t2", "slow" } }), text_answer("never") })
  local log, weak = {}, setmetatable({}, { __mode = "k" })
  local stream
  local agent <close> = new_agent({ tools = { { name = "slow", handler = function(_, call)
    weak[coroutine.running()] = true
    local guard <close> = close_guard(log, call.id)
    if call.id == "t2" then stream:cancel() end
    panto.sleep(3600)
    log[#log + 1] = "woke " .. call.id
    return "never"
  end } } })
  stream = agent:run("go")
  local err = raises("", function() for _ in stream:events() do end end)
  eq(err.code, "canceled", "code")
  table.sort(log)
  eq(table.concat(log, ","), "t1 closed,t2 closed", "closed, never woken")
  stream:close()
  stream = nil
  collectgarbage()
  collectgarbage()
  eq(next(weak), nil, "the coroutines were collected")
  emulator.load({ text_answer("again") })
  collect(agent:run("again")) -- the agent is free
end)

test("cancel_after while handlers sleep: next() returns with canceled", function()
  emulator.load({ tool_answer({ { "t1", "slow" } }), text_answer("never") })
  local log = {}
  local agent <close> = sleeping_agent(log)
  local stream <close> = agent:run("go")
  stream:cancel_after(50)
  local err = raises("", function() for _ in stream:events() do end end)
  eq(err.code, "canceled", "code")
  eq(table.concat(log, ","), "t1 closed")
end)

test("closing the stream (a break out of events) while handlers are suspended closes them", function()
  emulator.load({ tool_answer({ { "t1", "slow" }, { "t2", "slow" } }), text_answer("never") })
  local log = {}
  local agent <close> = sleeping_agent(log, true)
  local progress = 0
  for ev in agent:run("go"):events() do
    if ev.kind == "tool_progress" then progress = progress + 1 end
    if progress == 2 then break end -- both sleep by now
  end
  table.sort(log)
  eq(table.concat(log, ","), "t1 closed,t2 closed", "the suspended handlers closed")
  emulator.load({ text_answer("again") })
  collect(agent:run("again"))
end)

test("an unfinished stream collected while handlers are suspended: they close, the agent is free", function()
  emulator.load({ tool_answer({ { "t1", "slow" } }), text_answer("never") })
  local log = {}
  local agent <close> = sleeping_agent(log, true)
  do
    local stream = agent:run("go")
    repeat local ev = stream:next() until ev.kind == "tool_progress"
  end
  collectgarbage()
  collectgarbage()
  eq(table.concat(log, ","), "t1 closed", "closed by the collector")
  emulator.load({ text_answer("again") })
  eq(agent:complete("again").text, "again", "the agent runs the next turn")
end)

test("a handler cannot read its own stream; panto.sleep inside a metamethod sleeps plainly", function()
  emulator.load({ tool_answer({ { "t1", "reader" }, { "t2", "meta" } }), text_answer("ok") })
  local stream
  local agent <close> = new_agent({ tools = {
    { name = "reader", handler = function() return stream:next() end },
    { name = "meta", handler = function()
        local t = setmetatable({}, { __index = function() panto.sleep(0.001); return "slept" end })
        return t.x
      end },
  } })
  stream = agent:run("go")
  local events = collect(stream)
  local r1 = find(events, "tool_result", 1)
  eq(r1.is_error, true)
  assert(r1.content:find("cannot read the stream", 1, true), r1.content)
  eq(find(events, "tool_result", 2).content, "slept")
end)

test("a handler that closes its stream", function()
  emulator.load({ tool_answer({ { "t1", "closer" } }), text_answer("never") })
  local stream
  local agent <close> = new_agent({ tools = { { name = "closer", handler = function() stream:close(); return "x" end } } })
  stream = agent:run("go")
  local err = raises("closed panto%.Stream", function() for _ in stream:events() do end end)
  eq(type(err), "string")
  local s2 <close> = agent:run("again") -- the agent is free again
end)

test("handlers do not keep their agent alive", function()
  emulator.load(json.array())
  local weak = setmetatable({}, { __mode = "v" })
  do
    local agent
    agent = new_agent({ tools = { { name = "self", handler = function() return tostring(agent) end } } })
    agent:add_tool({ name = "self2", handler = function() return tostring(agent) end })
    weak[1] = agent
  end
  collectgarbage()
  collectgarbage()
  eq(weak[1], nil, "the agent was collected")
end)

-- ---- Per-turn options and the helpers over the event loop --------------------------------------

test("request parameters: config keys and per-turn options reach the body; the agent's config is unchanged", function()
  emulator.load({ text_answer("one"), text_answer("two"), text_answer("three") })
  local agent <close> = new_agent({ temperature = 0.5, stop = { "END" } })
  collect(agent:run("first"))
  collect(agent:run("second", { temperature = 0.25, top_k = 3, max_tokens = 77 }))
  collect(agent:run("third", {}))
  local requests = emulator.requests()
  eq(requests[1].body.temperature, 0.5, "config temperature")
  eq(requests[1].body.stop_sequences[1], "END", "config stop")
  eq(requests[2].body.temperature, 0.25, "the turn's temperature")
  eq(requests[2].body.top_k, 3, "the turn's top_k")
  eq(requests[2].body.max_tokens, 77, "the turn's max_tokens")
  eq(requests[3].body.temperature, 0.5, "the config again")
  eq(requests[3].body.top_k, nil, "the turn's options are gone")
end)

test("per-turn options panto refuses: a config error, nothing appended; run_tools stays the module's", function()
  local agent <close> = new_agent()
  local err = raises("temperature", agent.run, agent, "x", { temperature = 7 })
  eq(err.code, "config", "code")
  err = raises("seed is an OpenAI parameter", agent.run, agent, "x", { seed = 1 })
  eq(err.code, "config", "code")
  eq(agent:message_count(), 0, "nothing appended")
  raises("cannot encode a function", agent.run, agent, "x", { metadata = { f = print } })
  emulator.load({ tool_answer({ { "t1", "t" } }), text_answer("ok") })
  local manual <close> = new_agent({ tools = { { name = "t", handler = function() return "auto" end } } })
  local stream <close> = manual:run("go", { run_tools = false, temperature = 0 })
  local ev
  repeat ev = stream:next() until ev.kind == "tool_call_start"
  eq(raises("awaits its result", stream.next, stream).code, "result_pending")
  eq(emulator.requests()[1].body.temperature, 0, "the option went with run_tools")
end)

test("agent:complete and stream:final_message: the turn's end with its text, tools run", function()
  emulator.load({ tool_answer({ { "t1", "add", { a = 1, b = 2 } } }, "Adding."), text_answer("It is 3.") })
  local agent <close> = new_agent({ tools = { { name = "add", params = { a = "number", b = "number" },
                                                handler = function(input) return input.a + input.b end } } })
  local msg = agent:complete("1 + 2?", { temperature = 0 })
  eq(msg.kind, "message_complete")
  eq(msg.text, "It is 3.", "the last assistant message's text")
  eq(msg.stop_reason, "end_turn")
  eq(msg.usage.input_tokens, 13, "usage over the turn")
  eq(anthropic_results(emulator.requests()[2]).t1.content, "3", "the handler ran")

  emulator.load({ text_answer("Read first.") })
  local stream <close> = agent:run("again")
  local events = collect(stream)
  eq(events[#events].kind, "message_complete")
  msg = stream:final_message() -- after the events were read
  eq(msg.text, "Read first.")
  eq(stream:final_message().text, "Read first.", "again")
  emulator.load({ text_answer("next") })
  collect(agent:run("next turn"))
  eq(raises("let go", stream.final_message, stream).code, "state", "once the agent ran another turn")
end)

test("stream:text(): the text deltas of the turn; break closes the stream", function()
  emulator.load({
    { message = { content = { { type = "thinking", thinking = "hmm", signature = "s" }, { type = "text", text = "Hello there." } } } },
    text_answer("unused"),
  })
  local agent <close> = new_agent()
  local stream <close> = agent:run("Hi")
  local parts = {}
  for text in stream:text() do parts[#parts + 1] = text end
  eq(table.concat(parts), "Hello there.", "only text, not thinking")
  eq(stream:next(), nil, "the turn is over")
  emulator.load({ { message = { content = { { type = "text", text = "Long answer" } } }, chunk_size = 4 }, text_answer("after") })
  local s2 = agent:run("Again")
  for _ in s2:text() do break end
  eq(tostring(s2), "panto.Stream (closed)", "break closed it")
  collect(agent:run("the agent is free"))
end)

test("request ids: ev.request_id of each message_start, stream:request_ids()", function()
  emulator.load({ tool_answer({ { "t1", "t" } }), text_answer("ok") })
  local agent <close> = new_agent({ tools = { { name = "t", handler = function() return "x" end } } })
  local stream <close> = agent:run("go")
  local ids = {}
  for ev in stream:events() do
    if ev.kind == "message_start" then
      if ev.request_id ~= nil then
        eq(type(ev.request_id), "string")
        assert(#ev.request_id > 0, "an empty request id is left nil")
        ids[#ids + 1] = ev.request_id
      end
    end
  end
  local got = stream:request_ids()
  eq(#got, #ids, "one per message that had one")
  for i, id in ipairs(ids) do eq(got[i], id, "request id " .. i) end
  eq(#ids, 2, "the emulator sends request-id")
  got[1] = "changed"
  eq(stream:request_ids()[1], ids[1], "a new list each call")
end)

test("error details: retry_after, headers (a table), no output", function()
  emulator.load({ { status = 429, error = { type = "rate_limit_error", message = "Slow down" },
                    headers = { ["retry-after"] = "7" } } })
  local agent <close> = new_agent({ retry = { max_retries = 0 } })
  local err = raises("Slow down", function() agent:complete("Hi") end)
  eq(err.code, "rate_limit", "code")
  eq(type(err.headers), "table", "headers")
  eq(err.output, nil, "output is for output errors")
  eq(err.retry_after, 7, "retry_after")
  eq(err.headers["retry-after"], "7", "the header")
  local dead <close> = assert(panto.Agent({ provider = "anthropic", model = "m", api_key = "k",
                                            base_url = "http://127.0.0.1:1", retry = { max_retries = 0 } }))
  local bad = raises("", function() dead:run("Hi"):next() end)
  eq(bad.code, "connection", "code")
  eq(type(bad.headers), "table", "headers of an error without an HTTP answer")
  eq(next(bad.headers), nil, "empty")
end)

test("agent:parse: a table schema, the answer decoded; invalid output raises with its text", function()
  emulator.load({ text_answer('{"city": "Paris", "days": 3}'), text_answer("not json") })
  local agent <close> = new_agent()
  local schema = { city = "string", days = { type = "integer", description = "How many" } }
  local value, text = agent:parse("Where?", schema)
  eq(value.city, "Paris")
  eq(value.days, 3)
  eq(text, '{"city": "Paris", "days": 3}')
  local format = emulator.requests()[1].body.output_config.format
  eq(format.type, "json_schema")
  eq(format.schema.properties.days.description, "How many", "the schema sent")
  local err = raises("", agent.parse, agent, "Again?", '{"type":"object","properties":{"x":{"type":"string"}}}')
  eq(err.code, "output", "code")
  eq(err.output, "not json", "the text")
  raises("leave it out", agent.parse, agent, "x", schema, { response_format = { type = "text" } })
  raises("not valid JSON", agent.parse, agent, "x", "{")
  raises("a schema is a table", agent.parse, agent, "x", 42)
end)

test("agent:parse on OpenAI: strict when the schema allows it, else not (the library's rule)", function()
  emulator.load({ text_answer('{"city": "Paris"}'), text_answer('{"city": "Lima"}'), text_answer('{"city": "Rome", "at": {"x": 1}}') })
  local agent <close> = new_agent({ provider = "openai", model = "gpt-test" })
  local closed = '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}'
  local optional = '{"type":"object","properties":{"city":{"type":"string"},"note":{"type":"string"}},"required":["city"],"additionalProperties":false}'
  eq(agent:parse("?", closed).city, "Paris")
  eq(agent:parse("?", optional).city, "Lima")
  -- A table of parameters: its objects closed, its parameters required (no default): strict.
  eq(agent:parse("?", { city = "string", at = { type = "object", params = { x = "number" } } }).city, "Rome")
  local strict = {}
  for i, r in ipairs(emulator.requests()) do strict[i] = tostring(r.body.response_format.json_schema.strict) end
  eq(table.concat(strict, " "), "true false true", "strict per request")
  local schema = emulator.requests()[3].body.response_format.json_schema.schema
  eq(schema.additionalProperties, false, "the object is closed")
  eq(schema.properties.at.additionalProperties, false, "the nested object too")
  eq(table.concat(schema.required, " "), "at city", "required")
end)

-- ---- Provider resilience: retries, timeouts, cancellation, reopen, set_config ------------------

-- Seconds on a monotonic clock (Linux /proc/uptime, 10 ms steps; else os.time).
local function now()
  local f = io.open("/proc/uptime", "r")
  if not f then return os.time() end
  local t = f:read("n")
  f:close()
  return t
end

-- The number of threads of this process (Linux), or nil.
local function thread_count()
  local f = io.open("/proc/self/status", "r")
  if not f then return nil end
  local n = f:read("a"):match("\nThreads:%s*(%d+)")
  f:close()
  return tonumber(n)
end

-- The thread count once it reaches `want`, or the last count after a 5 s deadline.
-- pthread_join returns when the kernel clears the thread's id, a moment before the thread
-- leaves the process's count: on a loaded machine a joined thread is still counted briefly.
local function thread_count_settled(want)
  local deadline = now() + 5
  local n = thread_count()
  while n ~= want and now() < deadline do
    os.execute("sleep 0.01")
    n = thread_count()
  end
  return n
end

-- The thread count at rest: the least of a few looks 20 ms apart, so that a thread joined by
-- an earlier test and still leaving is not counted.
local function thread_count_at_rest()
  local least = thread_count()
  for _ = 1, 5 do
    os.execute("sleep 0.02")
    local n = thread_count()
    if n and n < least then least = n end
  end
  return least
end

local function sse_event(name, data)
  return "event: " .. name .. "\ndata: " .. json.encode(data) .. "\n\n"
end

-- An Anthropic stream that stops after message_start, block_start and the delta `first`, and
-- then holds the connection open (the emulator's stall fault) without sending the rest.
local function stalled_answer(first)
  local head = sse_event("message_start", { type = "message_start", message = {
      id = "msg_stall", type = "message", role = "assistant", model = "claude-test", content = json.array(),
      stop_reason = json.null, stop_sequence = json.null, usage = { input_tokens = 10, output_tokens = 1 } } })
    .. sse_event("content_block_start", { type = "content_block_start", index = 0, content_block = { type = "text", text = "" } })
    .. sse_event("content_block_delta", { type = "content_block_delta", index = 0, delta = { type = "text_delta", text = first } })
  local rest = sse_event("content_block_delta", { type = "content_block_delta", index = 0, delta = { type = "text_delta", text = "never sent" } })
    .. sse_event("content_block_stop", { type = "content_block_stop", index = 0 })
    .. sse_event("message_delta", { type = "message_delta", delta = { stop_reason = "end_turn", stop_sequence = json.null },
                                    usage = { output_tokens = 5 } })
    .. sse_event("message_stop", { type = "message_stop" })
  return { body = head .. rest, fault = { after_bytes = #head, kind = "stall" } }
end

-- Like collect(), with next(): the stream stays open.
local function drain(stream)
  local events, kinds = {}, {}
  for ev in stream.next, stream do
    events[#events + 1] = ev
    kinds[#kinds + 1] = ev.kind
  end
  return events, table.concat(kinds, " ")
end

-- Reads events until next() raises; returns the kinds read (joined) and the error.
local function until_error(stream)
  local kinds = {}
  while true do
    local ok, ev = pcall(stream.next, stream)
    if not ok then return table.concat(kinds, " "), ev end
    assert(ev, "the turn ended without an error")
    kinds[#kinds + 1] = ev.kind
  end
end

local function last_message(agent)
  local conv = json.decode(agent:conversation())
  return conv[#conv], #conv
end

test("options thinking, retry and timeouts: panto refuses bad ones", function()
  local function refused(pattern, extra)
    local config = { provider = "anthropic", model = "m", api_key = "k" }
    for k, v in pairs(extra) do config[k] = v end
    local a, msg, code = panto.Agent(config)
    eq(a, nil, "agent")
    assert(msg:find(pattern), ("%q does not match %q"):format(msg, pattern))
    eq(code, "config", "code")
  end
  refused("thinking must be one of", { thinking = 1 })
  refused("thinking must be one of", { thinking = "lots" })
  refused("retry must be a JSON object", { retry = 3 })
  refused('unknown retry key "tries"', { retry = { tries = 3 } })
  refused("retry.max_retries must be an integer", { retry = { max_retries = 1.5 } })
  refused("timeouts must be a JSON object", { timeouts = "fast" })
  refused("timeouts.connect_ms must be", { timeouts = { connect_ms = -1 } })
  refused("timeouts.idle_ms must be an integer", { timeouts = { idle_ms = "5" } })
  refused("timeouts.idle_ms must be", { timeouts = { idle_ms = -5 } })
  refused("retry.max_retries must be", { retry = { max_retries = 1000 } })

  emulator.load({ text_answer("ok") })
  local agent <close> = new_agent({ thinking = "low", max_tokens = 4096,
                                    retry = { max_retries = 0, initial_delay_ms = 0, max_delay_ms = 0, max_retry_after_ms = 0 },
                                    timeouts = { connect_ms = 5000, first_byte_ms = 5000, idle_ms = 5000, total_ms = 0 } })
  collect(agent:run("Hi"))
  local body = emulator.requests()[1].body
  eq(body.thinking.type, "enabled", "thinking sent")
  eq(body.thinking.budget_tokens, 2048, "the budget of thinking = low")
end)

-- The connection numbers of the requests the emulator received, joined: "1 1 2".
local function connection_numbers()
  local numbers = {}
  for i, r in ipairs(emulator.requests()) do numbers[i] = tostring(r.connection) end
  return table.concat(numbers, " ")
end

test("agent:connections() counts connections opened and reused; keep_alive.idle_ms 0 keeps none", function()
  emulator.load({ text_answer("one"), text_answer("two"), text_answer("three"), text_answer("four") })
  local agent <close> = new_agent()
  local c = agent:connections()
  eq(c.opened, 0, "opened before a turn")
  eq(c.reused, 0, "reused before a turn")
  collect(agent:run("a"))
  collect(agent:run("b"))
  c = agent:connections()
  eq(c.opened, 1, "opened after two turns")
  eq(c.reused, 1, "reused after two turns")
  eq(agent:set_config({ keep_alive = { idle_ms = 0 } }), true, "set_config")
  collect(agent:run("c"))
  collect(agent:run("d"))
  c = agent:connections()
  eq(c.opened, 3, "opened with idle_ms 0")
  eq(c.reused, 1, "reused with idle_ms 0")
  eq(connection_numbers(), "1 1 2 3", "the emulator's connections")
end)

test("agent:settings() gives the settings held, never the key; a switch shows its own", function()
  local agent <close> = assert(panto.Agent({ provider = "anthropic", model = "claude-test",
    base_url = "http://127.0.0.1:9", api_key = "sk-secret", thinking = "low", capabilities = { "fs.read" } }))
  local s = agent:settings()
  eq(s.provider, "anthropic", "provider")
  eq(s.model, "claude-test", "model")
  eq(s.base_url, "http://127.0.0.1:9", "base_url")
  eq(s.system, panto.null, "no system prompt")
  eq(s.max_tokens, 4096, "max_tokens")
  eq(s.thinking, "low", "thinking")
  eq(s.max_tool_iterations, 10, "max_tool_iterations")
  eq(#s.capabilities, 1, "capabilities")
  eq(s.capabilities[1], "fs.read", "capability")
  eq(s.api_key, nil, "no key")
  eq(agent:set_config({ provider = "openai", model = "gpt-test", base_url = "http://127.0.0.1:8/v1", system = "Brief." }), true, "set_config")
  s = agent:settings()
  eq(s.provider .. " " .. s.model .. " " .. s.base_url .. " " .. s.system, "openai gpt-test http://127.0.0.1:8/v1 Brief.", "after the switch")
  agent:close()
  raises("closed panto%.Agent", agent.settings, agent)
end)

test("panto.model_info and agent:model_info(): the catalog's entry, a dated name, unknown is nil, model_info over it", function()
  local m = assert(panto.model_info("anthropic", "claude-sonnet-4-5-20990101"), "a dated name finds its alias")
  eq(m.name, "claude-sonnet-4-5", "the catalog's name")
  eq(type(m.max_input_tokens), "number", "max_input_tokens")
  eq(m.price.output > m.price.input, true, "prices")
  eq(m.abilities.tools and m.abilities.images, true, "abilities")
  eq(m.catalog:match("^litellm ") ~= nil, true, "the source")
  eq(panto.model_info("openai", "gpt-4o").price.cache_write_5m, nil, "an unknown price is nil")
  eq(panto.model_info("anthropic", "no-such-model"), nil, "unknown model")
  eq(panto.model_info("no-such-provider", "gpt-4o"), nil, "unknown provider")
  raises("bad argument", panto.model_info, "anthropic")
  local agent <close> = assert(panto.Agent({ provider = "openai", model = "mine", api_key = "k" }))
  eq(agent:model_info(), nil, "neither knows it")
  eq(agent:set_config({ model_info = { max_output_tokens = 100 } }), true, "set_config")
  local mine = agent:model_info()
  eq(mine.name .. " " .. mine.max_output_tokens, "mine 100", "the override alone")
  eq(mine.catalog, panto.null, "not in the catalog")
  eq(agent:set_config({ model = "gpt-4o" }), true, "switch the model")
  eq(agent:model_info().max_output_tokens, 100, "the override kept over the catalog's")
  agent:close()
  raises("closed panto%.Agent", agent.model_info, agent)
end)

test("agent:count_tokens(): the provider's count, nothing appended, a typed error, busy, the estimate", function()
  emulator.load({ text_answer("Hello") })
  local agent <close> = new_agent({ cache = { mode = "off" } })
  -- The emulator's count: {model, messages: [{user, content: [{type, text}]}]}, 3 objects, 5 words.
  local n = agent:count_tokens("How many tokens is this?")
  eq(n.input_tokens .. " " .. tostring(n.estimated), "8 false", "the count")
  eq(agent:message_count(), 0, "nothing appended")
  local stream <close> = agent:run("Hi")
  local err = raises("", agent.count_tokens, agent, "hi")
  eq(err.code, "busy", "while a stream is unfinished")
  collect(stream)
  local nokey <close> = assert(panto.Agent({ provider = "anthropic", model = "claude-test", base_url = emulator.url }))
  err = raises("", nokey.count_tokens, nokey)
  eq(err.code .. " " .. tostring(err.http_status), "authentication 401", "a typed error")
  local chat <close> = assert(panto.Agent({ provider = "openai", model = "gpt-4o", api_key = "k" }))
  n = chat:count_tokens("How many tokens is this?")
  eq(n.input_tokens .. " " .. tostring(n.estimated), "6 true", "the estimate")
end)

test("agent:list_models(): every page, joined with the catalog (nil when unknown), a typed error", function()
  local agent <close> = new_agent({})
  local listed = agent:list_models()
  local ids = {}
  for i, m in ipairs(listed) do ids[i] = m.id end
  eq(table.concat(ids, " "), "claude-sonnet-4-5-20250929 claude-haiku-4-5-20251001 claude-emulator-1", "the ids, in order")
  eq(listed[1].display_name .. " " .. listed[1].created, "Claude Sonnet 4.5 2025-09-29T00:00:00Z", "the name and date")
  eq(listed[1].model_info.max_input_tokens, 200000, "the catalog's entry")
  eq(listed[3].model_info, nil, "an unknown model")
  local nokey <close> = assert(panto.Agent({ provider = "anthropic", model = "claude-test", base_url = emulator.url }))
  local err = raises("", nokey.list_models, nokey)
  eq(err.code .. " " .. tostring(err.http_status), "authentication 401", "a typed error")
end)

test("a connection idle for longer than keep_alive.idle_ms is not reused", function()
  emulator.load({ text_answer("one"), text_answer("two") })
  local agent <close> = new_agent({ keep_alive = { idle_ms = 10 } })
  collect(agent:run("a"))
  os.execute("sleep 0.1") -- longer than idle_ms
  collect(agent:run("b"))
  local c = agent:connections()
  eq(c.opened, 2, "opened")
  eq(c.reused, 0, "reused")
  eq(connection_numbers(), "1 2", "the emulator's connections")
end)

test("option keep_alive: panto refuses bad ones", function()
  local function refused(pattern, keep_alive)
    local a, msg, code = panto.Agent({ provider = "anthropic", model = "m", api_key = "k", keep_alive = keep_alive })
    eq(a, nil, "agent")
    assert(msg:find(pattern, 1, true), ("%q does not hold %q"):format(msg, pattern))
    eq(code, "config", "code")
  end
  refused("keep_alive must be a JSON object", 60000)
  refused('unknown keep_alive key "max"', { max = 1 })
  refused("keep_alive.idle_ms must be an integer", { idle_ms = 1.5 })
  refused("keep_alive.idle_ms must be an integer from 0 to 86400000", { idle_ms = -1 })
end)

test("provider_retry events, then success", function()
  emulator.load({
    { status = 429, error = { type = "rate_limit_error", message = "Slow down" }, headers = { ["retry-after-ms"] = "30" } },
    { message = { content = { { type = "text", text = "cut" } } }, fault = { after_bytes = 10, kind = "reset" } },
    text_answer("Finally."),
  })
  local agent <close> = new_agent({ retry = { initial_delay_ms = 0 } })
  local events, kinds = collect(agent:run("Hi"))
  eq(kinds, "provider_retry provider_retry message_start block_start content_delta block_complete message_end message_complete", "kinds")
  local r1, r2 = events[1], events[2]
  eq(r1.attempt, 1, "attempt")
  eq(r1.delay_ms, 30, "delay_ms from retry-after-ms")
  eq(r1.http_status, 429, "http_status")
  eq(r1.reason, "rate_limit_error: Slow down", "reason")
  eq(r2.attempt, 2, "second attempt")
  eq(r2.delay_ms, 0, "initial_delay_ms 0")
  eq(r2.http_status, nil, "a dropped connection is not an HTTP answer")
  eq(type(r2.reason), "string")
  eq(find(events, "block_complete").text, "Finally.")
  eq(#emulator.requests(), 3, "requests")
  local msg, n = last_message(agent)
  eq(n, 2, "one user and one assistant message")
  eq(msg.content[1].text, "Finally.")
end)

test("retries off: the first error fails the turn; exhausted retries fail with the last", function()
  emulator.load({ error_answer(529, "overloaded_error", "Overloaded"), text_answer("never") })
  local agent <close> = new_agent({ retry = { max_retries = 0 } })
  local kinds, err = until_error(agent:run("Hi"))
  eq(kinds, "", "no event before the error")
  eq(err.code, "overloaded", "code")
  eq(err.http_status, 529, "http_status")
  eq(err.type, "overloaded_error", "type")
  eq(#emulator.requests(), 1, "requests")

  emulator.load({ error_answer(500, "api_error", "boom 1"), error_answer(500, "api_error", "boom 2"),
                  error_answer(500, "api_error", "boom 3"), text_answer("never") })
  local a2 <close> = new_agent({ retry = { max_retries = 2, initial_delay_ms = 0 } })
  kinds, err = until_error(a2:run("Hi"))
  eq(kinds, "provider_retry provider_retry", "kinds")
  eq(err.code, "server", "code")
  eq(err.message, "boom 3", "the last answer's message")
  eq(#emulator.requests(), 3, "requests")
end)

test("idle timeout on a stall", function()
  emulator.load({ stalled_answer("Hello ") })
  local agent <close> = new_agent({ timeouts = { idle_ms = 200 } })
  local stream <close> = agent:run("Hi")
  local t0 = now()
  local kinds, err = until_error(stream)
  local elapsed = now() - t0
  eq(kinds, "message_start block_start content_delta", "kinds")
  eq(err.code, "timeout", "code")
  eq(err.type, "timeout_error", "type")
  eq(err.http_status, nil, "http_status")
  assert(err.message:find("idle_ms", 1, true), err.message)
  assert(elapsed >= 0.15 and elapsed < 3, "timed out after " .. elapsed .. " s")
  eq(#emulator.requests(), 1, "not retried: content was delivered")
  assert(rawequal(select(2, pcall(stream.next, stream)), err), "sticky")
end)

test("cancel_after while blocked on a stall: canceled promptly; a new turn works", function()
  emulator.load({ stalled_answer("Partial "), text_answer("Second answer.") })
  -- idle_ms is the safety net: without the cancel the turn ends in "timeout" after 5 s.
  local agent <close> = new_agent({ timeouts = { idle_ms = 5000 } })
  local stream <close> = agent:run("Hello")
  eq(stream:cancel_after(60000), stream, "returns the stream")
  stream:cancel_after(200) -- replaces the first timer
  local t0 = now()
  local kinds, err = until_error(stream)
  local elapsed = now() - t0
  eq(kinds, "message_start block_start content_delta", "kinds")
  eq(err.code, "canceled", "code")
  eq(err.type, "canceled_error", "type")
  eq(err.http_status, nil, "http_status")
  assert(elapsed >= 0.15 and elapsed < 2, "canceled after " .. elapsed .. " s")
  assert(rawequal(select(2, pcall(stream.next, stream)), err), "sticky")
  local msg = last_message(agent)
  eq(msg.role, "assistant")
  eq(msg.stop_reason, "aborted", "stop_reason")
  eq(msg.content[1].text, "Partial ", "what was said stays")

  local events = collect(agent:run("Again"))
  eq(find(events, "block_complete").text, "Second answer.")
  local sent = emulator.requests()[2].body.messages
  eq(#sent, 3, "messages sent")
  eq(sent[2].role, "assistant")
  eq(sent[2].content[1].text, "Partial ", "the partial message is sent back")
end)

test("cancel_after: the timer stops with the turn, close does not wait for it, threads are joined", function()
  local agent <close> = new_agent()
  local s = agent:run("x")
  raises("bad argument #2 .*ms must be a number from 0 to 30 days", s.cancel_after, s, -1)
  raises("number expected", s.cancel_after, s, "soon")
  raises("30 days", s.cancel_after, s, math.huge)
  raises("30 days", s.cancel_after, s, 0 / 0)

  emulator.load({ text_answer("quick") })
  s:close()
  raises("closed panto%.Stream", s.cancel_after, s, 10)
  local t0 = now()
  local _, kinds = collect(agent:run("Hi"):cancel_after(60000))
  eq(kinds:match("(%S+)$"), "message_complete", "the turn ended before the timer")
  local base = thread_count_at_rest() -- after a turn: panto's own watchdog thread runs by now
  local pending = {}
  for i = 1, 20 do pending[i] = agent:run("x"):cancel_after(60000); pending[i]:close() end
  for i = 1, 20 do pending[i] = new_agent():run("x"):cancel_after(60000) end
  if base then eq(thread_count(), base + 20, "one thread per armed timer") end
  pending = nil
  collectgarbage()
  collectgarbage()
  if base then eq(thread_count_settled(base), base, "the timers' threads were joined") end
  assert(now() - t0 < 2, "closing waited for the timers")
  -- A timer that fired on a finished stream: harmless.
  emulator.load({ text_answer("done") })
  local s2 <close> = agent:run("y")
  drain(s2)
  eq(s2:cancel_after(0), s2)
  s2:cancel()
  eq(s2:next(), nil, "still done")
end)

test("stream:cancel() between events; closing an unfinished turn keeps what was said", function()
  local answer = { message = { content = { { type = "text", text = "One two three.", deltas = { "One ", "two ", "three." } } } } }
  emulator.load({ answer, answer })
  local agent <close> = new_agent()
  local stream <close> = agent:run("first")
  repeat local ev = stream:next() until ev.kind == "content_delta"
  stream:cancel()
  stream:cancel() -- twice is harmless
  local _, err = until_error(stream)
  eq(err.code, "canceled", "code")
  eq(err.type, "canceled_error", "type")
  local msg, n = last_message(agent)
  eq(n, 2, "messages")
  eq(msg.stop_reason, "aborted")
  eq(msg.content[1].text, "One ", "only what was delivered")

  for ev in agent:run("second"):events() do
    if ev.kind == "content_delta" and ev.text == "two " then break end -- closes the stream
  end
  msg, n = last_message(agent)
  eq(n, 4, "messages")
  eq(msg.stop_reason, "aborted", "break kept the partial message")
  eq(msg.content[1].text, "One two ")
end)

-- Waits (with a deadline) until the agent has no unfinished stream: set_config{} says "busy"
-- until then.
local function wait_not_busy(agent)
  local deadline = now() + 5
  while true do
    local ok, _, code = agent:set_config({})
    if ok then return end
    eq(code, "busy", "set_config code")
    assert(now() < deadline, "the stream was not freed within 5 s")
    os.execute("sleep 0.01")
  end
end

test("close_after while blocked: the timer thread frees the stream, next() raises canceled", function()
  emulator.load({ stalled_answer("Partial "), text_answer("Second answer.") })
  -- idle_ms is the safety net: without the timer the turn ends in "timeout" after 5 s.
  local agent <close> = new_agent({ timeouts = { idle_ms = 5000 } })
  local stream = agent:run("Hello")
  eq(stream:close_after(200), stream, "returns the stream")
  local t0 = now()
  local kinds, err = until_error(stream)
  assert(now() - t0 < 2, "freed after " .. (now() - t0) .. " s")
  eq(kinds, "message_start block_start content_delta", "kinds")
  eq(err.code, "canceled", "code")
  eq(err.type, "canceled_error", "type")
  assert(rawequal(select(2, pcall(stream.next, stream)), err), "sticky")
  -- The stream holds no handle any more: nothing to reopen, cancel, or answer.
  eq(raises("turn is over", stream.reopen, stream).code, "state", "reopen")
  eq(raises("turn is over", stream.submit_tool_result, stream, "x", "y").code, "no_such_call", "submit")
  stream:cancel()
  -- Freed, not just canceled: the agent runs the next turn with this stream still open.
  local msg, n = last_message(agent)
  eq(n, 2, "messages")
  eq(msg.stop_reason, "aborted", "stop_reason")
  eq(msg.content[1].text, "Partial ", "what was said stays")
  local events = collect(agent:run("Again"))
  eq(find(events, "block_complete").text, "Second answer.")
  eq(emulator.requests()[2].body.messages[2].content[1].text, "Partial ", "sent back")
  stream:close() -- the timer freed it: not freed twice
  stream:close()
  eq(tostring(stream), "panto.Stream (closed)")
end)

test("close_after firing between two next() calls: the next one raises canceled", function()
  local answer = { message = { content = { { type = "text", text = "One two three.", deltas = { "One ", "two ", "three." } } } } }
  emulator.load({ answer })
  local agent <close> = new_agent()
  local stream <close> = agent:run("first")
  repeat local ev = stream:next() until ev.kind == "content_delta"
  stream:close_after(0)
  wait_not_busy(agent) -- the timer thread freed the stream
  local _, err = until_error(stream)
  eq(err.code, "canceled", "code")
  eq(err.type, "canceled_error", "type")
  assert(rawequal(select(2, pcall(stream.next, stream)), err), "sticky")
  local msg = last_message(agent)
  eq(msg.stop_reason, "aborted", "stop_reason")
  eq(msg.content[1].text, "One ", "only what was delivered")
end)

test("close_after: close(), agent:close() and the collector disarm it; each stream freed once", function()
  local agent <close> = new_agent()
  local s = agent:run("x")
  raises("30 days", s.close_after, s, -1)
  s:close()
  raises("closed panto%.Stream", s.close_after, s, 10)
  local base = thread_count_at_rest()
  for _ = 1, 10 do agent:run("x"):close_after(60000):close() end
  local pending = {}
  for i = 1, 10 do pending[i] = new_agent():run("x"):close_after(60000) end
  local other = new_agent()
  local armed = other:run("x"):close_after(60000)
  other:close()
  eq(tostring(armed), "panto.Stream (closed)", "closed with its agent")
  pending, armed = nil, nil
  collectgarbage()
  collectgarbage()
  if base then eq(thread_count_settled(base), base, "the timers' threads were joined") end
  -- The timer due while close() runs: exactly one of them frees the stream.
  for _ = 1, 50 do
    local r = agent:run("x")
    r:close_after(0)
    r:close()
  end
  -- A cancel timer replaced by a close timer; the stream left to the collector.
  for _ = 1, 20 do new_agent():run("x"):cancel_after(60000):close_after(0) end
  collectgarbage()
  collectgarbage()
  if base then eq(thread_count_settled(base), base, "the timers' threads were joined") end
  wait_not_busy(agent)
end)

test("NUL bytes are characters: in a run's text and in tool results, by handler or by hand", function()
  emulator.load({ tool_answer({ { "t1", "nul" }, { "t2", "manual" } }), text_answer("ok") })
  local agent <close> = new_agent({ tools = { { name = "nul", handler = function() return "x\0y" end }, { name = "manual" } } })
  local stream <close> = agent:run("a\0b")
  local results = {}
  for ev in stream:events() do
    if ev.kind == "tool_call_start" and ev.name == "manual" then stream:submit_tool_result(ev.id, "p\0q") end
    if ev.kind == "tool_result" then results[ev.id] = ev end
  end
  eq(results.t1.content, "x\0y", "handler result")
  eq(results.t1.is_error, false, "not an error")
  eq(results.t2.content, "p\0q", "result by hand")
  local requests = emulator.requests()
  local user = requests[1].body.messages[1].content
  eq(type(user) == "table" and user[1].text or user, "a\0b", "the run's text sent")
  local sent = anthropic_results(requests[2])
  eq(sent.t1.content, "x\0y", "sent")
  eq(sent.t2.content, "p\0q", "sent")
  eq(json.decode(agent:conversation())[1].content[1].text, "a\0b", "in the conversation")
end)

test("invalid UTF-8 in a tool result is panto's to replace", function()
  emulator.load({ tool_answer({ { "t1", "bytes" } }), text_answer("ok") })
  local agent <close> = new_agent({ tools = { { name = "bytes", handler = function() return "a\255b" end } } })
  local result = find(collect(agent:run("go")), "tool_result")
  eq(result.content, "a\239\191\189b", "U+FFFD")
  eq(result.is_error, false, "not an error")
end)

test("reopen after a 400 with set_config{thinking = 'off'}", function()
  emulator.load({ error_answer(400, "invalid_request_error", "thinking is not supported"), text_answer("Hello there.") })
  local agent <close> = new_agent({ thinking = "high" })
  local stream <close> = agent:run("Hello")
  local _, err = until_error(stream)
  eq(err.code, "invalid_request", "code")
  eq(err.http_status, 400)
  eq(agent:set_config({ thinking = "off" }), true, "set_config")
  eq(stream:reopen(), true, "reopen")
  local events, kinds = drain(stream)
  eq(kinds, "message_start block_start content_delta content_delta block_complete message_end message_complete", "kinds")
  eq(find(events, "block_complete").text, "Hello there.")
  local requests = emulator.requests()
  eq(#requests, 2, "requests")
  eq(requests[1].body.thinking.budget_tokens, 16384, "first request: thinking high")
  eq(requests[2].body.thinking, nil, "second request: no thinking")
  eq(#requests[2].body.messages, 1, "the user message once")
  local conv = json.decode(agent:conversation())
  eq(#conv, 2, "user, assistant")
  eq(stream:next(), nil, "done")
  local state = raises("the turn is over", stream.reopen, stream)
  eq(state.code, "state", "reopen after done")
  stream:close()
  raises("closed panto%.Stream", stream.reopen, stream)
end)

test("reopen refused: a failure after content (state), another unfinished stream (busy)", function()
  emulator.load({ { message = { content = { { type = "text", text = "Hello there.", deltas = { "Hello ", "there." } } } },
                    stream_error = { type = "overloaded_error", message = "Overloaded", after_events = 4 } },
                  text_answer("never") })
  local agent <close> = new_agent()
  local stream <close> = agent:run("Hello")
  local kinds, err = until_error(stream)
  eq(kinds, "message_start block_start content_delta", "kinds")
  eq(err.code, "overloaded")
  local state = raises("provider%-open boundary", stream.reopen, stream)
  eq(getmetatable(state), getmetatable(err), "a panto.Error")
  eq(state.code, "state", "code")
  assert(rawequal(select(2, pcall(stream.next, stream)), err), "the error stays")
  eq(#emulator.requests(), 1, "requests")

  emulator.load({ error_answer(503, "api_error", "down"), text_answer("Back.") })
  local a2 <close> = new_agent({ retry = { max_retries = 0 } })
  local failed <close> = a2:run("one")
  eq(select(2, until_error(failed)).code, "server")
  local other = a2:run("two") -- unfinished
  eq(raises("provider%-open boundary", other.reopen, other).code, "state", "reopen of a turn that did not fail")
  eq(raises("unfinished", failed.reopen, failed).code, "busy", "busy")
  other:close()
  eq(failed:reopen(), true, "reopen once the other stream is closed")
  local events = collect(failed)
  eq(find(events, "block_complete").text, "Back.")
end)

test("set_config: refused on bad input with nothing changed; busy during a turn", function()
  local agent <close> = new_agent({ max_tokens = 100 })
  local function refused(pattern, changes, want_code)
    local ok, msg, code = agent:set_config(changes)
    eq(ok, nil, "set_config result")
    assert(msg:find(pattern), ("%q does not match %q"):format(msg, pattern))
    eq(code, want_code or "config", "code")
  end
  refused("thinking must be one of", { thinking = "extreme" })
  refused("thinking must be one of", { max_tokens = 10, system = "changed", thinking = "extreme" }) -- all or nothing
  refused('unknown retry key "tries"', { max_tokens = 10, retry = { tries = 1 } })
  refused("tools cannot be changed by set_config", { tools = {} })
  refused('unknown config key "temprature"', { temprature = 1 })
  refused("top_k is an Anthropic parameter", { provider = "openai", top_k = 5 })
  refused("max_tokens must be an integer", { max_tokens = "many" })
  raises("table expected", agent.set_config, agent, "thinking=off")
  local stream = agent:run("busy")
  refused("unfinished", { max_tokens = 10 }, "busy")
  stream:close()

  emulator.load({ text_answer("one"), text_answer("two") })
  collect(agent:run("Hi"))
  local body = emulator.requests()[1].body
  eq(body.max_tokens, 100, "max_tokens unchanged")
  eq(body.system, nil, "system unchanged")
  eq(body.thinking, nil, "thinking unchanged")

  eq(agent:set_config({ max_tokens = 77, system = "Be terse.", timeouts = { total_ms = 10000 } }), true, "set_config")
  eq(agent:set_config({}), true, "nothing to change")
  collect(agent:run("Again"))
  body = emulator.requests()[2].body
  eq(body.max_tokens, 77, "max_tokens changed")
  local system = type(body.system) == "table" and body.system[1].text or body.system
  eq(system, "Be terse.", "system changed")
  agent:close()
  raises("closed panto%.Agent", agent.set_config, agent, {})
end)

test("redacted thinking blocks", function()
  local f = assert(io.open(repo .. "/tests/fixtures/recorded/anthropic/redacted_thinking.sse", "rb"))
  local body = f:read("a")
  f:close()
  emulator.load({ { body = body } })
  local agent <close> = new_agent()
  local events = collect(agent:run("Hi"))
  local starts, completes, deltas = 0, {}, 0
  for _, ev in ipairs(events) do
    if ev.block_kind == "redacted_thinking" then
      if ev.kind == "block_start" then starts = starts + 1 end
      if ev.kind == "block_complete" then completes[#completes + 1] = ev.text end
      if ev.kind == "content_delta" then deltas = deltas + 1 end
    end
  end
  eq(starts, 2, "redacted blocks")
  eq(#completes, 2, "block_complete events")
  eq(deltas, 0, "no deltas")
  eq(completes[1]:sub(1, 12), "EqkECkYIBxgC", "the opaque data")
  eq(completes[2]:sub(1, 12), "EtgBCkYIBxgC", "the opaque data")
end)

-- ---- Images and PDFs ----------------------------------------------------------------------------

-- A valid PNG of w x h pixels of one RGB colour, made here (nothing binary in the repository):
-- zlib with stored deflate blocks, and the CRCs a structural check verifies.
local crc_table = {}
for i = 0, 255 do
  local c = i
  for _ = 1, 8 do c = (c & 1 == 1) and (0xEDB88320 ~ (c >> 1)) or (c >> 1) end
  crc_table[i] = c
end
local function crc32(s)
  local c = 0xFFFFFFFF
  for i = 1, #s do c = crc_table[(c ~ s:byte(i)) & 0xFF] ~ (c >> 8) end
  return c ~ 0xFFFFFFFF
end
local function png_chunk(kind, data)
  return string.pack(">I4", #data) .. kind .. data .. string.pack(">I4", crc32(kind .. data))
end
local function png(w, h, rgb)
  local raw = ("\0" .. (rgb or "\255\0\0"):rep(w)):rep(h)
  local a, b = 1, 0
  for i = 1, #raw do a = (a + raw:byte(i)) % 65521; b = (b + a) % 65521 end
  local blocks, pos = {}, 1
  repeat
    local piece = raw:sub(pos, pos + 65534)
    pos = pos + #piece
    blocks[#blocks + 1] = string.pack("<BI2I2", pos > #raw and 1 or 0, #piece, ~#piece & 0xFFFF) .. piece
  until pos > #raw
  local zlib = "\x78\x01" .. table.concat(blocks) .. string.pack(">I4", (b << 16) | a)
  return "\137PNG\r\n\26\n" .. png_chunk("IHDR", string.pack(">I4I4BBBBB", w, h, 8, 2, 0, 0, 0))
    .. png_chunk("IDAT", zlib) .. png_chunk("IEND", "")
end

local pdf = "%PDF-1.4\n1 0 obj <</Type /Catalog /Pages 2 0 R>> endobj\n"
  .. "2 0 obj <</Type /Pages /Kids [] /Count 0>> endobj\ntrailer <</Root 1 0 R>>\n%%EOF\n"

local b64chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local function base64(s)
  local out = {}
  for i = 1, #s, 3 do
    local x, y, z = s:byte(i, i + 2)
    local n = (x << 16) | ((y or 0) << 8) | (z or 0)
    local q = {}
    for k = 1, 4 do q[k] = b64chars:sub(((n >> (24 - 6 * k)) & 63) + 1, ((n >> (24 - 6 * k)) & 63) + 1) end
    if not y then q[3] = "=" end
    if not z then q[4] = "=" end
    out[#out + 1] = table.concat(q)
  end
  return table.concat(out)
end

test("media values: panto.image, panto.document, panto.media carry bytes and hints", function()
  local bytes = png(3, 2)
  local img = panto.image(bytes)
  eq(img.data, bytes, "data")
  eq(img.media_type, nil, "no hint")
  eq(panto.is_media(img), true, "is_media")
  eq(tostring(img), ("panto.Media (%d bytes)"):format(#bytes))
  local named = panto.image(bytes, "image/png", "dot.png")
  eq(named.media_type, "image/png")
  eq(named.name, "dot.png")
  eq(tostring(named), ('panto.Media (image/png, %d bytes, "dot.png")'):format(#bytes))
  local doc = panto.document(pdf, "r.pdf")
  eq(doc.media_type, "application/pdf", "a document's hint")
  eq(doc.name, "r.pdf")
  local m = panto.media(bytes, "", "")
  eq(m.media_type, nil, "an empty hint is none")
  eq(panto.is_media({ data = bytes }), false, "a plain table is not media")
  eq(panto.is_media("x"), false)
  raises("bad argument #1 to '.-image' %(string expected, got number%)", panto.image, 42)
  raises("bad argument #2 to '.-media' %(string expected, got table%)", panto.media, bytes, {})
  raises("bad argument #2 to '.-document' %(string expected, got boolean%)", panto.document, pdf, true)
end)

-- The content blocks of the first user message of a request (Anthropic).
local function user_blocks(request)
  return request.body.messages[1].content
end

test("run with parts: text, an image and a PDF go to the model as blocks, and into the conversation", function()
  emulator.load({ text_answer("A red dot.") })
  local agent <close> = new_agent()
  local bytes = png(4, 3)
  local _, kinds = collect(agent:run({ "Describe this", panto.image(bytes, "image/png"), panto.document(pdf, "r.pdf") }))
  assert(kinds:find("message_complete$"), kinds)
  local blocks = user_blocks(emulator.requests()[1])
  eq(#blocks, 3, "blocks")
  eq(blocks[1].type, "text")
  eq(blocks[1].text, "Describe this")
  eq(blocks[2].type, "image")
  eq(blocks[2].source.type, "base64")
  eq(blocks[2].source.media_type, "image/png")
  eq(blocks[2].source.data, base64(bytes), "the image as given (small enough: byte for byte)")
  eq(blocks[3].type, "document")
  eq(blocks[3].source.media_type, "application/pdf")
  eq(blocks[3].source.data, base64(pdf))
  eq(blocks[3].title, "r.pdf", "a document's name")
  local stored = json.decode(agent:conversation())[1].content
  eq(stored[2].type, "image")
  eq(stored[2].data, base64(bytes), "the conversation keeps the image inline")
  eq(stored[3].name, "r.pdf")

  -- A single media value is a turn too; a string stays one text block.
  emulator.load({ text_answer("ok"), text_answer("ok") })
  collect(agent:run(panto.image(bytes)))
  collect(agent:run("plain"))
  local requests = emulator.requests()
  local msgs = requests[2].body.messages
  local image_turn = requests[1].body.messages[#requests[1].body.messages].content
  eq(#image_turn, 1, "one block")
  eq(image_turn[1].type, "image")
  local last = msgs[#msgs].content
  eq(type(last) == "table" and last[1].text or last, "plain")
end)

test("run with parts on OpenAI: a content array of text and image_url parts", function()
  emulator.load({ text_answer("ok") })
  local agent <close> = new_agent({ provider = "openai" })
  local bytes = png(2, 2)
  collect(agent:run({ "What is it?", panto.image(bytes) }))
  local content = emulator.requests()[1].body.messages[1].content
  eq(type(content), "table", "an array")
  eq(content[1].type, "text")
  eq(content[2].type, "image_url")
  eq(content[2].image_url.url, "data:image/png;base64," .. base64(bytes))
end)

test("run refuses a part that is neither text nor media: nothing sent, the agent runs again", function()
  emulator.load({ text_answer("ok") })
  local agent <close> = new_agent()
  local function run(input) return agent:run(input) end
  raises("bad argument #1 to 'run' %(part 2 is a number: a part is a string or media", run, { "x", 42 })
  raises("bad argument #1 to 'run' %(part 1 is a table: a part is a string or media", run, { { data = "x" } })
  local media_mt = getmetatable(panto.image(""))
  raises("part 1: data must be a string of bytes, not boolean", run, { setmetatable({ data = true }, media_mt) })
  raises("part 2: unknown key 'mime'", run, { "x", setmetatable({ data = "x", mime = "y" }, media_mt) })
  raises("part 1: name must be a string, not number", run, setmetatable({ data = "x", name = 1 }, media_mt))
  raises("a list of parts must be a list %(keys 1 to n%), it has other keys", run, { "x", extra = 1 })
  raises("bad argument #1 to 'run' %(string or list of parts expected, got number%)", run, 42)
  eq(#emulator.requests(), 0, "nothing sent")
  eq(agent:conversation(), "[]", "nothing in the conversation")
  local _, kinds = collect(agent:run({ "fine" }))
  assert(kinds:find("message_complete"), "the agent runs again: " .. kinds)
  eq(#json.decode(agent:conversation()), 2, "one turn in the conversation")
end)

test("a tool returns attachments, in both forms; the tool_result event lists its parts", function()
  emulator.load({
    tool_answer({ { "t1", "shot" }, { "t2", "files" }, { "t3", "plain" } }),
    text_answer("Seen."),
  })
  local red, blue = png(5, 4), png(2, 6, "\0\0\255")
  local agent <close> = new_agent({ tools = {
    { name = "shot", handler = function()
        return { text = "Here is the screen.", attachments = { { media_type = "image/png", data = red, name = "screen.png" } } }
      end },
    { name = "files", handler = function()
        return { "Two files:", panto.image(blue), "and a report", panto.document(pdf, "r.pdf") }
      end },
    { name = "plain", handler = function() return "just text" end },
  } })
  local events = collect(agent:run("Look"))
  local r1, r2, r3 = find(events, "tool_result", 1), find(events, "tool_result", 2), find(events, "tool_result", 3)

  eq(r1.content, "Here is the screen.", "the text parts joined")
  eq(#r1.parts, 2, "text and image")
  eq(r1.parts[1].kind, "text")
  eq(r1.parts[1].text, "Here is the screen.")
  local p = r1.parts[2]
  eq(p.kind, "image")
  eq(p.media_type, "image/png")
  eq(p.name, "screen.png")
  eq(p.byte_size, #red, "byte_size")
  eq(p.base64, base64(red), "base64 as sent")
  eq(rawget(p, "data"), nil, "the bytes are not decoded before they are read")
  eq(p.data, red, "data: the bytes")
  eq(rawget(p, "data"), red, "then kept")

  eq(r2.content, "Two files:\nand a report")
  eq(#r2.parts, 4)
  eq(r2.parts[2].kind, "image")
  eq(r2.parts[2].name, nil, "no name given")
  eq(r2.parts[2].data, blue)
  eq(r2.parts[3].text, "and a report")
  eq(r2.parts[4].kind, "document")
  eq(r2.parts[4].media_type, "application/pdf")
  eq(r2.parts[4].name, "r.pdf")
  eq(r2.parts[4].width, nil, "a document has no pixels")
  eq(r2.parts[4].data, pdf)

  eq(r3.content, "just text")
  eq(#r3.parts, 0, "a plain result has no parts")

  -- The next request carries them as tool_result blocks.
  local request = emulator.requests()[2]
  local sent = {}
  for _, m in ipairs(request.body.messages) do
    if type(m.content) == "table" then
      for _, b in ipairs(m.content) do if b.type == "tool_result" then sent[b.tool_use_id] = b.content end end
    end
  end
  eq(sent.t1[1].type, "text")
  eq(sent.t1[2].type, "image")
  eq(sent.t1[2].source.data, base64(red))
  eq(#sent.t2, 4)
  eq(sent.t2[4].type, "document")
  eq(sent.t3, "just text", "a plain result stays a string")
end)

test("image parts report their pixels", function()
  emulator.load({ tool_answer({ { "t1", "shot" } }), text_answer("ok") })
  local agent <close> = new_agent({ tools = { { name = "shot", handler = function() return panto.image(png(7, 5)) end } } })
  local r = find(collect(agent:run("go")), "tool_result")
  eq(r.content, "", "no text")
  eq(#r.parts, 1)
  eq(r.parts[1].width, 7, "width")
  eq(r.parts[1].height, 5, "height")
end)

test("media panto cannot send become a note: the turn goes on, a result of notes and text is one text", function()
  emulator.load({ tool_answer({ { "t1", "junk" } }), text_answer("ok") })
  local agent <close> = new_agent({ tools = { { name = "junk", handler = function()
    return { "see", panto.media("not an image at all", "image/png", "x.bin") }
  end } } })
  local events, kinds = collect(agent:run({ "look", panto.image("neither", nil, "y.png") }))
  assert(kinds:find("message_complete$"), kinds)
  local r = find(events, "tool_result")
  eq(r.is_error, false)
  assert(r.content:find("^see\n%[attachment x%.bin dropped: "), r.content)
  eq(#r.parts, 0, "all text after fitting: a plain result")
  local requests = emulator.requests()
  local user = user_blocks(requests[1])
  eq(#user, 2, "text and the note")
  eq(user[1].text, "look")
  assert(user[2].type == "text" and user[2].text:find("^%[attachment y%.png dropped: "), json.encode(user[2]))
  eq(anthropic_results(requests[2]).t1.content, r.content, "the note is sent as the result's text")
end)

test("results that cannot be sent: a handler's is an error result, submit_tool_result's raises", function()
  emulator.load({ tool_answer({ { "t1", "bad" }, { "t2", "manual" } }), text_answer("ok") })
  local agent <close> = new_agent({ tools = {
    { name = "bad", handler = function() return { "see:", panto.image(png(1, 1)), 42 } end },
    { name = "manual" },
  } })
  local stream <close> = agent:run("go")
  local results = {}
  for ev in stream:events() do
    if ev.kind == "tool_call_start" and ev.name == "manual" then
      local function submit(content) stream:submit_tool_result(ev.id, content) end
      raises("bad argument #2 to 'submit_tool_result' %(part 3 is a number", submit, { "a", panto.image("x"), 7 })
      raises("attachment 1: data must be a string of bytes, not nil", submit, { attachments = { { media_type = "image/png" } } })
      raises("attachment 2 is a string: an attachment is media", submit, { attachments = { panto.image("x"), "y" } })
      raises("a result with attachments has the keys text and attachments, not 'extra'", submit, { text = "t", attachments = {}, extra = 1 })
      raises("text must be a string, not number", submit, { text = 1, attachments = {} })
      -- Nothing was sent: the call still awaits its result.
      raises("result_pending", stream.next, stream)
      stream:submit_tool_result(ev.id, { text = "by hand", attachments = { panto.image(png(1, 2)) } })
    end
    if ev.kind == "tool_result" then results[ev.id] = ev end
  end
  eq(results.t1.is_error, true, "an error result")
  assert(results.t1.content:find("the result of tool 'bad' cannot be sent: part 3 is a number", 1, true), results.t1.content)
  eq(#results.t1.parts, 0)
  eq(results.t2.is_error, false)
  eq(results.t2.content, "by hand")
  eq(#results.t2.parts, 2, "submitted by hand with an attachment")
  eq(results.t2.parts[2].kind, "image")
end)

test("media in a value sent as JSON is refused", function()
  emulator.load({ tool_answer({ { "t1", "nested" } }), text_answer("ok") })
  local agent <close> = new_agent({ tools = { { name = "nested", handler = function() return { shot = panto.image("x") } end } } })
  local r = find(collect(agent:run("go")), "tool_result")
  eq(r.is_error, true)
  assert(r.content:find("cannot encode media (panto.Media) as JSON", 1, true), r.content)
end)

-- ---- Conversations: export, import, edit, compact ------------------------------------------

-- A panto.Error raised by fn(...), checked to have `code`; returned.
local function raises_code(code, fn, ...)
  local ok, err = pcall(fn, ...)
  assert(not ok, "expected a panto.Error " .. code .. ", got success")
  eq(type(err), "table", "error type (" .. tostring(err) .. ")")
  eq(getmetatable(err).__name, "panto.Error", "a panto.Error")
  eq(err.code, code, "error code (" .. tostring(err.message) .. ")")
  return err
end

test("export and import: the same bytes back, in another agent; conversation() is its messages", function()
  emulator.load({ text_answer("Hello"), text_answer("Again") })
  local agent <close> = new_agent()
  drain(agent:run("Hi"))
  drain(agent:run("More"))
  eq(agent:message_count(), 4, "message_count")
  local doc = agent:export()
  eq(type(doc), "string")
  local decoded = json.decode(doc)
  eq(decoded.version, 1, "version")
  eq(#decoded.messages, 4, "messages")
  eq(decoded.messages[2].provider, "anthropic", "provider")
  eq(decoded.messages[2].stop_reason, "end_turn", "stop_reason")
  eq(decoded.messages[2].usage.input_tokens, 3, "usage")
  -- conversation() is the export's "messages", byte for byte.
  local messages = doc:match('"messages":(.*)}$')
  eq(agent:conversation(), messages, "conversation()")

  local other <close> = new_agent()
  eq(other:import(doc), nil, "import returns nothing")
  eq(other:message_count(), 4, "imported count")
  eq(other:export(), doc, "export after import")
end)

test("import refuses bad documents with code conversation, the agent unchanged", function()
  emulator.load({ text_answer("Hello") })
  local agent <close> = new_agent()
  drain(agent:run("Hi"))
  local before = agent:export()
  local err = raises_code("conversation", agent.import, agent, '{"version": 2, "messages": []}')
  assert(err.message:find("unsupported conversation version 2", 1, true), err.message)
  assert(tostring(err):find("^panto: conversation: "), tostring(err))
  raises_code("conversation", agent.import, agent, "{")
  raises_code("conversation", agent.import, agent,
    '{"version": 1, "messages": [{"role": "robot", "content": [{"type": "text", "text": "x"}]}]}')
  err = raises_code("conversation", agent.import, agent, json.encode({ version = 1, messages = {
    { role = "user", content = { { type = "tool_result", id = "call_9", content = "r", is_error = false } } } } }))
  assert(err.message:find("messages[0]", 1, true), err.message)
  eq(agent:export(), before, "the conversation after refused imports")
  raises("string expected, got number", agent.import, agent, 42)
  raises("string expected, got table", agent.import, agent, { version = 1 })
  -- An empty conversation is a document too.
  agent:import('{"version":1,"messages":[]}')
  eq(agent:message_count(), 0, "count after importing none")
end)

test("a failed turn leaves nothing; rollback_turn; truncate; refused cuts leave the conversation", function()
  emulator.load({ text_answer("Hello"), error_answer(401, "authentication_error", "bad key"), text_answer("Hi again") })
  local agent <close> = new_agent()
  drain(agent:run("Hi"))
  local _, err = until_error(agent:run("Fails"))
  eq(err.code, "authentication")
  eq(agent:message_count(), 2, "the failed turn's user message is rolled back")
  eq(agent:rollback_turn(), 0, "nothing left to roll back")
  drain(agent:run("Next"))
  local request = emulator.requests()[3]
  eq(#request.body.messages, 3, "the next request has no two user messages in a row")
  eq(request.body.messages[3].content[1].text, "Next")

  local doc = agent:export()
  raises_code("invalid_argument", agent.truncate, agent, 5)
  raises_code("invalid_argument", agent.drop_last, agent, 5)
  raises("count of messages must not be negative", agent.truncate, agent, -1)
  raises("count of messages must not be negative", agent.drop_last, agent, -1)
  raises("number expected, got string", agent.truncate, agent, "two")
  eq(agent:export(), doc, "the conversation after refused cuts")
  eq(agent:drop_last(0), 4, "drop_last(0) drops nothing")
  eq(agent:truncate(2), 2)
  eq(agent:message_count(), 2)
  eq(agent:truncate(0), 0)
  eq(agent:export(), '{"version":1,"messages":[]}')
end)

test("truncate refuses to keep tool calls without their results", function()
  emulator.load({ tool_answer({ { "t1", "echo" } }), text_answer("done") })
  local agent <close> = new_agent({ tools = { { name = "echo", handler = function() return "e" end } } })
  drain(agent:run("go"))
  eq(agent:message_count(), 4, "user, tool call, results, answer")
  local err = raises_code("conversation", agent.truncate, agent, 2)
  eq(agent:message_count(), 4, "nothing changed")
  assert(#err.message > 0, "a message says why")
  eq(agent:truncate(3), 3, "with the results, the cut is fine")
end)

test("edits and import are refused while a turn runs (busy)", function()
  emulator.load({ text_answer("Hello"), text_answer("World") })
  local agent <close> = new_agent()
  drain(agent:run("Hi"))
  local doc = agent:export()
  local stream <close> = agent:run("Again")
  assert(stream:next())
  raises_code("busy", agent.import, agent, doc)
  raises_code("busy", agent.truncate, agent, 0)
  raises_code("busy", agent.drop_last, agent, 1)
  raises_code("busy", agent.compact, agent)
  drain(stream)
  eq(agent:message_count(), 4)
end)

test("compact(): a stream of compaction_start, compaction_end, message_complete; the summary replaces the older messages", function()
  -- Usage as a provider reports it: the estimate starts from the last one.
  local first, second = text_answer(string.rep("a", 400)), text_answer(string.rep("b", 400))
  first.message.usage = { input_tokens = 110, output_tokens = 100 }
  second.message.usage = { input_tokens = 215, output_tokens = 100 }
  emulator.load({ first, second, text_answer("They said hi twice.") })
  local agent <close> = new_agent({ compaction = { keep_recent_tokens = 101 } })
  drain(agent:run("first " .. string.rep("x", 400)))
  drain(agent:run("second"))
  eq(agent:message_count(), 4)
  local events, kinds = collect(agent:compact())
  eq(kinds, "compaction_start compaction_end message_complete", "kinds")
  local start, finish = events[1], events[2]
  eq(start.reason, "manual", "reason")
  eq(start.tokens_before, 315, "tokens_before: the last usage, nothing after it")
  eq(finish.tokens_before, start.tokens_before, "tokens_before at the end")
  assert(finish.tokens_after < finish.tokens_before, "tokens_after " .. finish.tokens_after)
  eq(finish.summary, "They said hi twice.", "summary")
  eq(finish.message_count, 2, "messages summarized")
  eq(events[3].usage.output_tokens, 2, "the summary request's usage")

  local conv = json.decode(agent:conversation())
  eq(#conv, 3, "summary + the kept messages")
  eq(conv[1].role, "user")
  assert(conv[1].content[1].text:find("They said hi twice.", 1, true), conv[1].content[1].text)
  eq(conv[1].compaction.message_count, 2, "the summary message's compaction")
  eq(conv[2].content[1].text, "second")
  local summary_request = emulator.requests()[3].body
  eq(#summary_request.messages, 1, "one user message to summarize")
  assert(summary_request.messages[1].content[1].text:find("<conversation>", 1, true), "the serialized messages")
  eq(summary_request.tools, nil, "no tools in the summary request")
end)

test("compact() with nothing to compact raises state; a failed summary leaves the conversation", function()
  emulator.load({ text_answer("Hello"), error_answer(400, "invalid_request_error", "no summary today") })
  local agent <close> = new_agent({ compaction = { keep_recent_tokens = 100000 } })
  drain(agent:run("Hi"))
  raises_code("state", agent.compact, agent)
  agent:set_config({ compaction = { keep_recent_tokens = 1 } })
  local before = agent:export()
  local kinds, err = until_error(agent:compact())
  eq(err.code, "invalid_request", "the summary request's error")
  assert(kinds == "" or kinds == "compaction_start", "events before the error: " .. kinds)
  eq(agent:export(), before, "the conversation is unchanged")
end)

test("a compact() stream canceled while the summary streams leaves the conversation; the agent goes on", function()
  emulator.load({ text_answer("Hello"), stalled_answer("Partial summary"), text_answer("Next") })
  local agent <close> = new_agent({ compaction = { keep_recent_tokens = 1 } })
  drain(agent:run("Hi"))
  local before = agent:export()
  local stream <close> = agent:compact()
  eq(stream:next().kind, "compaction_start")
  -- The summary request stalls after its first delta: canceled while next() waits for more.
  stream:cancel_after(100)
  local kinds, err = until_error(stream)
  eq(kinds, "", "no event of the summary request")
  eq(err.code, "canceled")
  stream:close()
  eq(agent:export(), before, "the conversation is unchanged")
  local _, kinds = drain(agent:run("Again"))
  assert(kinds:find("message_complete$"), kinds)
  eq(agent:message_count(), 4)
end)

test("a turn past context_window - reserve_tokens compacts first: the events come before message_start", function()
  local big = text_answer("long answer")
  big.message.usage = { input_tokens = 900, output_tokens = 50 }
  emulator.load({ big, text_answer("Summary of the start."), text_answer("fresh") })
  local agent <close> = new_agent({ compaction = { context_window = 1000, reserve_tokens = 100, keep_recent_tokens = 1 } })
  drain(agent:run("Hi"))
  local events, kinds = collect(agent:run("Go on"))
  assert(kinds:find("^compaction_start compaction_end message_start"), kinds)
  eq(events[1].reason, "threshold", "reason")
  assert(events[1].tokens_before >= 950, "tokens_before " .. events[1].tokens_before)
  local complete = find(events, "message_complete")
  eq(complete.usage.output_tokens, 2 + 2, "the summary's usage is the turn's too")
  local requests = emulator.requests()
  eq(#requests, 3)
  local compacted = requests[3].body.messages
  assert(compacted[1].content[1].text:find("Summary of the start.", 1, true), "the summary goes first")
  -- (the summary and the user message kept after it: one message, as Anthropic takes no two
  -- user messages in a row)
  eq(#compacted, 1)
  eq(compacted[1].content[#compacted[1].content].text, "Go on")
end)

-- ---- Sessions -----------------------------------------------------------------------------------

local function temp_dir()
  local p = assert(io.popen("mktemp -d"))
  local dir = p:read("l")
  p:close()
  return dir
end

-- A test body that runs fn(dir) with a fresh directory, removed after, whatever happens.
local function in_temp_dir(fn)
  return function()
    local dir = temp_dir()
    local ok, err = xpcall(fn, debug.traceback, dir)
    os.execute("rm -rf " .. shell_quote(dir))
    if not ok then error(err, 0) end
  end
end

local function read_file(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("a")
  f:close()
  return text
end

test("a session: created, written, resumed by a new agent; session() describes it", in_temp_dir(function(dir)
  emulator.load({ text_answer("Hello"), text_answer("Again") })
  local agent = new_agent({ session = { dir = dir, id = "s1" } })
  local info = agent:session()
  eq(info.id, "s1", "id")
  eq(info.path, dir .. "/s1.jsonl", "path")
  eq(info.resumed, false, "resumed")
  eq(info.torn_bytes, 0, "torn_bytes")
  drain(agent:run("Hi"))
  agent:close()
  local text = read_file(dir .. "/s1.jsonl")
  assert(not text:find("test-key", 1, true), "the API key is never written")

  local again <close> = new_agent({ session = { dir = dir, id = "s1" } })
  eq(again:session().resumed, true, "resumed")
  eq(again:message_count(), 2, "the messages are back")
  drain(again:run("More"))
  eq(#emulator.requests()[2].body.messages, 3, "the resumed conversation goes to the provider")
  local plain <close> = new_agent()
  eq(plain:session(), nil, "an agent without a session")
  raises_code("state", plain.fork, plain, 0, "s9")
end))

test("sessions: one writer (session_locked), resume of a missing one, create of an existing one", in_temp_dir(function(dir)
  local function refused(session)
    local none, message, code = panto.Agent({ provider = "anthropic", model = "claude-test", api_key = "k",
                                              session = session })
    eq(none, nil, "an agent")
    eq(type(message), "string", "message")
    return code, message
  end
  do
    local first <close> = new_agent({ session = { dir = dir, id = "s1" } })
    eq(refused({ dir = dir, id = "s1" }), "session_locked", "a second agent on the session")
  end
  -- Closed: the session is free again; so it is once the collector freed an agent.
  new_agent({ session = { dir = dir, id = "s1" } }):close()
  new_agent({ session = { dir = dir, id = "s1" } }) -- not closed: left to the collector
  collectgarbage()
  collectgarbage()
  new_agent({ session = { dir = dir, id = "s1" } }):close()
  eq(refused({ dir = dir, id = "nope", mode = "resume" }), "no_such_session", "resume of a missing session")
  eq(refused({ dir = dir, id = "s1", mode = "create" }), "session", "create of an existing session")
  eq(refused({ dir = dir, id = "../escape" }), "config", "an invalid id")
end))

test("a torn last line is cut off and counted; fork and list_sessions", in_temp_dir(function(dir)
  emulator.load({ text_answer("Hello"), text_answer("Again") })
  local agent = new_agent({ session = { dir = dir, id = "s1" } })
  drain(agent:run("Hi"))
  drain(agent:run("More"))
  agent:close()
  local path = dir .. "/s1.jsonl"
  local size = #read_file(path)
  local f = assert(io.open(path, "ab"))
  f:write('{"type":"message","mess')
  f:close()

  local resumed <close> = new_agent({ session = { dir = dir, id = "s1" } })
  eq(resumed:session().torn_bytes, 23, "torn_bytes")
  eq(#read_file(path), size, "the torn line is cut off")
  eq(resumed:message_count(), 4)

  local forked = resumed:fork(2, "s2")
  eq(forked.id, "s2", "fork returns the new session")
  eq(forked.resumed, false)
  eq(resumed:session().id, "s2", "the agent goes on in the fork")
  eq(resumed:message_count(), 2, "the fork holds the first messages")
  raises_code("session", resumed.fork, resumed, 1, "s1") -- taken
  raises_code("invalid_argument", resumed.fork, resumed, 9)
  eq(resumed:session().id, "s2", "a refused fork changes nothing")

  local list = panto.list_sessions(dir)
  eq(#list, 2, "sessions")
  local by_id = {}
  for _, entry in ipairs(list) do by_id[entry.id] = entry end
  eq(by_id.s1.message_count, 4)
  eq(by_id.s1.first_user_text, "Hi")
  eq(by_id.s1.parent, nil, "no parent: nil")
  eq(by_id.s2.message_count, 2)
  eq(by_id.s2.parent.id, "s1", "parent id")
  eq(by_id.s2.parent.message_count, 2, "parent message_count")
  assert(by_id.s2.created:match("^%d%d%d%d%-%d%d%-%d%dT"), by_id.s2.created)
  eq(#panto.list_sessions(dir .. "/missing"), 0, "a missing directory has none")
  raises("string expected, got number", panto.list_sessions, 42)
end))

-- ---- stream:step(): the non-blocking read (issue 28) ---------------------------------------

-- What a step waits for is waited with LuaSocket's select (Debian's lua-socket) when it is
-- installed: it takes any table with a getfd method. Without it, a descriptor's wait is a 5 ms
-- nap (the loop steps again and finds out).
local has_socket, socket = pcall(require, "socket")

local function wait_for(fd, dir, deadline)
  local timeout = deadline and math.max(0, deadline - panto.monotonic()) or 10
  if fd and has_socket then
    local w = { getfd = function() return fd end }
    socket.select(dir == "r" and { w } or {}, dir == "w" and { w } or {}, timeout)
  else
    panto.sleep(fd and math.min(timeout, 0.005) or timeout)
  end
end

-- Steps a turn until its first content_delta (waiting as needed): the kinds read.
local function step_to_delta(stream)
  local kinds = {}
  repeat
    local ev, fd, dir, deadline = stream:step()
    assert(ev or fd ~= nil, "the turn ended before its first delta")
    if ev then kinds[#kinds + 1] = ev.kind else wait_for(fd, dir, deadline) end
  until ev and ev.kind == "content_delta"
  return table.concat(kinds, " ")
end

-- Steps a turn to its end: its events, their kinds joined, the waits step() returned (each
-- {fd, dir, deadline}) and the error that ended it, if any.
local function step_turn(stream)
  local events, kinds, waits = {}, {}, {}
  while true do
    local ok, ev, fd, dir, deadline = pcall(stream.step, stream)
    if not ok then return events, table.concat(kinds, " "), waits, ev end
    if ev then
      events[#events + 1] = ev
      kinds[#kinds + 1] = ev.kind
    elseif fd == nil then
      return events, table.concat(kinds, " "), waits
    else
      waits[#waits + 1] = { fd = fd, dir = dir, deadline = deadline }
      wait_for(fd, dir, deadline)
    end
  end
end

test("step: a whole turn, the events next() gives; nil at the end, again", function()
  emulator.load({ text_answer("Stepped answer."), text_answer("Stepped answer.") })
  local agent <close> = new_agent()
  local _, want = collect(agent:run("Hi"))
  local stream <close> = agent:run("Hi")
  local events, kinds, _, err = step_turn(stream)
  eq(err, nil, "error")
  eq(kinds, want, "kinds")
  eq(find(events, "block_complete").text, "Stepped answer.")
  eq(select("#", stream:step()), 1, "nil alone at the end")
  eq(stream:step(), nil, "again")
  eq(stream:final_message().text, "Stepped answer.", "final_message after stepping")
end)

test("step: a stalled server waits on a readable descriptor until the idle deadline, then timeout", function()
  emulator.load({ stalled_answer("Partial ") })
  local agent <close> = new_agent({ timeouts = { idle_ms = 300 }, retry = { max_retries = 0 } })
  local stream <close> = agent:run("Hello")
  local before = panto.monotonic()
  local _, kinds, waits, err = step_turn(stream)
  eq(kinds, "message_start block_start content_delta", "kinds")
  assert(err, "the turn ended without an error")
  eq(err.code, "timeout", "code")
  assert(#waits >= 1, "a stalled server makes the step wait")
  local last = waits[#waits]
  eq(math.type(last.fd), "integer", "fd")
  eq(last.dir, "r", "dir")
  assert(last.deadline > before and last.deadline < before + 60, "deadline on panto.monotonic's clock: " .. tostring(last.deadline))
  assert(rawequal(select(2, pcall(stream.step, stream)), err), "sticky")
end)

test("step: cancel while the loop waits wakes the descriptor; canceled, the partial message kept", function()
  emulator.load({ stalled_answer("Partial ") })
  -- idle_ms is the safety net: without the cancel the turn ends in "timeout" after 5 s.
  local agent <close> = new_agent({ timeouts = { idle_ms = 5000 } })
  local stream <close> = agent:run("Hello")
  eq(step_to_delta(stream), "message_start block_start content_delta", "kinds")
  stream:cancel_after(50) -- the server stalls from here: the loop waits on the descriptor
  local _, kinds, _, err = step_turn(stream)
  eq(kinds, "", "nothing more")
  eq(err.code, "canceled", "code")
  local msg = last_message(agent)
  eq(msg.stop_reason, "aborted", "stop_reason")
  eq(msg.content[1].text, "Partial ", "what was said stays")
end)

test("step: close_after frees the stream while the loop waits; the next step raises canceled", function()
  emulator.load({ stalled_answer("Partial "), text_answer("Second answer.") })
  local agent <close> = new_agent({ timeouts = { idle_ms = 5000 } })
  local stream = agent:run("Hello")
  eq(step_to_delta(stream), "message_start block_start content_delta", "kinds")
  stream:close_after(50) -- the server stalls from here: the loop waits on the descriptor
  local _, kinds, _, err = step_turn(stream)
  eq(kinds, "", "nothing more")
  eq(err.code, "canceled", "code")
  assert(rawequal(select(2, pcall(stream.step, stream)), err), "sticky")
  stream:close() -- nothing freed twice
  local events = collect(agent:run("Again"))
  eq(find(events, "block_complete").text, "Second answer.", "the agent runs the next turn")
end)

test("step: mixing with next() is refused with code state, catchable and not sticky", function()
  emulator.load({ text_answer("One."), text_answer("Two.") })
  local agent <close> = new_agent()
  local read = agent:run("Hi")
  assert(read:next(), "next() read first")
  local err = raises("", read.step, read)
  eq(err.code, "state", "step() after next()")
  local _, rest = drain(read)
  assert(rest:find("message_complete$"), "next() reads on: " .. rest)
  read:close()

  local stepped = agent:run("Again")
  local ev, fd = stepped:step()
  assert(ev or fd ~= nil, "the first step gives an event or a wait")
  err = raises("", stepped.next, stepped)
  eq(err.code, "state", "next() while stepping")
  local events, _, _, serr = step_turn(stepped)
  eq(serr, nil, "not sticky: the steps go on")
  eq(find(events, "message_complete").stop_reason, "end_turn")
  eq(stepped:next(), nil, "next() once the turn is over")
  stepped:close()
end)

test("step: handlers run inside step(); while one sleeps the wait has no descriptor", function()
  local ran = 0
  local tool = { name = "nap", params = {}, handler = function()
    panto.sleep(0.05)
    ran = ran + 1
    return "rested"
  end }
  emulator.load({ tool_answer({ { "toolu_1", "nap" } }), text_answer("Done.") })
  local agent <close> = new_agent({ tools = { tool } })
  local stream <close> = agent:run("Nap")
  local events, kinds, waits, err = step_turn(stream)
  eq(err, nil, "error")
  eq(ran, 1, "the handler ran")
  eq(find(events, "tool_result").content, "rested")
  assert(kinds:find("message_complete$"), kinds)
  local handler_waits = 0
  for _, w in ipairs(waits) do
    if w.fd == false then
      handler_waits = handler_waits + 1
      eq(w.dir, nil, "no direction without a descriptor")
      eq(type(w.deadline), "number", "the handler's wake-up")
    end
  end
  assert(handler_waits >= 1, "a sleeping handler makes the step wait")
end)

test("step: ten turns on one loop, each stepped until it waits, then one wait for all", function()
  local answers = {}
  for i = 1, 10 do answers[i] = text_answer("Answer.") end
  emulator.load(answers)
  local turns = {}
  for i = 1, 10 do
    local agent = new_agent() -- an agent runs one turn at a time
    turns[i] = { agent = agent, stream = agent:run("Hi " .. i), text = "" }
  end
  local open = #turns
  while open > 0 do
    local readers, writers, earliest = {}, {}, math.huge
    for _, t in ipairs(turns) do
      while not t.over do
        local ev, fd, dir, deadline = t.stream:step()
        if ev then
          if ev.kind == "content_delta" then t.text = t.text .. ev.text end
        elseif fd == nil then
          t.over, open = true, open - 1
        else
          if fd then table.insert(dir == "w" and writers or readers, { getfd = function() return fd end }) end
          if deadline then earliest = math.min(earliest, deadline) end
          break
        end
      end
    end
    if open > 0 then
      local timeout = math.min(10, math.max(0, earliest - panto.monotonic()))
      if has_socket then socket.select(readers, writers, timeout) else panto.sleep(math.min(timeout, 0.005)) end
    end
  end
  for _, t in ipairs(turns) do
    eq(t.text, "Answer.", "text")
    t.stream:close()
    t.agent:close()
  end
end)

test("steering: a follow-up runs the stream's next turn; a message after the stream is refused", function()
  emulator.load({ text_answer("One."), text_answer("Two.") })
  local agent <close> = new_agent()
  local stream <close> = agent:run("Count")
  local err = raises("empty", stream.follow_up, stream, "")
  eq(err.code, "invalid_argument", "code")
  stream:follow_up("And on?")
  local completes, said = 0, {}
  for ev in stream:events() do
    if ev.kind == "message_complete" then completes = completes + 1 end
    if ev.kind == "user_message" then said[#said + 1] = ev.source .. ": " .. ev.text end
  end
  eq(completes, 2, "message_complete events")
  eq(table.concat(said, ","), "follow_up: And on?", "user messages")
  eq(agent:message_count(), 4, "messages")
  err = raises("over", stream.steer, stream, "too late")
  eq(err.code, "state", "code")
end)

test("continue_turn: a turn answering an imported conversation; nothing to answer raises", function()
  emulator.load({ text_answer("Answered.") })
  local agent <close> = new_agent()
  local err = raises("nothing to answer", agent.continue_turn, agent)
  eq(err.code, "conversation", "code")
  agent:import('{"version":1,"messages":[{"role":"user","content":[{"type":"text","text":"Imported"}]}]}')
  local stream <close> = agent:continue_turn({ max_tokens = 77 })
  local last
  for ev in stream:events() do last = ev end
  eq(last.kind, "message_complete", "last event")
  eq(agent:message_count(), 2, "messages")
end)

test("pending round: a stream closed while a call waits leaves it; resume_turn goes on; a session keeps it", function()
  local dir = os.tmpname()
  os.remove(dir)
  local runs = {}
  local function tools()
    return {
      { name = "delete_file", approval = "always",
        input_schema = { type = "object", properties = { path = { type = "string" } } },
        handler = function(input) runs[#runs + 1] = "delete " .. input.path; return "deleted" end },
      { name = "list_files", handler = function() runs[#runs + 1] = "list"; return "notes.txt" end },
    }
  end
  emulator.load({ tool_answer({ { "toolu_1", "delete_file", { path = "notes.txt" } }, { "toolu_2", "list_files" } }),
                  text_answer("Done.") })
  do
    local agent <close> = new_agent({ tools = tools(), session = { dir = dir, id = "s1" } })
    local stream <close> = agent:run("Clean up")
    local ev, status
    repeat ev, status = stream:next() until ev == nil
    eq(status, "approval_pending", "status")
  end
  -- Another agent of the session (as another process would be) has the round.
  local agent <close> = new_agent({ tools = tools(), session = { dir = dir, id = "s1" } })
  local pending = agent:pending_round()
  eq(#pending, 2, "pending calls")
  eq(pending[1].id .. " " .. pending[1].state .. " " .. pending[1].input.path, "toolu_1 ask notes.txt", "first")
  eq(pending[2].state, "answered", "second")
  local stream <close> = agent:resume_turn()
  local first, status = stream:next()
  eq(first.kind, "approval_request", "the resumed stream's first event")
  repeat first, status = stream:next() until first == nil
  eq(status, "approval_pending", "status")
  stream:approve("toolu_1")
  local results = {}
  for e in stream:events() do
    if e.kind == "tool_result" then results[#results + 1] = e.id .. "=" .. e.content end
  end
  eq(table.concat(results, ","), "toolu_1=deleted,toolu_2=notes.txt", "results")
  eq(table.concat(runs, ","), "list,delete notes.txt", "runs: each once")
  eq(#agent:pending_round(), 0, "pending after the turn")
  local err = raises("nothing to resume", agent.resume_turn, agent)
  eq(err.code, "state", "code")
  os.execute("rm -rf '" .. dir .. "'")
end)

test("approval function: answers the calls that wait, as the stream meets them; an error in it denies", function()
  local runs = {}
  local function tools()
    return {
      { name = "delete_file", approval = "always",
        input_schema = { type = "object", properties = { path = { type = "string" } } },
        handler = function(input) runs[#runs + 1] = "delete " .. input.path; return "deleted" end },
      { name = "list_files", handler = function() runs[#runs + 1] = "list"; return "notes.txt" end },
    }
  end
  local round = tool_answer({ { "toolu_1", "delete_file", { path = "notes.txt" } }, { "toolu_2", "list_files" } })
  local asked = {}
  for _, case in ipairs({
    { function(call) asked[#asked + 1] = call.name .. " " .. call.input.path; return false, "not on Sundays" end,
      "The user denied this call: not on Sundays" },
    { function() return true end, "deleted" },
    { function() error("no policy today", 0) end, "The user denied this call: the approval function failed: no policy today" },
  }) do
    emulator.load({ round, text_answer("Done.") })
    local agent <close> = new_agent({ tools = tools(), approval = case[1] })
    local results = {}
    for ev in agent:run("Clean up"):events() do
      if ev.kind == "tool_result" then results[#results + 1] = ev.content end
    end
    eq(results[1], case[2], "the asked call's result")
    eq(results[2], "notes.txt", "the other call's result")
  end
  eq(table.concat(asked, ","), "delete_file notes.txt", "asked")
  local agent <close> = new_agent()
  local ok, message = agent:set_config({ approval = function() return true end })
  eq(ok, nil, "set_config with an approval function")
  assert(tostring(message):find("approval' is a function"), message)
  local a, msg = panto.Agent({ provider = "anthropic", model = "m", api_key = "k", approval = "yes" })
  eq(a, nil, "an approval that is no function")
  assert(tostring(msg):find("approval' is a function"), msg)
end)

-- ---- Main -------------------------------------------------------------------------------------

local filter = arg and arg[1]
local passed, failed = 0, 0
local ok, err = pcall(emulator.start)
if not ok then
  io.stderr:write("cannot start the emulator: ", tostring(err), "\n")
  os.exit(2)
end
for _, t in ipairs(tests) do
  if not filter or t.name:find(filter, 1, true) then
    local tok, terr = xpcall(t.fn, debug.traceback)
    collectgarbage()
    if tok then
      passed = passed + 1
      print("ok   " .. t.name)
    else
      failed = failed + 1
      print("FAIL " .. t.name .. "\n    " .. tostring(terr):gsub("\n", "\n    "))
    end
  end
end
emulator.stop()
print(("%d passed, %d failed"):format(passed, failed))
os.exit(failed == 0 and 0 or 1, true) -- true: close the state, running every __gc
