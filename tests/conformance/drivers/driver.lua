-- The Lua conformance driver: `lua5.4 driver.lua CASE_JSON BASE_URL`.
--
-- Runs a case's turns through the Lua module `panto` and prints the normalized transcript
-- (tests/conformance/README.md) on stdout, one JSON object per line. Exits 0 whenever it
-- printed a transcript, including one that ends in an error; non-zero only when it could not
-- run. Finds panto.so through LUA_CPATH (run.py sets it), then the checkout's zig-out/lib/lua.
--
-- With --async (`lua5.4 driver.lua --async CASE_JSON BASE_URL`) every read steps instead
-- (stream:step(), waiting for what it says with LuaSocket's select, or 5 ms naps without it);
-- a "final" turn is stepped to its end, then the helper reads it.

local script_dir = (arg and arg[0] or ""):match("^(.*)[/\\]") or "."
package.path = script_dir .. "/?.lua;" .. package.path
package.cpath = package.cpath .. ";" .. script_dir .. "/../../../zig-out/lib/lua/?.so"

local json = require("json")
local panto = require("panto")

local function emit(line)
  io.stdout:write(json.encode(line), "\n")
  io.stdout:flush()
end

local panto_array_mt = getmetatable(panto.array())

-- A value decoded by panto (panto.null, arrays marked with panto.array) as json.lua holds it.
local function from_panto(v)
  if v == panto.null then return json.null end
  if type(v) ~= "table" then return v end
  local out = getmetatable(v) == panto_array_mt and json.array() or json.object()
  for k, x in pairs(v) do out[k] = from_panto(x) end
  return out
end

-- A value decoded by json.lua as panto writes it: json.null as panto.null, arrays (empty ones
-- too) marked with panto.array.
local function to_panto(v)
  if v == json.null then return panto.null end
  if type(v) ~= "table" then return v end
  local out = getmetatable(v) == json.array_mt and panto.array() or {}
  for k, x in pairs(v) do out[k] = to_panto(x) end
  return out
end

local function usage_object(u)
  local line = {
    input_tokens = u.input_tokens,
    output_tokens = u.output_tokens,
    cache_read_tokens = u.cache_read_tokens,
    cache_write_tokens = u.cache_write_tokens,
    reasoning_tokens = u.reasoning_tokens,
  }
  -- The server tools' counts only when not 0 (the transcripts' rule).
  if u.web_search_requests ~= 0 then line.web_search_requests = u.web_search_requests end
  if u.web_fetch_requests ~= 0 then line.web_fetch_requests = u.web_fetch_requests end
  return line
end

-- A part of a tool_result event; every key present, "" or 0 when it does not apply.
local function part_line(p)
  return {
    kind = p.kind,
    text = p.text or "",
    media_type = p.media_type or "",
    name = p.name or "",
    byte_size = p.byte_size or 0,
    width = p.width or 0,
    height = p.height or 0,
    data_len = p.base64 and #p.base64 or 0,
  }
end

-- Case keys that add fields to lines (tests/conformance/README.md), set by main.
local print_request_ids, print_error_detail, print_costs = false, false, false
-- The case's "approvals" (call id -> "approve" or {deny = REASON}), and the ids the last
-- approval_request listed, answered when the stream says "approval_pending".
local case_approvals, asked = {}, {}
-- The case's "steer" ({{after = EVENT, steer | follow_up = TEXT}, ...}), taken in order.
local case_steers = {}

