"""panto.temporal against a real Temporal dev server and the emulator: the scenarios of issue
37 (docs/durable.md)."""

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError, CancelledError

import panto
import panto.temporal
from panto.emulator import Emulator

sys.path.insert(0, str(Path(__file__).parent))
from conftest import API_KEY  # noqa: E402
from tools import TOOLS  # noqa: E402


def two_rounds(n: int = 0) -> Dict[str, Any]:
    """A turn with two tool rounds: lookup, then slow, then the answer."""
    return {"responses": [
        {"message": {"content": [{"type": "text", "text": f"Looking up a{n}."},
                                 {"type": "tool_use", "id": f"toolu_a{n}", "name": "lookup", "input": {"key": f"a{n}"}}]}},
        {"message": {"content": [{"type": "tool_use", "id": f"toolu_b{n}", "name": "slow", "input": {"key": f"b{n}"}}]}},
        {"message": {"content": [{"type": "text", "text": f"Both values of a{n} and b{n} are known."}]}},
    ]}


def config(emu: Emulator) -> Dict[str, Any]:
    return panto.temporal.turn_config("anthropic", "claude-test", base_url=emu.url, tools=TOOLS)


def local_messages(emu: Emulator, scenario: Dict[str, Any], text: str) -> List[Dict[str, Any]]:
    """The same turn run locally (the agent running its tools), on the scenario loaded anew."""
    emu.load(scenario)
    with panto.Agent("anthropic", "claude-test", base_url=emu.url, api_key=API_KEY, tools=TOOLS) as agent:
        agent.complete(text)
        return json.loads(agent.export())["messages"]


def runs_of(runs: Path, tool: str) -> List[str]:
    path = runs / f"{tool}.runs"
    return path.read_text().split() if path.exists() else []


def model_bodies(emu: Emulator) -> List[str]:
    return [json.dumps(r["body"], sort_keys=True) for r in emu.requests() if r["path"] == "/v1/messages"]


def test_api_key_never_enters_the_history() -> None:
    with pytest.raises(ValueError, match="api_key"):
        panto.temporal.turn_config("anthropic", "claude-test", api_key="secret")
    with pytest.raises(ValueError, match="api_key"):
        panto.temporal.turn({"provider": "anthropic", "model": "m", "api_key": "secret"}, "hi")


def test_two_tool_rounds_complete_on_a_worker(temporal_address: str, task_queue: str, start_worker: Any, runs: Path) -> None:
    with Emulator(scenario=two_rounds()) as emu:
        start_worker()

        async def go() -> Dict[str, Any]:
            client = await Client.connect(temporal_address)
            turn = panto.temporal.turn(config(emu), "What are a0 and b0?", sink="file")
            history_has_key = False
            result = await client.execute_workflow(panto.temporal.TurnWorkflow.run, turn, id=f"two-{task_queue}",
                                                   task_queue=task_queue)
            async for event in client.get_workflow_handle(f"two-{task_queue}").fetch_history_events():
                history_has_key = history_has_key or API_KEY in str(event)
            assert not history_has_key
            return result

        result = asyncio.run(go())
        assert len(model_bodies(emu)) == 3
        messages = result["conversation"]["messages"]
        assert result["stop_reason"] == "end_turn"
        assert messages == local_messages(emu, two_rounds(), "What are a0 and b0?")
        # The sink got each request's events, in the local stream's vocabulary.
        events = [json.loads(line) for line in (runs / f"events-two-{task_queue}.jsonl").read_text().splitlines()]
        kinds = [e["kind"] for e in events]
        assert kinds.count("message_start") == 3 and kinds[0] == "message_start"
        assert kinds[-1] == "message_complete"
        assert [e["name"] for e in events if e["kind"] == "tool_call_start"] == ["lookup", "slow"]


def test_a_killed_worker_loses_only_the_activity_in_flight(temporal_address: str, task_queue: str, start_worker: Any,
                                                          runs: Path) -> None:
    (runs / "slow.block").touch()
    with Emulator(scenario=two_rounds()) as emu:
        first = start_worker()

        async def go() -> Dict[str, Any]:
            client = await Client.connect(temporal_address)
            turn = panto.temporal.turn(config(emu), "What are a0 and b0?", tool_call={"heartbeat_seconds": 2})
            handle = await client.start_workflow(panto.temporal.TurnWorkflow.run, turn, id=f"kill-{task_queue}",
                                                 task_queue=task_queue)
            while not (runs / "slow.started").exists():  # the second round's tool runs
                await asyncio.sleep(0.05)
            first.send_signal(signal.SIGKILL)
            first.wait()
            (runs / "slow.block").unlink()
            start_worker()
            return await handle.result()

        result = asyncio.run(go())
        bodies = model_bodies(emu)
        assert len(bodies) == 3 and len(set(bodies)) == 3  # no completed model request sent twice
        assert len(runs_of(runs, "lookup")) == 1  # the first round's tool ran once
        assert len(runs_of(runs, "slow")) == 2  # killed in flight, then run by the second worker
        assert result["conversation"]["messages"] == local_messages(emu, two_rounds(), "What are a0 and b0?")


