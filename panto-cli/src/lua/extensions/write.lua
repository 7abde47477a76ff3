-- The bundled `write` tool: creates a file (and its missing folders) or replaces its
-- content, at a path inside the working directory (ext.check_path). Written against panto.ext like any extension; needs the capability fs.write.
local ext = require("panto").ext

ext.tool{
  name = "write",
  description = "Write a file: create it (with its missing parent folders) or replace all of its content. "
    .. "The path is relative to the working directory, or absolute inside it.",
  params = {
    path = {type = "string", description = "The file's path, relative to the working directory or absolute inside it"},
    content = {type = "string", description = "The file's whole new content"},
  },
  capabilities = {"fs.write"},
  approval = "always", -- each call asks the user first (--yolo or an approval rule allows it)
  handler = function(input)
    local path, content = input.path, input.content
    local file, refused = ext.check_path(path) -- the file tools' rule: inside the working directory
    if not file then return nil, "write: " .. refused end
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
