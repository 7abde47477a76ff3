"""Conversations that last, from Python: export and import_ (round trips, refusals that name
the first problem and change nothing), message_count, truncate and drop_last (after a failed
turn), and the assistant messages' provider, model, stop reason and usage.

    PYTHONPATH=bindings-py PANTO_LIBRARY=zig-out/lib/libpanto.so \
        .venv/bin/python -m pytest -q tests/python/test_conversation.py
"""

from __future__ import annotations

import json
from typing import Any, Dict, List

import pytest

import panto
from panto.emulator import Emulator

pytestmark = pytest.mark.usefixtures("library")

USAGE = {"input_tokens": 7, "output_tokens": 2, "cache_read_tokens": 0, "cache_write_tokens": 0,
         "reasoning_tokens": 0}
HELLO = {"message": {"content": [{"type": "text", "text": "Hello world"}], "usage": USAGE}}
MODEL = {"anthropic": "claude-test", "openai": "gpt-test"}


def new_agent(emu: Emulator, provider: str = "anthropic", **kw: Any) -> panto.Agent:
    return panto.Agent(provider=provider, model=MODEL[provider], base_url=emu.url,
                       api_key="test-key", **kw)


def user(text: str) -> Dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def assistant(text: str, provider: str = "anthropic", usage: Dict[str, int] = USAGE,
              stop_reason: str = "end_turn") -> Dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}], "provider": provider,
            "model": MODEL[provider], "stop_reason": stop_reason, "usage": dict(usage)}


def finish(stream: panto.Stream) -> None:
    with stream:
        for _ in stream:
            pass


def test_assistant_messages_carry_provider_model_stop_reason_and_usage(provider: str) -> None:
    with Emulator(scenario={"responses": [HELLO]}) as emu, new_agent(emu, provider) as agent:
        finish(agent.run("Hi"))
        assert agent.conversation == [user("Hi"), assistant("Hello world", provider)]
        assert agent.message_count == 2


def test_export_is_versioned_and_import_takes_it_back(provider: str) -> None:
    with Emulator(scenario={"responses": [HELLO]}) as emu, new_agent(emu, provider) as agent:
        finish(agent.run("Hi"))
        text = agent.export()
        assert isinstance(text, str)
        document = json.loads(text)
        assert document == {"version": 1, "messages": agent.conversation}
        with new_agent(emu, provider) as other:
            assert other.message_count == 0
            other.import_(text)
            assert other.export() == text  # byte for byte
            assert other.message_count == 2
            other.import_(text.encode("utf-8"))  # bytes too
            other.import_(document)  # and the parsed dict
            assert other.export() == text


def test_import_refusals_name_the_first_problem_and_change_nothing() -> None:
    with Emulator(scenario={"responses": [HELLO]}) as emu, new_agent(emu) as agent:
        finish(agent.run("Hi"))
        before = agent.export()
        refused: List[Any] = [
            "{not json",
            {"version": 2, "messages": []},
            {"version": 1, "messages": [{"role": "system", "content": [{"type": "text", "text": "x"}]}]},
            {"version": 1, "messages": [user("Hi"), {"role": "user", "content": [
                {"type": "tool_result", "id": "call_9", "content": "x", "is_error": False}]}]},
        ]
        for document in refused:
            with pytest.raises(panto.ConversationError) as info:
                agent.import_(document)
            assert info.value.code == "conversation"
            assert info.value.message
            assert agent.export() == before
        with pytest.raises(panto.ConversationError, match="version 2"):
            agent.import_({"version": 2, "messages": []})
        with pytest.raises(panto.ConversationError, match=r"messages\[1\]\.content\[0\]"):
            agent.import_(refused[3])
        with pytest.raises(TypeError):
            agent.import_(42)  # type: ignore[arg-type]


def test_a_failed_turn_leaves_nothing_and_the_next_sends_one_user_message() -> None:
    failing = {"error": {"type": "overloaded_error", "message": "Overloaded"}}
    with Emulator(scenario={"responses": [failing, HELLO]}) as emu, \
            new_agent(emu, retry={"max_retries": 0}) as agent:
        with pytest.raises(panto.OverloadedError):
            finish(agent.run("Hello"))
        assert agent.conversation == []  # rolled back as it failed
        assert agent.rollback_turn() == 0  # nothing left to roll back
        finish(agent.run("Hello again"))
        last = emu.requests()[-1]["body"]["messages"]
        assert [m["role"] for m in last] == ["user"]
        assert agent.conversation == [user("Hello again"), assistant("Hello world")]


def test_truncate_and_drop_last_refusals_change_nothing() -> None:
    call = {"message": {"content": [{"type": "tool_use", "id": "toolu_1", "name": "lookup",
                                     "input": {"q": "x"}}], "usage": USAGE}}
    lookup = panto.Tool(name="lookup", description="Looks up.",
                        input_schema={"type": "object", "properties": {"q": {"type": "string"}}},
                        handler=lambda q: "Found.")
    with Emulator(scenario={"responses": [call, HELLO]}) as emu, new_agent(emu, tools=[lookup]) as agent:
        finish(agent.run("Look up x"))
        assert agent.message_count == 4
        with pytest.raises(panto.ConversationError):
            agent.truncate(2)  # the call without its result
        with pytest.raises(panto.InvalidArgumentError):
            agent.truncate(5)
        with pytest.raises(panto.InvalidArgumentError):
            agent.drop_last(5)
        with pytest.raises(panto.InvalidArgumentError):
            agent.truncate(-1)
        with pytest.raises(TypeError):
            agent.truncate("2")  # type: ignore[arg-type]
        assert agent.message_count == 4
        agent.truncate(3)
        with pytest.raises(panto.ConversationError):
            agent.drop_last()
        assert agent.message_count == 3
        agent.drop_last(3)
        assert agent.conversation == []


def test_edits_are_refused_while_a_turn_runs() -> None:
    with Emulator(scenario={"responses": [HELLO]}) as emu, new_agent(emu) as agent:
        finish(agent.run("Hi"))
        text = agent.export()
        stream = agent.run("Again")
        with pytest.raises(panto.BusyError):
            agent.truncate(0)
        with pytest.raises(panto.BusyError):
            agent.import_(text)
        stream.close()
        agent.truncate(2)  # no turn runs now
        assert agent.export() == text


def test_closed_agent() -> None:
    with Emulator(scenario={"responses": []}) as emu:
        agent = new_agent(emu)
        agent.close()
        for call in (agent.export, lambda: agent.import_("{}"), lambda: agent.message_count,
                     lambda: agent.truncate(0), agent.drop_last):
            with pytest.raises(panto.InvalidArgumentError):
                call()
