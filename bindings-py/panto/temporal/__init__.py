"""panto turns as Temporal workflows (docs/durable.md): `pip install panto[temporal]`.

A turn is the workflow `panto.turn`; each model request and each tool call is an activity, so
a worker that dies mid-turn loses only the activity in flight, and the turn goes on on another
worker without resending a completed request or re-running a completed tool call. The
workflow's state is the conversation in panto's exported form; the agent's configuration is
JSON without the API key, which each worker takes from its own environment.

    # the worker (any number of processes)
    client = await temporalio.client.Client.connect("127.0.0.1:7233")
    async with panto.temporal.worker(client, "agents", tools=[get_weather]):
        await asyncio.Event().wait()

    # whoever starts turns
    config = panto.temporal.turn_config(provider="anthropic", model="claude-sonnet-4-5",
                                        tools=[get_weather])
    result = await client.execute_workflow(
        panto.temporal.TurnWorkflow.run, panto.temporal.turn(config, "Weather in Paris?"),
        id="turn-1", task_queue="agents")
    result["conversation"]  # {"version": 1, "messages": [...]}, for Agent.import_()
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Dict, Iterable, List, Mapping, Optional, Union

from temporalio.client import Client, WorkflowHandle
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from ._activities import Activities, Sink
from ._workflow import TurnWorkflow

__all__ = ["Activities", "Sink", "TurnWorkflow", "approvals", "approve", "deny", "turn", "turn_config", "worker"]


def turn_config(provider: str, model: str, *, tools: Optional[Iterable[Any]] = None, **settings: Any) -> Dict[str, Any]:
    """The agent's configuration as the workflow carries it: what `panto.Agent(...)` takes
    (`tools` as specs, their handlers stay on the workers). `api_key` is refused: it would
    be written into the workflow's history; each worker's agent takes it from its environment
    ($ANTHROPIC_API_KEY, $OPENAI_API_KEY, ...)."""
    if "api_key" in settings:
        raise ValueError("api_key does not go into a workflow's history: set it in the workers' environment")
    from ..config import config_value
    from ..tools import as_tool

    config: Dict[str, Any] = {"provider": provider, "model": model}
    config.update({k: config_value(k, v) for k, v in settings.items() if v is not None})
    if tools is not None:
        config["tools"] = [as_tool(t).spec() for t in tools]
    return config


def turn(
    config: Mapping[str, Any],
    input: str,
    *,
    conversation: Optional[Union[str, Mapping[str, Any]]] = None,
    sink: Optional[str] = None,
    model_request: Optional[Mapping[str, Any]] = None,
    tool_call: Optional[Mapping[str, Any]] = None,
) -> Dict[str, Any]:
    """The workflow's argument: a turn of `input` (a user message's text) on `conversation`
    (an export, default empty) with the agent `config` (`turn_config`). `sink` names the
    worker's sink that gets the turn's events. `model_request` and `tool_call` set each
    activity's Temporal options: {"start_to_close_seconds", "heartbeat_seconds",
    "maximum_attempts" (0: no limit), "initial_interval_seconds"}."""
    if "api_key" in config:
        raise ValueError("api_key does not go into a workflow's history: set it in the workers' environment")
    import json

    document: Dict[str, Any] = {"version": 1, "messages": []}
    if isinstance(conversation, str):
        document = json.loads(conversation)
    elif conversation is not None:
        document = dict(conversation)
    return {
        "config": dict(config),
        "input": input,
        "conversation": document,
        "sink": sink,
        "model_request": dict(model_request or {}),
        "tool_call": dict(tool_call or {}),
    }


async def approvals(handle: WorkflowHandle[Any, Any]) -> List[Dict[str, Any]]:
    """The calls of the turn `handle` that wait for a person's answer: {"id", "name", "input"}."""
    calls: List[Dict[str, Any]] = await handle.query("approvals")
    return calls


async def approve(handle: WorkflowHandle[Any, Any], call_id: str) -> None:
    """Lets the waiting call `call_id` of the turn `handle` run (the signal `approve`), from any
    process: its tool runs in the tool_call activity."""
    await handle.signal("approve", {"call_id": call_id})


async def deny(handle: WorkflowHandle[Any, Any], call_id: str, reason: str) -> None:
    """Refuses the waiting call `call_id` of the turn `handle` (the signal `deny`): its result
    is the error a local stream's `deny` gives, "The user denied this call: REASON". A
    durable denial needs a reason (the workflow ignores one without)."""
    if not reason:
        raise ValueError("a durable turn's denial needs a reason: the model reads it")
    await handle.signal("deny", {"call_id": call_id, "reason": reason})


def worker(
    client: Client,
    task_queue: str,
    *,
    tools: Iterable[Any] = (),
    sinks: Optional[Mapping[str, Sink]] = None,
    workflows: bool = True,
    activities: bool = True,
    **options: Any,
) -> Worker:
    """A Temporal worker that runs panto turns: the workflow and both activities, with
    `tools` (what `panto.Agent(tools=...)` takes: their handlers run in the tool_call
    activity) and `sinks` (name -> callable(turn_id, event_dict), sync or async: what a turn
    started with `sink=name` publishes). `workflows=False` or `activities=False` leaves the
    one or the other to other workers on the task queue (of either language). `options` go
    to `temporalio.worker.Worker`."""
    if not (workflows or activities):
        raise ValueError("a worker runs the workflow, the activities, or both")
    handlers = Activities(tools=tools, sinks=sinks)
    # The workflow's module is imported in Temporal's sandbox; panto (ctypes, a loaded
    # library) is passed through rather than imported again there.
    runner = SandboxedWorkflowRunner(restrictions=SandboxRestrictions.default.with_passthrough_modules("panto"))
    # A cancel reaches an activity only in a heartbeat's answer, and the SDK sends heartbeats at
    # most every 80% of the heartbeat timeout by default: every second instead, so that a
    # canceled turn stops within about a second.
    options.setdefault("max_heartbeat_throttle_interval", timedelta(seconds=1))
    options.setdefault("default_heartbeat_throttle_interval", timedelta(seconds=1))
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[TurnWorkflow] if workflows else [],
        activities=[handlers.model_request, handlers.tool_call] if activities else [],
        workflow_runner=runner,
        **options,
    )
