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
    spent = rpc_state(panto_bin, cli_env, workdir, {"id": 1, "type": "prompt", "text": "first"},
                      {"id": 2, "type": "prompt", "text": "second"})
    assert spent["usage"]["input_tokens"] == 3000 and spent["usage"]["output_tokens"] == 300
    assert spent["usage"]["cache_read_tokens"] == 2000 and spent["usage"]["cache_write_tokens"] == 2000
    assert abs(spent["cost_usd"] - 0.0216) < 1e-9

def rpc_state(panto_bin, cli_env, workdir, *commands: dict) -> dict:
    """Runs `panto --mode rpc` on `commands`, then get_state: its `spent`."""
    lines = "".join(json.dumps(c) + "\n" for c in [*commands, {"id": "state", "type": "get_state"}])
    done = subprocess.run([str(panto_bin), "--mode", "rpc", "--model", "claude-sonnet-4-5"], input=lines.encode(),
                          env=cli_env, cwd=workdir, capture_output=True, timeout=RUN_TIMEOUT)
    state = next(x for x in map(json.loads, done.stdout.decode().splitlines()) if x.get("id") == "state")
    assert state["ok"], state
    return state["spent"]


def test_a_compactions_summary_request_is_counted(emulator, panto_bin, cli_env, workdir, write_config):
    # Automatic: the second turn's context (3.1k after the first) passes 3.5k - 1k, so its
    # older messages are summarized (THIRD) before its own request (SECOND).
    write_config({"compaction": {"context_window": 3500, "reserve_tokens": 1000, "keep_recent_tokens": 0}})
    emu = emulator({"responses": [text_reply("One.", usage=FIRST), text_reply("Summary.", usage=THIRD),
                                  text_reply("Two.", usage=SECOND)]})
    spent = rpc_state(panto_bin, cli_env, workdir, {"id": 1, "type": "prompt", "text": "first"},
                      {"id": 2, "type": "prompt", "text": "second"})
    assert len(emu.requests()) == 3
    assert spent["usage"]["input_tokens"] == 4000 and spent["usage"]["output_tokens"] == 400
    assert abs(spent["cost_usd"] - (0.0051 + 0.0045 + 0.0165)) < 1e-9


def test_a_compact_commands_summary_request_is_counted(emulator, panto_bin, cli_env, workdir, write_config):
    write_config({"compaction": {"keep_recent_tokens": 0}})
    emulator({"responses": [text_reply("One.", usage=FIRST), text_reply("Summary.", usage=THIRD)]})
    spent = rpc_state(panto_bin, cli_env, workdir, {"id": 1, "type": "prompt", "text": "first"},
                      {"id": 2, "type": "compact"})
    assert spent["usage"]["input_tokens"] == 2000 and spent["usage"]["output_tokens"] == 200
    assert abs(spent["cost_usd"] - (0.0051 + 0.0045)) < 1e-9
