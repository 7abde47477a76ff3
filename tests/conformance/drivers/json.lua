-- A small, strict JSON (RFC 8259) encoder and decoder in pure Lua 5.4.
--
--   local json = require("json")
--   json.decode('{"a": [1, 2.5, "\\u00e9", null]}')  --> {a = {1, 2.5, "é", json.null}}
--   json.encode({event = "done"})                    --> '{"event":"done"}'
--
-- Decoding: objects and arrays become tables, marked with the metatables json.object_mt and
-- json.array_mt so that they encode back as what they were (an empty array stays `[]`);
-- `null` becomes the sentinel json.null (so arrays keep their length); numbers without a
-- fraction or exponent become integers when they fit; \u escapes, surrogate pairs included,
-- become UTF-8. Invalid JSON or invalid UTF-8 raises "json: <what> at byte <n>". A decoded
-- object remembers the order of its keys, so that it encodes back in that order (a document
-- handed on, such as a conversation to import, keeps its bytes' meaning and its order).
--
-- Encoding: a table is an array when marked with json.array_mt or when its keys are exactly
-- 1..n (n >= 1); otherwise an object, whose keys must be strings: those of a decoded object
-- first in their decoded order, the others sorted, so the output is deterministic. An empty
-- unmarked table is `{}`. NaN, infinities, cycles, functions and invalid UTF-8 raise errors.

local json = {}

local byte, char, find, sub, format = string.byte, string.char, string.find, string.sub, string.format
local concat = table.concat

json.null = setmetatable({}, {
  __name = "json.null",
  __tostring = function() return "null" end,
})
json.array_mt = { __name = "json.array" }
json.object_mt = { __name = "json.object" }

--- Marks `t` (default: a new table) as a JSON array; returns it.
function json.array(t) return setmetatable(t or {}, json.array_mt) end

--- Marks `t` (default: a new table) as a JSON object; returns it.
function json.object(t) return setmetatable(t or {}, json.object_mt) end

-- The keys of each decoded object in the order of the text (weak: it dies with the object).
local key_order = setmetatable({}, { __mode = "k" })

-- ---- Decoding ---------------------------------------------------------------------------

local MAX_DEPTH = 500

local escapes = {
  [0x22] = '"', [0x5C] = "\\", [0x2F] = "/", [0x62] = "\b",
  [0x66] = "\f", [0x6E] = "\n", [0x72] = "\r", [0x74] = "\t",
}

local function fail(what, pos)
  error(format("json: %s at byte %d", what, pos), 0)
end

local function skip_ws(s, pos)
  local _, e = find(s, "^[ \t\r\n]*", pos)
  return e + 1
end

local decode_value -- forward

local function decode_string(s, pos)
  -- s:byte(pos) is the opening quote.
  local parts, n = {}, 0
  local i = pos + 1
  while true do
    -- The longest run without a quote, a backslash or a control character.
    local a, b = find(s, '^[^"\\\0-\31]+', i)
    if a then
      n = n + 1; parts[n] = sub(s, a, b)
      i = b + 1
    end
    local c = byte(s, i)
    if c == nil then fail("unterminated string", pos) end
    if c == 0x22 then
      return concat(parts), i + 1
    elseif c == 0x5C then
      local e = byte(s, i + 1)
      if e == 0x75 then -- \uXXXX
        local hex = sub(s, i + 2, i + 5)
        if not find(hex, "^%x%x%x%x$") then fail("bad \\u escape", i) end
        local cp = tonumber(hex, 16)
        local len = 6
        if cp >= 0xD800 and cp <= 0xDBFF then
          local hex2 = sub(s, i + 8, i + 11)
          if sub(s, i + 6, i + 7) ~= "\\u" or not find(hex2, "^%x%x%x%x$") then
            fail("lone high surrogate", i)
          end
          local lo = tonumber(hex2, 16)
          if lo < 0xDC00 or lo > 0xDFFF then fail("lone high surrogate", i) end
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00)
          len = 12
        elseif cp >= 0xDC00 and cp <= 0xDFFF then
          fail("lone low surrogate", i)
        end
        n = n + 1; parts[n] = utf8.char(cp)
        i = i + len
      else
        local r = e and escapes[e]
        if not r then fail("bad escape", i) end
        n = n + 1; parts[n] = r
        i = i + 2
      end
    else
      fail("control character in string", i)
    end
  end
end

local function decode_number(s, pos)
  local a, b = find(s, "^-?%d+", pos)
  if not a then fail("unexpected character", pos) end
  local int = sub(s, a, b)
  if find(int, "^-?0%d") then fail("leading zero in number", pos) end
  local isfloat = false
  local fa, fb = find(s, "^%.%d+", b + 1)
  if fa then
    b = fb; isfloat = true
  elseif byte(s, b + 1) == 0x2E then
    fail("bad number", pos)
  end
  local ea, eb = find(s, "^[eE][-+]?%d+", b + 1)
  if ea then
    b = eb; isfloat = true
  elseif find(s, "^[eE]", b + 1) then
    fail("bad number", pos)
  end
  local text = sub(s, pos, b)
  local v
  if isfloat then
    v = tonumber(text) + 0.0
  else
    v = math.tointeger(tonumber(text)) or tonumber(text) + 0.0 -- too big: a float
  end
  return v, b + 1
end

local function decode_array(s, pos, depth)
  local t, n = setmetatable({}, json.array_mt), 0
  local i = skip_ws(s, pos + 1)
  if byte(s, i) == 0x5D then return t, i + 1 end
  while true do
    local v
    v, i = decode_value(s, i, depth)
    n = n + 1; t[n] = v
    i = skip_ws(s, i)
    local c = byte(s, i)
    if c == 0x5D then return t, i + 1 end
    if c ~= 0x2C then fail("expected ',' or ']'", i) end
    i = skip_ws(s, i + 1)
  end
