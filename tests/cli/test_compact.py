"""`/compact [INSTRUCTIONS]` and RPC mode's compact with "instructions" (issue 35): the user's
instructions follow the compaction prompt in that summary request's system prompt (the core's
Agent.compactWith, panto_agent_compact_with), and the next compaction's prompt is the plain one."""
from __future__ import annotations

import json
import shutil
from typing import Any

import pytest

from conftest import text_reply
from test_interactive import pane  # noqa: F401  (the fixture)
from test_rpc import rpc  # noqa: F401  (the fixture)

FOCUS = "The user's instructions for this summary"


def system_of(request: dict[str, Any]) -> str:
    system = request["body"].get("system", "")
    return system if isinstance(system, str) else "".join(b["text"] for b in system)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_compact_with_instructions_sends_them_with_the_prompt(emulator, pane, write_config):
    write_config({"compaction": {"keep_recent_tokens": 0}})
    emu = emulator({"responses": [text_reply("First answer."), text_reply("Summary one."),
                                  text_reply("Second answer."), text_reply("Summary two.")]})
    p = pane("--no-session")
    p.type("Hello")
    p.wait_for("First answer.")
    p.command("/compact keep the word Hello", "compacted")
    p.type("More")
    p.wait_for("Second answer.")
    p.command("/compact", "compacted")
    p.wait_for(lambda s: len(emu.requests()) == 4)
    first, second = emu.requests()[1], emu.requests()[3]
    assert system_of(first).endswith(FOCUS + " (follow them where they ask what to keep or stress):\nkeep the word Hello")
    assert FOCUS not in system_of(second)  # (that compaction's alone)


def test_rpc_compact_takes_instructions(emulator, rpc, write_config):
    write_config({"compaction": {"keep_recent_tokens": 0}})
    emu = emulator({"responses": [text_reply("First answer."), text_reply("The user said hello.")]})
    c = rpc("--no-session")
    c.send({"id": 1, "type": "prompt", "text": "Hello"})
    assert c.until(lambda e: e["event"] in ("done", "error"))[-1] == {"event": "done"}
    c.send({"id": 2, "type": "compact", "instructions": "mention the greeting"})
    assert c.until(lambda e: e["event"] == "response" and e["id"] == 2)[-1]["ok"]
    assert system_of(emu.requests()[1]).endswith("\nmention the greeting")
    assert json.dumps(emu.requests()[1]["body"]).count("mention the greeting") == 1
    assert c.close() == 0
