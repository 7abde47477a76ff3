"""Request parameters in the Python binding: Agent keywords and per-turn options reach the
request (and only that turn's), a refused one is a ConfigError that appends nothing,
`complete()`, the cache mark, the errors' retry_after and headers, request ids, and tool
progress and sequential calls through a real turn.

    PYTHONPATH=bindings-py PANTO_LIBRARY=zig-out/lib/libpanto.so \\
        .venv/bin/python -m pytest -q tests/python/test_requests.py
"""

from __future__ import annotations

import threading
from typing import Any, Dict, List

import pytest

import panto
from panto.emulator import Emulator
from test_tools import answer, new_agent, text, tool_use

pytestmark = pytest.mark.usefixtures("library")
BOUND = 10.0


def replies(*texts: str) -> Dict[str, Any]:
    return {"responses": [answer(text(t)) for t in texts]}


def test_agent_keywords_and_turn_options_reach_the_request() -> None:
    with Emulator(scenario=replies("one", "two")) as emu, new_agent(
        emu, temperature=0.3, top_p=0.9, stop="END", extra_body={"x_custom": [1]}, extra_headers={"x-team": "search"}
    ) as agent:
        assert agent.complete("first", temperature=0.0, max_tokens=50).text == "one"
        assert agent.complete("second").text == "two"
        first, second = emu.requests()
        assert first["body"]["temperature"] == 0.0 and first["body"]["max_tokens"] == 50
        assert second["body"]["temperature"] == 0.3  # the agent's configuration is unchanged
        for request in (first, second):
            body = request["body"]
            assert body["top_p"] == 0.9 and body["stop_sequences"] == ["END"] and body["x_custom"] == [1]
            assert request["headers"]["x-team"] == "search"


def test_server_tools_keyword_reaches_the_request_and_openai_refuses_it() -> None:
    search = {"type": "web_search_20250305", "name": "web_search", "max_uses": 2}
    with Emulator(scenario=replies("one", "two")) as emu, new_agent(emu, server_tools=(search,)) as agent:
        agent.complete("first")
        agent.complete("second", server_tools=None)
        first, second = emu.requests()
        assert first["body"]["tools"] == [search]
        assert "tools" not in second["body"]
        with pytest.raises(TypeError):
            agent.set_config(server_tools=search)  # one dict, not a list of them
        with pytest.raises(panto.ConfigError, match="provider openai cannot take them"):
            agent.set_config(provider="openai", model="gpt-test")


def test_openai_parameters_and_a_tool_as_tool_choice() -> None:
    @panto.tool
    def lookup(q: str) -> str:
        """Looks up."""
        return "found"

    script = {"responses": [answer(tool_use("call_1", "lookup", {"q": "x"})), answer(text("ok"))]}
    with Emulator(scenario=script) as emu, new_agent(emu, "openai", tools=[lookup], seed=7,
                                                     presence_penalty=0.5, stop=["a", "b"]) as agent:
        agent.complete("?", tool_choice=lookup)
        body = emu.requests()[0]["body"]
        assert (body["seed"], body["presence_penalty"], body["stop"]) == (7, 0.5, ["a", "b"])
        assert body["tool_choice"] == {"type": "function", "function": {"name": "lookup"}}


def test_a_refused_option_is_a_config_error_and_appends_nothing() -> None:
    with Emulator(scenario=replies("never")) as emu, new_agent(emu, "openai") as agent:
        with pytest.raises(panto.ConfigError, match="top_k"):
            agent.run("Hi", top_k=3)
        assert agent.message_count == 0
        with pytest.raises(panto.ConfigError, match="top_k"):
            panto.Agent(provider="openai", model="m", api_key="k", top_k=3)
        with pytest.raises(TypeError):
            agent.run("Hi", metadata=object())  # not JSON: refused before the library
        assert emu.requests() == []


def test_a_cache_breakpoint_is_kept_on_the_user_message() -> None:
    with Emulator(scenario=replies("ok")) as emu, new_agent(emu) as agent:
        agent.complete("Long document...", cache_breakpoint=True)
        assert agent.conversation[0].get("cache") is True


def test_errors_carry_retry_after_and_headers_and_turns_their_request_ids() -> None:
    script = {"responses": [
        {"error": {"type": "rate_limit_error", "message": "Slow down"}, "headers": {"retry-after": "7"}},
        answer(text("fine")),
    ]}
    with Emulator(scenario=script) as emu, new_agent(emu, retry={"max_retries": 0}) as agent:
        with pytest.raises(panto.RateLimitError) as info:
            agent.complete("Hi")
        assert info.value.retry_after == 7.0 and info.value.headers["retry-after"] == "7"
        stream = agent.run("Again")
        starts = [e for e in stream if isinstance(e, panto.MessageStart)]
        assert stream.request_ids == [starts[0].request_id] and starts[0].request_id
        assert emu.requests()[1]["method"] == "POST"


def test_progress_comes_while_the_tools_run_and_sequential_calls_run_alone() -> None:
    running: List[int] = []
    lock = threading.Lock()
    barrier = threading.Barrier(2, timeout=BOUND)
    overlaps: List[int] = []

    def enter() -> None:
        with lock:
            running.append(1)

    def leave() -> None:
        with lock:
            running.pop()

    @panto.tool
    def step(n: int) -> str:
        """Runs beside the other step."""
        enter()
        try:
            panto.report_progress(f"step {n}")
            barrier.wait()
            panto.report_progress(fraction=1)
            return f"step {n}"
        finally:
            leave()

    @panto.tool(sequential=True)
    def commit(n: int) -> str:
        """Runs alone."""
        enter()
        try:
            overlaps.append(len(running) - 1)
            return "committed"
        finally:
            leave()

    script = {"responses": [answer(tool_use("c1", "step", {"n": 1}), tool_use("c2", "step", {"n": 2}),
                                   tool_use("c3", "commit", {"n": 3})), answer(text("Done."))]}
    with Emulator(scenario=script) as emu, new_agent(emu, tools=[step, commit]) as agent:
        events = list(agent.run("Go"))
    calls = [(e.id, e.sequential) for e in events if isinstance(e, panto.ToolCallStart)]
    assert calls == [("c1", False), ("c2", False), ("c3", True)]
    progress = [(e.id, e.name, e.text, e.fraction) for e in events if isinstance(e, panto.ToolProgress)]
    for call in ("c1", "c2"):
        assert [p[2:] for p in progress if p[0] == call] == [(f"step {call[1]}", None), ("", 1.0)]
    kinds = [e.kind for e in events]
    last_start = max(i for i, k in enumerate(kinds) if k == "tool_call_start")
    first_result = kinds.index("tool_result")
    assert all(last_start < i < first_result for i, k in enumerate(kinds) if k == "tool_progress")
    assert overlaps == [0]
