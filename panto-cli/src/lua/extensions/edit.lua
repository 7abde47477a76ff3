-- The bundled `edit` tool: replaces one exact occurrence of a text in a file. Refuses when
-- the text is missing or occurs more than once (saying how many times). A file outside the
-- working directory asks first (the approval rules). Written against
-- panto.ext like any extension; needs the capability fs.write.
local ext = require("panto").ext

--- Where `old` occurs in `text` (overlapping occurrences count: each makes the edit ambiguous).
local function occurrences(text, old)
  local count, first, from = 0, nil, 1
  while true do
    local s = text:find(old, from, true)
    if not s then return count, first end
    count, first, from = count + 1, first or s, s + 1
  end
end

ext.tool{
  name = "edit",
  description = "Edit a file: replace the exact text `old` by `new`. `old` must occur exactly once in the file "
    .. "(include enough surrounding lines to make it unique); whitespace and line breaks count.",
  params = {
    path = {type = "string", description = "The file's path, relative to the working directory or absolute (outside the working directory the user is asked first)"},
    old = {type = "string", description = "The exact text to replace, occurring once in the file"},
    new = {type = "string", description = "The text that replaces it"},
  },
  capabilities = {"fs.write"},
  approval = "always", -- each call asks the user first (--yolo or an approval rule allows it)
  handler = function(input)
    local path, old, new = input.path, input.old, input.new
    if old == "" then return nil, "edit: `old` is empty: give the exact text to replace" end
    -- Where it may go was decided before the call ran: a path outside the working directory
    -- asks first (the command's approval rules, the core's `outside` match), then is used.
    if path == "" then return nil, "edit: `path` is empty" end
    local file = path
    local f, err = io.open(file, "rb")
    if not f then return nil, err end
    local text = f:read("a")
    f:close()
    local count, at = occurrences(text, old)
    if count == 0 then
      return nil, ("edit: `old` was not found in %s (it must match exactly, whitespace included)"):format(path)
    elseif count > 1 then
      return nil, ("edit: `old` occurs %d times in %s; it must occur once: include more of the text around it"):format(count, path)
    end
    local out, werr = io.open(file, "wb")
    if not out then return nil, werr end
    local ok, e1 = out:write(text:sub(1, at - 1), new, text:sub(at + #old))
    local closed, e2 = out:close()
    if not ok or not closed then return nil, ("%s: %s"):format(path, e1 or e2) end
    local _, newlines = text:sub(1, at - 1):gsub("\n", "")
    return ("Edited %s: replaced 1 occurrence at line %d"):format(path, newlines + 1)
  end,
}
