"""Interactive mode, driven in a real terminal: the binary runs in a tmux pane (120x40) against
the emulator; keys go in with `send-keys`, the screen comes back with `capture-pane`. Every wait
polls the screen (or the emulator) until what it looks for shows, up to a deadline: nothing
here sleeps and hopes.
"""
from __future__ import annotations

import json
import os
import signal
import re
import shutil
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from conftest import OPENAI_KEY, error_reply, text_reply, tool_reply

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

# How long a wait may take before the test fails: a guard against a hang, not a speed test.
DEADLINE = 20.0


class Pane:
    """A tmux server of its own (its own socket) running one command in a 120x40 pane, through
    a shell that prints its exit status; the pane stays after it exits (remain-on-exit)."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, tmp: Path,
                 then: str = "") -> None:
        self.socket = f"panto-test-{uuid.uuid4().hex[:12]}"
        conf = tmp / "tmux.conf"
        conf.write_text("set -g remain-on-exit on\nset -g history-limit 5000\n")
        self.env = env
        # The server is this socket's own, started here: its global environment, which the
        # pane's command gets, is `env`. (No -e NAME=VALUE: tmux takes an argument ending in ";",
        # as make's LUA_CPATH "...;;" does, for a command separator.)
        self._tmux("-f", str(conf), "new-session", "-d", "-x", "120", "-y", "40", "-s", "t",
                   "-c", str(cwd), " ".join(_quote(a) for a in argv) + '; echo "[exit $?]"; ' + then)

    def _tmux(self, *args: str) -> str:
        r = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True,
                           env=self.env, timeout=DEADLINE)
        if r.returncode != 0:
            raise AssertionError(f"tmux {args[0]}: {r.stderr.strip()}")
        return r.stdout

    def keys(self, *keys: str) -> None:
        """send-keys: tmux key names ("Enter", "C-c", "Up") or text (sent literally with -l)."""
        for k in keys:
            if k in _KEY_NAMES or k.startswith(("C-", "M-")):
                self._tmux("send-keys", "-t", "t", k)
            else:
                self._tmux("send-keys", "-t", "t", "-l", k)

    def type(self, line: str) -> None:
        self.keys(line, "Enter")

    def screen(self, escapes: bool = False) -> str:
        """The pane's text (with the scrollback), SGR escapes kept when `escapes`."""
        return self._tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "t", *(["-e"] if escapes else []))

    def wait_for(self, what: str | Callable[[str], bool], escapes: bool = False,
                 after: int = 0) -> str:
        """Polls the screen until `what` shows (a substring, or a predicate on the screen's
        text from character `after` on); returns that text. Fails at the deadline with the
        screen in the message."""
        check = (lambda s: what in s) if isinstance(what, str) else what
        deadline = time.monotonic() + DEADLINE
        while True:
            text = self.screen(escapes)[after:]
            if check(text):
                return text
            if time.monotonic() > deadline:
                raise AssertionError(f"waited {DEADLINE}s for {what!r}; the screen:\n{text}")
            time.sleep(0.05)

    def mark(self) -> int:
        """Where the screen's text ends now: wait_for(..., after=mark) sees only what follows."""
        return len(self.screen().rstrip("\n"))

    def command(self, line: str, what: str | Callable[[str], bool]) -> str:
        """Types `line` and waits for `what` in what shows after it; returns that text."""
        mark = self.mark()
        self.type(line)
        return self.wait_for(what, after=mark)

    def exit_status(self) -> int:
        """Waits for the command to exit; its status (the shell around it prints it)."""
        screen = self.wait_for(lambda s: re.search(r"\[exit \d+\]", s) is not None)
        return int(re.findall(r"\[exit (\d+)\]", screen)[-1])

    def resize(self, cols: int, rows: int) -> None:
        self._tmux("resize-window", "-t", "t", "-x", str(cols), "-y", str(rows))

    def pid(self) -> int:
        """The command's process id (the pane's process is the shell around it)."""
        shell = self._tmux("display-message", "-p", "-t", "t", "#{pane_pid}").strip()
        children = subprocess.run(["ps", "-o", "pid=", "--ppid", shell], capture_output=True,
                                  text=True).stdout.split()
        assert len(children) == 1, children
        return int(children[0])

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


_KEY_NAMES = {"Enter", "Up", "Down", "Left", "Right", "Home", "End", "BSpace", "DC", "Tab", "Escape"}


def _quote(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"


@pytest.fixture
def pane(panto_bin: Path, cli_env: dict[str, str], workdir: Path,
         tmp_path: Path) -> Iterator[Callable[..., Pane]]:
    """pane(*args) runs `panto ARGS` (interactive: no -p) in a fresh tmux pane; `then=CMD`
    runs CMD in the pane's shell after it exits."""
    panes: list[Pane] = []

    def start(*args: str, then: str = "") -> Pane:
        p = Pane([str(panto_bin), *args], cli_env, workdir, tmp_path, then)
        panes.append(p)
        p.wait_for("/help for commands")
        return p

    yield start
    for p in panes:
        p.close()


def stalled_text(text: str, input_tokens: int = 5) -> dict[str, Any]:
    """An Anthropic answer that streams `text` in one delta, then stalls (the emulator holds
    the connection): the turn is still running when the text shows."""
    head = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in [
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_stall", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": text}}),
    ])
    return {"body": head + "event: message_stop\ndata: {}\n\n",
            "fault": {"after_bytes": len(head.encode()), "kind": "stall"}}


