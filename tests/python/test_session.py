"""panto.Session: a conversation in a session file, resumed, locked, forked, listed; and
compaction from Python (events, compact(), a failed summary).

    PYTHONPATH=bindings-py PANTO_LIBRARY=zig-out/lib/libpanto.so \
        .venv/bin/python -m pytest -q tests/python/test_session.py
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any, Dict

import pytest

import panto
from panto.emulator import Emulator

pytestmark = pytest.mark.usefixtures("library")

USAGE = {"input_tokens": 7, "output_tokens": 2}


def answer(text: str, **usage: int) -> Dict[str, Any]:
    return {"message": {"content": [{"type": "text", "text": text}], "usage": usage or USAGE}}


def access(emu: Emulator) -> Dict[str, Any]:
    return {"provider": "anthropic", "model": "claude-test", "base_url": emu.url, "api_key": "sk-secret-key"}


def finish(stream: panto.Stream) -> None:
    with stream:
        for _ in stream:
            pass


def test_a_session_is_written_and_resumed(tmp_path: Path) -> None:
    with Emulator(scenario={"responses": [answer("Hi."), answer("Again.")]}) as emu:
        with panto.Session("s1", dir=tmp_path, **access(emu)) as session:
            assert isinstance(session, panto.Agent)
            info = session.info
            assert info == panto.SessionInfo(id="s1", path=str(tmp_path / "s1.jsonl"), resumed=False, torn_bytes=0)
            assert session.id == "s1" and session.path == info.path
            finish(session.run("Hello"))
            written = session.export()
        assert "sk-secret-key" not in (tmp_path / "s1.jsonl").read_text()  # never written
        with panto.Session.resume("s1", dir=tmp_path, **access(emu)) as session:
            assert session.info.resumed
            assert session.export() == written
            finish(session.run("Again"))
            assert [m["role"] for m in emu.requests()[-1]["body"]["messages"]] == ["user", "assistant", "user"]


def test_from_config_with_a_session_gives_a_session(tmp_path: Path) -> None:
    with Emulator(scenario={"responses": []}) as emu:
        config = dict(access(emu), session={"dir": str(tmp_path), "id": "s2"})
        with panto.Agent.from_config(config) as agent:
            assert isinstance(agent, panto.Session)
            assert agent.info.id == "s2"


def test_one_writer_a_missing_session_and_a_taken_id(tmp_path: Path) -> None:
    with Emulator(scenario={"responses": []}) as emu:
        with panto.Session("s1", dir=tmp_path, **access(emu)) as first:
            with pytest.raises(panto.SessionLockedError) as locked:
                panto.Session("s1", dir=tmp_path, **access(emu))
            assert isinstance(locked.value, panto.SessionError) and locked.value.code == "session_locked"
            assert first.message_count == 0  # the first goes on
        with panto.Session("s1", dir=tmp_path, **access(emu)):  # freed: it opens again
            pass
        with pytest.raises(panto.NoSuchSessionError) as missing:
            panto.Session.resume("nope", dir=tmp_path, **access(emu))
        assert isinstance(missing.value, FileNotFoundError) and missing.value.code == "no_such_session"
        with pytest.raises(panto.SessionError):
            panto.Session("s1", dir=tmp_path, mode="create", **access(emu))
        with pytest.raises(ValueError):
            panto.Session("s1", dir=tmp_path, mode="reopen", **access(emu))


def test_a_torn_last_line_is_cut_off_and_counted(tmp_path: Path) -> None:
    with Emulator(scenario={"responses": [answer("Hi.")]}) as emu:
        with panto.Session("s1", dir=tmp_path, **access(emu)) as session:
            finish(session.run("Hello"))
            path = Path(session.info.path)
        torn = b'{"type":"message","mess'
        with path.open("ab") as f:
            f.write(torn)
        with panto.Session("s1", dir=tmp_path, **access(emu)) as session:
            assert session.info.torn_bytes == len(torn)
            assert session.message_count == 2
        with panto.Session("s1", dir=tmp_path, **access(emu)) as session:
            assert session.info.torn_bytes == 0


def test_fork_and_list(tmp_path: Path) -> None:
    with Emulator(scenario={"responses": [answer("Hi."), answer("Again."), answer("Branch.")]}) as emu:
        with panto.Session("s1", dir=tmp_path, **access(emu)) as session:
            finish(session.run("Hello"))
            finish(session.run("Again"))
            fork = session.fork(2, id="s1-branch")
            assert fork.id == "s1-branch" and session.info.id == "s1-branch"
            assert session.message_count == 2
            finish(session.run("Branch off"))
        listed = panto.Session.list(tmp_path)
        assert [(s.id, s.message_count, s.first_user_text) for s in listed] == [
            ("s1-branch", 4, "Hello"), ("s1", 4, "Hello")]
        assert listed[0].parent == panto.SessionParent("s1", 2) and listed[1].parent is None
        assert all(isinstance(s.updated, datetime.datetime) and s.updated.tzinfo for s in listed)
        assert listed[0].updated >= listed[1].updated
        assert panto.Session.list(tmp_path / "missing") == []


COMPACTION = {"enabled": True, "context_window": 1000, "reserve_tokens": 100, "keep_recent_tokens": 6}


def test_a_turn_compacts_and_shows_it(tmp_path: Path) -> None:
    responses = [answer("Once upon a time", input_tokens=950, output_tokens=30),
                 answer("The user asked for a story."), answer("The end.")]
    with Emulator(scenario={"responses": responses}) as emu:
        with panto.Session("s1", dir=tmp_path, compaction=COMPACTION, **access(emu)) as session:
            finish(session.run("Tell me a story."))
            events = list(session.run("And then what???"))
            start, end = events[0], events[1]
            assert isinstance(start, panto.CompactionStart) and start.reason == "threshold"
            assert isinstance(end, panto.CompactionEnd) and end.summary == "The user asked for a story."
            assert end.message_count == 1 and end.tokens_before == start.tokens_before == 984
            assert 0 < end.tokens_after < end.tokens_before
            assert isinstance(events[2], panto.MessageStart)
            assert session.conversation[0]["compaction"] == {"message_count": 1, "tokens_before": 984}
        # The file keeps the full history and a compaction entry.
        entries = [json.loads(l) for l in (tmp_path / "s1.jsonl").read_text().splitlines()]
        assert [e["type"] for e in entries].count("compaction") == 1
        assert any(e["type"] == "message" and e["message"]["content"][0].get("text") == "Tell me a story."
                   for e in entries)


def test_compact_now_and_a_failing_summary() -> None:
    responses = [answer("Once upon a time"), answer("Short."),
                 {"error": {"type": "invalid_request_error", "message": "Too long"}}]
    with Emulator(scenario={"responses": responses}) as emu:
        with panto.Agent(compaction={"keep_recent_tokens": 1}, **access(emu)) as agent:
            with pytest.raises(panto.StateError):
                agent.compact()  # nothing to compact yet
            finish(agent.run("Tell me a story."))
            before = agent.export()
            stream = agent.compact()
            kinds = [type(e) for e in stream]
            assert kinds == [panto.CompactionStart, panto.CompactionEnd, panto.MessageComplete]
            assert agent.conversation[0]["compaction"]["message_count"] == 1
            agent.import_(before)
            with pytest.raises(panto.InvalidRequestError):
                finish(agent.compact())
            assert agent.export() == before  # unchanged
