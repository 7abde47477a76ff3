-- Tests of tests/conformance/drivers/json.lua, the pure-Lua JSON codec of the Lua driver.
--
--   lua5.4 tests/lua/test_json.lua
--
-- Prints `N passed, N failed`; exits non-zero when a check failed.

local script_dir = (arg and arg[0] or ""):match("^(.*)[/\\]") or "."
package.path = script_dir .. "/../conformance/drivers/?.lua;" .. package.path
local json = require("json")

local passed, failed = 0, 0
local function check(name, cond, detail)
  if cond then
    passed = passed + 1
  else
    failed = failed + 1
    print("FAIL " .. name .. (detail and (": " .. detail) or ""))
  end
end

local function same(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) ~= "table" then return a == b and math.type(a) == math.type(b) end
  for k, v in pairs(a) do if not same(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

local function decodes(text, want)
  local ok, got = pcall(json.decode, text)
  check("decode " .. text, ok and same(got, want), ok and json.encode(got) or tostring(got))
end

local function refuses(text, pattern)
  local ok, err = pcall(json.decode, text)
  check("refuse " .. text, not ok and tostring(err):find(pattern, 1, true) ~= nil, tostring(err))
end

local function encodes(value, want)
  local ok, got = pcall(json.encode, value)
  check("encode " .. want, ok and got == want, tostring(got))
end

-- Scalars and numbers.
decodes("true", true)
decodes(" false ", false)
decodes("null", json.null)
decodes("0", 0)
decodes("-12", -12)
decodes("1.5", 1.5)
decodes("1e3", 1000.0)
decodes("-2.5E-1", -0.25)
decodes("9223372036854775807", math.maxinteger)
decodes("92233720368547758070", 9.223372036854775807e19)
check("integers stay integers", math.type(json.decode("42")) == "integer")
check("1.0 is a float", math.type(json.decode("1.0")) == "float")

-- Strings and escapes.
decodes([["a\"b\\c\/d\b\f\n\r\t"]], "a\"b\\c/d\b\f\n\r\t")
decodes([["\u0041\u00e9\u20ac"]], "Aé€")
decodes([["\ud83d\ude00"]], "😀")
decodes([["\uD834\uDD1E"]], "\u{1D11E}")
decodes([["\u0000"]], "\0")
decodes('"héllo 😀"', "héllo 😀")
refuses([["\ud83d"]], "lone high surrogate")
refuses([["\ud83dx"]], "lone high surrogate")
refuses([["\ud83d\u0041"]], "lone high surrogate")
refuses([["\ude00"]], "lone low surrogate")
refuses([["\u12"]], "bad \\u escape")
refuses([["\x"]], "bad escape")
refuses('"a\nb"', "control character")
refuses('"abc', "unterminated string")
refuses('"\255"', "invalid UTF-8")

-- Containers.
decodes("[]", {})
decodes("{}", {})
decodes('[1, [2, {"a": null}], "x"]', { 1, { 2, { a = json.null } }, "x" })
decodes('{"a": {"b": [true, false]}, "c": ""}', { a = { b = { true, false } }, c = "" })
decodes('{"a": 1, "a": 2}', { a = 2 })
check("arrays keep nulls", #json.decode("[null, null, 3]") == 3)
check("arrays are marked", getmetatable(json.decode("[]")) == json.array_mt)
check("objects are marked", getmetatable(json.decode("{}")) == json.object_mt)
refuses("[1, 2", "expected ',' or ']'")
refuses("[1 2]", "expected ',' or ']'")
refuses("[1,]", "unexpected character")
refuses('{"a" 1}', "expected ':'")
refuses('{"a": 1,}', "expected a string key")
refuses("{a: 1}", "expected a string key")
refuses("01", "leading zero")
refuses("1.", "bad number")
refuses("1e", "bad number")
refuses("-", "unexpected character")
refuses(".5", "unexpected character")
refuses("tru", "unexpected character")
refuses("NaN", "unexpected character")
refuses("1 2", "trailing characters")
refuses("", "unexpected end of input")
refuses(string.rep("[", 600) .. string.rep("]", 600), "nested too deeply")
check("deep nesting within the limit",
  pcall(json.decode, string.rep("[", 400) .. string.rep("]", 400)))

-- Encoding.
encodes(json.null, "null")
encodes(true, "true")
encodes(42, "42")
encodes(-0.25, "-0.25")
encodes(0.1, "0.1")
encodes(1 / 3, "0.3333333333333333")
encodes(1e300, "1e+300")
encodes("a\"b\\c\n\0\31é😀", [["a\"b\\c\n\u0000\u001fé😀"]])
encodes({}, "{}")
encodes(json.array(), "[]")
encodes(json.object({}), "{}")
encodes({ 1, 2, "x" }, '[1,2,"x"]')
encodes({ b = 1, a = { true, json.null }, c = {} }, '{"a":[true,null],"b":1,"c":{}}')
check("encode refuses holes", not pcall(json.encode, { [1] = 1, [3] = 3 })) -- not an array, no string keys
for _, bad in ipairs({ 0 / 0, math.huge, print, "\255", { [true] = 1 } }) do
  check("encode refuses " .. tostring(bad), not pcall(json.encode, bad))
end
local cyclic = {}
cyclic.self = cyclic
check("encode refuses a cycle", not pcall(json.encode, cyclic))

-- A decoded object encodes its keys in their decoded order; keys added later come after,
-- sorted; keys removed are left out.
check("decoded key order kept",
  json.encode(json.decode('{"z":1,"a":{"y":[],"b":2},"m":null}')) == '{"z":1,"a":{"y":[],"b":2},"m":null}')
local reordered = json.decode('{"z":1,"a":2,"m":3}')
reordered.a = nil
reordered.c, reordered.b = 4, 5
encodes(reordered, '{"z":1,"m":3,"b":5,"c":4}')
check("duplicate keys listed once", json.encode(json.decode('{"b":1,"a":2,"b":3}')) == '{"b":3,"a":2}')

-- Round trips.
for _, text in ipairs({
  '{"a":[1,2.5,"x",null,true,false,[],{}],"b":{"c":"\\u0000é😀"}}',
  "[-1,0.001,1e+100,123456789012345]",
}) do
  local again = json.encode(json.decode(text))
  check("round trip " .. text, same(json.decode(again), json.decode(text)), again)
end

print(("%d passed, %d failed"):format(passed, failed))
os.exit(failed == 0 and 0 or 1)