def last_user_text(request: dict[str, Any]) -> str:
    """The text of a request's last message (a string, or its text blocks joined)."""
    content = request["body"]["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content)


def test_a_turn_streams_its_text_then_the_status_line(emulator, pane):
    emu = emulator({"responses": [text_reply("Hello from the emulator.",
                                             usage={"input_tokens": 1200, "output_tokens": 34})]})
    p = pane("--model", "claude-sonnet-4-5")
    p.type("Hi there")
    screen = p.wait_for("turn 1.2k in, 34 out")
    assert "> Hi there" in screen
    assert "Hello from the emulator." in screen
    # The status line: model, context against the model's window, the turn's cost.
    assert "claude-sonnet-4-5 · context 1.2k/200k (0%) · turn 1.2k in, 34 out · $0.0041" in screen
    assert [last_user_text(r) for r in emu.requests()] == ["Hi there"]


def test_the_answer_shows_while_the_turn_still_runs_and_ctrl_c_cancels_it(emulator, pane):
    emu = emulator({"responses": [stalled_text("Partial answer"), text_reply("Second answer.")]})
    p = pane()
    p.type("First")
    # Streamed: the text is on screen while the answer has not ended (the stream stalls).
    p.wait_for("Partial answer")
    assert "(canceled)" not in p.screen()
    p.keys("C-c")
    p.wait_for("(canceled)")
    p.type("Again")
    p.wait_for("Second answer.")
    # The partial answer was kept: the next request carries it before the new prompt.
    second = emu.requests()[1]["body"]["messages"]
    assert "Partial answer" in json.dumps(second)
    assert "Again" in json.dumps(second[-1])


def test_esc_cancels_the_turn_keeping_the_partial_answer(emulator, pane):
    emu = emulator({"responses": [stalled_text("Partial answer"), text_reply("Second answer.")]})
    p = pane()
    p.type("First")
    p.wait_for("Partial answer")
    # An arrow key is an escape sequence too: typed during the turn, it is kept, not a cancel.
    p.keys("ab", "Left", "x")
    p.keys("Escape")
    p.wait_for("(canceled)")
    p.wait_for(lambda s: s.rstrip().endswith("> axb"))
    p.keys("C-a", "C-k")
    p.type("Again")
    p.wait_for("Second answer.")
    second = emu.requests()[1]["body"]["messages"]
    assert "Partial answer" in json.dumps(second)
    assert "Again" in json.dumps(second[-1])


def test_typing_during_a_turn_steers_it_and_alt_enter_queues_a_follow_up(emulator, pane, workdir):
    # The tool runs until the test says so: the lines are typed while it runs.
    emu = emulator({"responses": [
        tool_reply("bash", {"command": "while [ ! -e go ]; do sleep 0.05; done; echo ran"}),
        text_reply("Steered answer."),
        text_reply("Follow-up answer."),
    ]})
    p = pane("--allow", "exec", "--yolo")
    p.type("Start the work")
    p.wait_for("⚙ bash while")
    # The prompt is editable while the turn runs: the typo is taken back before Enter.
    p.keys("use x", "BSpace", "y instead")
    p.wait_for(lambda s: s.rstrip().endswith("> use y instead"))
    p.keys("Enter")
    p.keys("then z", "M-Enter")
    screen = p.wait_for(lambda s: "follow-up: then z" in s)
    assert "steer: use y instead" in screen
    (workdir / "go").touch()
    screen = p.wait_for("Follow-up answer.")
    # Each line shows where it entered the conversation, and leaves the queue above the prompt.
    at = screen.index("↳ bash")
    assert screen.index("> use y instead", at) < screen.index("Steered answer.") < \
        screen.index("> then z") < screen.index("Follow-up answer.")
    assert "steer: use y" not in screen and "follow-up: then z" not in screen
    requests = emu.requests()
    assert len(requests) == 3
    # The steer is in the user message of the tool's result, after it; the follow-up a turn.
    steered = requests[1]["body"]["messages"][-1]["content"]
    assert [b["type"] for b in steered] == ["tool_result", "text"]
    assert steered[1]["text"] == "use y instead"
    assert last_user_text(requests[2]) == "then z"
    p.wait_for(lambda s: s.rstrip().endswith(">"))


def test_a_line_queued_when_the_turn_is_canceled_comes_back_to_the_prompt(emulator, pane):
    emulator({"responses": [stalled_text("Partial answer")]})
    p = pane()
    p.type("First")
    p.wait_for("Partial answer")
    p.keys("later please", "M-Enter")
    p.wait_for("follow-up: later please")
    p.keys("and this")
    p.wait_for(lambda s: s.rstrip().endswith("> and this"))
    p.keys("Escape")
    p.wait_for("(canceled)")
    p.wait_for(lambda s: s.rstrip().endswith("> later please\n  and this"))


def test_a_command_typed_during_a_turn_waits_for_its_end(emulator, pane):
    emulator({"responses": [stalled_text("Partial answer")]})
    p = pane()
    p.type("First")
    p.wait_for("Partial answer")
    p.type("/session")
    p.wait_for("a /command waits for the turn's end")
    p.keys("Escape")
    p.wait_for("(canceled)")
    p.wait_for(lambda s: s.rstrip().endswith("> /session"))


def test_esc_at_the_prompt_does_nothing(emulator, pane):
    emu = emulator({"responses": [text_reply("Fine.")]})
    p = pane()
    p.keys("Escape")
    p.keys("hel", "Escape", "lo")
    p.wait_for(lambda s: s.rstrip().endswith("> hello"))
    p.keys("Enter")
    p.wait_for("Fine.")
    assert [last_user_text(r) for r in emu.requests()] == ["hello"]
    assert "(canceled)" not in p.screen()


def test_alt_enter_adds_a_row_to_the_prompt_and_the_text_is_sent_whole(emulator, pane):
    emu = emulator({"responses": [text_reply("Two lines read.")]})
    p = pane()
    p.keys("first", "M-Enter", "second")
    p.wait_for(lambda s: s.rstrip().endswith("> first\n  second"))
    # Backspace over the second row and its newline: the prompt is one row again.
    p.keys(*["BSpace"] * 7)
    p.wait_for(lambda s: s.rstrip().endswith("> first") and "second" not in s)
    p.keys("M-Enter", "again", "M-Enter", "third")
    p.wait_for(lambda s: s.rstrip().endswith("> first\n  again\n  third"))
    p.keys("Enter")
    screen = p.wait_for("Two lines read.")
    assert "> first\n  again\n  third\n" in screen
    assert [last_user_text(r) for r in emu.requests()] == ["first\nagain\nthird"]


def test_ctrl_g_edits_the_prompt_in_the_editor_and_takes_its_text_back(emulator, pane, cli_env, tmp_path):
    emu = emulator({"responses": [text_reply("Edited text read.")]})
    editor = tmp_path / "editor.sh"
    # An editor that adds to what it was given: the prompt's text went in, the file comes back.
    editor.write_text('#!/bin/sh\n{ cat "$1"; printf \' and more\\nline two\\n\'; } > "$1.new" && mv "$1.new" "$1"\n')
    editor.chmod(0o755)
    cli_env.pop("VISUAL", None)
    cli_env["EDITOR"] = str(editor)
    p = pane()
    p.keys("draft", "C-g")
    p.wait_for(lambda s: s.rstrip().endswith("> draft and more\n  line two"))
    p.keys("Enter")
    p.wait_for("Edited text read.")
    assert [last_user_text(r) for r in emu.requests()] == ["draft and more\nline two"]


def test_an_editor_that_fails_leaves_the_prompt_as_it_was(emulator, pane, cli_env, tmp_path):
    emulator({"responses": []})
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\necho replaced > "$1"\nexit 3\n')
    editor.chmod(0o755)
    cli_env.pop("VISUAL", None)
    cli_env["EDITOR"] = str(editor)
    p = pane()
    p.keys("keep me", "C-g")
    p.wait_for("the editor exited with an error")
    p.wait_for(lambda s: s.rstrip().endswith("> keep me"))


def test_keys_typed_during_a_turn_wait_for_the_next_prompt(emulator, pane):
    emulator({"responses": [stalled_text("Thinking it over")]})
    p = pane()
    p.type("First")
    p.wait_for("Thinking it over")
    p.keys("next question")
    p.keys("C-c")
    p.wait_for("(canceled)")
    p.wait_for(lambda s: s.rstrip().endswith("> next question"))


def test_ctrl_c_at_the_prompt_clears_the_line_and_ctrl_d_exits(emulator, pane):
    emulator({"responses": []})
    p = pane()
    p.keys("some words")
    p.wait_for("> some words")
    p.keys("C-c")
    p.wait_for(lambda s: "some words" not in s)
    p.keys("C-d")
    assert p.exit_status() == 0


def test_line_editing_and_the_history_across_runs(emulator, pane, home):
    emu = emulator({"responses": [text_reply("one"), text_reply("two")], "repeat_last": True})
    p = pane()
    # Typed "helo world", fixed with Left/Home/Delete/Ctrl-E: "hello world!"
    p.keys("helo world", "Home", "Right", "Right", "l", "C-e", "!", "Enter")
    p.wait_for("turn ")
    assert last_user_text(emu.requests()[0]) == "hello world!"
    p.keys("C-d")
    assert p.exit_status() == 0
    history = home / ".local" / "state" / "panto" / "history"
    assert history.read_text() == "hello world!\n"
    # A new run: Up brings the line back.
    q = pane()
    q.keys("Up")
    q.wait_for("> hello world!")
    # Ctrl-R finds it by a part of it.
    q.keys("C-u", "C-r", "o w")
    q.wait_for("(search: o w) hello world!")


def test_a_long_line_scrolls_sideways_and_follows_a_resize(emulator, pane):
    emulator({"responses": []})
    p = pane()
    line = "x" * 100 + "END"
    p.keys(line)
    p.wait_for("> " + line)
    p.resize(60, 40)
    # Redrawn for 60 columns: the end of the line, where the cursor is, stays in view.
    p.wait_for(lambda s: s.rstrip().splitlines()[-1].endswith("xEND")
               and len(s.rstrip().splitlines()[-1]) < 60)
    p.keys("C-a")
    p.wait_for(lambda s: s.rstrip().splitlines()[-1] == "> " + "x" * 57)


def test_a_history_file_that_cannot_be_written_is_said_once(emulator, pane, home):
    emulator({"responses": [text_reply("Answer one."), text_reply("Answer two.")]})
    history = home / ".local" / "state" / "panto" / "history"
    history.mkdir(parents=True)  # a folder where the file should be
    p = pane()
    p.type("first")
    p.wait_for("Answer one.")
    p.type("second")
    screen = p.wait_for("Answer two.")
    assert screen.count("cannot be written: kept in memory for this run") == 1
    assert f"history: {history} cannot be written" in screen
    p.keys("Up", "Up")
    p.wait_for("> first")


def test_a_tool_call_is_shown_with_its_input_and_its_result_size(emulator, pane, workdir):
    (workdir / "notes.txt").write_text("line one\nline two\n")
    emu = emulator({"responses": [tool_reply("read", {"path": "notes.txt"}),
                                  text_reply("The notes have two lines.")]})
    p = pane()
    p.type("What is in notes.txt?")
    screen = p.wait_for("The notes have two lines.")
    assert "⚙ read notes.txt" in screen
    assert "↳ read: 2 lines, 18 B" in screen
    result = emu.requests()[1]["body"]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and "line two" in json.dumps(result)


def test_a_failing_tool_call_shows_its_error(emulator, pane):
    emulator({"responses": [tool_reply("read", {"path": "missing.txt"}), text_reply("No such file.")]})
    p = pane()
    p.type("Read missing.txt")
    screen = p.wait_for("No such file.")
    assert "✗ read:" in screen


def test_thinking_is_dim_and_folded_to_one_line(emulator, pane):
    thinking = {"type": "thinking", "thinking": "Let me weigh this carefully.", "signature": "sig"}
    emulator({"responses": [{"message": {"content": [thinking, {"type": "text", "text": "Done."}]}}]})
    p = pane()
    p.type("Think")
    p.wait_for("Done.")
    screen = p.screen(escapes=True)
    # One dim line in place of the block; Ctrl-T shows it whole.
    assert "▸ thinking: Let me weigh this carefully. (5 words, Ctrl-T shows)" in p.screen()
    assert "\x1b[2m▸ thinking" in screen
    mark = p.mark()
    p.keys("C-t")
    p.wait_for("thinking shown", after=mark)


def test_model_switches_provider_and_model(emulator, pane):
    emu = emulator({"responses": [text_reply("From the other side.")]})
    p = pane()
    p.type("/model openai:gpt-4o-mini")
    p.wait_for("model: gpt-4o-mini (openai)")
    p.type("Hello")
    screen = p.wait_for("turn ")
    assert "From the other side." in screen
    request = emu.requests()[0]
    assert request["path"] == "/v1/chat/completions" and request["body"]["model"] == "gpt-4o-mini"
    assert request["headers"]["authorization"] == "Bearer " + OPENAI_KEY
    # The status line follows the switch: the new model's window and price.
    assert "gpt-4o-mini · context" in screen and "/128k" in screen


def test_model_switch_takes_the_new_models_max_tokens_unless_given(emulator, pane, write_config):
    emu = emulator({"responses": [text_reply("One."), text_reply("Two.")]})
    p = pane()
    p.type("/model openai:gpt-4o")
    p.wait_for("model: gpt-4o (openai)")
    p.type("Hello")
    p.wait_for("One.")
    assert emu.requests()[0]["body"]["max_completion_tokens"] == 16384
    # Given by the user: it stays whatever the model.
    write_config({"max_tokens": 777})
    q = pane()
    q.type("/model openai:gpt-4o")
    q.wait_for("model: gpt-4o (openai)")
    q.type("Hello")
    q.wait_for("Two.")
    assert emu.requests()[1]["body"]["max_completion_tokens"] == 777


def test_model_switch_takes_the_new_providers_address_and_key(emulator, cli_env, pane):
    # Each provider's variables lead to an emulator of its own: the switch must leave the
    # Anthropic one (its address and key) for the OpenAI one's.
    anthropic = emulator({"responses": [text_reply("From Anthropic.")]})
    openai = emulator({"responses": [text_reply("From OpenAI.")]})
    cli_env["ANTHROPIC_BASE_URL"] = anthropic.url
    p = pane()
    p.type("Hello")
    p.wait_for("From Anthropic.")
    p.type("/model openai:gpt-4o-mini")
    p.wait_for("model: gpt-4o-mini (openai)")
    p.type("Again")
    p.wait_for("From OpenAI.")
    assert [r["path"] for r in anthropic.requests()] == ["/v1/messages"]
    request, = openai.requests()
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["authorization"] == "Bearer " + OPENAI_KEY
    assert "x-api-key" not in request["headers"]


def test_model_switch_keeps_a_given_base_url(emulator, cli_env, pane):
    # --base-url is the caller's: it stays across the switch; the key is the new provider's.
    gateway = emulator({"responses": [text_reply("From the gateway.")]})
    cli_env["ANTHROPIC_BASE_URL"] = cli_env["OPENAI_BASE_URL"] = "http://127.0.0.1:9"
    p = pane("--base-url", gateway.url)
    p.type("/model openai:gpt-4o-mini")
    p.wait_for("model: gpt-4o-mini (openai)")
    p.type("Hello")
    p.wait_for("From the gateway.")
    request, = gateway.requests()
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["authorization"] == "Bearer " + OPENAI_KEY


def test_slash_commands_model_thinking_session_help(emulator, pane):
    emulator({"responses": []})
    p = pane("--model", "claude-test")
    for line, answer in [
        ("/model claude-other", "model: claude-other (anthropic)"),
        ("/thinking low", "thinking: low"),
        ("/thinking lots", '/thinking: thinking must be one of off, minimal, low, medium, high, not "lots"'),
        ("/thinking", "thinking low, its text folded"),
        ("/session", "0 messages"),
        ("/compact", "nothing to compact"),
        ("/help", "/compact"),
        ("/nope", "unknown command /nope"),
    ]:
        mark = p.mark()
        p.type(line)
        p.wait_for(answer, after=mark)
    p.type("/quit")
    assert p.exit_status() == 0


EXTENSION = r'''
local panto = require('panto')
local ext = panto.ext
local seen = {}

ext.on('turn_start', function(e) seen[#seen + 1] = 'turn_start:' .. e.input end)
ext.on('tool_call', function(e) seen[#seen + 1] = 'tool_call:' .. e.name end)
ext.on('tool_result', function(e) seen[#seen + 1] = 'tool_result:' .. e.content end)
ext.on('turn_end', function(e) seen[#seen + 1] = 'turn_end' end)

ext.command{name = 'seen', description = 'the events ext.on saw', handler = function(args, ctx)
  ctx.print('seen: ' .. table.concat(seen, ', '))
end}

ext.command{name = 'shout', description = 'says its argument loudly', handler = function(args)
  return string.upper(args) .. '!'
end}

ext.tool{name = 'dice', description = 'rolls a die', params = {}, handler = function()
  return 'rolled 4'
end}
'''


def test_extension_command_tool_and_events(emulator, pane, config_dir):
    ext_dir = config_dir / "extensions"
    ext_dir.mkdir()
    (ext_dir / "demo.lua").write_text(EXTENSION)
    emu = emulator({"responses": [tool_reply("dice", {}), text_reply("You rolled a 4.")]})
    p = pane()
    mark = p.mark()
    p.type("/shout hello")
    p.wait_for("HELLO!", after=mark)
    p.type("/help")
    p.wait_for("says its argument loudly", after=mark)
    p.type("Roll a die")
    screen = p.wait_for("You rolled a 4.", after=mark)
    assert "⚙ dice" in screen and "↳ dice: 1 line, 8 B" in screen
    tools = [t["name"] for t in emu.requests()[0]["body"]["tools"]]
    assert "dice" in tools
    p.type("/seen")
    p.wait_for("seen: turn_start:Roll a die, tool_call:dice, tool_result:rolled 4, turn_end", after=mark)


def test_continue_resumes_the_last_session(emulator, pane):
    emu = emulator({"responses": [text_reply("Noted: blue."), text_reply("It was blue.")]})
    p = pane()
    p.type("My colour is blue")
    p.wait_for("Noted: blue.")
    p.keys("C-d")
    assert p.exit_status() == 0
    q = pane("--continue")
    q.wait_for("resumed session")
    q.type("What was my colour?")
    q.wait_for("It was blue.")
    messages = emu.requests()[1]["body"]["messages"]
    assert len(messages) == 3 and "My colour is blue" in json.dumps(messages[0])


def test_thinking_the_model_refuses_is_lowered_with_a_dim_note(emulator, pane):
    emu = emulator({"responses": [
        error_reply("invalid_request_error", "thinking is not supported by this model"),
        text_reply("Answered without deep thought."),
    ]})
    p = pane("--thinking", "high")
    p.type("Hello")
    p.wait_for("Answered without deep thought.")
    screen = p.screen(escapes=True)
    note = next(line for line in screen.splitlines() if "medium" in line)
    assert "\x1b[2m" in note  # dim
    bodies = [r["body"] for r in emu.requests()]
    assert len(bodies) == 2 and bodies[0]["thinking"] != bodies[1]["thinking"]


def test_ctrl_c_while_an_extension_tool_runs_kills_it_and_the_next_turn_works(emulator, pane, workdir):
    emu = emulator({"responses": [tool_reply("bash", {"command": "sleep 30; touch never"}),
                                  tool_reply("bash", {"command": "echo again"}, id="toolu_2"),
                                  text_reply("Fresh start.")]})
    p = pane("--allow", "exec", "--yolo")
    p.type("Run something slow")
    p.wait_for("⚙ bash sleep 30; touch never")
    p.keys("C-c")
    p.wait_for("(canceled)")
    # The next turn runs a tool again, to its end.
    p.type("Next")
    screen = p.wait_for("Fresh start.")
    assert "↳ bash: 1 line, 6 B" in screen
    assert not (workdir / "never").exists()
    assert "Next" in json.dumps(emu.requests()[1]["body"]["messages"][-1])


def test_compact_summarizes_the_older_messages(emulator, pane, write_config, config_dir):
    write_config({"compaction": {"keep_recent_tokens": 0}})
    (config_dir / "extensions").mkdir()
    (config_dir / "extensions" / "watch.lua").write_text(r'''
local ext = require('panto').ext
local seen = {}
ext.on('compaction_start', function(e) seen[#seen + 1] = 'start:' .. e.reason end)
ext.on('compaction_end', function(e) seen[#seen + 1] = 'end:' .. e.summary end)
ext.command{name = 'seen', description = 'compaction events', handler = function()
  return 'seen ' .. table.concat(seen, ' ')
end}
''')
    emu = emulator({"responses": [text_reply("First answer."), text_reply("The user said hello.")]})
    p = pane()
    p.type("Hello")
    p.wait_for("First answer.")
    mark = p.mark()
    p.type("/compact")
    # keep_recent_tokens 0 keeps the last message (the answer): the prompt is summarized.
    p.wait_for("compacted 1 message:", after=mark)
    p.type("/seen")
    p.wait_for("seen start:manual end:The user said hello.", after=mark)
    assert "[User]: Hello" in json.dumps(emu.requests()[1]["body"])


def test_sigterm_puts_the_terminal_back_as_it_was(emulator, pane):
    emulator({"responses": []})
    p = pane(then="stty -a")
    os.kill(p.pid(), signal.SIGTERM)
    assert p.exit_status() == 128 + signal.SIGTERM
    screen = p.wait_for("speed")
    settings = screen[screen.index("[exit"):].split()
    # Raw mode had these off; the terminal has them back.
    assert {"icanon", "echo", "isig", "icrnl", "ixon"} <= set(settings), screen


SPINNING = """
local ext = require("panto").ext
ext.command{name = "spin", description = "never ends", handler = function(args, ctx)
  ctx.print("spinning")
  while true do end
end}
ext.tool{name = "spin", description = "Never ends.", params = {}, handler = function() while true do end end}
"""


def test_ctrl_c_interrupts_an_extension_command_or_tool_in_a_loop(emulator, pane, config_dir):
    (config_dir / "extensions").mkdir()
    (config_dir / "extensions" / "spin.lua").write_text(SPINNING)
    emu = emulator({"responses": [tool_reply("spin", {}), text_reply("Back again.")]})
    p = pane()
    mark = p.mark()
    p.type("/spin")
    p.wait_for("spinning", after=mark)
    p.keys("C-c")
    p.wait_for("command /spin:", after=mark)
    p.wait_for(lambda s: "interrupted" in s and s.rstrip().endswith(">"), after=mark)
    mark = p.mark()
    p.type("Spin the wheel")
    p.wait_for("⚙ spin", after=mark)
    p.keys("C-c")
    p.wait_for("(canceled)", after=mark)
    # The prompt is back and the next turn runs.
    p.type("Again")
    p.wait_for("Back again.", after=mark)
    assert len(emu.requests()) == 2


# Trust (trust.zig; print mode's side in test_trust.py).

def test_an_untrusted_folder_asks_once_not_now_goes_on_without_and_yes_is_remembered(
        panto_bin, cli_env, home, workdir, tmp_path):
    marker = tmp_path / "ran.txt"
    ext = workdir / ".panto" / "extensions" / "writer.lua"
    ext.parent.mkdir(parents=True)
    ext.write_text(f'local f = io.open({str(marker)!r}, "a"); f:write("ran\\n"); f:close()\n')
    (workdir / "AGENTS.md").write_text("Project rules.\n")
    trusted = home / ".local" / "state" / "panto" / "trusted"

    def run_and_answer(answer: str) -> str:
        p = Pane([str(panto_bin)], cli_env, workdir, tmp_path)
        try:
            screen = p.wait_for("Trust this folder?")
            p.type(answer)
            p.wait_for("/help for commands")
            p.keys("C-d")
            assert p.exit_status() == 0
            return screen
        finally:
            p.close()

    # The question names the folder and what trusting it would load.
    screen = run_and_answer("n")
    assert f"not trusted yet: {workdir}" in screen
    assert str(ext) in screen and str(workdir / "AGENTS.md") in screen
    assert not marker.exists() and not trusted.exists()
    # Not now: asked again; yes: loaded and remembered.
    run_and_answer("y")
    assert marker.read_text() == "ran\n"
    assert trusted.read_text() == f"{workdir.resolve()}\n"
    # Trusted: no question, loaded.
    p = Pane([str(panto_bin)], cli_env, workdir, tmp_path)
    try:
        screen = p.wait_for("/help for commands")
        assert "Trust this folder?" not in screen
        assert marker.read_text() == "ran\nran\n"
    finally:
        p.close()


# Issue 35's bug 8: what the screen shows.

def test_a_prompt_longer_than_the_terminal_is_kept_whole_in_the_scrollback(emulator, pane):
    emu = emulator({"responses": [text_reply("Long one read.")]})
    p = pane()
    line = "START " + "word " * 40 + "END"
    p.type(line)
    screen = p.wait_for("Long one read.")
    # The line as sent, from its start, wrapped by the terminal (capture-pane -J joins it).
    assert "> " + line in screen
    assert last_user_text(emu.requests()[0]) == line


def test_after_a_cancel_the_status_line_shows_the_context_this_turn_left(emulator, pane):
    emulator({"responses": [text_reply("First answer.", usage={"input_tokens": 1200, "output_tokens": 34}),
                            stalled_text("Partial answer", input_tokens=3000)]})
    p = pane("--model", "claude-sonnet-4-5")
    p.type("Hi")
    p.wait_for("context 1.2k/200k")
    mark = p.mark()
    p.type("Next")
    p.wait_for("Partial answer", after=mark)
    p.keys("C-c")
    screen = p.wait_for(lambda s: "(canceled)" in s and "claude-sonnet-4-5 · context" in s, after=mark)
    status = next(line for line in screen.splitlines() if "claude-sonnet-4-5 · context" in line)
    # The context the canceled turn left (its partial answer, 3000 tokens in), not the last
    # turn's 1.2k.
    assert "context 3.0k/200k (1%)" in status, status


FAILING_COMMAND = """
local ext = require("panto").ext
ext.command{name = "boom", description = "fails", handler = function() error("it broke") end}
"""


def test_an_extension_commands_error_is_on_its_own_line_and_the_prompt_comes_back(emulator, pane, config_dir):
    (config_dir / "extensions").mkdir()
    (config_dir / "extensions" / "boom.lua").write_text(FAILING_COMMAND)
    emulator({"responses": []})
    p = pane()
    mark = p.mark()
    p.type("/boom")
    p.wait_for(lambda s: "it broke" in s and s.rstrip().endswith(">"), after=mark)
    screen = p.screen()
    lines = screen.rstrip().splitlines()
    assert lines[-1] == ">" and lines[-3] == "> /boom", screen
    assert "command /boom:" in lines[-2] and "it broke" in lines[-2]


WAITING_TOOL = """
local panto = require("panto")
local ext = panto.ext
ext.tool{name = "wait", description = "Waits for the go file.", params = {tag = "string"},
  handler = function(input)
    panto.progress("waiting " .. input.tag)
    while not io.open("go") do panto.sleep(0.05) end
    return "done " .. input.tag
  end}
"""


def test_two_tools_running_together_have_a_progress_line_each(emulator, pane, config_dir, workdir):
    (config_dir / "extensions").mkdir()
    (config_dir / "extensions" / "wait.lua").write_text(WAITING_TOOL)
    calls = {"message": {"content": [
        {"type": "tool_use", "id": "toolu_a", "name": "wait", "input": {"tag": "A"}},
        {"type": "tool_use", "id": "toolu_b", "name": "wait", "input": {"tag": "B"}},
    ]}}
    emulator({"responses": [calls, text_reply("Both done.")]})
    p = pane()
    p.type("Wait twice")
    # Both tools report before either can end (they wait for the file): both lines show.
    p.wait_for(lambda s: "… wait: waiting A" in s and "… wait: waiting B" in s)
    (workdir / "go").write_text("")
    screen = p.wait_for("Both done.")
    assert screen.count("↳ wait: 1 line, 6 B") == 2
    # The progress lines went with the tools.
    assert "… wait: waiting" not in screen


def test_continue_shows_the_end_of_the_earlier_conversation(emulator, pane, workdir):
    (workdir / "notes.txt").write_text("blue\n")
    emulator({"responses": [tool_reply("read", {"path": "notes.txt"}), text_reply("Noted: blue."),
                            text_reply("Second answer.")]})
    p = pane()
    p.type("My colour is in notes.txt")
    p.wait_for("Noted: blue.")
    p.type("And again")
    p.wait_for("Second answer.")
    p.keys("C-d")
    assert p.exit_status() == 0
    q = pane("--continue")
    screen = q.wait_for("Second answer.")
    # As it was shown live: the prompts, the tool call and its result, the answers, in order.
    shown = [line.strip() for line in screen.splitlines()]
    expected = ["> My colour is in notes.txt", "⚙ read notes.txt", "↳ read: 1 line, 5 B", "Noted: blue.",
                "> And again", "Second answer."]
    at = [shown.index(line) for line in expected]
    assert at == sorted(at), screen


def test_session_shows_the_system_prompt_and_whose_it_is(emulator, pane, workdir):
    emulator({"responses": []})
    p = pane()
    mark = p.mark()
    p.type("/session")
    p.wait_for(f"Working directory: {workdir}", after=mark)
    assert "system prompt (the default" in p.screen()
    q = pane("--system", "Be brief.")
    mark = q.mark()
    q.type("/session")
    screen = q.wait_for("Be brief.", after=mark)
    assert "system prompt (--system" in screen and "Working directory:" not in screen


def test_export_writes_the_conversation_as_markdown(emulator, pane, workdir):
    emulator({"responses": [tool_reply("read", {"path": "notes.txt"}), text_reply("Noted: blue.")]})
    (workdir / "notes.txt").write_text("colour: blue\n")
    p = pane()
    p.type("What does notes.txt say?")
    p.wait_for("Noted: blue.")
    mark = p.mark()
    p.type("/export")
    screen = p.wait_for(".md (4 messages)", after=mark)
    name = re.search(r"wrote (panto-\S+\.md)", screen).group(1)  # type: ignore[union-attr]
    text = (workdir / name).read_text()
    assert text.startswith("# panto session ")
    assert "## User\n\nWhat does notes.txt say?\n" in text
    assert "**Tool call** `read`\n\n```json\n" in text and "notes.txt" in text
    assert "**Result of** `read`\n\n```\n" in text and "colour: blue" in text
    assert "Noted: blue.\n" in text
    mark = p.mark()
    p.type("/export talk.md")
    p.wait_for("wrote talk.md (4 messages)", after=mark)
    assert (workdir / "talk.md").read_text() == text
    mark = p.mark()
    p.type("/export no/such/dir/x.md")
    p.wait_for("/export: no/such/dir/x.md could not be written", after=mark)
    p.type("/quit")
    assert p.exit_status() == 0


def test_tree_draws_the_fork_tree_this_session_is_in(emulator, pane):
    emulator({"responses": [text_reply("Noted: blue."), text_reply("Forked answer.")]})
    p = pane()
    p.type("My colour is blue")
    p.wait_for("Noted: blue.")
    mark = p.mark()
    p.type("/fork 0")
    screen = p.wait_for("forked: session", after=mark)
    forked = re.search(r"forked: session (\S+),", screen).group(1)  # type: ignore[union-attr]
    mark = p.mark()
    p.type("/new")
    screen = p.wait_for("is kept: panto --session", after=mark)
    newest = re.search(r"new session (\S+) ", screen).group(1)  # type: ignore[union-attr]
    p.type("Another question")
    p.wait_for("Forked answer.")
    mark = p.mark()
    p.type("/tree")
    screen = p.wait_for("← this session", after=mark)
    rows = [r for r in screen.splitlines() if "message" in r]
    # The first session is the root; the fork its child; /new's session the fork's child.
    assert rows[0].split()[0] != forked and "My colour is blue" in rows[0]
    assert rows[1].startswith("└─ " + forked) and "(no prompt)" in rows[1]
    assert rows[2].startswith("   └─ " + newest) and rows[2].endswith("Another question  ← this session")


def test_new_and_fork_go_on_in_new_sessions(emulator, pane, home):
    emu = emulator({"responses": [text_reply("Noted: blue."), text_reply("Fresh start."),
                                  text_reply("Forked answer.")]})
    p = pane()
    p.type("My colour is blue")
    p.wait_for("Noted: blue.")
    mark = p.mark()
    p.type("/fork 3")
    p.wait_for("/fork: 3 is past the conversation's end (2 messages)", after=mark)
    mark = p.mark()
    p.type("/fork x")
    p.wait_for("/fork: N is a number of messages, from 0 to 2", after=mark)
    mark = p.mark()
    p.type("/new")
    screen = p.wait_for("is kept: panto --session", after=mark)
    first = re.search(r"the last one, (\S+),", screen).group(1)  # type: ignore[union-attr]
    p.type("Hello again")
    p.wait_for("Fresh start.")
    # /new sent nothing of the first conversation.
    assert [m["role"] for m in emu.requests()[1]["body"]["messages"]] == ["user"]
    mark = p.mark()
    p.type("/fork 0")
    p.wait_for("forked: session", after=mark)
    mark = p.mark()
    p.type("/session")
    p.wait_for("0 messages", after=mark)
    p.type("Third")
    p.wait_for("Forked answer.")
    p.type("/quit")
    assert p.exit_status() == 0
    files = sorted((home / ".local" / "share" / "panto" / "sessions").glob("*.jsonl"))
    assert len(files) == 3
    headers = {f.stem: json.loads(f.read_text().splitlines()[0]) for f in files}
    # The first session's file is as it was; the others name their parent.
    assert "Noted: blue." in (home / ".local" / "share" / "panto" / "sessions" / f"{first}.jsonl").read_text()
    parents = sorted((h.get("parent") or {}).get("id", "") for h in headers.values())
    assert parents[0] == "" and first in parents