local function event_line(ev)
  local k = ev.kind
  if k == "message_start" then
    local line = { event = k, id = ev.id, model = ev.model }
    if print_request_ids then line.request_id = ev.request_id or "" end
    return line
  elseif k == "block_start" then
    return { event = k, index = ev.index, kind = ev.block_kind }
  elseif k == "content_delta" or k == "block_complete" then
    -- name: a server block's type; citations: a text block's
    return { event = k, index = ev.index, kind = ev.block_kind, text = ev.text, name = ev.name,
             citations = ev.citations }
  elseif k == "message_end" or k == "message_complete" then
    local line = { event = k, stop_reason = ev.stop_reason, provider_stop_reason = ev.provider_stop_reason,
                   usage = usage_object(ev.usage) }
    if print_costs then line.cost = ev.cost == nil and json.null or ev.cost end
    return line
  elseif k == "tool_details" then
    return { event = k, index = ev.index, id = ev.id, name = ev.name }
  elseif k == "tool_call_start" then
    return { event = k, id = ev.id, name = ev.name, input = from_panto(ev.input),
             awaiting_result = ev.awaiting_result }
  elseif k == "tool_progress" then
    return { event = k, id = ev.id, name = ev.name, text = ev.text,
             fraction = ev.fraction == nil and json.null or ev.fraction }
  elseif k == "user_message" then
    return { event = k, source = ev.source, text = ev.text }
  elseif k == "approval_request" then
    local calls = json.array()
    for i, c in ipairs(ev.calls) do
      calls[i] = { id = c.id, name = c.name, input = from_panto(c.input) }
      asked[#asked + 1] = c.id
    end
    return { event = k, calls = calls }
  elseif k == "tool_result" then
    local parts = json.array()
    for i, p in ipairs(ev.parts) do parts[i] = part_line(p) end
    return { event = k, id = ev.id, name = ev.name, content = ev.content, is_error = ev.is_error, parts = parts }
  elseif k == "provider_retry" then
    return { event = k, attempt = ev.attempt, delay_ms = ev.delay_ms, http_status = ev.http_status or 0,
             reason = ev.reason }
  elseif k == "compaction_start" then
    return { event = k, tokens_before = ev.tokens_before, reason = ev.reason }
  elseif k == "compaction_end" then
    return { event = k, tokens_before = ev.tokens_before, tokens_after = ev.tokens_after,
             message_count = ev.message_count, summary = ev.summary }
  end
  -- A kind this driver does not know: print what it has, so the diff shows it.
  local line = { event = tostring(k) }
  for name, v in pairs(ev) do
    if name ~= "kind" then line[name] = from_panto(v) end
  end
  return line
end

-- A part of a turn or of `return_parts`: a string, or {media_path, hint, name} (the runner
-- rewrote the case's {"media": NAME}), whose file is read as bytes.
local function case_part(part)
  if type(part) == "string" then return part end
  local f = assert(io.open(part.media_path, "rb"))
  local bytes = f:read("a")
  f:close()
  return panto.media(bytes, part.hint, part.name)
end

-- A turn: a string, or a list of parts.
local function case_input(turn)
  if type(turn) == "string" then return turn end
  local parts = {}
  for i, part in ipairs(turn) do parts[i] = case_part(part) end
  return parts
end

-- What the handlers of the run share (tests/conformance/README.md, tool behaviors): how many
-- run now, how many started in all, and how many of each rendezvous group started.
local handlers = { running = 0, started = 0, groups = {} }

-- How a handler ends: returns what it returns, or raises.
local function behavior_result(behavior)
  if behavior.return_parts ~= nil then
    local parts = {}
    for i, part in ipairs(behavior.return_parts) do parts[i] = case_part(part) end
    return function() return parts end
  elseif behavior["return"] ~= nil then
    local text = behavior["return"]
    return function() return text end
  elseif behavior.raise ~= nil then
    local message = behavior.raise
    return function() error(message, 0) end
  elseif behavior.return_input == true then
    -- A table result is sent as compact JSON with sorted keys.
    return function(input) return input end
  end
  return function() return "" end
end

-- Waits (yielding, with panto.sleep) until `count` handlers of `group` have started; 10 s at
-- most, then raises "ran alone".
local function rendezvous(group, count)
  for _ = 1, 2000 do
    if (handlers.groups[group] or 0) >= count then return end
    panto.sleep(0.005)
  end
  error("ran alone", 0)
end

-- Sleeps 100 ms and raises "overlapped" when another handler ran meanwhile, or at its start.
local function exclusive()
  local started = handlers.started
  local alone = handlers.running == 1
  panto.sleep(0.1)
  if not alone or handlers.running ~= 1 or handlers.started ~= started then error("overlapped", 0) end
end

-- The handler a case's `behavior` describes: what it does first (sleep_ms, rendezvous,
-- progress, exclusive, in that order), then how it ends.
local function behavior_handler(behavior)
  local known = { return_parts = true, ["return"] = true, raise = true, return_input = true,
                  sleep_ms = true, rendezvous = true, progress = true, exclusive = true }
  for k in pairs(behavior) do
    if not known[k] then error("unknown tool behavior " .. json.encode(behavior)) end
  end
  local result = behavior_result(behavior)
  local function body(input)
    if behavior.sleep_ms ~= nil then panto.sleep(behavior.sleep_ms / 1000) end
    if behavior.rendezvous ~= nil then rendezvous(behavior.rendezvous[1], behavior.rendezvous[2]) end
    for _, p in ipairs(behavior.progress or {}) do
      panto.progress(p[1], p[2] ~= json.null and p[2] or nil)
    end
    if behavior.exclusive == true then exclusive() end
    return result(input)
  end
  return function(input)
    handlers.running = handlers.running + 1
    handlers.started = handlers.started + 1
    local group = behavior.rendezvous and behavior.rendezvous[1]
    if group then handlers.groups[group] = (handlers.groups[group] or 0) + 1 end
    local outcome = table.pack(pcall(body, input))
    handlers.running = handlers.running - 1
    if not outcome[1] then error(outcome[2], 0) end
    return table.unpack(outcome, 2, outcome.n)
  end
end

-- The case's host tools as Lua tool tables: the spec without `behavior`, its input_schema as
-- JSON text (so that empty arrays and nulls stay what they are).
local function case_tools(case)
  local tools = {}
  for _, spec in ipairs(case.tools or {}) do
    local tool = {}
    for k, v in pairs(spec) do
      if k == "input_schema" then
        tool.schema = json.encode(v)
      elseif k ~= "behavior" then
        tool[k] = v
      end
    end
    tool.handler = behavior_handler(spec.behavior)
    tools[#tools + 1] = tool
  end
  return tools
end

-- Absent fields print as the C struct holds them: 0 and "".
local function error_line(err)
  if type(err) ~= "table" then error(err, 0) end -- not a panto error: a bug, so fail loudly
  local line = {
    event = "error",
    code = err.code,
    http_status = err.http_status or 0,
    type = err.type or "",
    message = err.message,
  }
  if print_error_detail then
    line.retry_after = err.retry_after == nil and json.null or err.retry_after
    local headers = json.object()
    for name, value in pairs(err.headers or {}) do headers[name] = value end
    line.headers = headers
  end
  return line
end

-- --async: reads step (set by main).
local stepping = false
local has_socket, socket = pcall(require, "socket")

-- Waits for what a step said: the descriptor ready or the deadline, 50 ms at most (a stream
-- close_after frees from its timer thread need not wake the wait: the next step finds out).
local function wait_for(fd, dir, deadline)
  local timeout = 0.05
  if deadline then timeout = math.max(0, math.min(timeout, deadline - panto.monotonic())) end
  if fd and has_socket then
    local w = { getfd = function() return fd end }
    socket.select(dir == "r" and { w } or {}, dir == "w" and { w } or {}, timeout)
  else
    panto.sleep(fd and math.min(timeout, 0.005) or timeout)
  end
end

-- The stream's next event (nil at the end; raises the turn's error; nil, "approval_pending"
-- while a call waits for its answer): next(), or with --async steps and waits until one comes.
local function read(stream)
  if not stepping then return stream:next() end
  while true do
    local ev, fd, dir, deadline = stream:step()
    if ev or fd == nil or fd == "approval_pending" then return ev, fd end
    wait_for(fd, dir, deadline)
  end
end

-- Answers the calls asked about as the case's "approvals" says (README.md, "Approvals in a
-- case"), a line for each.
local function answer_approvals(stream)
  for _, id in ipairs(asked) do
    local answer = case_approvals[id]
    if answer == "kill" then -- the process dies waiting (README.md, "A process killed ...")
      emit({ event = "killed" })
      os.execute("kill -KILL $PPID") -- (the shell's parent: this process)
    end
    local approve = answer == "approve"
    local ok, err
    if approve then
      ok, err = pcall(stream.approve, stream, id)
    else
      local reason = type(answer) == "table" and answer.deny or "no answer in the case"
      ok, err = pcall(stream.deny, stream, id, reason)
    end
    if not ok and type(err) ~= "table" then error(err, 0) end -- not a panto error: a bug
    emit({ event = "approval_answer", id = id, answer = approve and "approve" or "deny", code = ok and "ok" or err.code })
  end
  asked = {}
end

-- One next() call as a transcript line (the answers to an approval asked for first).
local function step(stream)
  while true do
    local ok, ev, status = pcall(read, stream)
    if not ok then
      asked = {}
      return error_line(ev)
    end
    if ev ~= nil then return event_line(ev) end
    if status ~= "approval_pending" or #asked == 0 then
      asked = {}
      return { event = "done" }
    end
    answer_approvals(stream)
  end
end

-- Says what the case's "steer" gives once `after` (an event's name, or "run") was printed
-- (README.md, "Steering in a case"): a steer_call line each.
local function steer_after(stream, after)
  while case_steers[1] ~= nil and case_steers[1].after == after do
    local entry = table.remove(case_steers, 1)
    if entry.withdraw ~= nil then
      local ok, taken = pcall(stream.withdraw_queued, stream)
      if not ok and type(taken) ~= "table" then error(taken, 0) end -- not a panto error: a bug
      local messages = json.array({})
      for i, m in ipairs(ok and taken or {}) do messages[i] = { source = m.source, text = m.text } end
      emit({ event = "withdraw_call", messages = messages, code = ok and "ok" or taken.code })
      goto next_entry
    end
    local call = entry.steer ~= nil and "steer" or "follow_up"
    local text = entry.steer or entry.follow_up
    local ok, err = pcall(stream[call], stream, text)
    if not ok and type(err) ~= "table" then error(err, 0) end -- not a panto error: a bug
    emit({ event = "steer_call", call = call, text = text, code = ok and "ok" or err.code })
    ::next_entry::
  end
end

-- The lines of one turn, to `done` or an error. `on_error` (once per turn): after the first
-- error, set_config with its changes and reopen the stream, printing each call's status; when
-- reopen succeeded, the turn goes on.
local function turn_lines(agent, stream, on_error)
  steer_after(stream, "run")
  while true do
    local line
    repeat
      line = step(stream)
      emit(line)
      steer_after(stream, line.event)
    until line.event == "done" or line.event == "error"
    if line.event ~= "error" or on_error == nil then return end
    local changes, reopen = on_error.set_config, on_error.reopen
    on_error = nil
    if changes ~= nil then
      local ok, _, code = agent:set_config(to_panto(changes))
      emit({ event = "set_config", code = ok and "ok" or code })
    end
    if not reopen then return end
    local ok, err = pcall(stream.reopen, stream)
    if not ok and type(err) ~= "table" then error(err, 0) end -- not a panto error: a bug
    emit({ event = "reopen", code = ok and "ok" or err.code })
    if not ok then return end
  end
end

-- Prints a turn's events, read with next(), until the K-th content_delta has been printed
-- (then returns true) or the turn ended (its last line printed; returns false).
local function lines_until_deltas(stream, k)
  local deltas = 0
  while true do
    local line = step(stream)
    emit(line)
    if line.event == "done" or line.event == "error" then return false end
    if line.event == "content_delta" then
      deltas = deltas + 1
      if deltas == k then return true end
    end
  end
end

-- Runs the turn and reads it until the K-th delta: the stream is only this function's, so
-- no reference to it is left once it returns (nil when the turn could not start).
local function run_then_drop(agent, text, k)
  local ok, stream = pcall(agent.run, agent, text)
  if not ok then
    emit(error_line(stream))
    return nil
  end
  return lines_until_deltas(stream, k)
end

-- A turn ended early (`end_early`, tests/conformance/README.md): the stream is gone after it,
-- so the turn has no `done` and no `extra_next` lines. Returns false when the turn could not
-- start (the case ends there).
local function end_turn_early(agent, text, how)
  if how.drop_after_deltas ~= nil then
    local dropped = run_then_drop(agent, text, how.drop_after_deltas)
    if dropped == nil then return false end
    collectgarbage("collect")
    collectgarbage("collect")
    if dropped then emit({ event = "dropped" }) end
    return true
  end
  local ok, stream = pcall(agent.run, agent, text)
  if not ok then
    emit(error_line(stream))
    return false
  end
  local s <close> = stream
  if how.close_after_deltas ~= nil then
    -- The normal iterator (leaving its loop would close the stream as well).
    local deltas = 0
    local iterate = stepping and read or s:events() -- (s is closed by its <close> either way)
    for ev in iterate, s do
      emit(event_line(ev))
      if ev.kind == "content_delta" then
        deltas = deltas + 1
        if deltas == how.close_after_deltas then
          s:close()
          emit({ event = "closed" })
          return true
        end
      end
    end
    emit({ event = "done" })
  elseif how.free_blocked_after_ms ~= nil then
    -- The module's timer thread frees the stream while this thread is blocked in next().
    s:close_after(how.free_blocked_after_ms)
    repeat local line = step(s); emit(line) until line.event == "done" or line.event == "error"
  else
    error("unknown end_early " .. json.encode(how))
  end
  return true
end

-- ---- Steps (tests/conformance/README.md): a `turns` entry that is an object -----------------

-- The code of a pcall's outcome: "ok", or the panto.Error's code (and message).
local function outcome(ok, err)
  if ok then return "ok" end
  if type(err) ~= "table" then error(err, 0) end -- not a panto error: a bug, so fail loudly
  return err.code, err.message
end

-- {event = name, code = C}, with "message" when C is not "ok" and `with_message`.
local function code_line(name, ok, err, with_message)
  local code, message = outcome(ok, err)
  local line = { event = name, code = code }
  if with_message and code ~= "ok" then line.message = message end
  return line
end

-- The driver's state across steps: the agent (reopen_agent replaces it), its config, the
-- last export's text.
local Run = {}
Run.__index = Run

function Run:export()
  local ok, raw = pcall(self.agent.export, self.agent)
  if not ok then return emit(code_line("export", ok, raw, true)) end
  self.last_export = raw
  emit({ event = "export", text = raw })
end

function Run:reimport()
  local agent = self.agent
  local ok, err = pcall(agent.import, agent, assert(self.last_export, "reimport before any export"))
  local identical = false
  if ok then identical = agent:export() == self.last_export end
  local line = code_line("reimport", ok, err)
  line.identical = identical
  emit(line)
end

function Run:import(text)
  local ok, err = pcall(self.agent.import, self.agent, text)
  emit(code_line("import", ok, err, true))
end

-- truncate(k) or drop_last(n), then the count left.
function Run:cut(name, method, n)
  local agent = self.agent
  local line = code_line(name, pcall(agent[method], agent, n))
  line.message_count = agent:message_count()
  emit(line)
end

function Run:rollback_turn()
  local agent = self.agent
  local ok, removed = pcall(agent.rollback_turn, agent)
  local line = code_line("rollback_turn", ok, removed)
  line.removed = ok and removed or 0
  line.message_count = agent:message_count()
  emit(line)
end

function Run:count_tokens(input)
  local agent = self.agent
  local ok, counted = pcall(agent.count_tokens, agent, input)
  local line = code_line("count_tokens", ok, counted)
  line.input_tokens = ok and counted.input_tokens or 0
  line.estimated = ok and counted.estimated or false
  emit(line)
end

function Run:spent()
  local agent = self.agent
  local ok, spent = pcall(agent.spent, agent)
  local line = code_line("spent", ok, spent)
  local u = ok and spent.usage or {}
  line.usage = {input_tokens = u.input_tokens or 0, output_tokens = u.output_tokens or 0,
    cache_read_tokens = u.cache_read_tokens or 0, cache_write_tokens = u.cache_write_tokens or 0,
    reasoning_tokens = u.reasoning_tokens or 0}
  line.cost = ok and spent.cost or json.null
  emit(line)
end

function Run:list_models()
  local agent = self.agent
  local ok, listed = pcall(agent.list_models, agent)
  local line = code_line("list_models", ok, listed)
  line.models = json.array({})
  for i, m in ipairs(ok and listed or {}) do
    line.models[i] = {id = m.id, display_name = m.display_name or json.null, created = m.created or json.null,
      known = m.model_info ~= nil, max_input_tokens = m.model_info and m.model_info.max_input_tokens or json.null}
  end
  emit(line)
end

function Run:compact(extra_next, instructions)
  local ok, stream = pcall(self.agent.compact, self.agent, instructions)
  if not ok then return emit(code_line("compact", ok, stream)) end
  local s <close> = stream
  turn_lines(self.agent, s, nil)
  for _ = 1, extra_next do emit(step(s)) end
end

function Run:pending_round()
  local agent = self.agent
  local ok, calls = pcall(agent.pending_round, agent)
  local line = code_line("pending_round", ok, calls)
  line.calls = json.array()
  for i, c in ipairs(ok and calls or {}) do
    line.calls[i] = { id = c.id, name = c.name, input = from_panto(c.input), state = c.state }
  end
  emit(line)
end

function Run:mcp_status()
  local ok, servers = pcall(self.agent.mcp_status, self.agent)
  local line = code_line("mcp_status", ok, servers, true)
  line.servers = json.array({})
  for i, m in ipairs(ok and servers or {}) do
    line.servers[i] = {name = m.name, transport = m.transport, state = m.state, protocol_version = m.protocol_version,
      server_name = m.server_name, server_version = m.server_version, tool_count = m.tool_count,
      error = m.error, stderr_tail = m.stderr_tail}
  end
  emit(line)
end

function Run:resume_turn(extra_next)
  local ok, stream = pcall(self.agent.resume_turn, self.agent)
  if not ok then return emit(code_line("resume_turn", ok, stream)) end
  local s <close> = stream
  turn_lines(self.agent, s, nil)
  for _ = 1, extra_next do emit(step(s)) end
end

function Run:session_info()
  local agent = self.agent
  local ok, info = pcall(agent.session, agent)
  -- agent:session() is nil for an agent without a session: panto_agent_session's "state".
  if ok and info == nil then ok, info = false, { code = "state" } end
  local line = code_line("session", ok, info)
  line.id = ok and info.id or ""
  line.resumed = ok and info.resumed or false
  line.torn_bytes = ok and info.torn_bytes or 0
  line.message_count = ok and agent:message_count() or 0
  emit(line)
end

-- Frees the agent and makes a new one from the same config; false when that failed.
function Run:reopen_agent()
  self.agent:close()
  local agent, message, code = panto.Agent(self.config)
  self.agent = agent
  emit({ event = "reopen_agent", code = agent and "ok" or code, message = (not agent) and message or nil })
  return agent ~= nil
end

function Run:second_agent()
  local agent, _, code = panto.Agent(self.config)
  if agent then agent:close() end
  emit({ event = "second_agent", code = agent and "ok" or code })
end

function Run:fork(how)
  emit(code_line("fork", pcall(self.agent.fork, self.agent, how.message_count, how.id)))
end

function Run:list_sessions()
  local dir = assert(self.config.session and self.config.session.dir, "list_sessions without a session dir")
  local ok, list = pcall(panto.list_sessions, dir)
  local line = code_line("sessions", ok, list)
  line.sessions = json.array()
  for i, entry in ipairs(ok and list or {}) do
    local parent = json.null
    if entry.parent then parent = { id = entry.parent.id, message_count = entry.parent.message_count } end
    line.sessions[i] = { id = entry.id, message_count = entry.message_count,
                         first_user_text = entry.first_user_text, parent = parent }
  end
  emit(line)
end

function Run:append_to_session(bytes)
  local f = assert(io.open(assert(self.agent:session(), "no session").path, "ab"))
  assert(f:write(bytes))
  f:close()
  emit({ event = "append_to_session" })
end

-- Runs one step object; false when the case cannot go on (no agent left).
function Run:step(st, extra_next)
  if st.set_config ~= nil then
    local ok, message, code = self.agent:set_config(to_panto(st.set_config))
    emit({ event = "set_config", code = ok and "ok" or code, message = (not ok) and message or nil })
  elseif st.export ~= nil then self:export()
  elseif st.reimport ~= nil then self:reimport()
  elseif st.import ~= nil then self:import(json.encode(st.import))
  elseif st.import_text ~= nil then self:import(st.import_text)
  elseif st.truncate ~= nil then self:cut("truncate", "truncate", st.truncate)
  elseif st.drop_last ~= nil then self:cut("drop_last", "drop_last", st.drop_last)
  elseif st.rollback_turn ~= nil then self:rollback_turn()
  elseif st.list_models ~= nil then self:list_models()
  elseif st.spent ~= nil then self:spent()
  elseif st.count_tokens ~= nil then self:count_tokens(st.count_tokens ~= json.null and st.count_tokens or nil)
  elseif st.compact ~= nil then self:compact(extra_next, type(st.compact) == "table" and st.compact.instructions or nil)
  elseif st.session_info ~= nil then self:session_info()
  elseif st.pending_round ~= nil then self:pending_round()
  elseif st.resume_turn ~= nil then self:resume_turn(extra_next)
  elseif st.mcp_status ~= nil then self:mcp_status()
  elseif st.reopen_agent ~= nil then return self:reopen_agent()
  elseif st.second_agent ~= nil then self:second_agent()
  elseif st.fork ~= nil then self:fork(st.fork)
  elseif st.list_sessions ~= nil then self:list_sessions()
  elseif st.append_to_session ~= nil then self:append_to_session(st.append_to_session)
  else
    error("unknown step " .. json.encode(st))
  end
  return true
end

-- A `turns` entry is a step when it is a JSON object without "input" (a turn is a string, a
-- list of parts, or an object with "input": options and final helpers).
local function is_object(given)
  return type(given) == "table" and getmetatable(given) == json.object_mt
end

local function is_step(given)
  return is_object(given) and given.input == nil
end

-- A turn's per-turn options (a JSON object) as the Lua table agent:run takes.
local function turn_options(given)
  if not is_object(given) or given.options == nil then return nil end
  return to_panto(given.options)
end

-- The line of a final helper (tests/conformance/README.md, turn objects), or the ordinary
-- error line for an error of the turn itself.
local function final_line(stream, which)
  if stepping then
    -- Stepped to its end (handlers run), then the helper reads it (an error: raised again).
    while true do
      local ok, ev = pcall(read, stream)
      if not ok or ev == nil then break end
    end
  end
  if which == "message" then
    local ok, msg = pcall(stream.final_message, stream)
    if not ok then return error_line(msg) end
    return { event = "final_message", code = "ok", text = msg.text, stop_reason = msg.stop_reason,
             usage = usage_object(msg.usage) }
  elseif which == "json" then
    local ok, value = pcall(stream.final_json, stream)
    if ok then return { event = "final_json", code = "ok", value = from_panto(value), output = "" } end
    local err = value
    if type(err) ~= "table" or (err.code ~= "output" and err.code ~= "state") then return error_line(err) end
    return { event = "final_json", code = err.code, value = json.null, output = err.output or "",
             message = err.message }
  end
  error("unknown final " .. tostring(which))
end

local function main(case_path, base_url)
  if not case_path or not base_url then
    io.stderr:write("usage: lua5.4 driver.lua [--async] CASE_JSON BASE_URL\n")
    return 2
  end
  local f = assert(io.open(case_path, "rb"))
  local case = json.decode(f:read("a"))
  f:close()

  local config = {}
  for k, v in pairs(case.config) do config[k] = to_panto(v) end
  if config.base_url == nil then config.base_url = base_url end
  local extra_next = case.extra_next or 1
  print_request_ids = case.print_request_ids == true
  print_error_detail = case.print_error_detail == true
  print_costs = case.print_costs == true
  case_approvals = case.approvals or {}
  case_steers = case.steer or {}

  config.tools = case_tools(case)
  local first, message, code = panto.Agent(config)
  if not first then
    emit({ event = "error", code = code, http_status = 0, type = "", message = message })
    return 0
  end
  local run = setmetatable({ agent = first, config = config }, Run)
  local end_early = case.end_early
  local early_turn = end_early and (end_early.turn or 0) + 1
  for turn, given in ipairs(case.turns) do
    local agent = run.agent
    if is_step(given) then
      if not run:step(given, extra_next) then break end
    elseif turn == early_turn then
      if not end_turn_early(agent, case_input(given), end_early) then break end
    else
      local input = is_object(given) and given.input or given
      local ok, stream = pcall(agent.run, agent, case_input(input), turn_options(given))
      if not ok then
        emit(error_line(stream)) -- the turn could not start: the case ends here
        break
      end
      local s <close> = stream
      -- The module's timer thread cancels while this thread is blocked in next().
      if turn == (case.cancel_turn or 0) + 1 and case.cancel_after_ms ~= nil then
        s:cancel_after(case.cancel_after_ms)
      end
      if is_object(given) and given.final ~= nil then
        emit(final_line(s, given.final))
      else
        turn_lines(agent, s, case.on_error)
      end
      for _ = 1, extra_next do emit(step(s)) end
    end
  end
  local agent <close> = run.agent
  if agent and case.expect_connections ~= nil then
    local counts = agent:connections()
    emit({ event = "connections", opened = counts.opened, reused = counts.reused })
  end
  if agent and case.print_conversation then
    emit({ event = "conversation", messages = json.decode(assert(agent:conversation())) })
  end
  return 0
end

if arg[1] == "--async" then
  stepping = true
  table.remove(arg, 1)
end
os.exit(main(arg[1], arg[2]))
