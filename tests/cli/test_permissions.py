"""Permissions (issue 35, "Safety"; docs/cli.md "Approvals"): write, edit and bash offered by
default, each call asking; one path rule for every file tool, a path outside the working
directory asking (the core's `outside` approval match) rather than refused inside the tool;
`permissions` rules in the config file and in a trusted project's .panto/config.json; "allow
this rule" at the prompt; extension `tool_call` handlers that block or rewrite a call. The
interactive cases run in tmux (test_interactive.py's pane)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import text_reply, tool_reply
from test_approvals import result_text, tool_results
from test_interactive import pane  # noqa: F401  (the fixture)


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def asked(stdout: str) -> list[str]:
    """The names of the calls of --json's approval_request events."""
    return [c["name"] for e in events(stdout) if e["event"] == "approval_request" for c in e["calls"]]


# ---- 1. write, edit and bash offered by default, each call asking ----

def test_write_edit_and_bash_are_offered_without_allow(emulator, run_panto):
    emu = emulator({"responses": [text_reply("ok")]})
    r = run_panto("-p", "x")
    assert r.returncode == 0, r.stderr
    assert sorted(t["name"] for t in emu.requests()[0]["body"]["tools"]) == ["bash", "edit", "read", "write"]


def test_print_mode_without_rules_denies_a_bash_call_with_a_clear_line(emulator, run_panto, workdir: Path):
    emu = emulator({"responses": [tool_reply("bash", {"command": "touch made"}), text_reply("ok")]})
    r = run_panto("-p", "go")
    assert (r.returncode, r.stdout) == (0, "ok\n"), r.stderr
    assert "panto: a bash call was denied: it asks for approval, and print mode cannot ask" in r.stderr
    assert not (workdir / "made").exists()
    [result] = tool_results(emu.requests()[1])
    assert result["is_error"] is True and "Unknown tool" not in result_text(result)


def test_a_config_that_grants_only_reading_offers_only_read(emulator, run_panto, write_config):
    emu = emulator({"responses": [text_reply("ok")]})
    write_config({"allow": ["fs.read"]})
    assert run_panto("-p", "x").returncode == 0
    assert [t["name"] for t in emu.requests()[0]["body"]["tools"]] == ["read"]


def test_interactive_bash_asks_without_allow_and_runs_once_allowed(emulator, pane):
    emu = emulator({"responses": [tool_reply("bash", {"command": "echo hi"}), text_reply("Done.")]})
    p = pane()
    p.type("Say hi")
    p.wait_for("bash wants to run: echo hi")
    p.keys("y")
    p.wait_for("Done.")
    assert result_text(tool_results(emu.requests()[1])[0]) == "hi\n"


# ---- 2. one path rule: outside the working directory asks ----

def test_read_outside_the_working_directory_asks_and_print_mode_denies_it(emulator, run_panto, workdir: Path):
    (workdir.parent / "secret.txt").write_text("the secret\n")
    emu = emulator({"responses": [tool_reply("read", {"path": "../secret.txt"}), text_reply("ok")]})
    r = run_panto("-p", "go", "--json")
    assert r.returncode == 0, r.stderr
    assert asked(r.stdout) == ["read"]
    assert "panto: a read call was denied: it asks for approval" in r.stderr
    [result] = tool_results(emu.requests()[1])
    assert result["is_error"] is True and "the secret" not in result_text(result)


def test_yolo_reads_and_writes_outside_the_working_directory(emulator, run_panto, workdir: Path):
    (workdir.parent / "secret.txt").write_text("the secret\n")
    emu = emulator({"responses": [tool_reply("read", {"path": str(workdir.parent / "secret.txt")}),
                                  tool_reply("write", {"path": "../made.txt", "content": "x"}, id="toolu_2"),
                                  text_reply("ok")]})
    r = run_panto("-p", "go", "--yolo")
    assert r.returncode == 0, r.stderr
    assert result_text(tool_results(emu.requests()[1])[0]) == "the secret\n"
    assert (workdir.parent / "made.txt").read_text() == "x"


def test_read_inside_the_working_directory_asks_nothing_even_by_an_absolute_path(emulator, run_panto, workdir: Path):
    (workdir / "notes.txt").write_text("inside\n")
    emu = emulator({"responses": [tool_reply("read", {"path": str(workdir / "notes.txt")}), text_reply("ok")]})
    r = run_panto("-p", "go", "--json")
    assert r.returncode == 0, r.stderr
    assert asked(r.stdout) == []
    assert result_text(tool_results(emu.requests()[1])[0]) == "inside\n"


def test_an_allow_rule_does_not_let_a_write_outside_run_unasked(emulator, run_panto, write_config, workdir: Path):
    write_config({"permissions": {"allow": ["write"]}})
    emulator({"responses": [tool_reply("write", {"path": "in.txt", "content": "a"}),
                            tool_reply("write", {"path": "../out.txt", "content": "b"}, id="toolu_2"),
                            text_reply("ok")]})
    r = run_panto("-p", "go", "--json")
    assert r.returncode == 0, r.stderr
    assert (workdir / "in.txt").read_text() == "a"
    assert asked(r.stdout) == ["write"]
    assert not (workdir.parent / "out.txt").exists()


