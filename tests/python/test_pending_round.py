"""A tool round left waiting for a person (issue 36): a stream closed while a call waits for
its answer leaves the round to the agent (`Agent.pending_round()`, `resume_turn()`); a
session keeps it, so another process has it after the first was killed (SIGKILL) while it
waited; a new turn answers what it left. The requests stay valid: every call gets its result,
never two user messages in a row."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, List

import pytest

import panto
from panto.emulator import Emulator

pytestmark = pytest.mark.usefixtures("library")

ROOT = Path(__file__).resolve().parents[2]

ROUND = {"message": {"content": [
    {"type": "tool_use", "id": "toolu_1", "name": "delete_file", "input": {"path": "notes.txt"}},
    {"type": "tool_use", "id": "toolu_2", "name": "list_files", "input": {}}], "stop_reason": "tool_use"}}
DONE = {"message": {"content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn"}}


def tools(ran: Path) -> List[panto.Tool]:
    """delete_file asks first; both count their runs in `ran`."""
    def delete_file(path: str) -> str:
        with open(ran, "a") as f:
            f.write(f"delete {path}\n")
        return f"deleted {path}"

    def list_files() -> str:
        with open(ran, "a") as f:
            f.write("list\n")
        return "notes.txt"

    return [
        panto.Tool("delete_file", "Deletes a file.", {"type": "object", "properties": {"path": {"type": "string"}}},
                   delete_file, approval="always"),
        panto.Tool("list_files", "Lists the files.", None, list_files),
    ]


def new_agent(emu: Emulator, ran: Path) -> panto.Agent:
    return panto.Agent(provider="anthropic", model="test-model", base_url=emu.url, api_key="test-key",
                       tools=tools(ran))


def session_agent(emu: Emulator, ran: Path, sessions: Path) -> panto.Session:
    return panto.Session("s1", dir=str(sessions), provider="anthropic", model="test-model", base_url=emu.url,
                         api_key="test-key", tools=tools(ran))


def runs(ran: Path) -> List[str]:
    return ran.read_text().splitlines() if ran.exists() else []


def test_a_closed_stream_leaves_the_round_and_resume_turn_goes_on(tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    with Emulator(scenario={"responses": [ROUND, DONE]}) as emu, new_agent(emu, ran) as agent:
        with agent.run("Clean up") as stream:
            with pytest.raises(panto.ApprovalPendingError):
                list(stream)
        assert agent.pending_round() == [
            panto.PendingCall("toolu_1", "delete_file", {"path": "notes.txt"}, "ask"),
            panto.PendingCall("toolu_2", "list_files", {}, "answered"),
        ]
        assert [m["role"] for m in agent.conversation] == ["user", "assistant"]
        with agent.resume_turn() as stream:
            events: List[Any] = []
            with pytest.raises(panto.ApprovalPendingError):
                for ev in stream:
                    events.append(ev)
            assert isinstance(events[0], panto.ApprovalRequest)
            stream.approve("toolu_1")
            events += list(stream)
        assert agent.pending_round() == []
        results = [e for e in events if isinstance(e, panto.ToolResult)]
        assert [(r.id, r.content) for r in results] == [("toolu_1", "deleted notes.txt"), ("toolu_2", "notes.txt")]
        assert runs(ran) == ["list", "delete notes.txt"]  # each once
        sent = emu.requests()[1]["body"]["messages"]
        assert [m["role"] for m in sent] == ["user", "assistant", "user"]
        assert [b.get("tool_use_id") for b in sent[-1]["content"]] == ["toolu_1", "toolu_2"]
        with pytest.raises(panto.StateError):
            agent.resume_turn()


def test_a_new_turn_answers_the_round_it_leaves(tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    with Emulator(scenario={"responses": [ROUND, DONE]}) as emu, new_agent(emu, ran) as agent:
        with agent.run("Clean up") as stream:
            with pytest.raises(panto.ApprovalPendingError):
                list(stream)
        assert agent.complete("Never mind.").text == "Done."
        assert runs(ran) == ["list"]
        sent = emu.requests()[1]["body"]["messages"]
        assert [m["role"] for m in sent] == ["user", "assistant", "user"]
        assert [b["type"] for b in sent[-1]["content"]] == ["tool_result", "tool_result", "text"]
        assert sent[-1]["content"][0]["content"] == "The user did not approve this call before moving on."
        assert sent[-1]["content"][0]["is_error"] is True


KILLED_WHILE_WAITING = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, sys.argv[1])
    import panto
    sys.path.insert(0, sys.argv[2])
    from test_pending_round import tools
    from pathlib import Path
    agent = panto.Session("s1", dir=sys.argv[5], provider="anthropic", model="test-model", base_url=sys.argv[3],
                          api_key="test-key", tools=tools(Path(sys.argv[4])))
    stream = agent.run("Clean up")
    try:
        list(stream)
    except panto.ApprovalPendingError:
        print("waiting", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    print("not killed", flush=True)
""")


