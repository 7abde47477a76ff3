"""An extension's screen (ext.ui: notify, confirm, select, status) and commands that act
(ctx.send, ctx.set_model): in a tmux pane for interactive mode, through a plain run for print
mode (where there is nobody to ask)."""
from __future__ import annotations

import re
from pathlib import Path

from conftest import OPENAI_KEY, text_reply, tool_reply
from test_interactive import pane, last_user_text  # noqa: F401  (the fixture and a helper)
from test_rpc import Client

def install(config_dir: Path, name: str, source: str) -> None:
    """An extension in ~/.config/panto/extensions."""
    (config_dir / "extensions").mkdir(exist_ok=True)
    (config_dir / "extensions" / name).write_text(source)


ASKING = r"""
local ext = require('panto').ext
ext.command{name = 'ask', description = 'asks', handler = function(args, ctx)
  ext.ui.notify('checking the tree', 'warning')
  local ok = ext.ui.confirm('Deploy now?', 'to the staging host')
  local pick = ext.ui.select('Which service?', {'alpha', 'beta', 'gamma'})
  ext.ui.status('deploy', 'deployed ' .. tostring(pick))
  return 'confirm=' .. tostring(ok) .. ' pick=' .. tostring(pick)
end}
"""


def test_notify_confirm_select_and_a_status_segment(emulator, pane, config_dir):
    install(config_dir, "ask.lua", ASKING)
    emulator({"responses": [text_reply("Done.")]})
    p = pane()
    mark = p.mark()
    p.type("/ask")
    p.wait_for("[y] yes  [n] no", after=mark)
    screen = p.screen(escapes=True)
    # The warning is yellow and marked; the question shows its title and text.
    assert "\x1b[33m! checking the tree" in screen
    assert "Deploy now?" in screen and "to the staging host" in screen
    p.keys("y")
    p.wait_for("3. gamma", after=mark)
    p.keys("Down")
    p.keys("Enter")
    p.wait_for("confirm=true pick=beta", after=mark)
    # The segment shows in the status line after the next turn.
    p.type("Hello")
    p.wait_for("Done.", after=mark)
    p.wait_for(lambda s: re.search(r"context .* · deployed beta", s) is not None, after=mark)


def test_no_and_esc_answer_false_and_nil(emulator, pane, config_dir):
    install(config_dir, "ask.lua", ASKING)
    emulator({"responses": []})
    p = pane()
    mark = p.mark()
    p.type("/ask")
    p.wait_for("[y] yes  [n] no", after=mark)
    # Enter is no answer: a stray one must not say yes.
    p.keys("Enter")
    p.keys("n")
    p.wait_for("1. alpha", after=mark)
    p.keys("Escape")
    p.wait_for("confirm=false pick=nil", after=mark)
    # The prompt is back and takes keys.
    p.type("/ask")
    p.wait_for(lambda s: s.count("[y] yes  [n] no") == 2, after=mark)


PRINT_MODE = r"""
local ext = require('panto').ext
ext.on('turn_start', function()
  ext.ui.notify('a notice', 'error')
  local ok = ext.ui.confirm('Proceed?', 'really')
  local pick = ext.ui.select('One?', {'a', 'b'})
  print('answers ' .. tostring(ok) .. ' ' .. tostring(pick))
end)
"""


def test_print_mode_says_false_and_nil_on_stderr(emulator, run_panto, workdir: Path):
    (workdir / "ui.lua").write_text(PRINT_MODE)
    emulator({"responses": [text_reply("Fine.")]})
    r = run_panto("-e", "ui.lua", "-p", "Hi")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "Fine.\n"
    assert "panto: error: a notice" in r.stderr
    assert 'ext.ui.confirm "Proceed?": no terminal to ask on: false' in r.stderr
    assert 'ext.ui.select "One?": no terminal to ask on: nil' in r.stderr
    assert "answers false nil" in r.stderr


def test_bad_arguments_are_lua_errors_with_the_reason(emulator, run_panto, workdir: Path):
    (workdir / "bad.lua").write_text(r"""
local ui = require('panto').ext.ui
print(select(2, pcall(ui.notify, 'x', 'loud')))
print(select(2, pcall(ui.select, 'pick', {})))
print(select(2, pcall(ui.select, 'pick', {1, 2})))
""")
    emulator({"responses": [text_reply("Fine.")]})
    r = run_panto("-e", "bad.lua", "-p", "Hi")
    assert r.returncode == 0, r.stderr
    assert '"info", "warning" or "error"' in r.stderr
    assert "a list of 1 to 256 strings" in r.stderr
    assert "a list of strings" in r.stderr


ACTING = r"""
local ext = require('panto').ext
ext.command{name = 'review', description = 'asks for a review', handler = function(args, ctx)
  local ok, err = ctx.send('Review ' .. args .. ' please')
  ctx.print('sent ' .. tostring(ok))
end}
ext.command{name = 'fast', description = 'a cheaper model', handler = function(args, ctx)
  local ok, err = ctx.set_model(args)
  ctx.print('set_model ' .. tostring(ok) .. ' ' .. tostring(err))
end}
"""


