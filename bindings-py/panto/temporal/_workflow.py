"""The workflow of a durable turn: the conversation is its state; each model request and each
tool call is an activity (docs/design/durable-execution.md, decision 1)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any, Dict, List, Mapping, Optional, Set

from temporalio import workflow
from temporalio.common import RetryPolicy


@workflow.defn(name="panto.turn")
class TurnWorkflow:
    """One turn (`panto.temporal.turn(...)` is its argument); returns {"conversation": the
    export after the turn, "stop_reason": the last assistant message's}. Canceling the
    workflow cancels the activity in flight: what the model had said stays as an "aborted"
    message, calls without a result keep the close policy's error result, and the workflow
    ends canceled; the query `conversation` then gives the conversation it left.

    A call that waits for a person's approval makes the workflow wait for the signal
    `approve` ({"call_id"}) or `deny` ({"call_id", "reason"}), from any process, any time
    later; the query `approvals` lists the calls that wait ({"id", "name", "input"})."""

    def __init__(self) -> None:
        self._messages: List[Dict[str, Any]] = []
        self._waiting: Dict[str, Dict[str, Any]] = {}
        self._answers: Dict[str, Optional[str]] = {}  # call id -> None (approved) or the denial's reason
        self._done: Set[str] = set()  # the calls of the round whose results are in

    @workflow.query(name="approvals")
    def approvals(self) -> List[Dict[str, Any]]:
        """The calls that wait for an answer, in call order."""
        return [c for c in self._waiting.values() if c["id"] not in self._answers]

    @workflow.signal(name="approve")
    def approve(self, answer: Any) -> None:
        """Lets the waiting call answer["call_id"] run (the tool_call activity)."""
        self._answer(answer, None)

    @workflow.signal(name="deny")
    def deny(self, answer: Any) -> None:
        """Refuses the waiting call answer["call_id"]: its result is the core's denial text
        with answer["reason"] (not empty: the model reads it)."""
        reason = answer.get("reason") if isinstance(answer, dict) else None
        if not isinstance(reason, str) or not reason:
            workflow.logger.warning("a deny without a reason (%r): ignored", answer)
            return
        self._answer(answer, reason)

    def _answer(self, answer: Any, reason: Optional[str]) -> None:
        # A signal's argument is anyone's JSON: what is not an answer is ignored (an exception
        # here would fail the workflow task again and again, the turn stuck).
        call_id = answer.get("call_id") if isinstance(answer, dict) else None
        if not isinstance(call_id, str) or call_id not in self._waiting or call_id in self._answers:
            workflow.logger.warning("an answer for no waiting call (%r): ignored", answer)
            return
        self._answers[call_id] = reason

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
            if not out["pending"] and not out.get("asked"):
                return {"conversation": self.conversation(), "stop_reason": _stop_reason(self._messages)}
            denial = out.get("denial") or []
            self._waiting = {c["id"]: c for c in out.get("asked", [])}
            self._answers = {}
            self._done = set()
            try:
                # The close policy gave the pending calls an error result: theirs replace it.
                self._replace(await self._run_tools(out["pending"], tool_options))
                if self._waiting:
                    await workflow.wait_condition(lambda: len(self._answers) == len(self._waiting))
                    approved = [c for c in self._waiting.values() if self._answers[c["id"]] is None]
                    denied = {i: _denied(denial, r) for i, r in self._answers.items() if r is not None}
                    # Approved calls one at a time: an ApprovalCall does not say which may run together.
                    self._replace(denied)
                    for call in approved:
                        self._replace(await self._run_tools([dict(call, sequential=True)], tool_options))
            except asyncio.CancelledError:
                # An asked call not run (waiting, or approved and canceled before it ran) gets a
                # denial naming the cancel: the conversation stays valid.
                self._replace({i: _denied(denial, _CANCELED_WAITING) for i in self._waiting if i not in self._done})
                raise
            finally:
                self._waiting, self._answers, self._done = {}, {}, set()

    def _replace(self, results: Mapping[str, Dict[str, Any]]) -> None:
        """The round's results message with the tool_result blocks of `results`' ids replaced."""
        self._done.update(results)
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


# The reason an asked call that did not run is denied with when the turn is canceled.
_CANCELED_WAITING = "the turn was canceled before this call ran"


def _denied(denial: List[str], reason: str) -> Dict[str, Any]:
    """A denied call's result: the core's denial text (the activity's `denial`) with `reason`."""
    return {"content": denial[0] + reason + denial[1], "is_error": True}


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

