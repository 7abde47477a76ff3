"""`ctx` beyond commands (issue 35): an `ext.on` subscriber's fn(data, event, ctx) and a tool's
handler(input, event, ctx) get ctx.send / ctx.set_model / ctx.ui as a command does; RPC mode
runs an extension's command (a `prompt` of "/name args", as pi's) and lists them
(`get_commands`); `ext.ui.input` asks for a line of text (tmux, print mode, RPC client)."""
from __future__ import annotations

from pathlib import Path

from conftest import text_reply, tool_reply
from test_ext_ui import install
from test_interactive import pane, last_user_text  # noqa: F401  (the fixture and a helper)
from test_rpc import Client


FOLLOW = r"""
local ext = require('panto').ext
ext.tool{name = 'note', description = 'Takes a note.', params = {}, handler = function(input, event, ctx)
  local ok, err = ctx.send('now summarize the notes')
  ctx.ui.notify('noted')
  return 'noted ' .. tostring(ok) .. ' ' .. tostring(err)
end}
"""


def test_a_tool_handlers_send_follows_the_turn_up(emulator, start_panto, workdir: Path):
    (workdir / "follow.lua").write_text(FOLLOW)
    emu = emulator({"responses": [tool_reply("note", {}), text_reply("Noted."), text_reply("Summary.")]})
    c = Client(start_panto("--mode", "rpc", "--no-session", "-e", "follow.lua"))
    c.send({"id": 1, "type": "prompt", "text": "take a note"})
    got = c.until(lambda e: e["event"] in ("done", "error"))
    assert got[-1] == {"event": "done"}
    assert {"event": "extension_ui_request", "method": "notify", "message": "noted", "level": "info"} in got
    [result] = [e for e in got if e["event"] == "tool_result"]
    assert result["content"] == "noted true nil"
    # A follow-up: sent when the turn would have ended (after "Noted."), in the same turn.
    assert [(e["source"], e["text"]) for e in got if e["event"] == "user_message"] == [
        ("follow_up", "now summarize the notes")]
    text = "".join(e["text"] for e in got if e["event"] == "content_delta")
    assert text == "Noted.Summary."
    assert len(emu.requests()) == 3
    assert last_user_text(emu.requests()[2]) == "now summarize the notes"
    assert c.close() == 0


SUBSCRIBER = r"""
local ext = require('panto').ext
ext.on('turn_end', function(data, event, ctx)
  if ext.done then return end
  ext.done = true
  print('turn_end ctx ' .. type(ctx) .. ' ' .. type(ctx.ui.confirm))
  print('set_model', ctx.set_model('openai:gpt-4o-mini'))
  print('send', ctx.send('one more'))
end)
"""


def test_a_subscriber_gets_ctx_and_print_mode_says_why_it_cannot_act(emulator, run_panto, workdir: Path):
    (workdir / "sub.lua").write_text(SUBSCRIBER)
    emulator({"responses": [text_reply("Fine.")]})
    r = run_panto("-e", "sub.lua", "-p", "Hi")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "Fine.\n"
    assert "turn_end ctx table function" in r.stderr
    assert "set_model\tnil\tno prompt to act on in this mode" in r.stderr
    assert "send\tnil\tno prompt to act on in this mode" in r.stderr


def test_a_subscriber_switches_the_model_and_sends_in_rpc_mode(emulator, start_panto, workdir: Path):
    # At turn_end the turn takes no more: the message is a turn of its own, after it, with
    # the model the subscriber chose.
    (workdir / "sub.lua").write_text(SUBSCRIBER)
    emu = emulator({"responses": [text_reply("Fine."), text_reply("More.")]})
    c = Client(start_panto("--mode", "rpc", "--no-session", "-e", "sub.lua"))
    c.send({"id": 1, "type": "prompt", "text": "Hi"})
    assert c.event("done") == {"event": "done"}
    second = c.until(lambda e: e["event"] in ("done", "error"))
    assert second[-1] == {"event": "done"}
    assert "".join(e["text"] for e in second if e["event"] == "content_delta") == "More."
    assert c.close() == 0
    assert "set_model\ttrue" in c.stderr and "send\ttrue" in c.stderr
    first, then = emu.requests()
    assert first["path"] == "/v1/messages"
    assert then["path"] == "/v1/chat/completions" and then["body"]["model"] == "gpt-4o-mini"
    assert then["body"]["messages"][-1]["content"] == "one more"


