"""Host tools that run at the same time (docs/python.md, "Tools that run at the same time"):
sync handlers on worker threads, `async def` handlers on the loop of `async for` (or panto's
loop thread), sequential calls alone, results in call order, progress, and what canceling or
closing does to handlers that still run. Concurrency is shown by handlers that wait for each
other (a barrier every handler must reach), never by timing.

    PYTHONPATH=bindings-py PANTO_LIBRARY=zig-out/lib/libpanto.so \\
        .venv/bin/python -m pytest -q tests/python/test_tools_parallel.py
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Dict, List

import pytest

import panto
from panto._tool_runner import ToolRunner
from panto.emulator import Emulator
from test_tools import answer, new_agent, text, tool_results_sent, tool_use

pytestmark = pytest.mark.usefixtures("library")

# A bound for waits that only a bug makes long: a handler waiting for one that never starts.
BOUND = 10.0


def three_calls(name: str) -> Dict[str, Any]:
    return {"responses": [
        answer(tool_use("call_a", name, {"n": 1}), tool_use("call_b", name, {"n": 2}), tool_use("call_c", name, {"n": 3})),
        answer(text("Done.")),
    ]}


def results_of(events: List[Any]) -> List[Any]:
    return [(e.id, e.content, e.is_error) for e in events if isinstance(e, panto.ToolResult)]


def test_the_calls_of_a_message_run_at_the_same_time(provider: str) -> None:
    barrier = threading.Barrier(3, timeout=BOUND)  # broken unless all three wait at once

    @panto.tool
    def meet(n: int) -> str:
        """Waits for the others."""
        barrier.wait()
        return f"met {n}"

    with Emulator(scenario=three_calls("meet")) as emu, new_agent(emu, provider, tools=[meet]) as agent:
        events = list(agent.run("Go"))
        assert results_of(events) == [("call_a", "met 1", False), ("call_b", "met 2", False), ("call_c", "met 3", False)]
        sent = tool_results_sent(provider, emu.requests()[1])
        assert [(s["id"], s["content"]) for s in sent] == [("call_a", "met 1"), ("call_b", "met 2"), ("call_c", "met 3")]


def test_results_keep_call_order_whatever_order_the_handlers_end(provider: str) -> None:
    ended: List[int] = []
    done = {n: threading.Event() for n in (1, 2, 3)}

    @panto.tool
    def backwards(n: int) -> str:
        """Ends after the calls after it."""
        if n < 3:
            assert done[n + 1].wait(BOUND)
        ended.append(n)
        done[n].set()
        if n == 2:
            raise ValueError("two failed")
        return f"ended {n}"

    with Emulator(scenario=three_calls("backwards")) as emu, new_agent(emu, provider, tools=[backwards]) as agent:
        events = list(agent.run("Go"))
        assert ended == [3, 2, 1]
        assert results_of(events) == [("call_a", "ended 1", False), ("call_b", "ValueError: two failed", True), ("call_c", "ended 3", False)]
        assert [s["id"] for s in tool_results_sent(provider, emu.requests()[1])] == ["call_a", "call_b", "call_c"]


def test_async_tools_run_on_the_loop_of_async_for() -> None:
    loops: List[Any] = []

    @panto.tool
    async def meet(n: int) -> str:
        """Awaits the others, on the loop that iterates."""
        loops.append(asyncio.get_running_loop())
        gate = gates[n]
        gate.set()
        for g in gates.values():  # every handler started: they run at once on one loop
            await asyncio.wait_for(g.wait(), BOUND)
        return f"met {n}"

    async def main() -> List[Any]:
        gates.update({n: asyncio.Event() for n in (1, 2, 3)})
        with Emulator(scenario=three_calls("meet")) as emu, new_agent(emu, tools=[meet]) as agent:
            async with agent.run("Go") as stream:
                events = [e async for e in stream]
            assert loops == [asyncio.get_running_loop()] * 3
            return events

    gates: Dict[int, asyncio.Event] = {}
    events = asyncio.run(main())
    assert results_of(events) == [("call_a", "met 1", False), ("call_b", "met 2", False), ("call_c", "met 3", False)]


def test_async_and_sync_tools_together_under_a_plain_for() -> None:
    barrier = threading.Barrier(2, timeout=BOUND)
    where: Dict[str, str] = {}

    @panto.tool
    async def slow_async(n: int) -> str:
        """Async."""
        where["async"] = threading.current_thread().name
        await asyncio.to_thread(barrier.wait)
        return "async"

    @panto.tool
    def slow_sync(n: int) -> str:
        """Sync."""
        where["sync"] = threading.current_thread().name
        barrier.wait()
        return "sync"

    script = {"responses": [answer(tool_use("call_a", "slow_async", {"n": 1}), tool_use("call_b", "slow_sync", {"n": 2})),
                            answer(text("Done."))]}
    with Emulator(scenario=script) as emu, new_agent(emu, tools=[slow_async, slow_sync]) as agent:
        events = list(agent.run("Go"))
    assert results_of(events) == [("call_a", "async", False), ("call_b", "sync", False)]
    assert where == {"async": "panto-tool-loop", "sync": "panto-tool"}


def test_an_async_tool_called_by_hand_runs_on_pantos_loop() -> None:
    @panto.tool
    async def double(n: int) -> int:
        """Twice n."""
        await asyncio.sleep(0)
        return 2 * n

    assert double.is_async and double.invoke({"n": 21}) == "42"
    script = {"responses": [answer(tool_use("call_a", "double", {"n": 4})), answer(text("8."))]}
    with Emulator(scenario=script) as emu, new_agent(emu, tools=[double]) as agent:
        stream = agent.run("Go", run_tools=False)
        call = next(e for e in stream if isinstance(e, panto.ToolCallStart))
        assert stream.run_tool(call).content == "8"
        assert "".join(stream.text()) == "8."


class Blocked:
    """A sync and an async handler that block until released, and what happened to them."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.sync_started = threading.Event()
        self.async_started = threading.Event()
        self.async_canceled = threading.Event()
        self.sync_returned = threading.Event()

        @panto.tool
        def block_sync(n: int) -> str:
            """Blocks."""
            self.sync_started.set()
            self.release.wait(BOUND)
            self.sync_returned.set()
            return "late"

        @panto.tool
        async def block_async(n: int) -> str:
            """Blocks too."""
            self.async_started.set()
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                self.async_canceled.set()
                raise
            return "never"

        self.tools = [block_sync, block_async]

    def script(self) -> Dict[str, Any]:
        return {"responses": [
            answer(tool_use("call_a", "block_sync", {"n": 1}), tool_use("call_b", "block_async", {"n": 2})),
            answer(text("Next turn.")),
        ]}

    def when_both_started(self, then: Any) -> threading.Thread:
        def run() -> None:
            assert self.sync_started.wait(BOUND) and self.async_started.wait(BOUND)
            then()

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        return thread


