-- The bundled `bash` tool: runs a command with bash -c through ext.exec (its own process
-- group, killed whole on timeout and on Ctrl-C), the output capped with a note where it was
-- cut. Written against panto.ext like any extension; needs the capability exec.
local ext = require("panto").ext

local default_timeout = 120 -- seconds
local max_output = 30000 -- bytes of output the model gets

ext.tool{
  name = "bash",
  description = ("Run a bash command in the working directory and get its output (stdout and stderr together, "
    .. "the first %d bytes). The command and every process it started are killed when the timeout "
    .. "passes (default %d seconds)."):format(max_output, default_timeout),
  params = {
    command = {type = "string", description = "The command, run with bash -c"},
    timeout = {type = "number", description = "Seconds before it is killed", default = default_timeout, minimum = 0},
  },
  capabilities = {"exec"},
  handler = function(input)
    local timeout = input.timeout or default_timeout
    if not (timeout > 0) then return nil, "bash: timeout must be more than 0 seconds" end
    local r, err = ext.exec({"bash", "-c", input.command}, {timeout = timeout, max_output = max_output})
    if not r then return nil, "bash: " .. err end
    local out = r.output
    if r.truncated then
      out = out .. ("\n[output cut: the first %d of %d bytes]"):format(#r.output, r.output_bytes)
    end
    if r.canceled then return nil, out .. "\n[canceled: the command was killed]" end
    if r.timed_out then return nil, out .. ("\n[timed out after %g seconds: the command was killed]"):format(timeout) end
    if r.signal then return nil, out .. ("\n[killed by signal %d]"):format(r.signal) end
    if r.status ~= 0 then return nil, out .. ("\n[exit status %d]"):format(r.status) end
    if out == "" then return "(no output)" end
    return out
  end,
}
