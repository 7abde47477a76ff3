-- The bundled `bash` tool: runs a command with bash -c through ext.exec (its own process
-- group, killed whole on timeout and on Ctrl-C). A long output keeps its end, where a build
-- says what failed, with a note of what was cut at the start and of the file that holds the
-- whole of it. Written against panto.ext like any extension; needs the capability exec.
local ext = require("panto").ext

local default_timeout = 120 -- seconds
local max_output = 30000 -- bytes of output the model gets

--- The kept end of a cut output, from a line's start (one byte more than the cap is kept, so
--- that a cut right after a newline is seen), and a note of what was left out.
local function tail_with_note(r)
  local out = r.output
  local nl = out:find("\n", 1, true)
  if nl and nl < #out then
    out = out:sub(nl + 1)
  else
    out = out:sub(2):gsub("^[\128-\191]+", "") -- one long line: not inside a UTF-8 character
  end
  local _, kept_lines = out:gsub("\n", "")
  local cut_bytes = r.output_bytes - #out
  local where = r.output_file and ("the whole output is in " .. r.output_file .. " (read parts of it with bash: grep, tail, sed -n)")
    or "the whole output could not be saved"
  return ("[output cut: the first %d bytes (%d lines) of %d are left out; %s]\n"):format(
    cut_bytes, r.output_lines - kept_lines, r.output_bytes, where) .. out
end

ext.tool{
  name = "bash",
  description = ("Run a bash command in the working directory and get its output (stdout and stderr together; "
    .. "past %d bytes, its end, and the path of a file holding the whole of it). The command and every process "
    .. "it started are killed when the timeout passes (default %d seconds)."):format(max_output, default_timeout),
  params = {
    command = {type = "string", description = "The command, run with bash -c"},
    timeout = {type = "number", description = "Seconds before it is killed", default = default_timeout, minimum = 0},
  },
  capabilities = {"exec"},
  approval = "always", -- each call asks the user first (--yolo or an approval rule allows it)
  handler = function(input, call)
    local timeout = input.timeout or default_timeout
    if not (timeout > 0) then return nil, "bash: timeout must be more than 0 seconds" end
    local r, err = ext.exec({"bash", "-c", input.command},
      {timeout = timeout, max_output = max_output + 1, keep = "tail", save_output = true,
       progress = call and call.id}) -- its last line shows while it runs
    if not r then return nil, "bash: " .. err end
    local out = r.truncated and tail_with_note(r) or r.output
    if r.canceled then return nil, out .. "\n[canceled: the command was killed]" end
    if r.timed_out then return nil, out .. ("\n[timed out after %g seconds: the command was killed]"):format(timeout) end
    if r.signal then return nil, out .. ("\n[killed by signal %d]"):format(r.signal) end
    if r.status ~= 0 then return nil, out .. ("\n[exit status %d]"):format(r.status) end
    if out == "" then return "(no output)" end
    return out
  end,
}