@pytest.mark.parametrize("how", ["cancel", "close"])
def test_canceling_or_closing_while_handlers_run_returns_at_once(how: str) -> None:
    b = Blocked()
    with Emulator(scenario=b.script()) as emu, new_agent(emu, tools=b.tools) as agent:
        stream = agent.run("Go")
        thread = b.when_both_started(stream.cancel if how == "cancel" else stream.close)
        with pytest.raises(panto.CanceledError):
            for _ in stream:
                pass
        thread.join()
        # The async handler was canceled; the sync one still runs, its result to be dropped.
        assert b.async_canceled.wait(BOUND)
        assert not b.sync_returned.is_set()
        stream.close()
        calls = [blk for m in agent.conversation for blk in m["content"] if blk["type"] == "tool_result"]
        assert [(c["id"], c["is_error"]) for c in calls] == [("call_a", True), ("call_b", True)]
        b.release.set()
        assert b.sync_returned.wait(BOUND)
        # The agent goes on: the late result reached nothing.
        assert agent.complete("Again").text == "Next turn."
        assert len(emu.requests()) == 2


def test_report_progress_outside_a_tool_does_nothing_and_checks_its_arguments() -> None:
    panto.report_progress("nothing listens")
    panto.report_progress(fraction=0.5)
    with pytest.raises(ValueError):
        panto.report_progress("too far", 1.5)
    with pytest.raises(ValueError):
        panto.report_progress("not a number", float("nan"))
    with pytest.raises(TypeError):
        panto.report_progress(fraction="half")  # type: ignore[arg-type]


def test_the_sequential_rule_starts_calls_in_the_right_order() -> None:
    """ToolRunner alone, with calls marked as the library marks them: a sequential call
    starts after every earlier call ended, and no later call starts before it ends."""
    gates: Dict[str, threading.Event] = {}

    def handler(n: str) -> str:
        assert gates[n].wait(BOUND)
        return n

    tool = panto.Tool("t", handler=handler, input_schema={"type": "object", "properties": {"n": {"type": "string"}}})
    calls = [panto.ToolCallStart(f"id_{n}", "t", {"n": n}, True, n.startswith("S")) for n in ("a", "b", "S1", "c", "S2")]
    gates.update({c.input["n"]: threading.Event() for c in calls})
    runner = ToolRunner({c.id: c for c in calls})
    for c in calls:
        runner.schedule(c, tool)

    def running() -> List[str]:
        return sorted(runner._running)  # the calls started and not ended

    def end(n: str) -> List[str]:
        gates[n].set()
        items = runner.collect(True)
        while not any(kind == "result" and call.input["n"] == n for kind, call, _, _ in items):
            items += runner.collect(True)
        runner.start_ready(None)
        return running()

    runner.start_ready(None)
    assert running() == ["id_a", "id_b"]  # S1 waits for a and b
    assert end("a") == ["id_b"]
    assert end("b") == ["id_S1"]  # S1 alone: c waits for it
    assert end("S1") == ["id_c"]
    assert end("c") == ["id_S2"]
    assert end("S2") == []
    assert not runner.running
