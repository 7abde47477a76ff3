"""The Python binding against the real libpanto and the provider emulator.

    PYTHONPATH=bindings-py PANTO_LIBRARY=zig-out/lib/libpanto.so \
        .venv/bin/python -m pytest -q tests/python/test_binding.py
"""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, List, Tuple, Type

import pytest

import panto
from panto import _native
from panto.emulator import Emulator

ROOT = Path(__file__).resolve().parents[2]

PATHS = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions"}
# What each provider says for a normal end of turn.
PROVIDER_END_TURN = {"anthropic": "end_turn", "openai": "stop"}

HELLO = {"message": {"content": [{"type": "text", "text": "Hello world"}], "stop_reason": "end_turn",
                     "usage": {"input_tokens": 7, "output_tokens": 2}}}


# Every test here needs the library (conftest.py fails them clearly when it is missing).
pytestmark = pytest.mark.usefixtures("library")


def scenario(*responses: Dict[str, Any]) -> Dict[str, Any]:
    return {"responses": list(responses)}


def error_response(status: int, type_: str, message: str) -> Dict[str, Any]:
    return {"status": status, "error": {"type": type_, "message": message}}


def new_agent(emu: Emulator, provider: str = "anthropic", **kw: Any) -> panto.Agent:
    return panto.Agent(provider=provider, model="test-model", base_url=emu.url, api_key="test-key", **kw)


def user(text: str) -> Dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def assistant(text: str, stop_reason: str = "end_turn") -> Dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}], "stop_reason": stop_reason}


