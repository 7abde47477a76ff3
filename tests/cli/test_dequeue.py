"""Alt-Up during a turn (issue 35, pi's "dequeue"): the steers and follow-ups the turn has not
taken yet come back into the prompt, to edit and send again; they never reach the model as
they were. Driven in a tmux pane (test_interactive.py's Pane) against the emulator; RPC mode's
`dequeue` by a subprocess client (test_rpc.py's)."""
from __future__ import annotations

import shutil

import pytest

from conftest import text_reply, tool_reply
from test_interactive import pane  # noqa: F401  (the fixture)
from test_rpc import rpc  # noqa: F401  (the fixture)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_alt_up_takes_the_queued_lines_back_into_the_prompt(emulator, pane, workdir):
    # The tool runs until the test says so: the lines are queued, then taken back, meanwhile.
    emu = emulator({"responses": [
        tool_reply("bash", {"command": "while [ ! -e go ]; do sleep 0.05; done; echo ran"}),
        text_reply("Steered answer."),
    ]})
    p = pane("--allow", "exec", "--yolo")
    p.type("Start the work")
    p.wait_for("⚙ bash while")
    p.keys("use y", "Enter")
    p.keys("then z", "M-Enter")
    p.wait_for(lambda s: "follow-up: then z" in s and "steer: use y" in s)
    p.keys("draft")
    p.wait_for(lambda s: s.rstrip().endswith("> draft"))
    p.keys("M-Up")
    # Both back in the prompt's text, before what was being typed; the queue shown is empty.
    screen = p.wait_for(lambda s: s.rstrip().endswith("> use y\n  then z\n  draft"))
    assert "steer: use y" not in screen and "follow-up: then z" not in screen
    p.keys("M-Up")
    p.wait_for("nothing queued to take back")
    # Edited and sent again as one steer.
    p.keys(*["BSpace"] * 6)  # "\ndraft" off
    p.keys("Enter")
    p.wait_for("steer: use y")
    (workdir / "go").touch()
    p.wait_for("Steered answer.")
    p.wait_for(lambda s: s.rstrip().endswith(">"))
    requests = emu.requests()
    # No follow-up turn: the one taken back was not sent.
    assert len(requests) == 2
    steered = requests[1]["body"]["messages"][-1]["content"]
    assert [b["type"] for b in steered] == ["tool_result", "text"]
    assert steered[1]["text"] == "use y\nthen z"


def test_rpc_dequeue_takes_back_what_no_turn_took(emulator, rpc):
    emu = emulator({"responses": [tool_reply("bash", {"command": "echo ran"}), text_reply("Done.")]})
    c = rpc("--allow", "exec", "--no-session")
    c.send({"id": 1, "type": "prompt", "text": "go"})
    c.event("approval_request")
    c.send({"id": 2, "type": "follow_up", "text": "then z"})
    assert c.response(2)["ok"]
    c.send({"id": 3, "type": "dequeue"})
    assert c.response(3) == {"event": "response", "id": 3, "command": "dequeue", "ok": True,
                             "messages": [{"source": "follow_up", "text": "then z"}]}
    c.send({"id": 4, "type": "dequeue"})
    assert c.response(4)["messages"] == []
    c.send({"type": "approve", "call_id": "toolu_1"})
    got = c.until(lambda e: e["event"] in ("done", "error"))
    assert got[-1] == {"event": "done"}
    # No follow-up turn: two requests, no user_message.
    assert not [e for e in got if e["event"] == "user_message"]
    assert len(emu.requests()) == 2
    assert c.close() == 0