COMMANDS = r"""
local ext = require('panto').ext
ext.command{name = 'review', description = 'Asks for a review', handler = function(args, ctx)
  ctx.print('reviewing ' .. args)
  ctx.send('Review ' .. args .. ' please')
  return 'queued'
end}
ext.command{name = 'broken', handler = function() error('it broke') end}
"""


def test_rpc_lists_and_runs_an_extensions_commands(emulator, start_panto, workdir: Path):
    (workdir / "cmds.lua").write_text(COMMANDS)
    emu = emulator({"responses": [text_reply("Looks fine.")]})
    c = Client(start_panto("--mode", "rpc", "--no-session", "-e", "cmds.lua"))
    c.send({"id": 1, "type": "get_commands"})
    listed = c.response(1)
    assert listed["ok"] and listed["commands"] == [
        {"name": "review", "description": "Asks for a review", "source": "extension"},
        {"name": "broken", "description": "", "source": "extension"}]
    c.send({"id": 2, "type": "prompt", "text": "/review main.zig"})
    assert c.response(2)["ok"]
    out = c.next()
    assert out == {"event": "command_output", "command": "review", "text": "reviewing main.zig\nqueued\n"}
    assert c.next() == {"event": "done"}
    # The message the command sent: a turn of its own, right after.
    turn = c.until(lambda e: e["event"] in ("done", "error"))
    assert turn[-1] == {"event": "done"}
    assert "".join(e["text"] for e in turn if e["event"] == "content_delta") == "Looks fine."
    assert [last_user_text(r) for r in emu.requests()] == ["Review main.zig please"]
    # A command that raises: its error in its output. A name that is no command: the model's.
    c.send({"id": 3, "type": "prompt", "text": "/broken"})
    assert c.response(3)["ok"]
    failed = c.next()
    assert failed["event"] == "command_output" and "it broke" in failed["text"]
    assert c.next() == {"event": "done"}
    assert len(emu.requests()) == 1
    assert c.close() == 0


ASK_NAME = r"""
local ext = require('panto').ext
ext.command{name = 'greet', description = 'asks a name', handler = function(args, ctx)
  local name = ctx.ui.input('Your name?', 'first name')
  return 'hello ' .. tostring(name)
end}
"""


def test_input_in_the_terminal_enter_gives_the_text_esc_nil(emulator, pane, config_dir):
    install(config_dir, "greet.lua", ASK_NAME)
    emulator({"responses": []})
    p = pane()
    mark = p.mark()
    p.type("/greet")
    screen = p.wait_for("first name", after=mark)
    assert "Your name?" in screen and "Enter send · Esc none" in screen
    p.keys("A", "d", "x", "BSpace", "a", "Enter")
    p.wait_for("hello Ada", after=mark)
    p.type("/greet")
    p.wait_for(lambda s: s.count("Your name?") == 2, after=mark)
    p.keys("Escape")
    p.wait_for("hello nil", after=mark)


def test_input_in_print_mode_is_nil_with_a_note(emulator, run_panto, workdir: Path):
    (workdir / "ui.lua").write_text(r"""
local ext = require('panto').ext
ext.on('turn_start', function() print('input ' .. tostring(ext.ui.input('Name?'))) end)
""")
    emulator({"responses": [text_reply("Fine.")]})
    r = run_panto("-e", "ui.lua", "-p", "Hi")
    assert r.returncode == 0, r.stderr
    assert 'ext.ui.input "Name?": no terminal to ask on: nil' in r.stderr
    assert "input nil" in r.stderr


def test_input_in_rpc_mode_asks_the_client(emulator, start_panto, workdir: Path):
    (workdir / "greet.lua").write_text(ASK_NAME)
    emulator({"responses": []})
    c = Client(start_panto("--mode", "rpc", "--no-session", "-e", "greet.lua"))
    c.send({"id": 1, "type": "prompt", "text": "/greet"})
    asked = c.event("extension_ui_request")
    assert (asked["method"], asked["title"], asked["placeholder"]) == ("input", "Your name?", "first name")
    c.send({"id": 2, "type": "extension_ui_response", "request_id": asked["request_id"], "value": "Ada"})
    assert c.event("command_output")["text"] == "hello Ada\n"
    c.send({"id": 3, "type": "prompt", "text": "/greet"})
    asked = c.event("extension_ui_request")
    c.send({"id": 4, "type": "extension_ui_response", "request_id": asked["request_id"], "cancelled": True})
    assert c.event("command_output")["text"] == "hello nil\n"
    assert c.close() == 0