def test_interactive_write_outside_names_the_path_and_runs_once_allowed(emulator, pane, workdir: Path):
    emulator({"responses": [tool_reply("write", {"path": "../out.txt", "content": "x"}), text_reply("Written.")]})
    p = pane()
    p.type("Write it")
    screen = p.wait_for("the path is outside the working directory")
    assert "write wants to run: ../out.txt" in screen
    p.keys("y")
    p.wait_for("Written.")
    assert (workdir.parent / "out.txt").read_text() == "x"


# ---- 3. permissions in the settings, global and project ----

def test_the_config_files_permissions_allow_and_deny_by_pattern(emulator, run_panto, write_config, workdir: Path):
    write_config({"permissions": {"allow": ["bash(echo *)"], "deny": ["bash(echo secret*)"]}})
    emu = emulator({"responses": [tool_reply("bash", {"command": "echo allowed"}),
                                  tool_reply("bash", {"command": "echo secret"}, id="toolu_2"),
                                  tool_reply("bash", {"command": "touch made"}, id="toolu_3"),
                                  text_reply("ok")]})
    r = run_panto("-p", "go")
    assert r.returncode == 0, r.stderr
    assert result_text(tool_results(emu.requests()[1])[0]) == "allowed\n"
    [denied] = tool_results(emu.requests()[2])
    assert denied["is_error"] is True and "The approval rules do not allow this call" in result_text(denied)
    assert "a bash call was denied: it asks for approval" in r.stderr  # touch: no rule, it asked
    assert not (workdir / "made").exists()


def test_a_projects_permissions_apply_only_once_the_folder_is_trusted(emulator, run_panto, workdir: Path):
    project = workdir / ".panto" / "config.json"
    project.parent.mkdir()
    project.write_text(json.dumps({"permissions": {"allow": ["write(src/**)"]}}))
    emulator({"responses": [tool_reply("write", {"path": "src/a.txt", "content": "a"}), text_reply("one"),
                            tool_reply("write", {"path": "src/a.txt", "content": "a"}), text_reply("two")]})
    r = run_panto("-p", "go")
    assert r.returncode == 0, r.stderr
    assert f"panto: {workdir} is not trusted" in r.stderr and str(project) in r.stderr
    assert "a write call was denied" in r.stderr
    assert not (workdir / "src" / "a.txt").exists()
    r = run_panto("-p", "go", "--trust")
    assert r.returncode == 0, r.stderr
    assert "denied" not in r.stderr
    assert (workdir / "src" / "a.txt").read_text() == "a"


def test_a_malformed_permission_is_a_usage_error(emulator, run_panto, write_config, workdir: Path):
    path = write_config({"permissions": {"allow": ["bash(git status"]}})
    emulator({"responses": [text_reply("ok")]})
    r = run_panto("-p", "go")
    assert r.returncode == 2
    assert r.stderr == (f'panto: {path}: permissions.allow[0] must be "TOOL" or "TOOL(PATTERN)", '
                        'as "bash(git status*)" or "write(src/**)"\n')
    project = workdir / ".panto" / "config.json"
    project.parent.mkdir()
    project.write_text(json.dumps({"model": "x"}))
    write_config({})
    r = run_panto("-p", "go", "--trust")
    assert r.returncode == 2
    assert r.stderr == f'panto: {project}: a project\'s file holds only "permissions", not "model"\n'


def test_allow_this_rule_allows_calls_like_it_for_the_session(emulator, pane):
    emu = emulator({"responses": [tool_reply("bash", {"command": "ls -a"}, id="toolu_1"),
                                  tool_reply("bash", {"command": "ls -l"}, id="toolu_2"),
                                  tool_reply("bash", {"command": "echo other"}, id="toolu_3"),
                                  text_reply("All done.")]})
    p = pane()
    p.type("List")
    screen = p.wait_for("bash wants to run: ls -a")
    assert "[p] allow bash(ls*)" in screen
    p.keys("p")
    p.wait_for("bash wants to run: echo other")
    p.keys("y")
    screen = p.wait_for("All done.")
    assert "bash wants to run: ls -l" not in screen
    assert len(emu.requests()) == 4


# ---- 4. an extension's tool_call handler blocks or rewrites a call ----

GATE = """local ext = require("panto").ext
ext.on("tool_call", function(call)
  if call.name ~= "bash" then return end
  if call.input.command:find("rm ", 1, true) then return {block = true, reason = "no rm from here"} end
  if call.input.command == "echo draft" then return {input = {command = "echo rewritten"}} end
end)
"""


def test_an_extension_blocks_a_call_and_the_model_gets_the_reason(emulator, run_panto, workdir: Path):
    (workdir / "gate.lua").write_text(GATE)
    (workdir / "keep.txt").write_text("x")
    emu = emulator({"responses": [tool_reply("bash", {"command": "rm keep.txt"}), text_reply("ok")]})
    r = run_panto("-e", "gate.lua", "--yolo", "-p", "go")
    assert r.returncode == 0, r.stderr
    [result] = tool_results(emu.requests()[1])
    assert result["is_error"] is True
    assert result_text(result) == "An extension blocked this call: no rm from here"
    assert (workdir / "keep.txt").exists()


