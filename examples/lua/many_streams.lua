-- Many turns at once on one Lua thread: each stream is driven with stream:step(), which never
-- waits, and one socket.select (LuaSocket, Debian's lua-socket) waits for all of them (issue
-- 28). A step that would wait says for what: a descriptor to be readable ("r") or writable
-- ("w"), and a deadline on panto.monotonic()'s clock. The loop waits for the first of all
-- those, steps the streams whose wait is over, and goes on until every turn is over.
--
--   LUA_CPATH='zig-out/lib/lua/?.so;;' lua5.4 examples/lua/many_streams.lua [N]   (default 20)
--
-- select() handles descriptors below 1024 (FD_SETSIZE): for thousands of streams, use an
-- epoll binding (luv, cqueues) the same way. See examples/README.md.
local panto = require("panto")
local socket = require("socket")

local function env(name) local v = os.getenv(name); if v ~= "" then return v end end

local n = tonumber(arg[1]) or 20
local provider = env("PANTO_PROVIDER")
  or ((env("OPENAI_API_KEY") and not env("ANTHROPIC_API_KEY")) and "openai" or "anthropic")

-- An agent runs one turn at a time: one agent a stream.
local turns = {}
for i = 1, n do
  local agent = assert(panto.Agent{
    provider = provider,
    model = env("PANTO_MODEL") or (provider == "openai" and "gpt-4o-mini" or "claude-sonnet-4-5"),
    base_url = env("PANTO_BASE_URL"),
    api_key = env("PANTO_API_KEY"),
    max_tokens = 300,
  })
  turns[i] = { agent = agent, stream = agent:run("Say hello in one sentence."), text = {} }
end

-- Steps a turn until it must wait or is over; records what it waits for.
local function advance(t)
  while true do
    local ok, ev, fd, dir, deadline = pcall(t.stream.step, t.stream)
    if not ok then t.over, t.err = true, ev; return end
    if ev then
      if ev.kind == "content_delta" and ev.block_kind == "text" then t.text[#t.text + 1] = ev.text end
    elseif fd == nil then
      t.over = true; return -- the turn is over
    else
      t.fd, t.dir, t.deadline = fd, dir, deadline; return
    end
  end
end

for _, t in ipairs(turns) do advance(t) end
while true do
  -- socket.select takes any table with a getfd method: one per wait.
  local readers, writers, by_waiter, earliest = {}, {}, {}, math.huge
  for _, t in ipairs(turns) do
    if not t.over then
      if t.fd then
        local waiter = { getfd = function() return t.fd end }
        by_waiter[waiter] = t
        table.insert(t.dir == "w" and writers or readers, waiter)
      end
      if t.deadline then earliest = math.min(earliest, t.deadline) end
    end
  end
  if next(by_waiter) == nil and earliest == math.huge then break end -- all over
  local timeout = earliest == math.huge and -1 or math.max(0, earliest - panto.monotonic())
  local readable, writable = socket.select(readers, writers, timeout)
  local ready = {}
  for _, w in ipairs(readable) do ready[by_waiter[w]] = true end
  for _, w in ipairs(writable) do ready[by_waiter[w]] = true end
  local now = panto.monotonic()
  for _, t in ipairs(turns) do
    if not t.over and (ready[t] or (t.deadline and t.deadline <= now)) then advance(t) end
  end
end

local done, bytes = 0, 0
for _, t in ipairs(turns) do
  if t.err then io.stderr:write("turn failed: ", tostring(t.err), "\n")
  else done = done + 1; bytes = bytes + #table.concat(t.text) end
  t.stream:close()
  t.agent:close()
end
print(string.format("[lua] %d/%d turns done on one thread, %d bytes of text", done, n, bytes))
os.exit(done == n and 0 or 1)
