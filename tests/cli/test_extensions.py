"""Lua extensions through the real binary against the emulator: require('panto') with
panto.ext, ext.tool (handlers in coroutines that yield), ext.on / ext.emit, ext.exec, the
places extensions load from, and failures reported with file and line while the command goes
on. (Slash commands, ext.command, are driven in tests/cli/test_interactive.py.)"""
from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from conftest import RUN_TIMEOUT, text_reply, tool_reply
from test_tools import events, offered_tools, tool_results


def ext_file(folder: Path, name: str, source: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / name
    p.write_text(source)
    return p


GREET = """
local panto = require("panto")
panto.ext.tool{
  name = "greet", description = "Greets someone.",
  params = {who = {type = "string", description = "Whom"}},
  handler = function(input, event)
    panto.progress("greeting", 0.5)
    panto.sleep(0.01)
    coroutine.yield()
    return "hello " .. input.who .. " (" .. event.id .. ")"
  end,
}
"""


def test_an_extension_tool_is_offered_and_its_handler_yields(emulator, run_panto, workdir: Path):
    f = ext_file(workdir, "greet.lua", GREET)
    emu = emulator({"responses": [tool_reply("greet", {"who": "Ada"}), text_reply("done")]})
    r = run_panto("-p", "go", "--json", "-e", str(f))
    assert r.returncode == 0, r.stderr
    assert "greet" in offered_tools(emu)
    evs = events(r.stdout)
    progress = [e for e in evs if e["event"] == "tool_progress"]
    assert progress and progress[0]["text"] == "greeting" and progress[0]["fraction"] == 0.5
    [res] = tool_results(r.stdout)
    assert res["content"] == "hello Ada (toolu_1)" and res["is_error"] is False
    assert r.stderr == ""


def test_a_handler_that_raises_is_an_error_result_with_its_file_and_line(emulator, run_panto, workdir: Path):
    f = ext_file(workdir, "boom.lua", """local ext = require("panto").ext
ext.tool{name = "boom", description = "x", handler = function()
  error("it broke")
end}
""")
    emulator({"responses": [tool_reply("boom", {}), text_reply("done")]})
    r = run_panto("-p", "go", "--json", "-e", str(f))
    assert r.returncode == 0, r.stderr
    [res] = tool_results(r.stdout)
    assert res["is_error"] is True
    assert res["content"].endswith("boom.lua:3: it broke")


def test_a_syntax_error_is_reported_with_file_and_line_and_the_command_goes_on(emulator, run_panto, workdir: Path):
    bad = ext_file(workdir, "bad.lua", "local x = 1\nlocal y = = 2\n")
    good = ext_file(workdir, "greet.lua", GREET)
    emu = emulator({"responses": [text_reply("still here")]})
    r = run_panto("-p", "go", "-e", str(bad), "-e", str(good))
    assert r.returncode == 0, r.stderr
    assert r.stdout == "still here\n"
    assert "bad.lua:2:" in r.stderr
    assert "greet" in offered_tools(emu)


def test_a_failing_extension_is_reported_and_what_it_registered_is_dropped(emulator, run_panto, workdir: Path):
    f = ext_file(workdir, "half.lua", """local ext = require("panto").ext
ext.tool{name = "half", description = "x", handler = function() return "x" end}
ext.on("turn_start", function() error("never") end)
local t = nil
t.field = 1
""")
    emu = emulator({"responses": [text_reply("fine")]})
    r = run_panto("-p", "go", "-e", str(f))
    assert r.returncode == 0, r.stderr
    assert r.stdout == "fine\n"
    assert "half.lua:5:" in r.stderr
    assert "never" not in r.stderr  # its subscriber went with it
    assert "half" not in offered_tools(emu)


def test_a_bad_tool_declaration_is_reported_with_the_line_of_the_call(emulator, run_panto, workdir: Path):
    f = ext_file(workdir, "decl.lua", """local ext = require("panto").ext

ext.tool{name = "bad name!", description = "x", handler = function() end}
""")
    emulator({"responses": [text_reply("ok")]})
    r = run_panto("-p", "go", "-e", str(f))
    assert r.returncode == 0, r.stderr
    assert "decl.lua:3:" in r.stderr and "tool 'bad name!'" in r.stderr


def test_extensions_load_from_the_user_and_project_folders_in_order(emulator, run_panto, home: Path, workdir: Path):
    log = workdir / "order.txt"
    source = 'local f = io.open({log!r}, "a"); f:write({name!r}, "\\n"); f:close()\n'
    user = home / ".config" / "panto" / "extensions"
    project = workdir / ".panto" / "extensions"
    ext_file(user, "b.lua", source.format(log=str(log), name="user b"))
    ext_file(user, "a.lua", source.format(log=str(log), name="user a"))
    ext_file(user, "notes.txt", "not lua")
    ext_file(project, "c.lua", source.format(log=str(log), name="project c"))
    e = ext_file(workdir, "e.lua", source.format(log=str(log), name="-e"))
    emulator({"responses": [text_reply("ok")]})
    # --trust: the project's own extensions load only in a trusted folder (test_trust.py).
    r = run_panto("-p", "go", "--trust", "-e", str(e))
    assert r.returncode == 0, r.stderr
    assert log.read_text().splitlines() == ["user a", "user b", "project c", "-e"]


def test_ext_on_sees_the_turns_events_in_order(emulator, run_panto, workdir: Path):
    log = workdir / "events.jsonl"
    f = ext_file(workdir, "watch.lua", f"""local panto = require("panto")
local out = io.open({str(log)!r}, "w")
panto.ext.on("*", function(data, name)
  out:write(panto.json_encode({{name = name, data = data}}), "\\n")
  out:flush()
end)
panto.ext.on("tool_result", function() error("a subscriber that raises") end)
""")
    emulator({"responses": [tool_reply("bash", {"command": "echo hi"}), text_reply("done")]})
    r = run_panto("-p", "go", "--allow", "exec", "--yolo", "-e", str(f))
    assert r.returncode == 0, r.stderr
    assert r.stdout == "done\n"
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert [s["name"] for s in seen] == ["turn_start", "message_end", "tool_call", "tool_result",
                                         "message_end", "turn_end"]
    assert seen[0]["data"] == {"input": "go"}
    assert seen[1]["data"]["stop_reason"] == "tool_use"
    assert seen[2]["data"]["name"] == "bash" and seen[2]["data"]["input"] == {"command": "echo hi"}
    assert seen[3]["data"]["content"] == "hi\n" and seen[3]["data"]["is_error"] is False
    assert seen[5]["data"] == {"stop_reason": "end_turn"}
    # The raising subscriber is reported with its line; the others went on.
    assert "watch.lua:7: a subscriber that raises" in r.stderr


def test_ext_emit_reaches_other_extensions(emulator, run_panto, workdir: Path):
    log = workdir / "got.txt"
    listener = ext_file(workdir, "listener.lua", f"""local ext = require("panto").ext
ext.on("greeted", function(data, name)
  local f = io.open({str(log)!r}, "w"); f:write(name, " ", data.who); f:close()
end)
""")
    emitter = ext_file(workdir, "emitter.lua", """local ext = require("panto").ext
ext.tool{name = "hi", description = "x", params = {who = "string"}, handler = function(input)
  ext.emit("greeted", {who = input.who})
  return "ok"
end}
""")
    emulator({"responses": [tool_reply("hi", {"who": "Bo"}), text_reply("done")]})
    r = run_panto("-p", "go", "-e", str(listener), "-e", str(emitter))
    assert r.returncode == 0, r.stderr
    assert log.read_text() == "greeted Bo"


def test_ext_on_returns_a_function_that_unsubscribes(emulator, run_panto, workdir: Path):
    log = workdir / "count.txt"
    f = ext_file(workdir, "once.lua", f"""local ext = require("panto").ext
local off
off = ext.on("turn_start", function() io.open({str(log)!r}, "a"):write("start\\n") end)
ext.on("turn_end", function() off() end)
""")
    emulator({"responses": [text_reply("ok")]})
    r = run_panto("-p", "go", "-e", str(f))
    assert r.returncode == 0, r.stderr
    assert log.read_text() == "start\n"


def test_ext_exec_outside_a_handler_waits_in_place(emulator, run_panto, workdir: Path):
    f = ext_file(workdir, "load.lua", """local ext = require("panto").ext
local r = assert(ext.exec({"sh", "-c", "printf %s loaded; exit 4"}))
local missing, why = ext.exec({"/nonexistent/program"})
ext.tool{name = "info", description = "x", handler = function()
  return ("%s %d %s %s"):format(r.output, r.status, tostring(missing), why)
end}
""")
    emulator({"responses": [tool_reply("info", {}), text_reply("done")]})
    r = run_panto("-p", "go", "--json", "-e", str(f))
    assert r.returncode == 0, r.stderr
    [res] = tool_results(r.stdout)
    assert res["content"] == "loaded 4 nil cannot start '/nonexistent/program': FileNotFound"


def test_a_user_extension_replaces_a_bundled_tool(emulator, run_panto, workdir: Path):
    f = ext_file(workdir, "mybash.lua", """local ext = require("panto").ext
ext.tool{name = "bash", description = "my bash", params = {command = "string"},
  handler = function(input) return "mine: " .. input.command end}
""")
    emu = emulator({"responses": [tool_reply("bash", {"command": "ls"}), text_reply("done")]})
    r = run_panto("-p", "go", "--json", "-e", str(f))
    assert r.returncode == 0, r.stderr
    [res] = tool_results(r.stdout)
    assert res["content"] == "mine: ls"
    tools = emu.requests()[0]["body"]["tools"]
    assert [t["description"] for t in tools if t["name"] == "bash"] == ["my bash"]


def test_require_panto_gives_the_native_module_with_ext(emulator, run_panto, workdir: Path):
    out = workdir / "shape.txt"
    f = ext_file(workdir, "shape.lua", f"""local panto = require("panto")
local again = require("panto")
local p1, p2 = package.preload.panto("panto"), package.preload.panto("panto")
local f = io.open({str(out)!r}, "w")
f:write(type(panto.Agent), " ", type(panto.ext), " ", type(panto.ext.tool), " ", tostring(panto == again),
  " ", tostring(p1 ~= p2 and p1 ~= panto and type(p1.ext) == "table" and p1.ext ~= p2.ext))
f:close()
""")
    emulator({"responses": [text_reply("ok")]})
    r = run_panto("-p", "go", "-e", str(f))
    assert r.returncode == 0, r.stderr
    assert out.read_text() == "function table function true true"


def test_print_of_an_extension_goes_to_stderr_not_into_the_answer(emulator, run_panto, workdir: Path):
    f = ext_file(workdir, "chatty.lua", 'print("loading", 42)\n')
    emulator({"responses": [text_reply("answer")]})
    r = run_panto("-p", "go", "--json", "-e", str(f))
    assert r.returncode == 0, r.stderr
    assert r.stderr == "loading\t42\n"
    assert all(json.loads(line) for line in r.stdout.splitlines())


# ---- Ctrl-C (SIGINT in print mode) interrupts Lua code that does not end ----

SPIN_TOOL = """
local ext = require("panto").ext
ext.tool{name = "spin", description = "Never ends.", params = {}, handler = function()
  io.open("spinning", "w"):close()
  while true do end
end}
"""

SPIN_AT_LOAD = """
io.open("spinning", "w"):close()
while true do end
"""


def interrupt_when_spinning(proc: subprocess.Popen[bytes], workdir: Path) -> tuple[int, str]:
    """Waits until the Lua code writes `spinning` (it loops from then on), sends SIGINT, and
    returns the exit code and stderr (the deadline guards against a hang; not a speed test)."""
    deadline = time.monotonic() + RUN_TIMEOUT
    while not (workdir / "spinning").exists():
        assert proc.poll() is None, proc.stderr.read().decode()
        assert time.monotonic() < deadline, "the extension never ran"
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=RUN_TIMEOUT)
    return proc.returncode, err.decode()


def test_sigint_interrupts_a_tool_handler_in_a_loop(emulator, start_panto, workdir: Path):
    f = ext_file(workdir, "spin.lua", SPIN_TOOL)
    emulator({"responses": [tool_reply("spin", {}), text_reply("never asked")]})
    proc = start_panto("-p", "go", "-e", str(f), stdin=subprocess.DEVNULL)
    code, err = interrupt_when_spinning(proc, workdir)
    assert code == 130, err
    assert err.endswith("panto: canceled\n"), err


def test_sigint_interrupts_an_extension_that_loops_while_it_loads(emulator, start_panto, workdir: Path):
    f = ext_file(workdir, "spin.lua", SPIN_AT_LOAD)
    emu = emulator({"responses": [text_reply("never asked")]})
    proc = start_panto("-p", "go", "-e", str(f), stdin=subprocess.DEVNULL)
    code, err = interrupt_when_spinning(proc, workdir)
    assert code == 130, err
    assert "spin.lua" in err and "interrupted" in err and err.endswith("panto: canceled\n"), err
    assert emu.requests() == []
