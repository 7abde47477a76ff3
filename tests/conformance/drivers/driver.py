#!/usr/bin/env python3
"""The Python conformance driver: `driver.py [--async] CASE_JSON BASE_URL`.

Runs a case's turns through the public `panto` API and prints the normalized transcript
(tests/conformance/README.md) on stdout, one JSON object per line. Exits 0 whenever it printed
a transcript, including one that ends in an error; non-zero only when it could not run.

With --async every event is read as `async for` reads it, `await stream.__anext__()` on one
asyncio loop (the stepped path: no worker thread per read), and the final helpers are
`afinal_message()` / `afinal_json()`; a stream that fell back to a worker thread instead of
stepping prints a `not_stepped` line, which no expected transcript holds.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import signal
import sys
import threading
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

try:
    import panto
except ModuleNotFoundError:  # not installed and not on PYTHONPATH: use the checkout's
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bindings-py"))
    import panto


# The case's print_request_ids / print_error_detail keys (set by transcript()).
PRINT = {"request_ids": False, "error_detail": False, "costs": False}
# The case's "approvals": per call id, "approve" or {"deny": REASON}.
APPROVALS: Dict[str, Any] = {}
# The case's "steer": [{"after": EVENT, "steer" | "follow_up": TEXT}], taken in order.
STEERS: List[Dict[str, Any]] = []
# --async: the asyncio loop every read awaits on (None: reads call next()).
LOOP: Optional[asyncio.AbstractEventLoop] = None


def pull(stream: panto.Stream) -> panto.Event:
    """The stream's next event (StopIteration at the end): next(), or with --async what one
    step of `async for` awaits, on the driver's loop."""
    if LOOP is None:
        return next(stream)
    try:
        return LOOP.run_until_complete(stream.__anext__())
    except StopAsyncIteration:
        raise StopIteration from None


def await_helper(call: Callable[[], Any], acall: Callable[[], Any]) -> Any:
    """A final helper: the blocking one, or with --async its coroutine on the driver's loop."""
    return call() if LOOP is None else LOOP.run_until_complete(acall())


def not_stepped(stream: panto.Stream) -> Iterator[Dict[str, Any]]:
    """With --async, a line no transcript holds when the stream was read in worker threads
    (the binding's fallback) rather than stepped."""
    if LOOP is not None and stream._mode == "thread":
        yield {"event": "not_stepped"}


def usage_object(u: panto.Usage) -> Dict[str, int]:
    line = {
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "cache_read_tokens": u.cache_read_tokens,
        "cache_write_tokens": u.cache_write_tokens,
        "reasoning_tokens": u.reasoning_tokens,
    }
    # The server tools' counts only when not 0 (the transcripts' rule).
    for key in ("web_search_requests", "web_fetch_requests"):
        if getattr(u, key):
            line[key] = getattr(u, key)
    return line


