-- The bundled `write` tool: creates a file (and its missing folders) or replaces its
-- content; a path outside the working directory asks first (the approval rules). Written against panto.ext like any extension; needs the capability fs.write.
local ext = require("panto").ext

ext.tool{
  name = "write",
  description = "Write a file: create it (with its missing parent folders) or replace all of its content. "
    .. "The path is relative to the working directory, or absolute.",
  params = {
    path = {type = "string", description = "The file's path, relative to the working directory or absolute (outside the working directory the user is asked first)"},
    content = {type = "string", description = "The file's whole new content"},
  },
  capabilities = {"fs.write"},
  approval = "always", -- each call asks the user first (--yolo or an approval rule allows it)
  handler = function(input)
    local path, content = input.path, input.content
    -- Where it may go was decided before the call ran: a path outside the working directory
    -- asks first (the command's approval rules, the core's `outside` match), then is used.
    if path == "" then return nil, "write: `path` is empty" end
    local file = path
    local dir = file:match("^(.+)/[^/]*$")
    if dir then
      local ok, err = ext.mkdir(dir)
      if not ok then return nil, err end
    end
    local f, err = io.open(file, "wb")
    if not f then return nil, err end
    local ok, werr = f:write(content)
    local closed, cerr = f:close()
    if not ok or not closed then return nil, ("%s: %s"):format(path, werr or cerr) end
    return ("Wrote %d byte%s to %s"):format(#content, #content == 1 and "" or "s", path)
  end,
}
