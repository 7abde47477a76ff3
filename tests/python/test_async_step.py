"""`async for` on the non-blocking step (docs/python.md, "async"): the turns of one loop are
stepped by panto_step_events and wait on the loop (the stream's socket, its deadline), with no
worker thread per stream."""
from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
from typing import Any, Dict, List

import pytest

import panto
from panto import _native
from panto.emulator import Emulator
from test_resilience import assistant, blocks_and_stop, stalled, user
from test_tools import answer, new_agent, text, tool_results_sent, tool_use

pytestmark = pytest.mark.usefixtures("library")

NO_RETRY = panto.RetryPolicy(max_retries=0)


def can_step() -> bool:
    """Whether this platform's library steps streams (else `async for` takes worker threads)."""
    import platform
    import sys

    return sys.platform == "linux" and platform.machine() in ("x86_64", "aarch64")


needs_step = pytest.mark.skipif(not can_step(), reason="panto_step_events needs Linux on x86_64 or aarch64")


class NoThreads(concurrent.futures.ThreadPoolExecutor):
    """A loop's default executor that refuses work: `asyncio.to_thread` fails with it."""

    def submit(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        raise AssertionError("asyncio.to_thread was used")


def not_the_emulators(thread: threading.Thread) -> bool:
    return thread.name != "panto-emulator" and "process_request_thread" not in thread.name


@needs_step
def test_200_turns_on_one_loop_without_a_thread_each() -> None:
    n = 200
    scenario = {"responses": [dict(answer(text(f"answer {i}")), delay_ms=300) for i in range(n)]}
    before = sum(1 for t in threading.enumerate() if not_the_emulators(t))
    most = [0]

    async def turn(agent: panto.Agent) -> str:
        out = []
        async with agent.run("Hi") as stream:
            async for ev in stream:
                # Python threads besides the emulator's, whenever an event comes.
                most[0] = max(most[0], sum(1 for t in threading.enumerate() if not_the_emulators(t)))
                if isinstance(ev, panto.ContentDelta):
                    out.append(ev.text)
        return "".join(out)

    async def main(url: str) -> List[str]:
        asyncio.get_running_loop().set_default_executor(NoThreads())
        agents = [panto.Agent(provider="anthropic", model="m", base_url=url, api_key="k") for _ in range(n)]
        try:
            return await asyncio.gather(*(turn(a) for a in agents))
        finally:
            for a in agents:
                a.close()

    with Emulator(scenario=scenario) as emu:
        texts = asyncio.run(main(emu.url))
        assert len(emu.requests()) == n
    assert sorted(texts) == sorted(f"answer {i}" for i in range(n))
    assert most[0] <= before


@needs_step
def test_a_tool_round_with_a_sync_and_an_async_handler(provider: str) -> None:
    ran: Dict[str, Any] = {}

    @panto.tool
    def double(n: int) -> str:
        """Doubles, in a worker thread."""
        ran["double"] = threading.current_thread() is not threading.main_thread()
        return str(2 * n)

    @panto.tool
    async def negate(n: int) -> str:
        """Negates, on the loop of `async for`."""
        ran["negate"] = asyncio.get_running_loop()
        return str(-n)

    scenario = {"responses": [
        answer(tool_use("call_a", "double", {"n": 21}), tool_use("call_b", "negate", {"n": 5})),
        answer(text("Done.")),
    ]}

    async def main(url_agent: panto.Agent) -> List[panto.Event]:
        ran["loop"] = asyncio.get_running_loop()
        async with url_agent.run("Go") as stream:
            return [ev async for ev in stream]

    with Emulator(scenario=scenario) as emu, new_agent(emu, provider, tools=[double, negate]) as agent:
        events = asyncio.run(main(agent))
        results = [(e.id, e.content, e.is_error) for e in events if isinstance(e, panto.ToolResult)]
        assert results == [("call_a", "42", False), ("call_b", "-5", False)]
        assert [s["id"] for s in tool_results_sent(provider, emu.requests()[1])] == ["call_a", "call_b"]
    assert ran["double"] is True and ran["negate"] is ran["loop"]
    assert "".join(e.text for e in events if isinstance(e, panto.ContentDelta) and e.block_kind == "text") == "Done."


@needs_step
def test_canceling_the_task_keeps_what_was_iterated() -> None:
    # The emulator stalls after the first delta: the task is canceled while it waits for more.
    scenario = {"responses": [stalled("anthropic")]}

    async def main(agent: panto.Agent) -> Dict[str, Any]:
        stream = agent.run("Hi")
        got = asyncio.Event()
        seen: List[panto.Event] = []

        async def consume() -> None:
            async for ev in stream:
                seen.append(ev)
                if isinstance(ev, panto.ContentDelta):
                    got.set()

        task = asyncio.create_task(consume())
        await got.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        with pytest.raises(panto.CanceledError):
            await stream.__anext__()
        with pytest.raises(panto.CanceledError):
            next(stream)  # the stepped turn is over: next() reads its end
        text_seen = "".join(e.text for e in seen if isinstance(e, panto.ContentDelta))
        stream.close()
        return {"seen": text_seen, "conversation": agent.conversation}

    with Emulator(scenario=scenario) as emu, new_agent(emu, retry=NO_RETRY) as agent:
        out = asyncio.run(main(agent))
    assert out["seen"] == "Hello "
    assert blocks_and_stop(out["conversation"]) == [user("Hi"), assistant("Hello ", "aborted")]


@needs_step
def test_the_agents_properties_read_at_once_while_a_turn_waits() -> None:
    # While `async for` waits for the provider, no native call runs and no lock is held: the
    # loop reads the agent's state at once. (With a worker thread per next(), the read waited
    # for that call, which the stalled server ends only at its hold limit: the reads would then
    # show the turn's end, and the asserts below fail.)
    async def main(agent: panto.Agent) -> Dict[str, Any]:
        stream = agent.run("Hi")
        got = asyncio.Event()

        async def consume() -> None:
            async for ev in stream:
                if isinstance(ev, panto.ContentDelta):
                    got.set()

        task = asyncio.create_task(consume())
        await got.wait()
        await asyncio.sleep(0)  # the task is parked in its wait again
        during = {
            "conversation": agent.conversation,
            "count": agent.message_count,
            "export": agent.export(),
            "connections": agent.connections,
        }
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        stream.close()
        return during

    with Emulator(scenario={"responses": [stalled("anthropic")]}) as emu, new_agent(emu, retry=NO_RETRY) as agent:
        during = asyncio.run(main(agent))
        after = agent.conversation
    assert blocks_and_stop(during["conversation"]) == [user("Hi")]
    assert during["count"] == 1
    assert [m["role"] for m in json.loads(during["export"])["messages"]] == ["user"]
    assert during["connections"].opened == 1
    assert blocks_and_stop(after) == [user("Hi"), assistant("Hello ", "aborted")]


@needs_step
def test_a_silent_server_times_out_through_the_deadline() -> None:
    scenario = {"responses": [dict(answer(text("late")), delay_ms=60_000)]}

    async def main(agent: panto.Agent) -> None:
        async with agent.run("Hi") as stream:
            with pytest.raises(panto.APITimeoutError) as info:
                async for _ in stream:
                    pass
            assert info.value.code == "timeout"

    with Emulator(scenario=scenario) as emu, new_agent(emu, retry=NO_RETRY, timeouts={"first_byte_ms": 200}) as agent:
        asyncio.run(main(agent))


@needs_step
def test_next_after_async_for_began_is_a_state_error() -> None:
    # Stalled after the first delta: once `async for` had it, next() has to read the stream.
    async def main(agent: panto.Agent) -> None:
        async with agent.run("Hi") as stream:
            async for ev in stream:
                if isinstance(ev, panto.ContentDelta):
                    break
            with pytest.raises(panto.StateError) as info:
                next(stream)
            assert info.value.code == "state"
            stream.cancel()  # not sticky: the turn ends as a canceled one
            with pytest.raises(panto.CanceledError):
                await stream.__anext__()

    with Emulator(scenario={"responses": [stalled("anthropic")]}) as emu, new_agent(emu, retry=NO_RETRY) as agent:
        asyncio.run(main(agent))
        assert blocks_and_stop(agent.conversation) == [user("Hi"), assistant("Hello ", "aborted")]


def test_async_for_after_next_reads_in_a_worker_thread() -> None:
    scenario = {"responses": [answer(text("Hello big world"))]}

    async def main(agent: panto.Agent) -> str:
        async with agent.run("Hi") as stream:
            assert isinstance(next(stream), panto.MessageStart)
            return "".join([ev.text async for ev in stream if isinstance(ev, panto.ContentDelta)])

    with Emulator(scenario=scenario) as emu, new_agent(emu) as agent:
        assert asyncio.run(main(agent)) == "Hello big world"


def test_the_wait_struct_is_in_the_abi() -> None:
    assert _native.WOULD_BLOCK == 3 and _native.PantoWait().size == 24


# A bound for waits that only a bug makes long.
BOUND = 30.0


@needs_step
def test_cancel_during_a_retry_delay_ends_the_turn_at_once() -> None:
    slow = panto.RetryPolicy(max_retries=1, initial_delay_ms=600_000, max_delay_ms=600_000)
    overloaded = {"status": 529, "error": {"type": "overloaded_error", "message": "Overloaded"}}

    async def main(agent: panto.Agent) -> None:
        stream = agent.run("Hi")
        retrying = asyncio.Event()

        async def consume() -> None:
            async for ev in stream:
                if isinstance(ev, panto.ProviderRetry):
                    retrying.set()

        task = asyncio.create_task(consume())
        await asyncio.wait_for(retrying.wait(), BOUND)
        stream.cancel()  # the task waits for the delay's deadline alone (no descriptor)
        with pytest.raises(panto.CanceledError):
            await asyncio.wait_for(task, BOUND)
        stream.close()

    with Emulator(scenario={"responses": [overloaded, answer(text("late"))]}) as emu, new_agent(emu, retry=slow) as agent:
        asyncio.run(main(agent))
        assert len(emu.requests()) == 1
        assert not [m for m in agent.conversation if m["role"] == "assistant"]


@needs_step
def test_close_while_another_task_waits_raises_canceled() -> None:
    async def main(agent: panto.Agent) -> None:
        stream = agent.run("Hi")
        got = asyncio.Event()

        async def consume() -> None:
            async for ev in stream:
                if isinstance(ev, panto.ContentDelta):
                    got.set()

        task = asyncio.create_task(consume())
        await asyncio.wait_for(got.wait(), BOUND)
        stream.close()
        with pytest.raises(panto.CanceledError):
            await asyncio.wait_for(task, BOUND)
        async with agent.run("Again") as again:  # the agent runs its next turn
            assert "".join([e.text async for e in again if isinstance(e, panto.ContentDelta)]) == "Hello big world"

    scenario = {"responses": [stalled("anthropic"), answer(text("Hello big world"))]}
    with Emulator(scenario=scenario) as emu, new_agent(emu, retry=NO_RETRY) as agent:
        asyncio.run(main(agent))
        assert blocks_and_stop(agent.conversation)[:2] == [user("Hi"), assistant("Hello ", "aborted")]


@needs_step
def test_a_cancel_after_break_keeps_exactly_what_was_iterated() -> None:
    # The answer's deltas may come in one batch: those not handed out are given back.
    async def main(agent: panto.Agent) -> str:
        async with agent.run("Hi") as stream:
            seen = []
            async for ev in stream:
                if isinstance(ev, panto.ContentDelta):
                    seen.append(ev.text)
                    break
            stream.cancel()
            with pytest.raises(panto.CanceledError):
                await stream.__anext__()
            return "".join(seen)

    with Emulator(scenario={"responses": [answer(text("Hello big world"))]}) as emu, new_agent(emu) as agent:
        seen = asyncio.run(main(agent))
        assert seen and blocks_and_stop(agent.conversation) == [user("Hi"), assistant(seen, "aborted")]


@needs_step
def test_turns_over_tls_step_on_the_loop(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # HTTPS is what real providers speak: the TLS handshake and records run on each turn's
    # stepped stack too, with no worker thread (the loop's executor refuses work).
    import pathlib
    import subprocess

    root = pathlib.Path(__file__).resolve().parents[2]
    subprocess.run([str(root / "tests" / "net" / "make_certs.sh"), str(tmp_path)], check=True, timeout=60)
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca.pem"))
    words = " ".join(f"w{i}" for i in range(300))
    scenario = {"responses": [dict(answer(text(words)), chunk_size=40)], "repeat_last": True}

    async def turn(url: str) -> str:
        with panto.Agent(provider="anthropic", model="m", base_url=url, api_key="k") as agent:
            out = []
            async for ev in agent.run("Hi"):
                if isinstance(ev, panto.ContentDelta):
                    out.append(ev.text)
            return "".join(out)

    async def main(url: str) -> List[str]:
        asyncio.get_running_loop().set_default_executor(NoThreads())
        return await asyncio.gather(*(turn(url) for _ in range(10)))

    with Emulator(scenario=scenario, tls=(tmp_path / "server.pem", tmp_path / "server.key")) as emu:
        texts = asyncio.run(main(f"https://localhost:{emu.port}"))
        assert len(emu.requests()) == 10
    assert texts == [words] * 10


@needs_step
def test_acomplete_aparse_atext_and_afinal_message_never_block_the_loop() -> None:
    import dataclasses

    @dataclasses.dataclass
    class City:
        name: str
        population: int

    scenario = {"responses": [answer(text("Hello there.")),
                              answer(text('{"name": "Paris", "population": 2102650}')),
                              answer(text("Atlantis has none.")),
                              answer(text("One two three.")),
                              answer(text("Four five."))]}

    async def main(url: str) -> None:
        asyncio.get_running_loop().set_default_executor(NoThreads())  # no worker thread waits
        with panto.Agent(provider="anthropic", model="m", base_url=url, api_key="k") as agent:
            message = await agent.acomplete("Hi")
            assert message.text == "Hello there." and message.stop_reason == "end_turn"
            assert await agent.aparse("The largest city of France?", City) == City("Paris", 2102650)
            with pytest.raises(panto.OutputError) as caught:
                await agent.aparse("And of Atlantis?", City)
            assert caught.value.output == "Atlantis has none."
            with pytest.raises(TypeError):
                await agent.aparse("x", City, response_format=City)
            assert "".join([piece async for piece in agent.run("Count").atext()]) == "One two three."
            async with agent.run("Go on") as stream:
                first = await stream.__anext__()  # a partial read, then the rest awaited
                assert isinstance(first, panto.MessageStart)
                assert (await stream.afinal_message()).text == "Four five."
                assert (await stream.afinal_message()).text == "Four five."  # the same, again
            assert agent.message_count == 10

    with Emulator(scenario=scenario) as emu:
        asyncio.run(main(emu.url))
        assert len(emu.requests()) == 5


@needs_step
def test_turns_step_under_uvloop() -> None:
    # uvloop's add_reader/call_at are libuv's: the same waits, another loop.
    uvloop = pytest.importorskip("uvloop")
    n = 50
    scenario = {"responses": [dict(answer(text(f"answer {i}")), delay_ms=200) for i in range(n)]}

    async def turn(url: str) -> str:
        with panto.Agent(provider="anthropic", model="m", base_url=url, api_key="k") as agent:
            return (await agent.acomplete("Hi")).text

    async def main(url: str) -> List[str]:
        asyncio.get_running_loop().set_default_executor(NoThreads())
        return await asyncio.gather(*(turn(url) for _ in range(n)))

    with Emulator(scenario=scenario) as emu:
        texts = uvloop.run(main(emu.url))
        assert len(emu.requests()) == n
    assert sorted(texts) == sorted(f"answer {i}" for i in range(n))
