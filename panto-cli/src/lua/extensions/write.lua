-- The bundled `write` tool: creates a file (and its missing folders) or replaces its
-- content. Written against panto.ext like any extension; needs the capability fs.write.
local ext = require("panto").ext

ext.tool{
  name = "write",
  description = "Write a file: create it (with its missing parent folders) or replace all of its content. "
    .. "Relative paths are from the working directory.",
  params = {
    path = {type = "string", description = "The file's path"},
    content = {type = "string", description = "The file's whole new content"},
  },
  capabilities = {"fs.write"},
  handler = function(input)
    local path, content = input.path, input.content
    local dir = path:match("^(.+)/[^/]*$")
    if dir then
      local ok, err = ext.mkdir(dir)
      if not ok then return nil, err end
    end
    local f, err = io.open(path, "wb")
    if not f then return nil, err end
    local ok, werr = f:write(content)
    local closed, cerr = f:close()
    if not ok or not closed then return nil, ("%s: %s"):format(path, werr or cerr) end
    return ("Wrote %d bytes to %s"):format(#content, path)
  end,
}