def event_line(ev: panto.Event) -> Dict[str, Any]:
    if isinstance(ev, panto.ContentDelta):
        return {"event": ev.kind, "index": ev.index, "kind": ev.block_kind, "text": ev.text}
    if isinstance(ev, panto.BlockStart):
        return {"event": ev.kind, "index": ev.index, "kind": ev.block_kind}
    if isinstance(ev, panto.BlockComplete):
        line = {"event": ev.kind, "index": ev.index, "kind": ev.block_kind, "text": ev.text}
        if ev.name:  # a server block's type
            line["name"] = ev.name
        if ev.citations:  # a text block's citations
            line["citations"] = ev.citations
        return line
    if isinstance(ev, panto.MessageStart):
        line = {"event": ev.kind, "id": ev.id, "model": ev.model}
        if PRINT["request_ids"]:
            line["request_id"] = ev.request_id
        return line
    if isinstance(ev, (panto.MessageEnd, panto.MessageComplete)):
        end: Dict[str, Any] = {
            "event": ev.kind,
            "stop_reason": ev.stop_reason,
            "provider_stop_reason": ev.provider_stop_reason,
            "usage": usage_object(ev.usage),
        }
        if PRINT["costs"]:
            end["cost"] = ev.cost
        return end
    if isinstance(ev, panto.ToolDetails):
        return {"event": ev.kind, "index": ev.index, "id": ev.id, "name": ev.name}
    if isinstance(ev, panto.ToolCallStart):
        return {"event": ev.kind, "id": ev.id, "name": ev.name, "input": ev.input, "awaiting_result": ev.awaiting_result}
    if isinstance(ev, panto.ToolResult):
        return {"event": ev.kind, "id": ev.id, "name": ev.name, "content": ev.content, "is_error": ev.is_error,
                "parts": [part_line(p) for p in ev.parts]}
    if isinstance(ev, panto.ToolProgress):
        return {"event": ev.kind, "id": ev.id, "name": ev.name, "text": ev.text, "fraction": ev.fraction}
    if isinstance(ev, panto.ApprovalRequest):
        return {"event": ev.kind, "calls": [{"id": c.id, "name": c.name, "input": c.input} for c in ev.calls]}
    if isinstance(ev, panto.UserMessage):
        return {"event": ev.kind, "source": ev.source, "text": ev.text}
    if isinstance(ev, panto.CompactionStart):
        return {"event": ev.kind, "tokens_before": ev.tokens_before, "reason": ev.reason}
    if isinstance(ev, panto.CompactionEnd):
        return {"event": ev.kind, "tokens_before": ev.tokens_before, "tokens_after": ev.tokens_after,
                "message_count": ev.message_count, "summary": ev.summary}
    if isinstance(ev, panto.ProviderRetry):
        return {
            "event": ev.kind,
            "attempt": ev.attempt,
            "delay_ms": ev.delay_ms,
            "http_status": ev.http_status or 0,
            "reason": ev.reason,
        }
    # A kind this driver does not know: print what it has, so the diff shows it.
    fields = {k: v for k, v in vars(ev).items() if k != "kind"} if hasattr(ev, "__dict__") else {}
    return {"event": getattr(ev, "kind", type(ev).__name__), **json.loads(json.dumps(fields, default=repr))}


def part_line(part: panto.Part) -> Dict[str, Any]:
    """A part of a ToolResult as the transcript shows it: every key, "" / 0 when absent."""
    return {
        "kind": part.kind,
        "text": part.text,
        "media_type": part.media_type,
        "name": part.name,
        "byte_size": part.byte_size,
        "width": part.width,
        "height": part.height,
        "data_len": len(part.data_base64),
    }


def given_part(part: Any) -> Any:
    """A part of a turn or of `return_parts` (the runner's copy): a string is text,
    {"media_path", "hint", "name"} the bytes of that file with the hint and name."""
    if isinstance(part, str):
        return part
    with open(part["media_path"], "rb") as f:
        data = f.read()
    return panto.Media(data, media_type=part["hint"] or None, name=part["name"] or None)


def turn_input(turn: Any) -> Any:
    """What run() gets for a turn: its text, or its list of parts."""
    return [given_part(p) for p in turn] if isinstance(turn, list) else turn


def error_line(err: panto.Error) -> Dict[str, Any]:
    # Absent fields print as the C struct holds them: 0 and "".
    line: Dict[str, Any] = {
        "event": "error",
        "code": err.code,
        "http_status": err.http_status or 0,
        "type": err.error_type or "",
        "message": err.message,
    }
    if PRINT["error_detail"]:
        line["retry_after"] = err.retry_after
        line["headers"] = err.headers
    return line


def step_line(stream: panto.Stream) -> Dict[str, Any]:
    """One next() call as a transcript line."""
    try:
        return event_line(pull(stream))
    except StopIteration:
        return {"event": "done"}
    except panto.ApprovalPendingError as err:
        return {"event": "approval_pending", "answers": answer_approvals(stream, err.calls)}
    except panto.Error as err:
        return error_line(err)


