"""Calls that ask before they run (issue 35, docs/cli.md "Approvals"): the bundled bash, write
and edit ask by default; interactive mode asks (allow once, allow the tool for the session,
deny with a reason, Esc to cancel), print mode denies and says so on stderr, `--yolo` never
asks, the config file's `approval_rules` decide first. The interactive cases run in tmux
(test_interactive.py's pane); every wait polls the screen or the emulator.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import text_reply, tool_reply
from test_interactive import pane  # noqa: F401  (the fixture)

QUESTION = "wants to run:"


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks of a request's last message."""
    content = request["body"]["messages"][-1]["content"]
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(c.get("text", "") for c in content)


# ---- print mode ----

def test_print_mode_denies_a_call_that_asks_and_says_so_on_stderr(emulator, run_panto, workdir: Path):
    emu = emulator({"responses": [tool_reply("bash", {"command": "touch made"}), text_reply("ok")]})
    r = run_panto("-p", "go", "--allow", "exec")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "ok\n"
    assert "panto: a bash call was denied: it asks for approval, and print mode cannot ask" in r.stderr
    assert not (workdir / "made").exists()
    [result] = tool_results(emu.requests()[1])
    assert result["is_error"] is True
    assert "print mode (panto -p) cannot ask the user" in result_text(result)


def test_json_mode_denies_too_and_its_stdout_stays_json(emulator, run_panto, workdir: Path):
    emulator({"responses": [tool_reply("write", {"path": "f.txt", "content": "x"}), text_reply("ok")]})
    r = run_panto("-p", "go", "--json", "--allow", "fs.write")
    assert r.returncode == 0, r.stderr
    events = [json.loads(line) for line in r.stdout.splitlines()]
    asked = [e for e in events if e["event"] == "approval_request"]
    assert [c["name"] for c in asked[0]["calls"]] == ["write"]
    [result] = [e for e in events if e["event"] == "tool_result"]
    assert result["is_error"] is True
    assert "a write call was denied" in r.stderr
    assert not (workdir / "f.txt").exists()


def test_yolo_runs_the_call_without_asking(emulator, run_panto, workdir: Path):
    emulator({"responses": [tool_reply("bash", {"command": "touch made; echo made"}), text_reply("ok")]})
    r = run_panto("-p", "go", "--json", "--allow", "exec", "--yolo")
    assert r.returncode == 0, r.stderr
    assert (workdir / "made").exists()
    events = [json.loads(line) for line in r.stdout.splitlines()]
    assert not [e for e in events if e["event"] == "approval_request"]
    assert "denied" not in r.stderr


def test_the_config_files_rules_come_first_and_yolo_keeps_their_denials(emulator, run_panto, write_config, workdir: Path):
    write_config({"approval_rules": [
        {"tool": "bash", "input": {"path": "/command", "prefix": "rm "}, "decision": "deny", "reason": "no rm here"},
        {"tool": "bash", "input": {"path": "/command", "prefix": "echo "}, "decision": "allow"},
    ]})
    (workdir / "keep.txt").write_text("x")
    emu = emulator({"responses": [tool_reply("bash", {"command": "echo allowed"}), text_reply("one"),
                                  tool_reply("bash", {"command": "rm keep.txt"}), text_reply("two")]})
    r = run_panto("-p", "go", "--allow", "exec")
    assert r.returncode == 0, r.stderr
    [allowed] = tool_results(emu.requests()[1])
    assert result_text(allowed) == "allowed\n" and not allowed.get("is_error")
    r = run_panto("-p", "go", "--allow", "exec", "--yolo")
    assert r.returncode == 0, r.stderr
    [denied] = tool_results(emu.requests()[3])
    assert denied["is_error"] is True and "no rm here" in result_text(denied)
    assert (workdir / "keep.txt").exists()


# ---- interactive mode ----

def two_bash_calls(emulator: Any) -> Any:
    return emulator({"responses": [tool_reply("bash", {"command": "echo one"}, id="toolu_1"),
                                   tool_reply("bash", {"command": "echo two"}, id="toolu_2"),
                                   text_reply("All done.")]})


def test_allow_once_runs_the_call_and_the_next_call_asks_again(emulator, pane):
    emu = two_bash_calls(emulator)
    p = pane("--allow", "exec")
    p.type("Run two commands")
    p.wait_for("bash wants to run: echo one")
    assert "[a] allow bash for this session" in p.screen()
    p.keys("y")
    p.wait_for("bash wants to run: echo two")
    p.keys("y")
    screen = p.wait_for("All done.")
    assert screen.count(QUESTION) == 2
    assert result_text(tool_results(emu.requests()[1])[0]) == "one\n"
    assert result_text(tool_results(emu.requests()[2])[0]) == "two\n"


