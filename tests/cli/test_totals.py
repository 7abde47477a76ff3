"""The session's running token and cost totals: on the status line after each turn, in
/session and `--mode rpc`'s get_state; a resumed session starts from its messages' (issue 35,
"running token and cost totals in the status line and /session")."""

from __future__ import annotations

import json
import subprocess

from conftest import RUN_TIMEOUT, text_reply
from test_interactive import pane  # noqa: F401  (the fixture)

# claude-sonnet-4-5 at the catalog's list prices (USD per million tokens): 3 in, 15 out,
# 0.30 cache read, 3.75 cache write (5 minutes).
FIRST = {"input_tokens": 1000, "output_tokens": 100, "cache_read_tokens": 2000}  # $0.0051
SECOND = {"input_tokens": 2000, "output_tokens": 200, "cache_write_tokens": 2000}  # $0.0165
THIRD = {"input_tokens": 1000, "output_tokens": 100}  # $0.0045


def test_the_status_line_and_session_show_the_totals_and_a_resumed_session_starts_from_them(emulator, pane):
    emulator({"responses": [text_reply("One.", usage=FIRST), text_reply("Two.", usage=SECOND),
                            text_reply("Three.", usage=THIRD)]})
    p = pane("--model", "claude-sonnet-4-5")
    p.type("first")
    p.wait_for("turn 3k in, 100 out · $0.0051 · session 3k in (2k cache read), 100 out · $0.0051")
    p.type("second")
    p.wait_for("turn 4k in, 200 out · $0.0165 · session 7k in (2k cache read, 2k cache write), 300 out · $0.0216")
    p.type("/session")
    p.wait_for("spent: 7k in (2k cache read, 2k cache write), 300 out · $0.0216")
    p.keys("C-d")
    assert p.exit_status() == 0

    q = pane("--continue")
    q.type("/session")
    q.wait_for("spent: 7k in (2k cache read, 2k cache write), 300 out · $0.0216")
    q.type("third")
    q.wait_for("turn 1k in, 100 out · $0.0045 · session 8k in (2k cache read, 2k cache write), 400 out · $0.0261")


def test_new_starts_the_totals_again_and_an_unpriced_model_shows_no_cost(emulator, pane):
    emulator({"responses": [text_reply("One.", usage=FIRST), text_reply("Two.", usage=THIRD)]})
    p = pane("--model", "emu-unpriced")
    p.type("first")
    screen = p.wait_for("session 3k in (2k cache read), 100 out")
    line = next(x for x in screen.splitlines() if "session 3k in" in x)
    assert "$" not in line  # the catalog lacks the model: no cost, never a guess
    p.type("/new")
    p.wait_for("new session")
    p.type("/session")
    p.wait_for("spent: 0 in, 0 out · $0.0000")
    p.type("second")
    p.wait_for("turn 1k in, 100 out · session 1k in, 100 out")


def test_rpc_get_state_has_the_sessions_totals(emulator, panto_bin, cli_env, workdir):
    emulator({"responses": [text_reply("One.", usage=FIRST), text_reply("Two.", usage=SECOND)]})
    commands = [{"id": 1, "type": "prompt", "text": "first"}, {"id": 2, "type": "prompt", "text": "second"},
                {"id": 3, "type": "get_state"}]
    done = subprocess.run([str(panto_bin), "--mode", "rpc", "--model", "claude-sonnet-4-5"],
                          input="".join(json.dumps(c) + "\n" for c in commands).encode(),
                          env=cli_env, cwd=workdir, capture_output=True, timeout=RUN_TIMEOUT)
    lines = [json.loads(x) for x in done.stdout.decode().splitlines()]
    state = next(x for x in lines if x.get("id") == 3)
    assert state["ok"], state
    spent = state["spent"]
    assert spent["usage"]["input_tokens"] == 3000 and spent["usage"]["output_tokens"] == 300
    assert spent["usage"]["cache_read_tokens"] == 2000 and spent["usage"]["cache_write_tokens"] == 2000
    assert abs(spent["cost_usd"] - 0.0216) < 1e-9