def test_a_process_killed_while_a_call_waits_leaves_the_round_to_the_next(tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    sessions = tmp_path / "sessions"
    with Emulator(scenario={"responses": [ROUND, DONE]}) as emu:
        child = subprocess.run(
            [sys.executable, "-c", KILLED_WHILE_WAITING, str(ROOT / "bindings-py"), str(ROOT / "tests/python"),
             emu.url, str(ran), str(sessions)],
            capture_output=True, text=True, timeout=60)
        assert child.returncode == -signal.SIGKILL, child.stderr
        assert child.stdout == "waiting\n"
        assert runs(ran) == ["list"]
        with session_agent(emu, ran, sessions) as agent:
            pending = agent.pending_round()
            assert [(c.id, c.state) for c in pending] == [("toolu_1", "ask"), ("toolu_2", "answered")]
            with agent.resume_turn() as stream:
                with pytest.raises(panto.ApprovalPendingError):
                    list(stream)
                stream.deny("toolu_1", "keep it")
                events = list(stream)
            results: Dict[str, str] = {e.id: e.content for e in events if isinstance(e, panto.ToolResult)}
            assert results == {"toolu_1": "The user denied this call: keep it", "toolu_2": "notes.txt"}
        assert runs(ran) == ["list"]  # the first round's tool ran once, in the killed process
        assert len(emu.requests()) == 2
        # The session is whole: a third agent finds the turn over.
        with session_agent(emu, ran, sessions) as agent:
            assert agent.pending_round() == []
            assert [m["role"] for m in agent.conversation] == ["user", "assistant", "user", "assistant"]


def test_an_approval_function_answers_the_calls_as_they_are_asked(tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    asked: List[panto.ApprovalCall] = []

    def policy(call: panto.ApprovalCall) -> Any:
        asked.append(call)
        return False, "not on Sundays"

    with Emulator(scenario={"responses": [ROUND, DONE]}) as emu, \
            panto.Agent(provider="anthropic", model="test-model", base_url=emu.url, api_key="test-key",
                        tools=tools(ran), approval=policy) as agent:
        events = list(agent.run("Clean up"))  # no ApprovalPendingError: the function answered
        assert asked == [panto.ApprovalCall("toolu_1", "delete_file", {"path": "notes.txt"})]
        results = {e.id: e.content for e in events if isinstance(e, panto.ToolResult)}
        assert results == {"toolu_1": "The user denied this call: not on Sundays", "toolu_2": "notes.txt"}
        assert runs(ran) == ["list"]


@pytest.mark.parametrize("answer, result", [
    (True, "deleted notes.txt"),
    (False, "The user denied this call."),
    ("yes", "The user denied this call: the approval function returned 'yes', not True, False or (False, reason)"),
])
def test_what_an_approval_function_returns(tmp_path: Path, answer: Any, result: str) -> None:
    with Emulator(scenario={"responses": [ROUND, DONE]}) as emu, \
            panto.Agent(provider="anthropic", model="test-model", base_url=emu.url, api_key="test-key",
                        tools=tools(tmp_path / "ran"), approval=lambda call: answer) as agent:
        events = list(agent.run("Clean up"))
        assert [e.content for e in events if isinstance(e, panto.ToolResult)][0] == result


def test_an_approval_function_that_raises_denies_the_call_and_async_ones_are_refused(tmp_path: Path) -> None:
    def broken(call: panto.ApprovalCall) -> bool:
        raise KeyError("owner")

    with Emulator(scenario={"responses": [ROUND, DONE]}) as emu, \
            panto.Agent(provider="anthropic", model="test-model", base_url=emu.url, api_key="test-key",
                        tools=tools(tmp_path / "ran"), approval=broken) as agent:
        results = [e.content for e in agent.run("Clean up") if isinstance(e, panto.ToolResult)]
        assert results[0] == "The user denied this call: the approval function failed: KeyError: 'owner'"

    async def later(call: panto.ApprovalCall) -> bool:
        return True

    with pytest.raises(TypeError, match="not an async one"):
        panto.Agent(provider="anthropic", model="test-model", api_key="k", approval=later)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="approval must be a function"):
        panto.Agent(provider="anthropic", model="test-model", api_key="k", approval=3)  # type: ignore[arg-type]


def test_an_approval_function_answers_in_async_for_too(tmp_path: Path) -> None:
    import asyncio

    async def turn(emu: Emulator) -> List[Any]:
        with panto.Agent(provider="anthropic", model="test-model", base_url=emu.url, api_key="test-key",
                         tools=tools(tmp_path / "ran"), approval=lambda call: True) as agent:
            return [e async for e in agent.run("Clean up")]

    with Emulator(scenario={"responses": [ROUND, DONE]}) as emu:
        events = asyncio.run(turn(emu))
    assert [e.content for e in events if isinstance(e, panto.ToolResult)] == ["deleted notes.txt", "notes.txt"]
