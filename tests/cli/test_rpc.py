"""`panto --mode rpc` (issue 35, docs/cli.md "RPC mode"): a client drives panto through JSON
lines, commands on stdin, events and answers on stdout. Each test is such a client: a
subprocess whose stdout a thread reads line by line; every wait is for a line (with a
deadline that only guards against a hang) or for the emulator's requests.
"""
from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from conftest import RUN_TIMEOUT, assert_no_leak, text_reply, tool_reply
from test_approvals import result_text, tool_results


class Client:
    """A running `panto --mode rpc`: send() a command, next() the next line out."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.put(json.loads(raw))
        self.lines.put(None)

    def send(self, command: dict[str, Any] | str) -> None:
        assert self.proc.stdin is not None
        line = command if isinstance(command, str) else json.dumps(command)
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def next(self) -> dict[str, Any]:
        line = self.lines.get(timeout=RUN_TIMEOUT)
        assert line is not None, f"stdout ended; after {self.seen[-5:]}"
        self.seen.append(line)
        return line

    def until(self, test: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
        """The lines up to and with the first that passes `test`."""
        got = []
        while True:
            line = self.next()
            got.append(line)
            if test(line):
                return got

    def event(self, name: str) -> dict[str, Any]:
        return self.until(lambda e: e["event"] == name)[-1]

    def response(self, id: Any) -> dict[str, Any]:
        return self.until(lambda e: e["event"] == "response" and e["id"] == id)[-1]

    def close(self) -> int:
        """Ends stdin, reads stdout to its end; the exit code. stderr holds no leak report
        (in a Debug build, where the allocator makes one: conftest's debug_build)."""
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        while self.lines.get(timeout=RUN_TIMEOUT) is not None:
            pass
        code = self.proc.wait(timeout=RUN_TIMEOUT)
        self.stderr = self.proc.stderr.read().decode(errors="replace")
        assert_no_leak(self.stderr)
        return code


@pytest.fixture
def rpc(start_panto) -> Callable[..., Client]:
    def start(*args: str) -> Client:
        return Client(start_panto("--mode", "rpc", *args))
    return start


def wait_for_requests(emu, n: int) -> None:
    deadline = time.monotonic() + RUN_TIMEOUT
    while len(emu.requests()) < n:
        assert time.monotonic() < deadline, "the request never came"
        time.sleep(0.01)


def test_a_whole_turn_with_a_tool_call_the_client_approves(emulator, rpc, workdir: Path):
    emu = emulator({"responses": [tool_reply("bash", {"command": "echo hi > made.txt; echo ran"}), text_reply("Made it.")]})
    c = rpc("--allow", "exec")
    assert c.next()["event"] == "session"
    c.send({"id": 1, "type": "prompt", "text": "make a file"})
    assert c.next() == {"event": "response", "id": 1, "command": "prompt", "ok": True}
    request = c.event("approval_request")
    assert [(call["id"], call["name"], call["input"]) for call in request["calls"]] == [
        ("toolu_1", "bash", {"command": "echo hi > made.txt; echo ran"})]
    assert not (workdir / "made.txt").exists()
    c.send({"id": "yes", "type": "approve", "call_id": "toolu_1"})
    rest = c.until(lambda e: e["event"] in ("done", "error"))
    assert rest[-1] == {"event": "done"}
    assert {"event": "response", "id": "yes", "command": "approve", "ok": True} in rest
    [result] = [e for e in rest if e["event"] == "tool_result"]
    assert (result["name"], result["content"], result["is_error"]) == ("bash", "ran\n", False)
    assert "".join(e["text"] for e in rest if e["event"] == "content_delta") == "Made it."
    assert (workdir / "made.txt").read_text() == "hi\n"
    assert result_text(tool_results(emu.requests()[1])[0]) == "ran\n"
    c.send({"id": 2, "type": "get_state"})
    state = c.response(2)
    assert state["ok"] and state["message_count"] == 4 and state["model"] == "claude-sonnet-4-5"
    assert c.close() == 0


def test_deny_gives_the_model_the_reason(emulator, rpc, workdir: Path):
    emu = emulator({"responses": [tool_reply("bash", {"command": "touch made"}), text_reply("I will not.")]})
    c = rpc("--allow", "exec", "--no-session")
    c.send({"type": "prompt", "text": "go"})
    c.event("approval_request")
    c.send({"type": "deny", "call_id": "toolu_1", "reason": "not in this folder"})
    assert c.until(lambda e: e["event"] in ("done", "error"))[-1] == {"event": "done"}
    [result] = tool_results(emu.requests()[1])
    assert result["is_error"] is True and "not in this folder" in result_text(result)
    assert not (workdir / "made").exists()
    assert c.close() == 0


def test_abort_cancels_the_turn_and_the_next_prompt_runs(emulator, rpc):
    emu = emulator({"responses": [{"message": {"content": [{"type": "text", "text": "late"}]}, "delay_ms": 20000},
                                  text_reply("Second answer.")]})
    c = rpc("--no-session")
    c.send({"id": 1, "type": "prompt", "text": "one"})
    assert c.response(1)["ok"]
    wait_for_requests(emu, 1)  # the turn waits for the provider's answer
    c.send({"id": 2, "type": "abort"})
    got = c.until(lambda e: e["event"] in ("done", "error"))
    assert {"event": "response", "id": 2, "command": "abort", "ok": True} in got
    assert got[-1] == {"event": "error", "code": "canceled", "http_status": 0, "type": "canceled_error",
                       "message": "the turn was canceled"}
    c.send({"id": 3, "type": "prompt", "text": "two"})
    got = c.until(lambda e: e["event"] in ("done", "error"))
    assert got[-1] == {"event": "done"}
    assert "".join(e["text"] for e in got if e["event"] == "content_delta") == "Second answer."
    assert c.close() == 0


def test_abort_while_a_call_waits_denies_it_and_cancels(emulator, rpc, workdir: Path):
    emulator({"responses": [tool_reply("bash", {"command": "touch made"}), text_reply("unused")]})
    c = rpc("--allow", "exec", "--no-session")
    c.send({"type": "prompt", "text": "go"})
    c.event("approval_request")
    c.send({"id": "stop", "type": "abort"})
    got = c.until(lambda e: e["event"] in ("done", "error"))
    assert got[-1]["event"] == "error" and got[-1]["code"] == "canceled"
    assert not (workdir / "made").exists()
    # The call is answered: approving it now is refused.
    c.send({"id": "late", "type": "approve", "call_id": "toolu_1"})
    assert c.response("late")["code"] == "unknown_call"
    assert c.close() == 0


def test_steer_and_follow_up_join_the_turn_that_runs(emulator, rpc):
    emu = emulator({"responses": [tool_reply("bash", {"command": "echo ran"}), text_reply("Steered."),
                                  text_reply("Followed.")]})
    c = rpc("--allow", "exec", "--no-session")
    c.send({"id": 1, "type": "prompt", "text": "go"})
    # The turn waits for the call's answer: both come while it runs, and are answered at once.
    c.event("approval_request")
    c.send({"id": 2, "type": "steer", "text": "use y instead"})
    assert c.response(2) == {"event": "response", "id": 2, "command": "steer", "ok": True}
    c.send({"id": 3, "type": "follow_up", "text": "then z"})
    assert c.response(3)["ok"]
    c.send({"type": "approve", "call_id": "toolu_1"})
    got = c.until(lambda e: e["event"] in ("done", "error"))
    assert got[-1] == {"event": "done"}
    entered = [(e["source"], e["text"]) for e in got if e["event"] == "user_message"]
    assert entered == [("steer", "use y instead"), ("follow_up", "then z")]
    text = "".join(e["text"] for e in got if e["event"] == "content_delta")
    assert text == "Steered.Followed."
    steered = emu.requests()[1]["body"]["messages"][-1]["content"]
    assert [b["type"] for b in steered] == ["tool_result", "text"] and steered[1]["text"] == "use y instead"
    assert emu.requests()[2]["body"]["messages"][-1]["content"][-1]["text"] == "then z"
    # No turn runs now: nothing to join.
    c.send({"id": 4, "type": "steer", "text": "too late"})
    late = c.response(4)
    assert (late["ok"], late["code"]) == (False, "no_turn")
    c.send({"id": 5, "type": "follow_up", "text": ""})
    assert c.response(5)["code"] == "invalid_argument"
    assert len(emu.requests()) == 3
    assert c.close() == 0


def test_a_steer_sent_right_after_its_prompt_joins_that_turn(emulator, rpc):
    emu = emulator({"responses": [text_reply("First."), text_reply("Second.")]})
    c = rpc("--no-session")
    # Sent together: the steer comes before the turn's stream exists, and waits for it.
    c.send({"id": 1, "type": "prompt", "text": "one"})
    c.send({"id": 2, "type": "steer", "text": "and two"})
    got = c.until(lambda e: e["event"] in ("done", "error"))
    assert got[-1] == {"event": "done"}
    assert {"event": "response", "id": 2, "command": "steer", "ok": True} in got
    # No tool round took it: it came as the next turn of the same stream.
    assert [(e["source"], e["text"]) for e in got if e["event"] == "user_message"] == [("follow_up", "and two")]
    assert [r["body"]["messages"][-1]["content"][-1]["text"] for r in emu.requests()] == ["one", "and two"]
    assert c.close() == 0


def test_new_session_fork_and_get_messages(emulator, rpc, home: Path):
    emulator({"responses": [text_reply("First answer."), text_reply("Second answer.")]})
    c = rpc()
    first = c.next()["id"]
    c.send({"id": 1, "type": "prompt", "text": "one"})
    assert c.until(lambda e: e["event"] in ("done", "error"))[-1] == {"event": "done"}
    c.send({"id": 2, "type": "get_messages"})
    messages = c.response(2)["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[1]["content"][0]["text"] == "First answer."
    c.send({"id": 3, "type": "fork", "message_count": 5})
    refused = c.response(3)
    assert (refused["ok"], refused["code"]) == (False, "invalid_argument") and "past" in refused["message"]
    c.send({"id": 4, "type": "fork", "message_count": 2})
    forked = c.response(4)
    assert forked["ok"] and forked["message_count"] == 2 and forked["session"] != first
    c.send({"id": 5, "type": "new_session"})
    new = c.response(5)
    assert new["parent"] == forked["session"] and new["session"] not in (first, forked["session"])
    c.send({"id": 6, "type": "get_messages"})
    assert c.response(6)["messages"] == []
    c.send({"id": 7, "type": "prompt", "text": "two"})
    assert c.until(lambda e: e["event"] in ("done", "error"))[-1] == {"event": "done"}
    c.send({"id": 8, "type": "get_state"})
    state = c.response(8)
    assert (state["session"], state["message_count"]) == (new["session"], 2)
    assert c.close() == 0
    sessions = home / ".local" / "share" / "panto" / "sessions"
    header = json.loads((sessions / f"{forked['session']}.jsonl").read_text().splitlines()[0])
    assert header["parent"]["id"] == first


def test_fork_without_a_session_and_compact_with_nothing_to_compact_are_refused(emulator, rpc):
    emulator({"responses": []})
    c = rpc("--no-session")
    c.send({"id": 1, "type": "fork"})
    assert c.response(1)["code"] == "no_session"
    c.send({"id": 2, "type": "compact"})
    assert c.response(2)["code"] == "nothing_to_compact"
    c.send({"id": 3, "type": "new_session"})
    assert c.response(3) == {"event": "response", "id": 3, "command": "new_session", "ok": True,
                             "session": None, "parent": None}
    assert c.close() == 0


def test_compact_summarizes_and_answers_with_the_counts(emulator, rpc, write_config):
    write_config({"compaction": {"keep_recent_tokens": 0}})
    emu = emulator({"responses": [text_reply("First answer."), text_reply("The user said hello.")]})
    c = rpc("--no-session")
    c.send({"id": 1, "type": "prompt", "text": "Hello"})
    assert c.until(lambda e: e["event"] in ("done", "error"))[-1] == {"event": "done"}
    c.send({"id": 2, "type": "compact"})
    got = c.until(lambda e: e["event"] == "response" and e["id"] == 2)
    [end] = [e for e in got if e["event"] == "compaction_end"]
    assert end["summary"] == "The user said hello."
    answer = got[-1]
    assert answer["ok"] and answer["message_count"] == 1 == end["message_count"]
    assert (answer["tokens_before"], answer["tokens_after"]) == (end["tokens_before"], end["tokens_after"])
    assert "[User]: Hello" in json.dumps(emu.requests()[1]["body"])
    c.send({"id": 3, "type": "get_messages"})
    assert len(c.response(3)["messages"]) == 2  # the summary, then the answer kept
    assert c.close() == 0


def test_a_malformed_line_is_a_typed_error_and_the_process_goes_on(emulator, rpc):
    emulator({"responses": [text_reply("Still here.")]})
    c = rpc("--no-session")
    c.send("this is not json")
    assert c.next() == {"event": "response", "id": None, "command": None, "ok": False, "code": "malformed",
                        "message": "the line is not JSON"}
    c.send("[1, 2]")
    assert c.next()["code"] == "malformed"
    c.send({"id": 5, "type": "fly"})
    bad = c.next()
    assert (bad["id"], bad["command"], bad["ok"], bad["code"]) == (5, "fly", False, "unknown_command")
    c.send({"id": 6, "type": "prompt"})
    assert c.next()["code"] == "invalid_argument"
    c.send({"id": 7, "type": "approve", "call_id": "nope"})
    assert c.next()["code"] == "unknown_call"
    c.send({"id": 8, "type": "prompt", "text": "hi"})
    got = c.until(lambda e: e["event"] in ("done", "error"))
    assert got[-1] == {"event": "done"}
    assert "".join(e["text"] for e in got if e["event"] == "content_delta") == "Still here."
    assert c.close() == 0


def test_set_model_and_set_thinking_change_the_next_request(emulator, rpc):
    emu = emulator({"responses": [text_reply("ok")]})
    c = rpc("--no-session")
    c.send({"id": 1, "type": "set_model", "model": "claude-haiku-4-5"})
    assert c.response(1)["model"] == "claude-haiku-4-5"
    c.send({"id": 2, "type": "set_thinking", "level": "lots"})
    refused = c.response(2)
    assert not refused["ok"] and refused["code"] == "invalid_argument" and "lots" in refused["message"]
    c.send({"id": 3, "type": "set_thinking", "level": "low"})
    assert c.response(3)["thinking"] == "low"
    c.send({"id": 4, "type": "get_state"})
    state = c.response(4)
    assert (state["model"], state["thinking"], state["session"]) == ("claude-haiku-4-5", "low", None)
    c.send({"id": 5, "type": "prompt", "text": "hi"})
    assert c.until(lambda e: e["event"] in ("done", "error"))[-1] == {"event": "done"}
    assert emu.requests()[0]["body"]["model"] == "claude-haiku-4-5"
    assert c.close() == 0


def test_rpc_mode_takes_no_prompt_on_the_command_line(run_panto):
    r = run_panto("--mode", "rpc", "-p", "hi")
    assert r.returncode == 2
    assert "--mode rpc takes its prompts as commands on stdin" in r.stderr


def test_a_debug_build_is_known_so_the_leak_checks_can_bite(debug_build, run_panto):
    # Every client's close() looks for the allocator's leak report; it comes only from a
    # Debug build (`OPTIMIZE=Debug make build`). Said here rather than passing silently.
    version = run_panto("--version").stdout
    if not debug_build:
        pytest.skip(f"{version.strip()} is not a Debug build: no leak report to look for")
    assert version.rstrip().endswith("(Debug)")


def test_stdout_gone_ends_the_process_while_stdin_stays_open(emulator, panto_bin, cli_env, workdir):
    # The reader thread blocks on stdin; when stdout goes, the main thread wakes it, joins it
    # and frees what it holds (the queue): an exit with stdin still open, and no leak. The
    # client ignores SIGPIPE, as Python's own children do when it lets them inherit that
    # (restore_signals=False), so the write fails rather than killing the process.
    emulator({"responses": [text_reply("An answer.")]})
    out_r, out_w = os.pipe()
    os.close(out_r)
    proc = subprocess.Popen([str(panto_bin), "--mode", "rpc", "--no-session"], stdin=subprocess.PIPE,
                            stdout=out_w, stderr=subprocess.PIPE, cwd=workdir, env=cli_env,
                            restore_signals=False)
    os.close(out_w)
    try:
        assert proc.stdin is not None and proc.stderr is not None
        proc.stdin.write(b'{"type":"prompt","text":"one"}\n{"type":"get_state"}\n')
        proc.stdin.flush()
        assert proc.wait(timeout=RUN_TIMEOUT) == 1
        assert_no_leak(proc.stderr.read().decode(errors="replace"))
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
