"""The workflow of a durable turn: the conversation is its state; each model request and each
tool call is an activity (docs/design/durable-execution.md, decision 1)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any, Dict, List, Mapping

from temporalio import workflow
from temporalio.common import RetryPolicy


@workflow.defn(name="panto.turn")
class TurnWorkflow:
    """One turn (`panto.temporal.turn(...)` is its argument); returns {"conversation": the
    export after the turn, "stop_reason": the last assistant message's}. Canceling the
    workflow cancels the activity in flight: what the model had said stays as an "aborted"
    message, calls without a result keep the close policy's error result, and the workflow
    ends canceled; the query `conversation` then gives the conversation it left."""

    def __init__(self) -> None:
        self._messages: List[Dict[str, Any]] = []

    @workflow.query(name="conversation")
    def conversation(self) -> Dict[str, Any]:
        """The conversation so far (an export: `Agent.import_()` takes it)."""
        return {"version": 1, "messages": self._messages}

    @workflow.run
    async def run(self, turn: Dict[str, Any]) -> Dict[str, Any]:
        self._messages = list(turn["conversation"].get("messages", []))
        model_options = _activity_options(turn.get("model_request", {}), turn["config"])
        tool_options = _activity_options(turn.get("tool_call", {}), {})
        text = turn["input"]
        while True:
            request = {"config": turn["config"], "conversation": self.conversation(), "input": text,
                       "sink": turn.get("sink")}
            out = await workflow.execute_activity("panto.model_request", request, **model_options)
            text = None  # later requests answer the conversation as it is
            self._messages.extend(out["added"])
            if out["canceled"]:
                raise asyncio.CancelledError()  # the workflow ends canceled, its conversation kept
            if not out["pending"]:
                return {"conversation": self.conversation(), "stop_reason": _stop_reason(self._messages)}
            results = await self._run_tools(out["pending"], tool_options)
            # The close policy gave the pending calls an error result: theirs replace it.
            last = self._messages[-1]
            last["content"] = [dict(b, **results[b["id"]]) if b.get("type") == "tool_result" and b["id"] in results else b
                               for b in last["content"]]

    async def _run_tools(self, calls: List[Dict[str, Any]], options: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
        """Each call as an activity: the calls between two sequential ones at the same time,
        a sequential one alone (as panto's own tool runner does)."""
        results: Dict[str, Dict[str, Any]] = {}
        group: List[Dict[str, Any]] = []

        async def flush() -> None:
            done = await asyncio.gather(*(workflow.execute_activity("panto.tool_call", c, **options) for c in group))
            results.update({c["id"]: r for c, r in zip(group, done)})
            group.clear()

        for call in calls:
            if call.get("sequential"):
                await flush()
                group.append(call)
                await flush()
            else:
                group.append(call)
        await flush()
        return results


def _activity_options(given: Mapping[str, Any], config: Mapping[str, Any]) -> Dict[str, Any]:
    """Temporal's options for an activity: start-to-close from the turn's option, else the
    agent's total timeout, else 10 minutes; a heartbeat timeout (the activities heartbeat
    every second while they wait); Temporal's retry policy, panto's own retries being off."""
    total_ms = (config.get("timeouts") or {}).get("total_ms")
    start_to_close = given.get("start_to_close_seconds", total_ms / 1000 if total_ms else 600)
    retry = RetryPolicy(
        maximum_attempts=int(given.get("maximum_attempts", 0)),
        initial_interval=timedelta(seconds=given.get("initial_interval_seconds", 1)),
    )
    return {
        "start_to_close_timeout": timedelta(seconds=start_to_close),
        "heartbeat_timeout": timedelta(seconds=given.get("heartbeat_seconds", 30)),
        "retry_policy": retry,
        # A cancel waits for the activity to end, so that it returns what it kept.
        "cancellation_type": workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    }


def _stop_reason(messages: List[Dict[str, Any]]) -> str:
    for m in reversed(messages):
        if m.get("role") == "assistant":
            return str(m.get("stop_reason", "none"))
    return "none"