def test_allow_for_the_session_does_not_ask_again(emulator, pane):
    emu = emulator({"responses": [tool_reply("bash", {"command": "echo one"}, id="toolu_1"),
                                  tool_reply("bash", {"command": "echo two"}, id="toolu_2"),
                                  text_reply("First done."),
                                  tool_reply("bash", {"command": "echo three"}, id="toolu_3"),
                                  text_reply("Second done.")]})
    p = pane("--allow", "exec")
    p.type("Run two commands")
    p.wait_for("bash wants to run: echo one")
    p.keys("a")
    p.wait_for("First done.")
    # The next turn's call runs unasked too: the session's allowance outlives the turn.
    p.type("Once more")
    screen = p.wait_for("Second done.")
    assert screen.count(QUESTION) == 1
    assert result_text(tool_results(emu.requests()[2])[0]) == "two\n"
    assert result_text(tool_results(emu.requests()[4])[0]) == "three\n"


def test_deny_with_a_reason_gives_the_model_the_reason(emulator, pane, workdir: Path):
    emu = emulator({"responses": [tool_reply("bash", {"command": "touch made"}), text_reply("I will not.")]})
    p = pane("--allow", "exec")
    p.type("Make a file")
    p.wait_for("bash wants to run: touch made")
    p.keys("r")
    p.wait_for("reason: ")
    p.type("not in this folder")
    p.wait_for("I will not.")
    [result] = tool_results(emu.requests()[1])
    assert result["is_error"] is True
    assert "not in this folder" in result_text(result)
    assert not (workdir / "made").exists()


def test_view_shows_the_whole_input_then_deny(emulator, pane, workdir: Path):
    content = "first line of the file\nsecond line, the whole of it"
    emu = emulator({"responses": [tool_reply("write", {"path": "w.txt", "content": content}), text_reply("Fine.")]})
    p = pane("--allow", "fs.write")
    p.type("Write a file")
    p.wait_for("write wants to run: w.txt")
    p.keys("v")
    screen = p.wait_for("second line, the whole of it")
    # Each member on its own line, a string with its own lines.
    assert "content: first line of the file\nsecond line, the whole of it" in screen
    p.keys("n")
    p.wait_for("Fine.")
    [result] = tool_results(emu.requests()[1])
    assert result["is_error"] is True
    assert not (workdir / "w.txt").exists()


@pytest.mark.parametrize("key", ["Escape", "C-c"])
def test_escape_or_ctrl_c_denies_and_cancels_the_turn(emulator, pane, workdir: Path, key: str):
    emu = emulator({"responses": [tool_reply("bash", {"command": "touch made"}), text_reply("Next answer.")]})
    p = pane("--allow", "exec")
    p.type("Make a file")
    p.wait_for("bash wants to run: touch made")
    p.keys(key)
    p.wait_for("(canceled)")
    assert not (workdir / "made").exists()
    assert len(emu.requests()) == 1
    # The conversation stays valid: the next turn sends the call with its (denied) result.
    p.type("Go on")
    p.wait_for("Next answer.")
    messages = emu.requests()[1]["body"]["messages"]
    assert "tool_result" in json.dumps(messages)


def test_a_users_own_bash_asks_only_when_it_says_so(emulator, run_panto, workdir: Path):
    # The asking is the bundled tools' declaration: a tool that replaces one decides for itself.
    mine = workdir.parent / "mine.lua"
    mine.write_text('''
local ext = require("panto").ext
ext.tool{name = "bash", description = "my bash", params = {command = "string"},
  handler = function(input) return "mine: " .. input.command end}
ext.tool{name = "careful", description = "asks", params = {x = "string"}, approval = "always",
  handler = function() return "ran" end}
''')
    emu = emulator({"responses": [{"message": {"content": [
        {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}},
        {"type": "tool_use", "id": "toolu_2", "name": "careful", "input": {"x": "y"}}]}},
        text_reply("ok")]})
    r = run_panto("-p", "go", "-e", str(mine))
    assert r.returncode == 0, r.stderr
    mine_result, careful = tool_results(emu.requests()[1])
    assert result_text(mine_result) == "mine: ls" and not mine_result.get("is_error")
    assert careful["is_error"] is True
    assert "a careful call was denied" in r.stderr and "a bash call" not in r.stderr


def test_yolo_in_interactive_mode_asks_nothing(emulator, pane, workdir: Path):
    emulator({"responses": [tool_reply("bash", {"command": "touch made; echo made"}), text_reply("Made it.")]})
    p = pane("--allow", "exec", "--yolo")
    p.type("Make a file")
    screen = p.wait_for("Made it.")
    assert QUESTION not in screen
    assert (workdir / "made").exists()