def test_100_workflows_over_two_workers(temporal_address: str, task_queue: str, start_worker: Any, runs: Path) -> None:
    n = 100
    emulators = [Emulator(scenario=two_rounds(i)) for i in range(n)]
    try:
        start_worker()
        start_worker()

        async def go() -> List[Dict[str, Any]]:
            client = await Client.connect(temporal_address)
            return await asyncio.gather(*(
                client.execute_workflow(panto.temporal.TurnWorkflow.run,
                                        panto.temporal.turn(config(emulators[i]), f"What are a{i} and b{i}?"),
                                        id=f"many-{i}-{task_queue}", task_queue=task_queue)
                for i in range(n)))

        results = asyncio.run(go())
        for i, (emu, result) in enumerate(zip(emulators, results)):
            assert result["conversation"]["messages"] == local_messages(emu, two_rounds(i), f"What are a{i} and b{i}?"), i
        # The local turns ran the tools too: n runs each in the workers, n here.
        workers = set(runs_of(runs, "lookup")) - {str(os.getpid())}
        assert len(workers) == 2, "the turns' tools ran on both workers"
    finally:
        for emu in emulators:
            emu.close()


async def cancel(handle: Any) -> Dict[str, Any]:
    """Cancels the workflow: it ends canceled, and its query gives the conversation it left."""
    await handle.cancel()
    with pytest.raises(WorkflowFailureError) as failure:
        await handle.result()
    assert isinstance(failure.value.cause, CancelledError)
    conversation: Dict[str, Any] = await handle.query(panto.temporal.TurnWorkflow.conversation)
    return conversation


def goes_on_from(emu: Emulator, conversation: Dict[str, Any]) -> None:
    """The conversation is valid: an agent takes it, and goes on from it."""
    emu.load({"responses": [{"message": {"content": [{"type": "text", "text": "Again."}]}}]})
    with panto.Agent("anthropic", "claude-test", base_url=emu.url, api_key=API_KEY) as agent:
        agent.import_(conversation)
        assert agent.complete("Go on").text == "Again."


COUNT = " ".join(str(i) for i in range(1, 31))  # 30 deltas, 0.3 s apart: a cancel comes in the middle


def slow_answer() -> Dict[str, Any]:
    return {"responses": [{"chunk_delay_ms": 300, "message": {"content": [{"type": "text", "text": COUNT}]}}]}


def test_a_canceled_workflow_leaves_a_valid_conversation(temporal_address: str, task_queue: str, start_worker: Any,
                                                        runs: Path) -> None:
    with Emulator(scenario=slow_answer()) as emu:
        start_worker()

        async def go() -> Dict[str, Any]:
            client = await Client.connect(temporal_address)
            turn = panto.temporal.turn(config(emu), "Count to ten", sink="file")
            handle = await client.start_workflow(panto.temporal.TurnWorkflow.run, turn, id=f"cancel-{task_queue}",
                                                 task_queue=task_queue)
            events = runs / f"events-cancel-{task_queue}.jsonl"
            while not events.exists() or '"content_delta"' not in events.read_text():
                await asyncio.sleep(0.05)
            return await cancel(handle)

        conversation = asyncio.run(go())
        user, answer = conversation["messages"]
        assert user["content"] == [{"type": "text", "text": "Count to ten"}]
        assert answer["stop_reason"] == "aborted"
        said = answer["content"][0]["text"]
        assert said and COUNT.startswith(said) and said != COUNT
        goes_on_from(emu, conversation)


def test_failures_temporal_retries_and_those_it_does_not(temporal_address: str, task_queue: str, start_worker: Any) -> None:
    answer = {"message": {"content": [{"type": "text", "text": "Fine."}]}}
    overloaded = {"error": {"type": "overloaded_error", "message": "Overloaded"}}
    refused = {"error": {"type": "invalid_request_error", "message": "messages: bad"}}
    with Emulator(scenario={"responses": [overloaded, answer]}) as emu:
        start_worker()

        async def go(wid: str, **kw: Any) -> Dict[str, Any]:
            client = await Client.connect(temporal_address)
            turn = panto.temporal.turn(config(emu), "Hi", model_request={"initial_interval_seconds": 0.1}, **kw)
            result: Dict[str, Any] = await client.execute_workflow(panto.temporal.TurnWorkflow.run, turn, id=f"{wid}-{task_queue}",
                                                                   task_queue=task_queue)
            return result

        # A retryable failure: Temporal sends the request again (panto's own retries are off).
        result = asyncio.run(go("retried"))
        assert result["stop_reason"] == "end_turn" and len(model_bodies(emu)) == 2

        # A request the provider refuses is not sent again: the workflow fails naming it.
        emu.load({"responses": [refused, answer]})
        with pytest.raises(WorkflowFailureError) as failure:
            asyncio.run(go("refused"))
        cause = failure.value.cause.cause
        assert isinstance(cause, ApplicationError) and cause.type == "InvalidRequestError" and cause.non_retryable
        assert len(model_bodies(emu)) == 1

        # A sink the worker does not have: refused before any request.
        emu.load({"responses": [answer]})
        with pytest.raises(WorkflowFailureError) as failure:
            asyncio.run(go("nosink", sink="nowhere"))
        assert failure.value.cause.cause.type == "NoSuchSink"
        assert model_bodies(emu) == []