def test_a_command_sends_a_message_that_starts_a_turn(emulator, pane, config_dir):
    install(config_dir, "act.lua", ACTING)
    emu = emulator({"responses": [text_reply("Looks good to me.")]})
    p = pane()
    mark = p.mark()
    p.type("/review main.zig")
    screen = p.wait_for("Looks good to me.", after=mark)
    assert "sent true" in screen
    # Shown as a sent prompt, before the answer.
    assert "> Review main.zig please" in screen
    assert screen.index("> Review main.zig please") < screen.index("Looks good to me.")
    assert len(emu.requests()) == 1
    assert last_user_text(emu.requests()[0]) == "Review main.zig please"


def test_a_command_switches_the_model_and_a_bad_one_is_refused(emulator, pane, config_dir):
    install(config_dir, "act.lua", ACTING)
    emu = emulator({"responses": [text_reply("From the other side.")]})
    p = pane()
    mark = p.mark()
    p.type("/fast openai:gpt-4o-mini")
    p.wait_for("set_model true nil", after=mark)
    p.type("/fast openai:")
    p.wait_for(lambda s: re.search(r"set_model nil \S", s) is not None, after=mark)
    p.type("Hello")
    p.wait_for("From the other side.", after=mark)
    request = emu.requests()[0]
    assert request["path"] == "/v1/chat/completions" and request["body"]["model"] == "gpt-4o-mini"
    assert request["headers"]["authorization"] == "Bearer " + OPENAI_KEY


RPC_TOOL = r"""
local ext = require('panto').ext
ext.tool{name = 'deploy', description = 'Deploys.', params = {}, handler = function()
  ext.ui.notify('about to deploy', 'warning')
  ext.ui.status('deploy', 'deploying')
  if not ext.ui.confirm('Deploy?', 'to staging') then return 'not deployed' end
  local where = ext.ui.select('Where?', {'eu', 'us'})
  return 'deployed to ' .. tostring(where)
end}
"""


def test_rpc_forwards_the_questions_to_its_client(emulator, start_panto, workdir: Path):
    (workdir / "deploy.lua").write_text(RPC_TOOL)
    emulator({"responses": [tool_reply("deploy", {}), text_reply("Deployed.")]})
    c = Client(start_panto("--mode", "rpc", "-e", "deploy.lua"))
    c.send({"id": 1, "type": "prompt", "text": "deploy"})
    notify = c.event("extension_ui_request")
    assert notify == {"event": "extension_ui_request", "method": "notify",
                      "message": "about to deploy", "level": "warning"}
    assert c.event("extension_ui_request") == {"event": "extension_ui_request", "method": "set_status",
                                               "key": "deploy", "text": "deploying"}
    confirm = c.event("extension_ui_request")
    assert confirm["method"] == "confirm" and confirm["title"] == "Deploy?" and confirm["message"] == "to staging"
    # An answer to no question is refused; then the real answer.
    c.send({"id": "x", "type": "extension_ui_response", "request_id": "ui-999", "confirmed": True})
    assert c.response("x")["code"] == "unknown_request"
    c.send({"id": 2, "type": "extension_ui_response", "request_id": confirm["request_id"], "confirmed": True})
    assert c.response(2)["ok"]
    select = c.event("extension_ui_request")
    assert select["method"] == "select" and select["options"] == ["eu", "us"]
    assert select["request_id"] != confirm["request_id"]
    c.send({"id": 3, "type": "extension_ui_response", "request_id": select["request_id"], "value": "us"})
    result = c.event("tool_result")
    assert result["content"] == "deployed to us"
    c.event("done")
    assert c.close() == 0


def test_rpc_abort_while_a_question_waits_answers_it_false(emulator, start_panto, workdir: Path):
    (workdir / "deploy.lua").write_text(RPC_TOOL)
    emulator({"responses": [tool_reply("deploy", {}), text_reply("Stopped.")]})
    proc = start_panto("--mode", "rpc", "-e", "deploy.lua")
    c = Client(proc)
    c.send({"id": 1, "type": "prompt", "text": "deploy"})
    c.until(lambda e: e["event"] == "extension_ui_request" and e["method"] == "confirm")
    c.send({"id": 2, "type": "abort"})
    rest = c.until(lambda e: e["event"] in ("done", "error"))
    assert rest[-1]["event"] == "error"
    assert c.close() == 0
    assert 'ext.ui.confirm "Deploy?": not answered: false' in c.stderr


MANY = r"""
local ext = require('panto').ext
ext.command{name = 'many', description = 'sixty options', handler = function()
  local options = {}
  for i = 1, 60 do options[i] = 'option ' .. i end
  return 'picked ' .. tostring(ext.ui.select('Which?', options))
end}
"""


def test_a_select_longer_than_the_screen_shows_a_window_that_follows(emulator, pane, config_dir):
    install(config_dir, "many.lua", MANY)
    emulator({"responses": []})
    p = pane()
    mark = p.mark()
    p.type("/many")
    screen = p.wait_for("· 1/60", after=mark)
    # The 40-row pane shows a window of them, not all sixty.
    assert "option 1\n" in screen and "option 60" not in screen
    p.keys("Up")
    screen = p.wait_for("· 60/60", after=mark)
    p.keys("Enter")
    p.wait_for("picked option 60", after=mark)