def answer_approvals(stream: panto.Stream, calls: List[panto.ApprovalCall]) -> List[Dict[str, Any]]:
    """Answers the waiting calls as the case's "approvals" says (README.md, "Approvals in a
    case"): their approval_answer lines."""
    lines = []
    for call in calls:
        answer = APPROVALS.get(call.id)
        if answer == "kill":  # the process dies waiting (README.md, "A process killed ...")
            sys.stdout.write(json.dumps({"event": "killed"}) + "\n")
            sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        if answer == "approve":
            lines.append({"event": "approval_answer", "id": call.id, "answer": "approve",
                          "code": call_code(lambda: stream.approve(call.id))})
        else:
            reason = answer["deny"] if isinstance(answer, dict) else "no answer in the case"
            lines.append({"event": "approval_answer", "id": call.id, "answer": "deny",
                          "code": call_code(lambda: stream.deny(call.id, reason))})
    return lines


def steer_lines(stream: panto.Stream, after: str) -> List[Dict[str, Any]]:
    """Says what the case's "steer" gives once `after` (an event's name, or "run") was
    printed (README.md, "Steering in a case"): a steer_call line each."""
    lines = []
    while STEERS and STEERS[0]["after"] == after:
        entry = STEERS.pop(0)
        if "withdraw" in entry:
            taken: List[Tuple[str, str]] = []
            code = call_code(lambda: taken.extend(stream.withdraw_queued()))
            lines.append({"event": "withdraw_call", "messages": [{"source": s, "text": t} for s, t in taken],
                          "code": code})
            continue
        call = "steer" if "steer" in entry else "follow_up"
        text = entry[call]
        code = call_code(lambda: stream.steer(text) if call == "steer" else stream.follow_up(text))
        lines.append({"event": "steer_call", "call": call, "text": text, "code": code})
    return lines


def call_code(fn: Callable[[], Any]) -> str:
    """Runs a call of the public API: "ok", or the name of the status it failed with."""
    try:
        fn()
    except panto.Error as err:
        return err.code
    return "ok"


def turn_lines(agent: panto.Agent, stream: panto.Stream, on_error: Optional[Dict[str, Any]]) -> Iterator[Dict[str, Any]]:
    """The lines of one turn, to `done` or an error; `on_error` (once per turn) reconfigures
    the agent and reopens the stream after the first error."""
    yield from steer_lines(stream, "run")
    while True:
        while True:
            line = step_line(stream)
            if line["event"] == "approval_pending":  # answered: read on
                yield from line["answers"]
                continue
            yield line
            yield from steer_lines(stream, line["event"])
            if line["event"] in ("done", "error"):
                break
        if line["event"] != "error" or on_error is None:
            return
        changes, reopen, on_error = on_error.get("set_config"), on_error.get("reopen"), None
        if changes is not None:
            yield {"event": "set_config", "code": call_code(lambda: agent.set_config(**changes))}
        if not reopen:
            return
        code = call_code(stream.reopen)
        yield {"event": "reopen", "code": code}
        if code != "ok":
            return


class ScriptedToolError(panto.ToolError):
    """What a `{"raise": TEXT}` tool raises: a failure it means, whose text goes as it is
    (as Go's returned error and Lua's `error(TEXT, 0)`)."""


class Handlers:
    """What the handlers of a case share: how many run now and have started (for
    "exclusive"), and the rendezvous groups."""

    lock = threading.Condition()
    running = 0
    started = 0
    groups: Dict[str, int] = {}

    @classmethod
    def enter(cls) -> int:
        """A handler starts: the count of handlers started, this one included."""
        with cls.lock:
            cls.running += 1
            cls.started += 1
            return cls.started

    @classmethod
    def leave(cls) -> None:
        with cls.lock:
            cls.running -= 1

    @classmethod
    def rendezvous(cls, group: str, count: int) -> None:
        """Waits until `count` handlers of `group` have started (this one too), 10 s at most."""
        with cls.lock:
            cls.groups[group] = cls.groups.get(group, 0) + 1
            cls.lock.notify_all()
            if not cls.lock.wait_for(lambda: cls.groups[group] >= count, timeout=10):
                raise ScriptedToolError("ran alone")

    @classmethod
    def exclusive(cls, started: int, overlapped: bool) -> None:
        """Sleeps 100 ms; raises "overlapped" when another handler ran at any moment since
        this one started (`started`: the count then; `overlapped`: another ran then)."""
        time.sleep(0.1)
        with cls.lock:
            alone = not overlapped and cls.running == 1 and cls.started == started
        if not alone:
            raise ScriptedToolError("overlapped")


