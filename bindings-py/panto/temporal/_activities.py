"""The two activities of a durable turn: one model request, one tool call."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
from typing import Any, Awaitable, Callable, Dict, Iterable, List, Mapping, Optional, Union

from temporalio import activity
from temporalio.exceptions import ApplicationError

from .. import errors
from ..agent import Agent
from ..events import ToolCallStart
from ..tools import Tool, as_tool, to_result

#: Where a turn's events go: called with the workflow's id and each event as a JSON object
#: (the event's fields, "kind" its name), in order; may be async.
Sink = Callable[[str, Dict[str, Any]], Union[None, Awaitable[None]]]

# The reason the activity denies a call that waits for approval with, to learn the core's
# wording around a reason: the workflow writes the person's reason in its place later
# (docs/durable.md, "Approvals"). The same in Go's activity.
DENIAL_MARK = "<panto.durable.reason>"

# Failures that the same request would meet again: Temporal does not retry them.
_PERMANENT = (errors.ConfigError, errors.ConversationError, errors.AuthenticationError,
              errors.PermissionDeniedError, errors.NotFoundError, errors.InvalidRequestError,
              errors.InvalidArgumentError, errors.CapabilityError, errors.LibraryNotFound)


class Activities:
    """The worker's side of a turn: its tools' handlers and its sinks, by name."""

    def __init__(self, tools: Iterable[Any] = (), sinks: Optional[Mapping[str, Sink]] = None) -> None:
        self.tools: Dict[str, Tool] = {t.name: t for t in (as_tool(x) for x in tools)}
        self.sinks: Dict[str, Sink] = dict(sinks or {})

    @activity.defn(name="panto.model_request")
    async def model_request(self, request: Dict[str, Any]) -> Dict[str, Any]:
        """One model request: imports the conversation, sends `input` as the user message
        (the turn's first request) or answers the conversation as it is (`continue`), and
        reads the stream until the model asks for host tools or the message ends. Returns the
        messages it added ("added") and the calls awaiting a result ("pending"); the stream is
        then closed, so the close policy gives those calls an error result that the
        workflow replaces with the tool_call activities' results."""
        config = dict(request["config"])
        config.setdefault("retry", {"max_retries": 0})  # Temporal's retries are the ones that count
        sink = self._sink(request.get("sink"))
        info = activity.info()
        turn_id = info.workflow_id or ""
        # A retried attempt does not publish again what the attempt before it published.
        published = int(info.heartbeat_details[0]) if info.heartbeat_details else 0
        count = 0
        pending: List[Dict[str, Any]] = []
        asked: List[Dict[str, Any]] = []
        canceled = False
        with Agent.from_config(config) as agent:
            agent.import_(request["conversation"])
            before = agent.message_count
            text = request.get("input")
            try:
                stream = agent.run(text, run_tools=False) if text is not None else agent.continue_turn(run_tools=False)
            except _PERMANENT as e:
                raise _permanent(e) from e
            beat = asyncio.ensure_future(_heartbeats(lambda: count))
            try:
                try:
                    async for event in stream:
                        count += 1
                        if type(event) is ToolCallStart and event.awaiting_result:
                            pending.append({"id": event.id, "name": event.name, "input": event.input,
                                            "sequential": event.sequential})
                        if sink is not None and count > published:
                            await _publish(sink, turn_id, event)
                        activity.heartbeat(count)
                except (errors.ResultPendingError, errors.ApprovalPendingError):
                    # The model asked for host tools, or for calls a person answers: the
                    # workflow runs the ones and waits for the others' answers.
                    for call in stream.approvals:
                        asked.append({"id": call.id, "name": call.name, "input": call.input})
                        stream.deny(call.id, DENIAL_MARK)
                except asyncio.CancelledError:
                    canceled = True  # the workflow was canceled: the partial message is kept
                except _PERMANENT as e:
                    raise _permanent(e) from e
                finally:
                    stream.close()
            finally:
                beat.cancel()
            exported = json.loads(agent.export())
        messages = exported["messages"]
        return {"added": messages[before:], "pending": [] if canceled else pending, "canceled": canceled,
                "asked": asked, "denial": _denial(messages[-1], asked)}

    @activity.defn(name="panto.tool_call")
    async def tool_call(self, call: Dict[str, Any]) -> Dict[str, Any]:
        """Runs one tool call with the worker's handler: {"content": str, "is_error": bool},
        as panto's own tool runner would give it (an exception: an error result naming it)."""
        tool = self.tools.get(call["name"])
        if tool is None or tool.handler is None:
            return {"content": f"no tool {call['name']!r} on this worker", "is_error": True}
        from ..stream import _execute

        event = ToolCallStart(call["id"], call["name"], call["input"], True, bool(call.get("sequential")))
        beat = asyncio.ensure_future(_heartbeats(lambda: 0))
        try:
            if tool.is_async:
                content, is_error = await _ainvoke(tool, event)
            else:
                content, is_error = await asyncio.to_thread(_execute, tool, event)
        finally:
            beat.cancel()
        if not isinstance(content, str):
            # A result with media is fitted by the core when a stream takes it; a durable turn
            # carries text results only (docs/durable.md, "Limits").
            raise ApplicationError(f"tool {call['name']!r} returned media: a durable turn takes text results only",
                                   type="MediaResult", non_retryable=True)
        return {"content": content, "is_error": is_error}

    def _sink(self, name: Optional[str]) -> Optional[Sink]:
        if name is None:
            return None
        sink = self.sinks.get(name)
        if sink is None:
            raise ApplicationError(f"no sink named {name!r} on this worker", type="NoSuchSink", non_retryable=True)
        return sink


async def _heartbeats(count: Callable[[], int], every: float = 1.0) -> None:
    """Heartbeats while the activity waits (a slow model, a long tool): so that a worker that
    died is noticed by its heartbeat timeout, and a cancel reaches the activity."""
    while True:
        activity.heartbeat(count())
        await asyncio.sleep(every)


async def _publish(sink: Sink, turn_id: str, event: Any) -> None:
    data = dataclasses.asdict(event)
    result = sink(turn_id, data)
    if inspect.isawaitable(result):
        await result


async def _ainvoke(tool: Tool, event: ToolCallStart) -> Any:
    """`_execute` for an `async def` handler, awaited on the activity's loop."""
    try:
        return await tool.ainvoke(event.input), False
    except Exception as exc:
        from .._tool_failure import failure_content

        return failure_content(event, exc), True


def _denial(results: Dict[str, Any], asked: List[Dict[str, Any]]) -> List[str]:
    """The core's denial text before and after the reason, from the result of the first call
    denied with `DENIAL_MARK` (the round's results message): [] when no call was asked."""
    if not asked:
        return []
    for block in results.get("content", []):
        if block.get("type") == "tool_result" and block.get("id") == asked[0]["id"]:
            before, _, after = str(block["content"]).partition(DENIAL_MARK)
            return [before, after]
    raise ApplicationError("the denied call has no result", type="ConversationError", non_retryable=True)


def _permanent(e: errors.Error) -> ApplicationError:
    return ApplicationError(str(e), type=type(e).__name__, non_retryable=True)