def test_an_extension_rewrites_a_calls_input(emulator, run_panto, workdir: Path):
    (workdir / "gate.lua").write_text(GATE)
    emu = emulator({"responses": [tool_reply("bash", {"command": "echo draft"}), text_reply("ok")]})
    r = run_panto("-e", "gate.lua", "--yolo", "-p", "go")
    assert r.returncode == 0, r.stderr
    assert result_text(tool_results(emu.requests()[1])[0]) == "rewritten\n"


def test_rpc_approve_with_a_rule_allows_the_calls_it_matches(emulator, start_panto, workdir: Path):
    from test_rpc import Client
    emulator({"responses": [tool_reply("bash", {"command": "ls -a"}), text_reply("one"),
                            tool_reply("bash", {"command": "ls -l"}, id="toolu_2"), text_reply("two")]})
    c = Client(start_panto("--mode", "rpc", "--no-session"))
    c.send({"type": "prompt", "text": "list"})
    c.event("approval_request")
    c.send({"id": "bad", "type": "approve", "call_id": "toolu_1", "rule": "bash(ls"})
    assert c.response("bad")["code"] == "invalid_argument"
    c.send({"id": "ok", "type": "approve", "call_id": "toolu_1", "rule": "bash(ls*)"})
    assert c.until(lambda e: e["event"] in ("done", "error"))[-1] == {"event": "done"}
    # The next turn's `ls -l` runs without an answer.
    c.send({"type": "prompt", "text": "again"})
    rest = c.until(lambda e: e["event"] in ("done", "error"))
    assert rest[-1] == {"event": "done"}
    [result] = [e for e in rest if e["event"] == "tool_result"]
    assert result["is_error"] is False
    assert c.close() == 0


READ_GATE = """local ext = require("panto").ext
ext.on("tool_call", function(call)
  local log = io.open("gate.log", "a"); log:write(call.id, " ", call.name, "\\n"); log:close()
  if call.name == "read" and call.input.path:find(".env", 1, true) then
    return {block = true, reason = "secrets stay here"}
  end
end)
"""


def test_an_extension_gates_the_calls_the_core_runs_too(emulator, run_panto, workdir: Path):
    # read runs in the core: the gate sees it at its approval, once, and can block it; the
    # calls it lets through run or ask as the rules say (the --json request lists only bash).
    (workdir / "gate.lua").write_text(READ_GATE)
    (workdir / ".env").write_text("TOKEN=secret\n")
    (workdir / "notes.txt").write_text("notes\n")
    emu = emulator({"responses": [
        {"message": {"content": [
            {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": ".env"}},
            {"type": "tool_use", "id": "toolu_2", "name": "read", "input": {"path": "notes.txt"}},
            {"type": "tool_use", "id": "toolu_3", "name": "bash", "input": {"command": "touch made"}}]}},
        text_reply("ok")]})
    r = run_panto("-e", "gate.lua", "-p", "go", "--json")
    assert r.returncode == 0, r.stderr
    assert asked(r.stdout) == ["bash"]
    env, notes, bash = tool_results(emu.requests()[1])
    assert env["is_error"] is True and "An extension blocked this call: secrets stay here" in result_text(env)
    assert "secret" not in result_text(env).replace("secrets stay here", "")
    assert result_text(notes) == "notes\n" and not notes.get("is_error")
    assert bash["is_error"] is True and not (workdir / "made").exists()
    assert sorted((workdir / "gate.log").read_text().splitlines()) == ["toolu_1 read", "toolu_2 read", "toolu_3 bash"]


def test_a_permissions_deny_comes_before_the_gate(emulator, run_panto, write_config, workdir: Path):
    write_config({"permissions": {"deny": ["read(.env)"]}})
    (workdir / "gate.lua").write_text(READ_GATE)
    (workdir / ".env").write_text("TOKEN=secret\n")
    emu = emulator({"responses": [tool_reply("read", {"path": ".env"}), text_reply("ok")]})
    r = run_panto("-e", "gate.lua", "-p", "go")
    assert r.returncode == 0, r.stderr
    [result] = tool_results(emu.requests()[1])
    # The core's own denial (not the gate's, not a user's), then the call is told to the
    # subscribers as every denied call is, once.
    assert result["is_error"] is True and "The approval rules do not allow this call" in result_text(result)
    assert (workdir / "gate.log").read_text() == "toolu_1 read\n"


def test_a_gate_that_raises_is_reported_and_the_call_runs(emulator, run_panto, workdir: Path):
    (workdir / "gate.lua").write_text('require("panto").ext.on("tool_call", function() error("gate broke") end)\n')
    emu = emulator({"responses": [tool_reply("bash", {"command": "echo ran"}), text_reply("ok")]})
    r = run_panto("-e", "gate.lua", "--yolo", "-p", "go")
    assert r.returncode == 0, r.stderr
    assert "gate broke" in r.stderr
    assert result_text(tool_results(emu.requests()[1])[0]) == "ran\n"
