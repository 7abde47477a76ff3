-- Images from Lua: a user turn with a picture, and a tool that hands the model another one.
-- `lua5.4 examples/lua/image.lua [FILE]`: FILE is an image (PNG, JPEG, GIF, WEBP, BMP) or a PDF;
-- without one the example draws a small BMP itself. panto finds the format by the bytes and
-- fits the image to the provider's rules (a BMP is sent as PNG). See examples/README.md.
local panto = require("panto")

local function env(name) local v = os.getenv(name); if v ~= "" then return v end end

-- A 64x48 24-bit BMP: a diagonal gradient, the simplest image to write by hand.
local function draw_bmp(w, h)
  local row_size = (w * 3 + 3) // 4 * 4
  local rows = {}
  for y = 0, h - 1 do
    local px = {}
    for x = 0, w - 1 do px[#px + 1] = string.char(x * 4 % 256, y * 5 % 256, 200) end -- B, G, R
    rows[#rows + 1] = table.concat(px) .. ("\0"):rep(row_size - w * 3)
  end
  local pixels = table.concat(rows)
  return "BM" .. string.pack("<I4I2I2I4", 54 + #pixels, 0, 0, 54)
    .. string.pack("<I4i4i4I2I2I4I4i4i4I4I4", 40, w, h, 1, 24, 0, #pixels, 2835, 2835, 0, 0)
    .. pixels
end

local bytes, name
if arg[1] then
  local f = assert(io.open(arg[1], "rb"))
  bytes, name = f:read("a"), arg[1]:match("[^/]*$")
  f:close()
else
  bytes, name = draw_bmp(64, 48), "gradient.bmp"
end

-- The tool returns raw bytes as an attachment; panto does the rest.
local screenshot = {
  name = "screenshot",
  description = "Takes a screenshot of the screen.",
  params = {},
  handler = function()
    return { text = "The screen right now:", attachments = { { data = draw_bmp(32, 32), name = "screen.bmp" } } }
  end,
}

local provider = env("PANTO_PROVIDER")
  or ((env("OPENAI_API_KEY") and not env("ANTHROPIC_API_KEY")) and "openai" or "anthropic")
local agent = assert(panto.Agent{
  provider = provider,
  model = env("PANTO_MODEL") or (provider == "openai" and "gpt-4o-mini" or "claude-sonnet-4-5"),
  base_url = env("PANTO_BASE_URL"),
  api_key = env("PANTO_API_KEY"),
  max_tokens = 300,
  tools = { screenshot },
})

io.write("[lua] ")
local ok, err = pcall(function()
  local turn = { "What is in this picture? Then take a screenshot and compare.", panto.media(bytes, nil, name) }
  for ev in agent:run(turn):events() do
    if ev.kind == "tool_call_start" then
      print(string.format("\n  -> %s(%s)", ev.name, ev.input_json))
    elseif ev.kind == "tool_result" then
      for _, part in ipairs(ev.parts) do
        if part.kind == "text" then
          print("  <- " .. part.text)
        else -- what was sent: after fitting
          print(string.format("  <- %s %s, %dx%d, %d bytes", part.kind, part.media_type, part.width or 0,
            part.height or 0, part.byte_size))
        end
      end
    elseif ev.kind == "content_delta" and ev.block_kind == "text" then
      io.write(ev.text); io.flush()
    end
  end
end)
agent:close()
print()
if not ok then io.stderr:write("turn failed: ", tostring(err), "\n"); os.exit(1) end