def behavior_handler(behavior: Dict[str, Any]) -> Callable[..., Any]:
    """The handler a case's `behavior` describes (tests/conformance/README.md): what it gives
    (`result_handler`), after its sleep, rendezvous, exclusive run and progress, if any."""
    result = result_handler(behavior)
    sleep_ms = behavior.get("sleep_ms")
    rendezvous = behavior.get("rendezvous")
    exclusive = behavior.get("exclusive") is True
    progress = behavior.get("progress", [])

    def handler(**input: Any) -> Any:
        started = Handlers.enter()
        overlapped = Handlers.running > 1
        try:
            if sleep_ms is not None:
                time.sleep(sleep_ms / 1000)
            if rendezvous is not None:
                Handlers.rendezvous(rendezvous[0], rendezvous[1])
            for text, fraction in progress:
                panto.report_progress(text, fraction)
            if exclusive:
                Handlers.exclusive(started, overlapped)
            return result(**input)
        finally:
            Handlers.leave()

    return handler


def result_handler(behavior: Dict[str, Any]) -> Callable[..., Any]:
    """What the handler gives: return, raise, return_parts or return_input ("" when the
    behavior only waits)."""
    if "return" in behavior:
        text = behavior["return"]
        return lambda **_input: text
    if "raise" in behavior:
        message = behavior["raise"]

        def fail(**_input: Any) -> Any:
            raise ScriptedToolError(message)

        return fail
    if "return_parts" in behavior:
        parts = behavior["return_parts"]
        return lambda **_input: [given_part(p) for p in parts]
    if behavior.get("return_input") is True:
        return lambda **input: json.dumps(input, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    if behavior.keys() <= {"sleep_ms", "rendezvous", "exclusive", "progress"}:
        return lambda **_input: ""
    raise ValueError(f"unknown tool behavior {behavior!r}")


def case_tools(case: Dict[str, Any]) -> List[panto.Tool]:
    """The case's host tools, declared through the public API."""
    tools = []
    for spec in case.get("tools", []):
        spec = dict(spec)
        behavior = spec.pop("behavior")
        tools.append(panto.Tool.from_spec(spec, handler=behavior_handler(behavior)))
    return tools


def lines_to_delta(stream: panto.Stream, k: int) -> Tuple[List[Dict[str, Any]], bool]:
    """The lines of a turn read with the stream's own (batched) iterator until the k-th
    content_delta is printed: (lines, True); or, when the turn ends first, to its end:
    (lines, False). The iterator is let go on return, so that the caller holds the last
    reference to the stream."""
    lines: List[Dict[str, Any]] = []
    deltas = 0
    try:
        while True:
            ev = pull(stream)
            lines.append(event_line(ev))
            if isinstance(ev, panto.ContentDelta):
                deltas += 1
                if deltas == k:
                    return lines, True
    except StopIteration:
        pass
    except panto.Error as err:
        lines.append(error_line(err))
        return lines, False
    lines.append({"event": "done"})
    return lines, False


def end_turn_early(agent: panto.Agent, text: Any, how: Dict[str, Any]) -> Iterator[Dict[str, Any]]:
    """One turn ended early the way `how` (the case's `end_early`) says: closed or dropped
    after k deltas, or closed from another thread while next() is blocked."""
    try:
        stream = agent.run(turn_input(text))
    except panto.Error as err:
        yield error_line(err)
        return
    if "free_blocked_after_ms" in how:
        timer = threading.Timer(how["free_blocked_after_ms"] / 1000, stream.close)
        timer.start()
        try:
            yield from turn_lines(agent, stream, None)
        finally:
            timer.cancel()
            timer.join()
        return
    k = int(how.get("close_after_deltas", how.get("drop_after_deltas", 0)))
    lines, reached = lines_to_delta(stream, k)
    yield from lines
    if not reached:
        stream.close()
    elif "close_after_deltas" in how:
        stream.close()
        yield {"event": "closed"}
    else:  # dropped without close(): the garbage collector ends the turn
        del stream
        gc.collect()
        yield {"event": "dropped"}


def final_line(stream: panto.Stream, final: str) -> Dict[str, Any]:
    """A `"final"` turn's one line: the binding's helper instead of iterating; a failure of
    the turn itself prints as the ordinary error line."""
    try:
        if final == "message":
            msg = await_helper(stream.final_message, stream.afinal_message)
            return {"event": "final_message", "code": "ok", "text": msg.text, "stop_reason": msg.stop_reason,
                    "usage": usage_object(msg.turn_usage)}
        if final != "json":
            raise ValueError(f"unknown final {final!r}")
        try:
            value = await_helper(stream.final_json, stream.afinal_json)
        except (panto.OutputError, panto.StateError) as err:
            return {"event": "final_json", "code": err.code, "value": None, "output": getattr(err, "output", ""),
                    "message": err.message}
        return {"event": "final_json", "code": "ok", "value": value, "output": ""}
    except panto.Error as err:
        return error_line(err)


def coded(kind: str, fn: Callable[[], Any], **fields: Any) -> Dict[str, Any]:
    """A step's line: {"event": kind, "code": C, ...fields}, with the error's "message" when
    the call failed."""
    try:
        fn()
    except panto.Error as err:
        return {"event": kind, "code": err.code, **fields, "message": err.message}
    return {"event": kind, "code": "ok", **fields}


def open_agent(config: Dict[str, Any], tools: List[panto.Tool]) -> panto.Agent:
    """The case's agent: a panto.Session when the config names a session."""
    cls = panto.Session if "session" in config else panto.Agent
    return cls.from_config(config, tools=tools)


class Steps:
    """The step objects of a case's turns (tests/conformance/README.md, "Steps"), on an agent
    that a step may replace (reopen_agent)."""

    def __init__(self, agent: panto.Agent, config: Dict[str, Any], tools: List[panto.Tool], extra_next: int) -> None:
        self.agent: Optional[panto.Agent] = agent
        self.config = config
        self.tools = tools
        self.extra_next = extra_next
        self.last_export = ""

    def run(self, step: Dict[str, Any]) -> Iterator[Dict[str, Any]]:
        (key, value), = step.items()
        agent = self.agent
        assert agent is not None
        if key == "set_config":
            yield coded("set_config", lambda: agent.set_config(**value))
        elif key == "export":
            try:
                self.last_export = agent.export()
            except panto.Error as err:
                yield {"event": "export", "code": err.code, "message": err.message}
                return
            yield {"event": "export", "text": self.last_export}
        elif key == "reimport":
            line = coded("reimport", lambda: agent.import_(self.last_export))
            line.pop("message", None)
            line["identical"] = line["code"] == "ok" and agent.export() == self.last_export
            yield line
        elif key == "import":
            text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
            yield coded("import", lambda: agent.import_(text))
        elif key == "import_text":
            yield coded("import", lambda: agent.import_(value))
        elif key in ("truncate", "drop_last"):
            call = agent.truncate if key == "truncate" else agent.drop_last
            line = coded(key, lambda: call(value))
            line.pop("message", None)
            line["message_count"] = agent.message_count
            yield line
        elif key == "count_tokens":
            counted = panto.TokenCount(input_tokens=0)

            def count() -> None:
                nonlocal counted
                counted = agent.count_tokens(value)
            line = coded(key, count)
            line.pop("message", None)
            yield {**line, "input_tokens": counted.input_tokens, "estimated": counted.estimated}
        elif key == "spent":
            spent = panto.Spent(panto.Usage(), None)

            def get_spent() -> None:
                nonlocal spent
                spent = agent.spent
            line = coded(key, get_spent)
            line.pop("message", None)
            u = spent.usage
            yield {**line, "usage": {"input_tokens": u.input_tokens, "output_tokens": u.output_tokens,
                                     "cache_read_tokens": u.cache_read_tokens, "cache_write_tokens": u.cache_write_tokens,
                                     "reasoning_tokens": u.reasoning_tokens}, "cost": spent.cost}
        elif key == "list_models":
            listed: list[panto.ModelEntry] = []

            def list_models() -> None:
                nonlocal listed
                listed = agent.list_models()
            line = coded(key, list_models)
            line.pop("message", None)
            yield {**line, "models": [
                {"id": m.id, "display_name": m.display_name, "created": m.created, "known": m.info is not None,
                 "max_input_tokens": m.info.max_input_tokens if m.info is not None else None}
                for m in listed]}
        elif key == "rollback_turn":
            removed = 0

            def rollback() -> None:
                nonlocal removed
                removed = agent.rollback_turn()
            line = coded(key, rollback)
            line.pop("message", None)
            yield {**line, "removed": removed, "message_count": agent.message_count}
        elif key == "compact":
            try:
                stream = agent.compact(value["instructions"] if isinstance(value, dict) else None)
            except panto.Error as err:
                yield {"event": "compact", "code": err.code}
                return
            with stream:
                yield from turn_lines(agent, stream, None)
                for _ in range(self.extra_next):
                    yield step_line(stream)
        elif key == "session_info":
            yield self.session_line(agent)
        elif key == "pending_round":
            pending: List[panto.PendingCall] = []
            line = coded(key, lambda: pending.extend(agent.pending_round()))
            line.pop("message", None)
            yield {**line, "calls": [{"id": c.id, "name": c.name, "input": c.input, "state": c.state}
                                     for c in pending]}
        elif key == "resume_turn":
            try:
                stream = agent.resume_turn()
            except panto.Error as err:
                yield {"event": "resume_turn", "code": err.code}
                return
            with stream:
                yield from turn_lines(agent, stream, None)
                for _ in range(self.extra_next):
                    yield step_line(stream)
                yield from not_stepped(stream)
        elif key == "mcp_status":
            servers: List[panto.McpServerStatus] = []
            line = coded(key, lambda: servers.extend(agent.mcp_status()))
            line["servers"] = [
                {"name": m.name, "transport": m.transport, "state": m.state, "protocol_version": m.protocol_version,
                 "server_name": m.server_name, "server_version": m.server_version, "tool_count": m.tool_count,
                 "error": m.error, "stderr_tail": m.stderr_tail}
                for m in servers]
            yield line
        elif key == "reopen_agent":
            agent.close()
            self.agent = None
            line = coded("reopen_agent", self.reopen)
            yield line
        elif key == "second_agent":
            line = coded("second_agent", lambda: open_agent(self.config, self.tools).close())
            line.pop("message", None)
            yield line
        elif key == "fork":
            line = coded("fork", lambda: agent.fork(value["message_count"], value["id"]))
            line.pop("message", None)
            yield line
        elif key == "list_sessions":
            found: List[panto.SessionSummary] = []
            line = coded("sessions", lambda: found.extend(panto.Session.list(self.config["session"]["dir"])))
            line.pop("message", None)
            line["sessions"] = [
                {"id": s.id, "message_count": s.message_count, "first_user_text": s.first_user_text,
                 "parent": None if s.parent is None else {"id": s.parent.id, "message_count": s.parent.message_count}}
                for s in found
            ]
            yield line
        elif key == "append_to_session":
            with open(agent.info.path, "ab") as f:
                f.write(value.encode("utf-8"))
            yield {"event": "append_to_session"}
        else:
            raise ValueError(f"unknown step {key!r}")

    def reopen(self) -> None:
        self.agent = open_agent(self.config, self.tools)

    @staticmethod
    def session_line(agent: panto.Agent) -> Dict[str, Any]:
        line: Dict[str, Any] = {"event": "session", "code": "ok", "id": "", "resumed": False, "torn_bytes": 0,
                                "message_count": 0}
        if not isinstance(agent, panto.Session):
            line["code"] = "state"  # what panto_agent_session says of an agent without one
            return line
        try:
            info = agent.info
        except panto.Error as err:
            line["code"] = err.code
            return line
        line.update(id=info.id, resumed=info.resumed, torn_bytes=info.torn_bytes, message_count=agent.message_count)
        return line


def transcript(case: Dict[str, Any], base_url: str) -> Iterator[Dict[str, Any]]:
    config = dict(case["config"])
    config.setdefault("base_url", base_url)
    if config["base_url"] is None:  # the case's endpoint comes from the environment (`env`)
        del config["base_url"]
    extra_next = int(case.get("extra_next", 1))
    cancel_after_ms = case.get("cancel_after_ms")
    cancel_turn = int(case.get("cancel_turn", 0))
    on_error = case.get("on_error")
    PRINT["request_ids"] = case.get("print_request_ids") is True
    PRINT["error_detail"] = case.get("print_error_detail") is True
    PRINT["costs"] = case.get("print_costs") is True
    APPROVALS.update(case.get("approvals") or {})
    STEERS.extend(case.get("steer") or [])
    try:
        tools = case_tools(case)
        agent = open_agent(config, tools)
    except panto.LibraryNotFound:
        raise  # cannot run: exit non-zero
    except panto.Error as err:
        yield error_line(err)
        return
    end_early = case.get("end_early")
    steps = Steps(agent, config, tools, extra_next)
    try:
        for turn, entry in enumerate(case["turns"]):
            if isinstance(entry, dict) and "input" not in entry:  # a step ({"$repeat": ...} is expanded already)
                yield from steps.run(entry)
                if steps.agent is None:
                    return  # reopen_agent failed: no agent for the rest
                continue
            # A turn: its input, or {"input", "options", "final"}.
            text, options, final = (entry["input"], entry.get("options") or {}, entry.get("final")) \
                if isinstance(entry, dict) else (entry, {}, None)
            agent = steps.agent
            if end_early is not None and turn == int(end_early.get("turn", 0)):
                yield from end_turn_early(agent, text, end_early)
                continue
            try:
                stream = agent.run(turn_input(text), **options)
            except panto.Error as err:  # the turn could not start: the case ends here
                yield error_line(err)
                break
            if final is not None:
                with stream:
                    yield final_line(stream, final)
                    for _ in range(extra_next):
                        yield step_line(stream)
                    yield from not_stepped(stream)
                continue
            timer = None
            if cancel_after_ms is not None and turn == cancel_turn:
                # Another thread cancels while this one is blocked in next().
                timer = threading.Timer(cancel_after_ms / 1000, stream.cancel)
                timer.start()
            try:
                with stream:
                    yield from turn_lines(agent, stream, on_error)
                    for _ in range(extra_next):
                        yield step_line(stream)
                    yield from not_stepped(stream)
            finally:
                if timer is not None:
                    timer.cancel()
                    timer.join()
        agent = steps.agent
        if "expect_connections" in case:
            counts = agent.connections
            yield {"event": "connections", "opened": counts.opened, "reused": counts.reused}
        if case.get("print_conversation"):
            yield {"event": "conversation", "messages": agent.conversation}
    finally:
        if steps.agent is not None:
            steps.agent.close()


def main(argv: List[str]) -> int:
    global LOOP
    if len(argv) == 4 and argv[1] == "--async":
        LOOP = asyncio.new_event_loop()
        del argv[1]
    if len(argv) != 3:
        print("usage: driver.py [--async] CASE_JSON BASE_URL", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        case = json.load(f)
    out = sys.stdout
    for line in transcript(case, argv[2]):
        out.write(json.dumps(line) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