ASK = [{"tool": "lookup", "decision": "ask"}]
ANSWER = Path(__file__).with_name("answer.py")


def asking(host_call: bool = False) -> Dict[str, Any]:
    """A round of two calls that wait for approval (with `host_call`, a call of `slow`
    between them, which waits for nobody), then the answer."""
    calls = [{"type": "tool_use", "id": "toolu_x", "name": "lookup", "input": {"key": "x"}},
             {"type": "tool_use", "id": "toolu_y", "name": "lookup", "input": {"key": "y"}}]
    if host_call:
        calls.insert(1, {"type": "tool_use", "id": "toolu_s", "name": "slow", "input": {"key": "s"}})
    return {"responses": [{"message": {"content": calls}},
                          {"message": {"content": [{"type": "text", "text": "x is known; y was refused."}]}}]}


def local_answered(emu: Emulator, text: str) -> List[Dict[str, Any]]:
    """The asking turn (with its host call) run locally, x approved and y denied as the
    durable one is."""
    emu.load(asking(host_call=True))
    with panto.Agent.from_config({"provider": "anthropic", "model": "claude-test", "base_url": emu.url,
                                  "api_key": API_KEY, "approval_rules": ASK}, tools=TOOLS) as agent:
        stream = agent.run(text)
        while True:
            try:
                for _ in stream:
                    pass
                break
            except panto.ApprovalPendingError:
                stream.approve("toolu_x")
                stream.deny("toolu_y", "not y")
        return json.loads(agent.export())["messages"]


async def waiting_calls(handle: Any, n: int) -> List[Dict[str, Any]]:
    while len(calls := await panto.temporal.approvals(handle)) < n:
        await asyncio.sleep(0.1)
    return calls


def test_a_call_waits_for_a_signal_from_another_process(temporal_address: str, task_queue: str, start_worker: Any,
                                                        runs: Path) -> None:
    with Emulator(scenario=asking(host_call=True)) as emu:
        start_worker()

        async def go() -> Dict[str, Any]:
            client = await Client.connect(temporal_address)
            turn = panto.temporal.turn(config(emu) | {"approval_rules": ASK}, "What are x and y?")
            wid = f"ask-{task_queue}"
            handle = await client.start_workflow(panto.temporal.TurnWorkflow.run, turn, id=wid, task_queue=task_queue)
            calls = await waiting_calls(handle, 2)
            assert calls == [{"id": "toolu_x", "name": "lookup", "input": {"key": "x"}},
                             {"id": "toolu_y", "name": "lookup", "input": {"key": "y"}}]
            assert runs_of(runs, "lookup") == []  # nothing runs before its yes
            # What is not an answer is ignored, the turn unharmed: a bare id, a call that does
            # not wait, a denial without a reason.
            await handle.signal("approve", "toolu_x")
            await handle.signal("approve", {"call_id": "toolu_z"})
            await handle.signal("deny", {"call_id": "toolu_y", "reason": ""})
            assert len(await panto.temporal.approvals(handle)) == 2
            for answer in (["approve", "toolu_x"], ["deny", "toolu_y", "not y"]):
                p = await asyncio.create_subprocess_exec(sys.executable, str(ANSWER), temporal_address, wid, *answer)
                assert await p.wait() == 0
            result: Dict[str, Any] = await handle.result()
            assert await panto.temporal.approvals(handle) == []
            return result

        result = asyncio.run(go())
        assert len(runs_of(runs, "lookup")) == 1  # the approved call, on the worker
        assert len(model_bodies(emu)) == 2
        messages = result["conversation"]["messages"]
        assert len(runs_of(runs, "slow")) == 1  # the call that waited for nobody
        denied = messages[2]["content"][2]
        assert denied["is_error"] and denied["content"].endswith("not y")
        assert messages == local_answered(emu, "What are x and y?")


def test_a_cancel_while_calls_wait_leaves_a_valid_conversation(temporal_address: str, task_queue: str,
                                                               start_worker: Any, runs: Path) -> None:
    with Emulator(scenario=asking()) as emu:
        start_worker()

        async def go() -> Dict[str, Any]:
            client = await Client.connect(temporal_address)
            turn = panto.temporal.turn(config(emu) | {"approval_rules": ASK}, "What are x and y?")
            handle = await client.start_workflow(panto.temporal.TurnWorkflow.run, turn, id=f"askcancel-{task_queue}",
                                                 task_queue=task_queue)
            await waiting_calls(handle, 2)
            await panto.temporal.approve(handle, "toolu_x")  # one answered, the other still waits
            return await cancel(handle)

        conversation = asyncio.run(go())
        results = conversation["messages"][-1]["content"]
        assert [r["is_error"] for r in results] == [True, True]
        assert "canceled" in results[1]["content"]
        assert runs_of(runs, "lookup") == []
        goes_on_from(emu, conversation)