end

local function decode_object(s, pos, depth)
  local t = setmetatable({}, json.object_mt)
  local order = {}
  key_order[t] = order
  local i = skip_ws(s, pos + 1)
  if byte(s, i) == 0x7D then return t, i + 1 end
  while true do
    if byte(s, i) ~= 0x22 then fail("expected a string key", i) end
    local k
    k, i = decode_string(s, i)
    i = skip_ws(s, i)
    if byte(s, i) ~= 0x3A then fail("expected ':'", i) end
    local v
    v, i = decode_value(s, skip_ws(s, i + 1), depth)
    if t[k] == nil then order[#order + 1] = k end
    t[k] = v
    i = skip_ws(s, i)
    local c = byte(s, i)
    if c == 0x7D then return t, i + 1 end
    if c ~= 0x2C then fail("expected ',' or '}'", i) end
    i = skip_ws(s, i + 1)
  end
end

decode_value = function(s, pos, depth)
  local c = byte(s, pos)
  if c == 0x22 then return decode_string(s, pos) end
  if c == 0x7B or c == 0x5B then
    if depth >= MAX_DEPTH then fail("nested too deeply", pos) end
    if c == 0x7B then return decode_object(s, pos, depth + 1) end
    return decode_array(s, pos, depth + 1)
  end
  if c == 0x74 and sub(s, pos, pos + 3) == "true" then return true, pos + 4 end
  if c == 0x66 and sub(s, pos, pos + 4) == "false" then return false, pos + 5 end
  if c == 0x6E and sub(s, pos, pos + 3) == "null" then return json.null, pos + 4 end
  if c == nil then fail("unexpected end of input", pos) end
  return decode_number(s, pos)
end

--- Decodes the JSON text `s`. Raises "json: ..." on invalid input.
function json.decode(s)
  if type(s) ~= "string" then error("json.decode: expected a string, got " .. type(s), 2) end
  local ok, bad = utf8.len(s)
  if not ok then fail("invalid UTF-8", bad) end
  if sub(s, 1, 3) == "\239\187\191" then fail("byte order mark", 1) end
  local v, i = decode_value(s, skip_ws(s, 1), 0)
  i = skip_ws(s, i)
  if i <= #s then fail("trailing characters", i) end
  return v
end

-- ---- Encoding ---------------------------------------------------------------------------

local string_escapes = {
  ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f",
  ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t",
}
for i = 0, 31 do
  local c = char(i)
  if not string_escapes[c] then string_escapes[c] = format("\\u%04x", i) end
end

local function encode_string(s)
  if not utf8.len(s) then error("json.encode: string is not valid UTF-8", 0) end
  return '"' .. s:gsub('[\0-\31"\\]', string_escapes) .. '"'
end

local function array_length(t)
  -- n when the keys of t are exactly 1..n, else nil.
  local n = 0
  for k in pairs(t) do
    if math.type(k) ~= "integer" or k < 1 then return nil end
    n = n + 1
  end
  for i = 1, n do
    if t[i] == nil then return nil end
  end
  return n
end

local encode_value -- forward

local function encode_table(t, out, seen)
  if seen[t] then error("json.encode: cycle in table", 0) end
  seen[t] = true
  local mt = getmetatable(t)
  local n
  if mt == json.array_mt then
    n = #t
  elseif mt ~= json.object_mt then
    n = array_length(t)
    if n == 0 then n = nil end
  end
  if n then
    out[#out + 1] = "["
    for i = 1, n do
      if i > 1 then out[#out + 1] = "," end
      encode_value(t[i], out, seen)
    end
    out[#out + 1] = "]"
  else
    local decoded, keys = key_order[t] or {}, {}
    local first = {}
    for _, k in ipairs(decoded) do first[k] = true end
    for k in pairs(t) do
      if type(k) ~= "string" then
        error("json.encode: object key is a " .. type(k) .. ", not a string", 0)
      end
      if not first[k] then keys[#keys + 1] = k end
    end
    table.sort(keys)
    for i = #decoded, 1, -1 do
      if t[decoded[i]] ~= nil then table.insert(keys, 1, decoded[i]) end
    end
    out[#out + 1] = "{"
    for i, k in ipairs(keys) do
      if i > 1 then out[#out + 1] = "," end
      out[#out + 1] = encode_string(k)
      out[#out + 1] = ":"
      encode_value(t[k], out, seen)
    end
    out[#out + 1] = "}"
  end
  seen[t] = nil
end

encode_value = function(v, out, seen)
  local t = type(v)
  if v == nil or v == json.null then
    out[#out + 1] = "null"
  elseif t == "boolean" then
    out[#out + 1] = v and "true" or "false"
  elseif t == "number" then
    if math.type(v) == "integer" then
      out[#out + 1] = format("%d", v)
    elseif v ~= v or v == math.huge or v == -math.huge then
      error("json.encode: " .. tostring(v) .. " is not a JSON number", 0)
    else
      -- The shortest of %.15g/%.16g/%.17g that reads back as the same float.
      local s = format("%.15g", v)
      if tonumber(s) ~= v then s = format("%.16g", v) end
      if tonumber(s) ~= v then s = format("%.17g", v) end
      out[#out + 1] = s
    end
  elseif t == "string" then
    out[#out + 1] = encode_string(v)
  elseif t == "table" then
    encode_table(v, out, seen)
  else
    error("json.encode: cannot encode a " .. t, 0)
  end
end

--- Encodes `v` as compact JSON text. Raises "json.encode: ..." on what JSON cannot hold.
function json.encode(v)
  local out = {}
  encode_value(v, out, {})
  return concat(out)
end

return json