def blocks_and_stop(conversation: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The messages without who made them and their usage (test_conversation.py checks those)."""
    return [{k: v for k, v in m.items() if k not in ("provider", "model", "usage")} for m in conversation]


def texts(conversation: List[Dict[str, Any]]) -> List[Tuple[str, List[str]]]:
    """(role, [text of each text block]) per message: the shape every provider shares."""
    return [(m["role"], [b["text"] for b in m["content"] if b["type"] == "text"]) for m in conversation]


# ---- a text turn ---------------------------------------------------------------------------


def test_text_turn(provider: str) -> None:
    with Emulator(scenario=scenario(HELLO)) as emu:
        agent = new_agent(emu, provider)
        stream = agent.run("Hi")
        assert emu.requests() == []  # nothing is sent before the first next()
        events = list(stream)

        start, block_start, *deltas, block_done, end, done = events
        assert isinstance(start, panto.MessageStart) and start.kind == "message_start"
        assert start.id and isinstance(start.id, str)
        assert start.model
        assert block_start == panto.BlockStart(index=0, block_kind="text")
        assert deltas and all(isinstance(d, panto.ContentDelta) for d in deltas)
        assert all((d.index, d.block_kind, d.kind) == (0, "text", "content_delta") for d in deltas)
        assert "".join(d.text for d in deltas) == "Hello world"
        assert block_done == panto.BlockComplete(index=0, block_kind="text", text="Hello world")
        # One assistant message: its MessageEnd says what MessageComplete says for the turn.
        assert isinstance(end, panto.MessageEnd) and end.kind == "message_end"
        assert isinstance(done, panto.MessageComplete)
        assert done.stop_reason == end.stop_reason == "end_turn"
        assert done.provider_stop_reason == end.provider_stop_reason == PROVIDER_END_TURN[provider]
        assert done.usage.output_tokens == 2
        assert done.usage.input_tokens == 7
        assert end.usage == done.usage

        # The end is sticky.
        with pytest.raises(StopIteration):
            next(stream)
        with pytest.raises(StopIteration):
            next(stream)
        assert stream.done and stream.error is None

        (request,) = emu.requests()
        assert request["path"] == PATHS[provider]
        assert request["body"]["model"] == "test-model"
        assert request["body"]["stream"] is True
        assert texts(agent.conversation) == [("user", ["Hi"]), ("assistant", ["Hello world"])]
        stream.close()
        agent.close()


def test_context_managers_and_text() -> None:
    with Emulator(scenario=scenario(HELLO)) as emu:
        with new_agent(emu) as agent:
            with agent.run("Hi") as stream:
                assert "".join(stream.text()) == "Hello world"
            assert stream.closed and stream.done
            with pytest.raises(StopIteration):  # still sticky once closed
                next(stream)
            stream.close()  # idempotent
        assert agent.closed
        agent.close()  # idempotent
        with pytest.raises(panto.Error):
            agent.run("again")


def test_unicode_round_trip() -> None:
    reply = "héllo wörld ✓ 🎉"
    with Emulator(scenario=scenario({"message": {"content": [{"type": "text", "text": reply}]}})) as emu:
        with new_agent(emu, system="Be brief ✓") as agent, agent.run("ça va? 🙂") as stream:
            assert "".join(stream.text()) == reply
            body = emu.requests()[0]["body"]
            assert "ça va? 🙂" in str(body) and "Be brief ✓" in str(body)
            assert texts(agent.conversation) == [("user", ["ça va? 🙂"]), ("assistant", [reply])]


def test_config_is_sent(provider: str) -> None:
    with Emulator(scenario=scenario(HELLO)) as emu:
        with new_agent(emu, provider, max_tokens=123) as agent, agent.run("Hi") as stream:
            list(stream)
        (request,) = emu.requests()
        assert request["body"].get("max_tokens", request["body"].get("max_completion_tokens")) == 123
        assert "test-key" in request["headers"].get("x-api-key", "") + request["headers"].get("authorization", "")


# ---- the final message ---------------------------------------------------------------------


def test_final_message_of_a_text_turn(provider: str) -> None:
    with Emulator(scenario=scenario(HELLO)) as emu, new_agent(emu, provider) as agent:
        with agent.run("Hi") as stream:
            message = stream.final_message()
            assert stream.done
            assert stream.final_message() == message  # again: the same message
        assert isinstance(message, panto.AssistantMessage)
        assert message.id and message.model
        assert message.content == (panto.TextBlock("Hello world"),)
        assert message.content[0].kind == "text"
        assert message.text == "Hello world" and message.tool_calls == ()
        assert message.stop_reason == "end_turn"
        assert message.provider_stop_reason == PROVIDER_END_TURN[provider]
        assert message.usage == message.turn_usage == panto.Usage(input_tokens=7, output_tokens=2)
        with pytest.raises(dataclasses.FrozenInstanceError):
            message.id = "x"  # type: ignore[misc]


def test_final_message_after_partial_iteration() -> None:
    with Emulator(scenario=scenario(HELLO, HELLO)) as emu, new_agent(emu) as agent:
        with agent.run("Hi") as stream:  # MessageStart and BlockStart already read
            start = next(stream)
            assert isinstance(start, panto.MessageStart)
            assert isinstance(next(stream), panto.BlockStart)
            message = stream.final_message()
        assert message.id == start.id and message.text == "Hello world"
        with agent.run("Hi") as stream:  # a partial text() loop, then the rest
            first = next(stream.text())
            assert first and "Hello world".startswith(first)
            assert stream.final_message().text == "Hello world"


def test_final_message_of_a_tool_turn(provider: str) -> None:
    calls: List[str] = []

    @panto.tool
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        calls.append(city)
        return "sunny"

    first = {"message": {"content": [{"type": "text", "text": "Let me check."},
                                     {"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                                      "input": {"city": "Paris"}}],
                         "stop_reason": "tool_use", "usage": {"input_tokens": 5, "output_tokens": 3}}}
    second = {"message": {"content": [{"type": "text", "text": "Sunny in Paris."}], "stop_reason": "end_turn",
                          "usage": {"input_tokens": 9, "output_tokens": 4}}}
    with Emulator(scenario=scenario(first, second)) as emu, new_agent(emu, provider, tools=[get_weather]) as agent:
        with agent.run("Weather in Paris?") as stream:
            message = stream.final_message()
        assert calls == ["Paris"]  # the tool ran, as in a for loop
        assert len(emu.requests()) == 2
        # The message after the tool round, not the one with the call.
        assert message.content == (panto.TextBlock("Sunny in Paris."),)
        assert message.stop_reason == "end_turn" and message.provider_stop_reason == PROVIDER_END_TURN[provider]
        assert message.usage == panto.Usage(input_tokens=9, output_tokens=4)
        assert message.turn_usage == panto.Usage(input_tokens=14, output_tokens=7)


def test_final_message_blocks_in_order(provider: str) -> None:
    # A message cut by max_tokens after a tool call: the call is not run, and it is the final one.
    answer = {"message": {"content": [{"type": "thinking", "thinking": "hmm", "signature": "sig"},
                                      {"type": "text", "text": "Calling."},
                                      {"type": "tool_use", "id": "toolu_1", "name": "lookup",
                                       "input": {"q": "x", "n": [1, 2]}}],
                          "stop_reason": "max_tokens"}}
    with Emulator(scenario=scenario(answer)) as emu, new_agent(emu, provider) as agent:
        with agent.run("Hi") as stream:
            message = stream.final_message()
    thinking, text, call = message.content
    assert thinking == panto.ThinkingBlock("hmm") and thinking.kind == "thinking"
    assert text == panto.TextBlock("Calling.")
    assert isinstance(call, panto.ToolCallBlock) and call.kind == "tool_call"
    assert (call.id, call.name, call.input) == ("toolu_1", "lookup", {"q": "x", "n": [1, 2]})
    assert json.loads(call.raw_input) == call.input
    assert message.tool_calls == (call,)
    assert message.stop_reason == "max_tokens"


def test_final_message_continues_after_a_submitted_result() -> None:
    @panto.tool
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return "sunny"

    first = {"message": {"content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                                      "input": {"city": "Paris"}}], "stop_reason": "tool_use"}}
    with Emulator(scenario=scenario(first, HELLO)) as emu, new_agent(emu, tools=[get_weather]) as agent:
        with agent.run("Hi", run_tools=False) as stream:
            with pytest.raises(panto.ResultPendingError):  # not sticky: answer, then go on
                stream.final_message()
            (pending,) = stream.pending_calls
            stream.submit_tool_result(pending.id, "rain")
            assert stream.final_message().text == "Hello world"
        assert emu.requests()[1]["body"]["messages"][-1]["content"][0]["content"] == "rain"


def test_final_message_after_a_retry_has_only_the_new_attempt() -> None:
    # An error event before any content is retried: the message starts over.
    broken = dict(HELLO, stream_error={"type": "overloaded_error", "message": "Overloaded", "after_events": 1})
    with Emulator(scenario=scenario(broken, HELLO)) as emu:
        with new_agent(emu, retry={"initial_delay_ms": 1}) as agent, agent.run("Hi") as stream:
            message = stream.final_message()
        assert len(emu.requests()) == 2
        assert message.content == (panto.TextBlock("Hello world"),)


def test_final_message_raises_the_turn_error(provider: str) -> None:
    answer = dict(HELLO, stream_error={"type": "overloaded_error", "message": "Overloaded", "after_events": 3})
    with Emulator(scenario=scenario(answer)) as emu, new_agent(emu, provider) as agent, agent.run("Hi") as stream:
        with pytest.raises(panto.OverloadedError) as info:
            stream.final_message()
        assert info.value.error_type == "overloaded_error"
        assert stream.error is info.value
        with pytest.raises(panto.OverloadedError):  # sticky, as next() is
            stream.final_message()
    with Emulator(scenario=scenario(error_response(401, "authentication_error", "bad key"))) as emu:
        with new_agent(emu, provider) as agent, agent.run("Hi") as stream:
            with pytest.raises(panto.AuthenticationError):
                stream.final_message()


# ---- multi-turn -----------------------------------------------------------------------------


def test_multi_turn_conversation(provider: str) -> None:
    second = {"message": {"content": [{"type": "text", "text": "Fine, thanks"}]}}
    with Emulator(scenario=scenario(HELLO, second)) as emu, new_agent(emu, provider) as agent:
        with agent.run("Hi") as stream:
            assert "".join(stream.text()) == "Hello world"
        with agent.run("How are you?") as stream:
            assert "".join(stream.text()) == "Fine, thanks"
        assert texts(agent.conversation) == [
            ("user", ["Hi"]),
            ("assistant", ["Hello world"]),
            ("user", ["How are you?"]),
            ("assistant", ["Fine, thanks"]),
        ]
        first, again = emu.requests()
        sent = [m for m in again["body"]["messages"] if m["role"] != "system"]
        assert [m["role"] for m in sent] == ["user", "assistant", "user"]
        assert "Hello world" in str(sent[1]["content"])


# ---- errors --------------------------------------------------------------------------------


def test_authentication_error(provider: str) -> None:
    with Emulator(scenario=scenario(error_response(401, "authentication_error", "invalid x-api-key"))) as emu:
        with new_agent(emu, provider) as agent, agent.run("Hi") as stream:
            with pytest.raises(panto.AuthenticationError) as info:
                next(stream)
            err = info.value
            assert isinstance(err, panto.Error)
            assert err.code == "authentication"
            assert err.status == _native.ERR_AUTHENTICATION
            assert err.http_status == 401
            assert err.error_type == "authentication_error"
            assert "invalid x-api-key" in err.message
            assert err.request_id == "req_emu_0001"
            assert "test-key" not in str(err)
            assert stream.error is err

            # Sticky: the same error again, and again.
            for _ in range(2):
                with pytest.raises(panto.AuthenticationError) as again:
                    next(stream)
                assert (again.value.code, again.value.http_status, again.value.error_type, again.value.message) == (
                    err.code,
                    err.http_status,
                    err.error_type,
                    err.message,
                )
            assert agent.conversation == []  # the failed turn was rolled back
            assert len(emu.requests()) == 1  # no retry of a 401
        with pytest.raises(panto.AuthenticationError):  # still sticky once closed
            next(stream)


@pytest.mark.parametrize(
    "status,type_,cls,retried",
    [
        (400, "invalid_request_error", panto.InvalidRequestError, False),
        (403, "permission_error", panto.PermissionDeniedError, False),
        (404, "not_found_error", panto.NotFoundError, False),
        (429, "rate_limit_error", panto.RateLimitError, True),
        (500, "api_error", panto.ServerError, True),
        (529, "overloaded_error", panto.OverloadedError, True),
    ],
)
def test_http_errors_map_to_classes(status: int, type_: str, cls: Type[panto.Error], retried: bool) -> None:
    answer = error_response(status, type_, "scripted failure")
    retry = panto.RetryPolicy(max_retries=1, initial_delay_ms=1, max_delay_ms=1)
    with Emulator(scenario={"responses": [answer], "repeat_last": True}) as emu:
        with new_agent(emu, retry=retry) as agent, agent.run("Hi") as stream:
            events = []
            with pytest.raises(cls) as info:
                for ev in stream:
                    events.append(ev)
            assert info.value.http_status == status
            assert info.value.error_type == type_
            assert info.value.status == cls.STATUS
        # 429 and 5xx are retried (once here), the others not.
        assert [(e.kind, e.http_status) for e in events] == ([("provider_retry", status)] if retried else [])
        assert len(emu.requests()) == (2 if retried else 1)


def test_error_in_the_middle_of_the_stream() -> None:
    answer = dict(HELLO, stream_error={"type": "overloaded_error", "message": "Overloaded", "after_events": 3})
    with Emulator(scenario=scenario(answer)) as emu, new_agent(emu) as agent, agent.run("Hi") as stream:
        seen: List[panto.Event] = []
        with pytest.raises(panto.OverloadedError) as info:
            for ev in stream:
                seen.append(ev)
        assert isinstance(seen[0], panto.MessageStart)
        assert info.value.error_type == "overloaded_error"
        assert agent.conversation == []  # a failed message is not kept: the turn is rolled back


def test_connection_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    url = f"http://127.0.0.1:{port}"
    with panto.Agent(provider="anthropic", model="m", base_url=url, api_key="k", retry={"max_retries": 0}) as agent:
        with agent.run("Hi") as stream:
            with pytest.raises(panto.APIConnectionError) as info:
                next(stream)
            assert info.value.http_status is None
            assert info.value.code == "connection"
            assert info.value.error_type == "connection_error"
    # Retried by default: each retry is an event, then the error.
    retry = panto.RetryPolicy(max_retries=2, initial_delay_ms=1, max_delay_ms=5)
    with panto.Agent(provider="anthropic", model="m", base_url=url, api_key="k", retry=retry) as agent:
        with agent.run("Hi") as stream:
            first, second = next(stream), next(stream)
            assert isinstance(first, panto.ProviderRetry) and isinstance(second, panto.ProviderRetry)
            assert (first.attempt, second.attempt) == (1, 2)
            assert first.http_status is None and "connection" in first.reason
            assert 0 <= first.delay_ms <= 5
            with pytest.raises(panto.APIConnectionError):
                next(stream)


def test_protocol_error_on_a_cut_stream() -> None:
    # Cut before its content: retried, and cut again (repeat_last).
    cut = dict(HELLO, fault={"after_bytes": 200, "kind": "close"})
    retry = panto.RetryPolicy(max_retries=1, initial_delay_ms=1, max_delay_ms=1)
    with Emulator(scenario={"responses": [cut], "repeat_last": True}) as emu:
        with new_agent(emu, retry=retry) as agent, agent.run("Hi") as stream:
            with pytest.raises((panto.ProtocolError, panto.APIConnectionError)):
                list(stream)
        assert len(emu.requests()) == 2


def test_busy_while_a_stream_is_unfinished() -> None:
    with Emulator(scenario={"responses": [HELLO], "repeat_last": True}) as emu, new_agent(emu) as agent:
        first = agent.run("one")
        with pytest.raises(panto.BusyError) as info:
            agent.run("two")
        assert info.value.code == "busy" and info.value.status == _native.ERR_BUSY
        next(first)  # started, still unfinished
        with pytest.raises(panto.BusyError):
            agent.run("two")
        list(first)  # finished: another turn may start, even before first is closed
        with agent.run("three") as third:
            assert "".join(third.text()) == "Hello world"
        first.close()
        assert [r for r, _ in texts(agent.conversation)] == ["user", "assistant", "user", "assistant"]


def test_closing_an_unfinished_stream_cancels_it() -> None:
    with Emulator(scenario={"responses": [HELLO], "repeat_last": True}) as emu, new_agent(emu) as agent:
        stream = agent.run("Hi")
        seen = [next(stream) for _ in range(3)]  # MessageStart, BlockStart, "Hello "
        assert seen[2] == panto.ContentDelta(0, "text", "Hello ")
        stream.close()
        assert stream.closed and not stream.done
        for _ in range(2):  # sticky
            with pytest.raises(panto.CanceledError) as info:
                next(stream)
            assert info.value.error_type == "canceled_error"
        assert stream.error is info.value
        # What the model had said stays, marked aborted.
        assert blocks_and_stop(agent.conversation) == [user("Hi"), assistant("Hello ", "aborted")]
        with agent.run("Again") as again:  # no longer busy
            assert "".join(again.text()) == "Hello world"
        assert texts(agent.conversation)[2:] == [("user", ["Again"]), ("assistant", ["Hello world"])]
        assert agent.conversation[3]["stop_reason"] == "end_turn"
        sent = emu.requests()[-1]["body"]["messages"]
        assert [m["role"] for m in sent] == ["user", "assistant", "user"]
        assert sent[1]["content"] == [{"type": "text", "text": "Hello "}]


def test_closing_a_finished_or_unstarted_stream_adds_nothing() -> None:
    with Emulator(scenario={"responses": [HELLO], "repeat_last": True}) as emu, new_agent(emu) as agent:
        agent.run("Hi").close()  # never iterated: nothing was asked, nothing stays
        assert agent.conversation == []
        assert emu.requests() == []
        with agent.run("Again") as stream:
            assert "".join(stream.text()) == "Hello world"
        assert stream.done and stream.error is None
        assert blocks_and_stop(agent.conversation) == [user("Again"), assistant("Hello world")]


def test_bad_config() -> None:
    with pytest.raises(panto.ConfigError) as info:
        panto.Agent(provider="no-such-provider", model="m", api_key="k")
    assert info.value.code == "config"
    assert info.value.status == _native.ERR_CONFIG
    assert info.value.message
    with pytest.raises(panto.ConfigError) as info:
        panto.Agent.from_config({"provider": "anthropic", "model": "m", "api_key": "k", "no_such_key": 1})
    assert "no_such_key" in info.value.message
    with pytest.raises(panto.ConfigError):
        panto.Agent.from_config({"provider": "anthropic", "api_key": "k"})  # no model
    with pytest.raises(panto.ConfigError):
        panto.Agent(provider="anthropic", model="m", api_key="k", max_tokens="many")  # type: ignore[arg-type]


def test_text_goes_to_the_library_as_it_is() -> None:
    # The library's rule, the same in every language: a NUL is a character like any other,
    # and what is not UTF-8 (a lone surrogate) becomes U+FFFD.
    # (No prompt-cache breakpoint on the message: the body is the text alone.)
    with Emulator(scenario={"responses": [HELLO, HELLO]}) as emu, new_agent(emu, cache={"mode": "off"}) as agent:
        assert "".join(agent.run("nul\0inside").text()) == "Hello world"
        assert agent.conversation[0]["content"] == [{"type": "text", "text": "nul\0inside"}]
        assert emu.requests()[0]["body"]["messages"] == [user("nul\0inside")]  # sent as \u0000
        assert "".join(agent.run("a\ud800b").text()) == "Hello world"
        sent = agent.conversation[2]["content"][0]["text"]
        assert sent[0] == "a" and sent[-1] == "b" and set(sent[1:-1]) == {"\ufffd"}
        with pytest.raises(TypeError):
            agent.run(b"bytes")  # type: ignore[arg-type]
        assert len(agent.conversation) == 4


# ---- lifetimes -----------------------------------------------------------------------------


def test_closing_the_agent_first_frees_its_streams() -> None:
    with Emulator(scenario=scenario(HELLO)) as emu:
        agent = new_agent(emu)
        stream = agent.run("Hi")
        next(stream)
        agent.close()
        assert stream.closed
        with pytest.raises(panto.CanceledError):
            next(stream)
        stream.close()


def test_a_stream_keeps_its_agent_alive() -> None:
    with Emulator(scenario=scenario(HELLO)) as emu:
        stream = new_agent(emu).run("Hi")  # no other reference to the agent
        gc.collect()
        assert "".join(stream.text()) == "Hello world"
        assert texts(stream.agent.conversation)[-1] == ("assistant", ["Hello world"])


def test_garbage_and_shutdown_in_any_order(tmp_path: Path) -> None:
    # In a child process: a wrong freeing order would crash it, not this test run.
    code = textwrap.dedent(
        """
        import gc, panto
        from panto.emulator import Emulator
        HELLO = {"message": {"content": [{"type": "text", "text": "Hello world"}]}}
        emu = Emulator(scenario={"responses": [HELLO], "repeat_last": True})
        def agent():
            return panto.Agent(provider="anthropic", model="m", base_url=emu.url, api_key="k")
        for _ in range(20):
            # a cycle holding an agent and its unfinished stream: collected together
            a = agent(); s = a.run("Hi"); next(s)
            box = [a, s]; box.append(box); s.box = box
            del a, s, box
            gc.collect()
            # the agent's last reference goes first
            a = agent(); s = a.run("Hi"); next(s); del a; del s
        # left for interpreter shutdown: an agent with an open stream. The emulator goes
        # first: its handler threads are joined at exit, before objects are finalized.
        keep_agent = agent(); keep_stream = keep_agent.run("Hi"); next(keep_stream)
        emu.close()
        print("ok")
        """
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT / "bindings-py"), PANTO_LIBRARY=_native.LIB.path)  # type: ignore[union-attr]
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
    assert "Exception ignored" not in proc.stderr, proc.stderr


# ---- names and versions --------------------------------------------------------------------


def test_names_come_from_the_library(library: _native.Library) -> None:
    assert library.event_kind_name(_native.EVENT_MESSAGE_START) == panto.MessageStart("", "").kind
    assert library.event_kind_name(_native.EVENT_BLOCK_START) == panto.BlockStart(0, "").kind
    assert library.event_kind_name(_native.EVENT_CONTENT_DELTA) == panto.ContentDelta(0, "", "").kind
    assert library.event_kind_name(_native.EVENT_BLOCK_COMPLETE) == panto.BlockComplete(0, "", "").kind
    assert library.event_kind_name(_native.EVENT_MESSAGE_COMPLETE) == panto.MessageComplete("", "", panto.Usage()).kind
    assert library.event_kind_name(_native.EVENT_MESSAGE_END) == panto.MessageEnd("", "", panto.Usage()).kind
    assert library.event_kind_name(_native.EVENT_TOOL_DETAILS) == panto.ToolDetails(0, "", "").kind
    assert library.event_kind_name(_native.EVENT_TOOL_CALL_START) == panto.ToolCallStart("", "", {}, False).kind
    assert library.event_kind_name(_native.EVENT_TOOL_RESULT) == panto.ToolResult("", "", "", False).kind
    assert library.block_kind_name(_native.BLOCK_TOOL_CALL) == "tool_call"
    assert library.block_kind_name(_native.BLOCK_TEXT) == "text"
    assert library.status_name(_native.ERR_AUTHENTICATION) == "authentication"
    assert library.status_name(12345) == "unknown"
    assert library.status_name(_native.ERR_RESULT_PENDING) == "result_pending"
    assert library.status_name(_native.ERR_NO_SUCH_CALL) == "no_such_call"
    for cls in (
        panto.AuthenticationError,
        panto.ConfigError,
        panto.APITimeoutError,
        panto.CapabilityError,
        panto.ResultPendingError,
        panto.NoSuchCallError,
        panto.ToolLoopError,
    ):
        assert cls("x").code == library.status_name(cls.STATUS) != "unknown"


def test_versions() -> None:
    assert panto.ABI_VERSION == 3
    assert panto.library_version() == panto.__version__
    assert Path(panto.library_path()).is_file()


def test_abi_mismatch_in_process(monkeypatch: pytest.MonkeyPatch, library: _native.Library) -> None:
    monkeypatch.setattr(_native, "ABI_VERSION", _native.ABI_VERSION + 1)
    with pytest.raises(ImportError, match=r"ABI version"):
        _native.Library(library.path)


def test_huge_usage_counts_saturate_the_turn_usage(provider: str) -> None:
    # A server's token counts are not trusted: two messages of one turn that each claim
    # 2**64 - 1 output tokens once overflowed the turn's sum and aborted the process.
    huge = 2**64 - 1

    @panto.tool
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return "sunny"

    first = {"message": {"content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                                      "input": {"city": "Paris"}}],
                         "stop_reason": "tool_use", "usage": {"input_tokens": 5, "output_tokens": huge}}}
    second = {"message": {"content": [{"type": "text", "text": "Sunny."}], "stop_reason": "end_turn",
                          "usage": {"input_tokens": 9, "output_tokens": huge}}}
    with Emulator(scenario=scenario(first, second)) as emu, new_agent(emu, provider, tools=[get_weather]) as agent:
        with agent.run("Weather in Paris?") as stream:
            message = stream.final_message()
        assert message.usage.output_tokens == huge
        assert message.turn_usage == panto.Usage(input_tokens=14, output_tokens=huge)
        assert [r for r, _ in texts(agent.conversation)] == ["user", "assistant", "user", "assistant"]
