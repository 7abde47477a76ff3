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
  eq(panto.abi_version, 1, "abi_version")
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
  -- The loop ended at DONE and closed the stream (its fourth value is to-be-closed).
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
  -- The abandoned turn committed no assistant message.
  local conv = json.decode(agent:conversation())
  local roles = {}
  for i, m in ipairs(conv) do roles[i] = m.role end
  eq(table.concat(roles, ","), "user,user,assistant", "roles")
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
  emulator.load({ error_answer(429, "rate_limit_error", "slow down") })
  local agent <close> = new_agent()
  local err = raises("slow down", function()
    for _ in agent:run("Hi"):events() do end
  end)
  eq(err.code, "rate_limit", "code")
  eq(err.http_status, 429, "http_status")
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
  a, msg = panto.Agent({ provider = 42, model = "m" })
  eq(a, nil, "agent")
  assert(msg:find("'provider' must be a string, got a number", 1, true), msg)
  a, msg = panto.Agent({ provider = "anthropic", model = "m\255" })
  eq(a, nil, "agent")
  assert(msg:find("UTF-8", 1, true), msg)
  -- 64.0 is an integer in Lua.
  local ok <close> = assert(panto.Agent({ provider = "anthropic", model = "m", api_key = "k", max_tokens = 64.0 }))
end)

test("unknown option keys are refused", function()
  local a, msg, code = panto.Agent({ provider = "anthropic", model = "m", temperature = 0.5 })
  eq(a, nil, "agent")
  assert(msg:find("unknown option 'temperature'", 1, true), msg)
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
  raises("string expected", agent.run, agent, {})
  raises("NUL", agent.run, agent, "a\0b")
  raises("panto%.Agent expected", agent.run, {}, "x")
  raises("panto%.Stream expected", agent.run(agent, "x").next, agent)
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
