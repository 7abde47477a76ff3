"""Stream: the events of one turn, as an iterator and a context manager."""

from __future__ import annotations

import ctypes
from _thread import allocate_lock
from itertools import chain

from . import _native
from ._handle import StreamHandle, free_handle
from ._frozen import construct as _construct
from .errors import (
    BusyError,
    CanceledError,
    Error,
    InvalidArgumentError,
    NoSuchCallError,
    OutputError,
    ResultPendingError,
    ApprovalPendingError,
    StateError,
    error_class,
    from_native,
)
from .events import (
    BlockComplete,
    BlockStart,
    CompactionEnd,
    CompactionStart,
    ContentDelta,
    MessageComplete,
    MessageEnd,
    MessageStart,
    Part,
    ProviderRetry,
    ToolCallStart,
    ToolDetails,
    ToolProgress,
    ApprovalCall,
    ApprovalRequest,
    ToolResult,
    Usage,
    UserMessage,
)
from .parts import native_parts

# Not imported at run time, to keep `import panto` cheap: typing, json, the Ctrl-C support
# (_interrupt, with threading and signal), the native batches (_batch), message.py and
# tools.py are imported where used.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import TracebackType
    from asyncio import AbstractEventLoop
    from typing import Any, AsyncIterator, Callable, Dict, Iterator, List, Optional, Set, Tuple, Type, TypeVar, Union

    from ._batch import NativeBatch
    from ._tool_runner import Content, ToolRunner
    from .events import Event
    from .message import AssistantMessage
    from .parts import Media
    from .tools import Tool

    # typing.Self is Python 3.11's; checkers know typing_extensions without it being installed.
    from typing_extensions import Self

    T = TypeVar("T")

__all__ = ["Stream"]

_EVENT = _native.EVENT
_DONE = _native.DONE
_MESSAGE_START = _native.EVENT_MESSAGE_START
_BLOCK_START = _native.EVENT_BLOCK_START
_CONTENT_DELTA = _native.EVENT_CONTENT_DELTA
_BLOCK_COMPLETE = _native.EVENT_BLOCK_COMPLETE
_BLOCK_TEXT = _native.BLOCK_TEXT
_MESSAGE_COMPLETE = _native.EVENT_MESSAGE_COMPLETE
_MESSAGE_END = _native.EVENT_MESSAGE_END
_TOOL_DETAILS = _native.EVENT_TOOL_DETAILS
_TOOL_CALL_START = _native.EVENT_TOOL_CALL_START
_TOOL_RESULT = _native.EVENT_TOOL_RESULT
_PROVIDER_RETRY = _native.EVENT_PROVIDER_RETRY
_COMPACTION_START = _native.EVENT_COMPACTION_START
_COMPACTION_END = _native.EVENT_COMPACTION_END
_TOOL_PROGRESS = _native.EVENT_TOOL_PROGRESS
_APPROVAL_REQUEST = _native.EVENT_APPROVAL_REQUEST
_USER_MESSAGE = _native.EVENT_USER_MESSAGE
_APPROVAL_PENDING = _native.ERR_APPROVAL_PENDING
_RESULT_PENDING = _native.ERR_RESULT_PENDING
_NO_SUCH_CALL = _native.ERR_NO_SUCH_CALL
_CANCELED = _native.ERR_CANCELED
_WOULD_BLOCK = _native.WOULD_BLOCK
_STATE = _native.ERR_STATE
# What _read returns for RESULT_PENDING while the stream's own tool calls run: wait for them.
_WAIT: List[Event] = []
# What _read returns when a step would block (the stream's PantoWait says for what), and when
# the stream cannot be stepped (read by next() already, or no fibers on this platform).
_BLOCKED: List[Event] = []
_NOT_STEPPED: List[Event] = []
# The tasks that finish canceled stepped turns (see Stream._finish_canceled), kept alive.
_finishing: Set[Any] = set()


def _blocking_call(handle: StreamHandle, fn: Callable[..., int], *args: Any) -> int:
    """`fn(*args)`, a native call that may block, interruptible by Ctrl-C (_interrupt.py,
    imported at the first call: it brings threading and signal)."""
    global _blocking_call
    from . import _interrupt

    _blocking_call = _interrupt.blocking_call
    return _blocking_call(handle, fn, *args)


def _usage(ev: _native.PantoEvent) -> Usage:
    # The server tools' counts follow the event's usage, at the event's end (sized structs).
    u = ev.usage
    return _construct(Usage, u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens, u.reasoning_tokens,
                      ev.web_search_requests, ev.web_fetch_requests)


def _cost(cost: float) -> Optional[float]:
    return cost if cost >= 0 else None  # (-1: unknown)


class _Raise:
    """An iterator that raises `exc` once, then ends: how a failure travels through the
    itertools.chain that iterates a stream without ending the chain (see Stream.__iter__)."""

    __slots__ = ("exc",)

    def __init__(self, exc: BaseException) -> None:
        self.exc: Optional[BaseException] = exc

    def __iter__(self) -> "_Raise":
        return self

    def __next__(self) -> Event:
        exc = self.exc
        if exc is None:
            raise StopIteration
        self.exc = None
        try:
            raise exc
        finally:
            del exc



def _decide(policy: Callable[[ApprovalCall], Any], call: ApprovalCall) -> Optional[str]:
    """The agent's `approval=` function's answer for `call`: None to approve, else the reason
    to deny with. An exception in it denies the call."""
    try:
        answer = policy(call)
    except Exception as e:  # (the turn goes on: the model reads why)
        return f"the approval function failed: {type(e).__name__}: {e}"
    if answer is True:
        return None
    if answer is False:
        return ""
    if isinstance(answer, tuple) and len(answer) == 2 and answer[0] is False and isinstance(answer[1], str):
        return answer[1]
    if isinstance(answer, tuple) and len(answer) == 2 and answer[0] is True:
        return None
    return f"the approval function returned {answer!r}, not True, False or (False, reason)"

class Stream:
    """The events of one turn (made by `Agent.run`).

    Iterate it to read the events; iteration ends after MessageComplete. A failure raises the
    matching `panto.Error` subclass, and every later `next()` raises the same error again.
    Events come from the library in batches (what has arrived, up to 512 a call), so that a
    loop costs little per event; a batch never runs ahead of what a canceled turn keeps.
    `close()` (or leaving a `with` block) frees the native stream and its connection.

    Canceling: `cancel()` ends the turn from any thread, also while another thread is blocked
    in `next()`, which then raises `panto.CanceledError` at once. Ctrl-C while the main thread
    is blocked in `next()` cancels the turn the same way and raises KeyboardInterrupt. Closing
    a turn before it ended (or the garbage collector dropping its stream) ends it by the
    library's close policy, as in every language. In every case what the model had said so far stays
    in the conversation as an assistant message with "stop_reason": "aborted", later `next()`
    calls raise `panto.CanceledError`, and the agent can run the next turn.

    Retrying: a failed provider call that the agent's retry policy retries shows as a
    `ProviderRetry` event; the message then starts over with a new MessageStart. A turn that
    failed when opening the provider call (an HTTP error answer, a connection failure) can run
    again with `reopen()`, typically after `agent.set_config(...)`.

    Tools: a turn may hold several assistant messages, with tool calls between them
    (MessageEnd, ToolCallStart..., ToolProgress..., ToolResult..., MessageStart, ...). When a
    `ToolCallStart` has `awaiting_result`, the tool's handler starts once every ToolCallStart
    of the message was read (so you see the calls before they run) and its result goes to
    the model; a handler
    that raises an Exception gives an error result naming the exception's type
    (`KeyError: 'city'`), logged at WARNING with its traceback on the `panto` logger; a
    `panto.ToolError`'s message goes as it is
    (KeyboardInterrupt, SystemExit and the like propagate out of `next()`, and the call then
    awaits its result). The host calls of a message run at the same time: sync handlers on
    worker threads, `async def` handlers as tasks on the event loop of `async for` (or on
    panto's loop thread when iterated with `for`); a call whose `sequential` is True runs
    alone, after the calls before it and before the calls after it. Results go to the model,
    and come as ToolResult events, in call order; `panto.report_progress()` inside a handler
    shows as a ToolProgress event while the calls run. Canceling or closing the stream while
    handlers run returns at once: `async def` handlers are canceled, sync ones finish on their
    thread and their results are dropped. In a turn started with `run_tools=False`, and for a
    tool without a handler, give the result yourself with `submit_tool_result()` (or
    `run_tool()`) before the next `next()`, which otherwise raises
    `panto.ResultPendingError` (not sticky).

    Threads: any thread may use a stream and its agent; their calls take turns (the C API
    takes one at a time). A `next()` while another thread reads the stream waits for that
    thread's batch, then goes on from there: each event goes to one thread, in order. A call
    on the agent waits for the native call of another thread, if any (a `next()` waiting for
    the provider's next event). `cancel()` and `close()` never wait for a blocked `next()`:
    they make it return first.
    """

    def __init__(self, agent: object, handle: StreamHandle, *, run_tools: bool = True) -> None:
        # Made by Agent.run only.
        self._agent = agent  # the C API needs the agent to outlive its streams
        self._lib = handle.lib
        self._handle = handle
        self._done = False
        self._error: Optional[Error] = None
        self._run_tools = run_tools
        # Host tool calls that await a result, by id, in the order they came.
        self._pending: Dict[str, ToolCallStart] = {}
        # The calls ApprovalRequest events listed that wait for an answer, in order.
        self._asked: List[ApprovalCall] = []
        # The calls the stream runs itself (made at the first one), and the event loop that
        # runs their `async def` handlers during an `async for` (None: panto's own).
        self._runner: Optional[ToolRunner] = None
        # close() began (maybe on another thread): it abandons the runner before it frees the
        # native stream, so a RESULT_PENDING read meanwhile is the close's cancel, not the caller's.
        self._closing = False
        self._tool_loop: Optional[AbstractEventLoop] = None
        self._request_ids: List[str] = []
        self._async_lock = allocate_lock()
        # The events of the current (at the end: the last) assistant message, and the turn's
        # MessageComplete, for final_message(). Text deltas are not kept: BlockComplete has it all.
        self._msg_start: Optional[MessageStart] = None
        self._msg_blocks: List[BlockComplete] = []
        self._msg_details: Dict[int, ToolDetails] = {}
        self._msg_end: Optional[MessageEnd] = None
        self._complete: Optional[MessageComplete] = None
        # The last batch read (see __iter__): its events, and the iterator that hands them out.
        self._batch: List[Event] = []
        self._batch_it: Iterator[Event] = iter(self._batch)
        self._batch_exact = True  # one event per native event (none of an unknown kind skipped)
        self._native: Optional[NativeBatch] = None  # the native event array, made on first use
        # How `async for` reads: None until its first call, "step" (panto_step_events on the
        # running loop) or "thread" (next() in worker threads: the stream was read by next()
        # first, or this platform cannot step). `_wait` is the last step's PantoWait.
        self._mode: Optional[str] = None
        self._wait: Any = None
        self._wait_ref: Any = None
        self._waiter: Any = None  # the _async_wait.Waiter of `async for`, made with `_wait`

    # ---- iteration ---------------------------------------------------------------------

    def __iter__(self) -> Iterator[Event]:
        # The events come in batches (panto_next_events): an itertools.chain over the batches
        # hands them out with no Python code per event. Every iterator of the stream shares
        # the current batch's, so a loop left with `break` and the next one, or next(), go on
        # from the same event. Failures travel as _Raise iterators, which leave the chain
        # usable: a failure is raised again by every later next(), as it is by the stream's.
        return chain.from_iterable(iter(self._next_batch, None))

    def __next__(self) -> Event:
        while True:
            events = self._next_batch()
            if events is None:
                raise StopIteration
            for event in events:
                return event

    def _next_batch(self) -> Optional[Iterator[Event]]:
        """The iterator of the current batch while it has events, else of the next batch (a
        _Raise for a failure); None once the turn is over.

        Threads take turns: a batch is read under the agent's `calls` lock, so a thread that
        comes while another reads waits, then hands out events of that batch or reads the
        next one; each event goes to one thread. Tool handlers run outside the lock, and so
        does the wait for them."""
        handle = self._handle
        while True:
            it = self._batch_it
            if it.__length_hint__():  # type: ignore[attr-defined]
                return it
            runner = self._runner
            if runner is not None and runner.busy and handle.ptr is not None:
                try:
                    self._drive_tools(runner, False)
                except BaseException as e:  # handed out through the iterator
                    return _Raise(e)
            with handle.calls:
                it = self._batch_it
                if it.__length_hint__():  # type: ignore[attr-defined]  # read by another thread meanwhile
                    return it
                # The events handed out are let go before the next batch is made: fewer
                # objects alive at once, so that making a batch seldom sets off the garbage
                # collector.
                self._batch.clear()
                try:
                    batch = self._fetch()
                except BaseException as e:  # handed out through the iterator
                    return _Raise(e)
                if batch is None:
                    return None
                if batch is not _WAIT:
                    self._batch = handle.batch = batch
                    it = self._batch_it = iter(batch)
                    return it
            runner = self._runner
            if runner is not None:  # the library waits for results of calls that run
                try:
                    self._drive_tools(runner, True)
                except BaseException as e:
                    return _Raise(e)

    def _fetch(self, step: bool = False) -> Optional[List[Event]]:
        """The events of the next batch (never empty), or None when the turn is over; raises
        the turn's failure. `calls` is held. With `step`, by panto_step_events (never waits:
        _BLOCKED, or _NOT_STEPPED)."""
        native = self._native
        if native is None:
            if self._handle.ptr is None:  # closed meanwhile by a tool handler or another thread
                return self._closed()
            from ._batch import NativeBatch  # here: `import panto` does not need it

            native = self._native = NativeBatch(self._lib)
        return self._read(native, step)

    def _read(self, native: NativeBatch, step: bool = False) -> Optional[List[Event]]:
        """The next batch, read into `native` (with `step`, by panto_step_events)."""
        lib = self._lib
        handle = self._handle
        while True:
            ptr = handle.begin_call()
            if ptr is None:  # closed meanwhile by a tool handler or another thread
                self._let_go(native)
                return self._closed()
            native.prepare()
            try:
                if step:  # returns at once: on the loop's thread, no Ctrl-C support needed
                    rc = lib.step_events_unchecked(ptr, *native.args, self._wait_ref)
                else:
                    rc = _blocking_call(handle, native.call, ptr, *native.args)
            except BaseException:
                # Ctrl-C (the turn is canceled) as the batch came: its events were not seen.
                if native.count:
                    lib.stream_unread(ptr, native.count)
                if handle.end_call():
                    self._free_closed(ptr, native, 0)
                raise
            if handle.end_call():
                # Closed by another thread during the call, which left the freeing to this one.
                self._free_closed(ptr, native, rc)
                return self._closed()
            if step and rc != _STATE:
                self._mode = "step"  # from now on next() is refused until the turn is over
            if rc == _EVENT:
                deltas = native.all_deltas(lib.block_kind_names, lib.block_kind_name)
                if deltas is not None:  # the usual batch: nothing in it to keep for final_message()
                    native.settle()
                    self._batch_exact = True
                    return deltas  # type: ignore[return-value]
                batch = self._decode(native)
                native.settle()
                if batch:
                    return batch
                continue  # only kinds newer than this package: skip them
            if rc == _DONE:
                self._let_go(native)
                self._done = True
                self._pending.clear()
                self._runner = None
                return None
            if rc == _WOULD_BLOCK:
                native.settle()
                return _BLOCKED
            if rc == _STATE and self._mode != "thread":  # not sticky: the stream is unchanged
                if step and self._mode is None:  # read by next() already, or no fibers here
                    self._mode = "thread"
                    self._let_go(native)
                    return _NOT_STEPPED
                if not step and self._mode == "step":  # next() on a stream `async for` steps
                    detail = _native.PantoError()
                    lib.stream_error(ptr, detail)
                    raise from_native(lib, detail, rc)
            if rc == _RESULT_PENDING:  # not sticky: the stream is unchanged
                runner = self._runner
                if runner is not None and runner.running:
                    return _WAIT
                if runner is not None and runner.abandoned:
                    # cancel() came after the library said "pending" and before this look: it
                    # cancels the stream before it abandons the runner, so reading again says
                    # Canceled (not the calls it had stopped waiting for).
                    continue
                if self._closing:
                    return self._closed()
                raise self._result_pending()
            if rc == _APPROVAL_PENDING:  # not sticky: answer, then read again
                if self._closing:
                    return self._closed()
                policy = getattr(self._agent, "_approval", None)
                if policy is None or not self._asked:
                    raise self._approval_pending()
                for call in list(self._asked):
                    self._answer(call.id, _decide(policy, call))
                continue
            if rc < 0:
                error = self._error
                if error is not None and error.status == rc:  # sticky: the same error again
                    raise error.with_traceback(None)
                detail = _native.PantoError()
                lib.stream_error(ptr, detail)
                self._error = from_native(lib, detail, rc)
                self._let_go(native)
                self._pending.clear()
                self._forget_tools()
                raise self._error
            raise Error(f"panto_next_events returned the unexpected status {rc}", status=rc)

    def _free_closed(self, ptr: Any, native: NativeBatch, rc: int) -> None:
        """Frees the stream another thread closed while this one was in the call that returned
        `rc` (`calls` is held): the events it read were not seen, and are given back; the
        failure it returned (canceled, by the close) is the stream's."""
        lib = self._lib
        if rc == _EVENT and native.count:
            lib.stream_unread(ptr, native.count)
        elif rc < 0 and self._error is None:
            detail = _native.PantoError()
            lib.stream_error(ptr, detail)
            self._error = from_native(lib, detail, rc)
        lib.stream_free(ptr)
        self._let_go(native)

    def _let_go(self, native: NativeBatch) -> None:
        """At the turn's end: the array is not needed again (a kept Stream costs nothing, and
        its large batch's token goes back at once)."""
        self._native = None
        native.give_back()

    def _decode(self, native: NativeBatch) -> List[Event]:
        """The events of the batch just read as Python objects. Its ContentDelta events, nearly
        all of them, are made at once when they come in one run (as they do: a batch is the
        content of a message, maybe after its start or before its end); the others one by one."""
        lib = self._lib
        kinds = native.load()
        n = len(kinds)
        deltas = kinds.count(_CONTENT_DELTA)
        start = kinds.index(_CONTENT_DELTA) if deltas else n
        end = start + deltas
        if kinds[start:end].count(_CONTENT_DELTA) != deltas:
            start = end = n  # not one run: every event on its own
        out: List[Event] = []
        exact = True
        for i in range(start):
            event = self._event(native, i)
            if event is None:
                exact = False  # a kind newer than this package: skipped
            else:
                out.append(event)
        if end > start:
            out += native.deltas(start, end, lib.block_kind_names, lib.block_kind_name)
        for i in range(end, n):
            event = self._event(native, i)
            if event is None:
                exact = False
            else:
                out.append(event)
        self._batch_exact = exact
        return out

    def _event(self, native: NativeBatch, i: int) -> Optional[Event]:
        """Event `i` of the batch just read (None for a kind newer than this package),
        keeping what final_message() and the tool calls need."""
        ev = native.events[i]
        string = native.string
        kind = ev.kind
        lib = self._lib
        if kind == _CONTENT_DELTA:
            return _construct(ContentDelta, ev.index, lib.block_kind_name(ev.block_kind), string(ev.text))
        if kind == _BLOCK_START:
            return _construct(BlockStart, ev.index, lib.block_kind_name(ev.block_kind))
        if kind == _BLOCK_COMPLETE:
            # (the C event's `name` is a text block's citations, a server block's type)
            if ev.block_kind == _BLOCK_TEXT:
                block = _construct(BlockComplete, ev.index, "text", string(ev.text), "", string(ev.name))
            else:
                block = _construct(BlockComplete, ev.index, lib.block_kind_name(ev.block_kind), string(ev.text), string(ev.name), "")
            self._msg_blocks.append(block)
            return block
        if kind == _MESSAGE_START:
            request_id = string(ev.request_id)
            if request_id:
                self._request_ids.append(request_id)
            start = _construct(MessageStart, string(ev.id), string(ev.model), request_id)
            self._msg_start = start  # also after a ProviderRetry: the message starts over
            self._msg_blocks = []
            self._msg_details = {}
            self._msg_end = None
            return start
        if kind == _MESSAGE_END:
            end = _construct(MessageEnd, lib.stop_reason_name(ev.stop_reason), string(ev.provider_stop_reason), _usage(ev),
                             _cost(ev.cost))
            self._msg_end = end
            return end
        if kind == _TOOL_DETAILS:
            details = _construct(ToolDetails, ev.index, string(ev.id), string(ev.name))
            self._msg_details[details.index] = details
            return details
        if kind == _TOOL_CALL_START:
            return self._tool_call_start(string(ev.id), string(ev.name), string(ev.text), bool(ev.awaiting_result),
                                         bool(ev.sequential))
        if kind == _TOOL_PROGRESS:
            fraction = ev.fraction
            return _construct(ToolProgress, string(ev.id), string(ev.name), string(ev.text),
                              fraction if fraction >= 0 else None)
        if kind == _APPROVAL_REQUEST:
            import json

            asked = tuple(
                _construct(ApprovalCall, string(c.id), string(c.name), json.loads(string(c.input)))
                for c in (ev.approvals[i] for i in range(ev.approval_count))
            )
            self._asked.extend(asked)
            return _construct(ApprovalRequest, asked)
        if kind == _TOOL_RESULT:
            parts = self._parts(native, ev) if ev.part_count else ()
            return _construct(ToolResult, string(ev.id), string(ev.name), string(ev.text), bool(ev.is_error), parts)
        if kind == _MESSAGE_COMPLETE:
            complete = _construct(MessageComplete, lib.stop_reason_name(ev.stop_reason), string(ev.provider_stop_reason),
                                  _usage(ev), _cost(ev.cost))
            self._complete = complete
            return complete
        if kind == _PROVIDER_RETRY:
            return _construct(ProviderRetry, ev.attempt, ev.delay_ms, ev.http_status or None, string(ev.text))
        if kind == _COMPACTION_START:
            return _construct(CompactionStart, ev.tokens_before, string(ev.text))
        if kind == _COMPACTION_END:
            return _construct(CompactionEnd, ev.tokens_before, ev.tokens_after, ev.message_count, string(ev.text))
        if kind == _USER_MESSAGE:
            return _construct(UserMessage, string(ev.name), string(ev.text))
        return None

    def _parts(self, native: NativeBatch, ev: Any) -> Tuple[Part, ...]:
        """The parts of a TOOL_RESULT event (copied out of the library's memory)."""
        string = native.string
        name = self._lib.part_kind_name
        infos = ev.parts
        return tuple(
            _construct(Part, name(p.kind), string(p.text), string(p.media_type), string(p.name),
                       p.byte_size, p.width, p.height, string(p.data))
            for p in (infos[i] for i in range(ev.part_count))
        )

    def _closed(self) -> Optional[List[Event]]:
        """next() on a freed stream: the end, or its failure."""
        if self._error is not None:
            raise self._error.with_traceback(None)
        if self._done:
            return None
        # Closed (by close(), its agent's close() or another thread) before the turn ended.
        self._error = CanceledError(
            "the stream was closed before the turn ended",
            status=_CANCELED,
            code=self._lib.status_name(_CANCELED),
            error_type="canceled_error",  # as the library's cancel
        )
        raise self._error

    def _give_back(self, ptr: Any) -> None:
        """Drops the events of the current batch the user has not seen and gives them back
        to the library (panto_stream_unread), so that a cancel keeps only what the user saw.
        With the handle's lock held, no thread inside a native call."""
        left = self._batch_it.__length_hint__()  # type: ignore[attr-defined]
        if not left:
            return
        self._batch.clear()  # the batch's iterators end here
        if self._batch_exact:
            self._lib.stream_unread(ptr, left)

    def _tool_call_start(self, call_id: str, name: str, raw: str, awaiting_result: bool, sequential: bool) -> ToolCallStart:
        import json

        call = _construct(ToolCallStart, call_id, name, json.loads(raw) if raw else {}, awaiting_result, sequential)
        if self._asked:  # a call that starts waits for no answer (a steer may have skipped it)
            self._asked = [c for c in self._asked if c.id != call_id]
        if call.awaiting_result:
            self._pending[call.id] = call
            if self._run_tools:
                tool = self._handle.tools.get(call.name)
                if tool is not None and tool.handler is not None:
                    runner = self._runner
                    if runner is None:
                        from ._tool_runner import ToolRunner

                        runner = self._runner = ToolRunner(self._pending)
                    runner.schedule(call, tool)
        return call

    def _result_pending(self) -> ResultPendingError:
        ids = list(self._pending)
        if ids:
            calls = ", ".join(f"{c.id} ({c.name})" for c in self._pending.values())
            what = f"the tool call {calls} awaits" if len(ids) == 1 else f"the tool calls {calls} await"
            message = f"{what} a result: call submit_tool_result() before next()"
        else:
            message = "a tool call awaits a result: call submit_tool_result() before next()"
        return ResultPendingError(message, call_ids=ids, status=_RESULT_PENDING, code=self._lib.status_name(_RESULT_PENDING))

    def _approval_pending(self) -> ApprovalPendingError:
        calls = ", ".join(f"{c.id} ({c.name})" for c in self._asked)
        return ApprovalPendingError(
            f"the tool calls {calls} wait for an answer: call approve() or deny() for each, then read on",
            calls=list(self._asked), status=_APPROVAL_PENDING, code=self._lib.status_name(_APPROVAL_PENDING))

    @property
    def approvals(self) -> List[ApprovalCall]:
        """The calls that wait for an answer: listed by the ApprovalRequest events read so far,
        not approved or denied yet."""
        return list(self._asked)

    def approve(self, call_id: str) -> None:
        """Lets the call `call_id` an ApprovalRequest listed run: its ToolCallStart comes next
        and it runs as any call (its handler too). Raises `panto.InvalidArgumentError` when no
        call of that id waits for an answer. Not while another thread reads the stream."""
        self._answer(call_id, None)

    def deny(self, call_id: str, reason: str = "") -> None:
        """Refuses the call `call_id` an ApprovalRequest listed: its result is an error telling
        the model "The user denied this call: REASON" (its ToolCallStart comes with
        `awaiting_result` False). Errors as `approve()`."""
        if not isinstance(reason, str):
            raise TypeError(f"reason must be a str, not {type(reason).__name__}")
        self._answer(call_id, reason)

    def steer(self, text: str) -> None:
        """Says `text` to the running turn: it joins the conversation at the end of the
        current (or next) tool round, after the round's results in the same user message, and
        the model reads it in the round's next request; with no tool round left, it starts a
        new turn of this stream as `follow_up()` does. A `UserMessage` event marks where it
        entered. Thread-safe: any thread, also while another reads the stream (a web handler
        steering a turn a worker streams). Raises `panto.InvalidArgumentError` for an empty
        text, `panto.StateError` once the stream's turns are over (run a new turn)."""
        self._queue_message(text, follow_up=False)

    def follow_up(self, text: str) -> None:
        """Queues `text` as the user message of a new turn of this stream, which starts when
        the current turn ends: after its MessageComplete the stream goes on with a
        `UserMessage` and the new turn's events (its own usage, cost and budget), and ends
        after the last turn's MessageComplete. Thread-safe and errors as `steer()`."""
        self._queue_message(text, follow_up=True)

    def withdraw_queued(self) -> List[Tuple[str, str]]:
        """Takes back the steers and follow-ups queued that the stream has not taken yet: they
        will not reach the model. Returns them in the order queued, each `(source, text)`
        with source "steer" or "follow_up" (one a tool round or a turn took already comes as
        its `UserMessage`). Thread-safe, as `steer()`; a closed stream has none."""
        import json

        handle = self._handle
        out = _native.PantoString()
        with handle.lock:
            ptr = handle.ptr
            if ptr is None:
                return []
            rc = self._lib.stream_withdraw_queued(ptr, ctypes.byref(out))
            taken = json.loads(_native.copy_string(out)) if rc >= 0 else []
        if rc < 0:
            raise error_class(rc)(self._lib.status_name(rc), status=rc, code=self._lib.status_name(rc))
        return [(m["source"], m["text"]) for m in taken]

    def _queue_message(self, text: str, *, follow_up: bool) -> None:
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, not {type(text).__name__}")
        raw = _native.utf8(text)
        handle = self._handle
        with handle.lock:
            ptr = handle.ptr
            if ptr is None:
                rc = _native.ERR_STATE
            elif follow_up:
                rc = self._lib.stream_follow_up(ptr, _native.string(raw))
            else:
                rc = self._lib.stream_steer(ptr, _native.string(raw))
        if rc == _native.ERR_INVALID_ARGUMENT:
            raise InvalidArgumentError("the message is empty", status=rc, code=self._lib.status_name(rc))
        if rc == _native.ERR_STATE:
            raise StateError("the stream's turns are over (or it is closed): run a new turn",
                             status=rc, code=self._lib.status_name(rc))
        if rc < 0:
            raise error_class(rc)(self._lib.status_name(rc), status=rc, code=self._lib.status_name(rc))

    def _answer(self, call_id: str, reason: Optional[str]) -> None:
        if not isinstance(call_id, str):
            raise TypeError(f"call_id must be a str, not {type(call_id).__name__}")
        raw_id = _native.utf8(call_id)
        handle = self._handle
        rc = _native.ERR_INVALID_ARGUMENT
        error: Optional[Error] = None
        with handle.calls, handle.lock:
            ptr = handle.ptr
            if ptr is not None:
                if reason is None:
                    rc = self._lib.stream_approve(ptr, _native.string(raw_id))
                else:
                    raw_reason = _native.utf8(reason)
                    rc = self._lib.stream_deny(ptr, _native.string(raw_id), _native.string(raw_reason))
                if rc < 0:
                    detail = _native.PantoError()
                    self._lib.stream_error(ptr, detail)
                    error = from_native(self._lib, detail, rc)
        if ptr is None:
            raise InvalidArgumentError(f"no tool call {call_id!r} waits for an answer: the stream is closed",
                                       status=rc, code=self._lib.status_name(rc))
        if error is not None:
            raise error
        self._asked = [c for c in self._asked if c.id != call_id]

    def _drive_tools(self, runner: ToolRunner, block: bool) -> None:
        """Submits the progress and results the handlers sent; with `block` (the library
        waits for results: every ToolCallStart of the message was read), starts the queued
        calls that may start first, and waits for one item while calls run. The calls waiting
        for an ended one start then. A handler's BaseException (not an Exception) is raised
        once the others' are submitted: its call still awaits a result."""
        loop = self._tool_loop
        if block:
            runner.start_ready(loop)
        try:
            items = runner.collect(block)
        except BaseException:  # Ctrl-C while waiting for the handlers: the turn is canceled
            self.cancel()
            raise
        self._submit_items(runner, loop, items)

    def _submit_items(self, runner: ToolRunner, loop: Optional[AbstractEventLoop], items: List[Any]) -> None:
        """_drive_tools' second half: submits what `runner.collect` gave."""
        raised: Optional[BaseException] = None
        for kind, call, value, detail in items:
            if kind == "progress":
                self._progress(call.id, value, detail)
            elif kind == "result":
                try:
                    self._submit(call.id, value, detail)
                except NoSuchCallError:  # answered by hand meanwhile, or closed
                    pass
            elif raised is None:
                raised = value
        if items:
            runner.start_ready(loop)
        if raised is not None:
            raise raised

    def _progress(self, call_id: str, text: str, fraction: Optional[float]) -> None:
        """Forwards a handler's progress to the library, which makes it a TOOL_PROGRESS event;
        dropped when the call has its result already, or the stream is closed."""
        raw_id = _native.utf8(call_id)
        raw_text = _native.utf8(text)
        handle = self._handle
        with handle.calls, handle.lock:
            ptr = handle.ptr
            if ptr is not None:
                self._lib.stream_tool_progress(ptr, _native.string(raw_id), _native.string(raw_text),
                                               -1.0 if fraction is None else fraction)

    def _forget_tools(self) -> None:
        """The turn is over, canceled or closed: its running handlers are abandoned."""
        runner = self._runner
        if runner is not None:
            self._runner = None
            runner.abandon()

    # ---- async iteration ---------------------------------------------------------------

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Event:
        """`async for event in stream`: the turn is stepped on the running loop
        (panto_step_events, which never waits): between batches the task awaits the stream's
        socket (loop.add_reader / add_writer) or its next deadline, with no thread of its own,
        so one loop runs thousands of turns. Sync tool handlers run in worker threads, `async
        def` handlers as tasks on the running loop. Canceling the awaiting task cancels the
        turn (see `cancel()`) and raises `asyncio.CancelledError` at once. Where the library
        cannot step (not Linux on x86_64 or aarch64), or for a stream read by `next()`
        first, each `next()` runs in a worker thread (`asyncio.to_thread`) instead. Once `async
        for` stepped the stream, `next()` raises `panto.StateError` until the turn is over."""
        import asyncio  # imported here: it costs more than all the rest of `import panto`

        if self._mode != "thread":
            if self._waiter is None:
                from ._async_wait import Waiter

                self._waiter = Waiter()
                self._wait = _native.PantoWait()
                self._wait_ref = ctypes.byref(self._wait)
            stepped = await self._astep(asyncio.get_running_loop())
            if stepped is not None:
                return stepped
            if self._mode != "thread":
                raise StopAsyncIteration
        try:
            event = await asyncio.to_thread(self._next_in_thread, asyncio.get_running_loop())
        except asyncio.CancelledError:
            self.cancel()  # the worker's next() returns at once
            raise
        if event is None:
            raise StopAsyncIteration
        return event

    async def _astep(self, loop: AbstractEventLoop) -> Optional[Event]:
        """The next event by stepping (None at the end, or when the stream cannot be stepped:
        `_mode` is then "thread"), awaiting on `loop` what the steps wait for."""
        import asyncio

        waiter = self._waiter
        while True:
            got = self._step_batch(loop)
            if got is None or got is _NOT_STEPPED:
                return None
            try:
                if got is _BLOCKED:
                    await waiter.io(loop, self._wait)
                elif got is _WAIT:  # the library waits for the results of calls that run
                    runner = self._runner
                    if runner is not None:
                        runner.start_ready(loop)
                        await waiter.items(loop, runner)
                        self._submit_items(runner, loop, runner.collect(False))
                else:
                    batch: Iterator[Event] = got
                    for event in batch:
                        return event
            except asyncio.CancelledError:
                self.cancel()
                self._finish_canceled(loop)
                raise

    def _step_batch(self, loop: AbstractEventLoop) -> Any:
        """_next_batch for `async for`, which never waits: the iterator of the current batch
        while it has events, else of the next batch; None at the end; _BLOCKED (wait for
        `_wait`), _WAIT (tool calls run) or _NOT_STEPPED; raises the turn's failure."""
        handle = self._handle
        it = self._batch_it
        if it.__length_hint__():  # type: ignore[attr-defined]
            return it
        runner = self._runner
        if runner is not None and runner.busy and handle.ptr is not None:
            self._submit_items(runner, loop, runner.collect(False))
        with handle.calls:
            it = self._batch_it
            if it.__length_hint__():  # type: ignore[attr-defined]  # read by another thread meanwhile
                return it
            self._batch.clear()
            batch = self._fetch(step=True)
            if batch is None or batch is _BLOCKED or batch is _WAIT or batch is _NOT_STEPPED:
                return batch
            self._batch = handle.batch = batch
            it = self._batch_it = iter(batch)
            return it

    def _finish_canceled(self, loop: AbstractEventLoop) -> None:
        """After the task of `async for` was canceled, and so the turn: steps it to its
        canceled end, which keeps the message (at once: the canceled socket is ready; in a
        retry's delay, at its deadline, by a task of its own)."""
        try:
            if self._step_batch(loop) is not _BLOCKED:
                return
        except Error:
            return

        async def finish() -> None:
            try:
                while self._step_batch(loop) is _BLOCKED:
                    await self._waiter.io(loop, self._wait)
            except Error:
                pass

        task = loop.create_task(finish())
        _finishing.add(task)
        task.add_done_callback(_finishing.discard)

    def _next_in_thread(self, loop: AbstractEventLoop) -> Optional[Event]:
        with self._async_lock:  # a canceled task's worker may still be returning
            self._tool_loop = loop  # `async def` handlers run on it
            try:
                return self.__next__()
            except StopIteration:
                return None
            finally:
                self._tool_loop = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()

    # ---- tool results ------------------------------------------------------------------

    @property
    def pending_calls(self) -> Tuple[ToolCallStart, ...]:
        """The host tool calls that await a result (from `submit_tool_result` or `run_tool`),
        in order. Calls the stream will run itself at the next `next()` are included."""
        return tuple(self._pending.values())

    def submit_tool_result(self, call_id: str, content: Any, is_error: bool = False) -> None:
        """Gives the result of the tool call `call_id` (a ToolCallStart with
        `awaiting_result`): `content` goes to the model (a str as is; media — a `panto.Image`,
        `panto.Document`, `panto.Media` or bytes — or a list of str and media as parts,
        fitted by panto; anything else as JSON); `is_error` marks a failure (the turn goes
        on; the model sees the error).

        Raises `panto.NoSuchCallError` when no call of that id awaits a result (an unknown id,
        one already answered, a stream that is over or closed)."""
        if not isinstance(call_id, str):
            raise TypeError(f"call_id must be a str, not {type(call_id).__name__}")
        if isinstance(content, str):
            result: Union[str, List[Union[str, Media]]] = content
        else:
            from .tools import to_result

            result = to_result(content)
        self._submit(call_id, result, bool(is_error))

    def run_tool(self, call: Union[ToolCallStart, str]) -> ToolResult:
        """Runs the registered handler of a pending call (a ToolCallStart or its id) now and
        submits its result, as the automatic mode does; returns that result (the stream's
        ToolResult event for it follows, as for any call). For turns run with
        `run_tools=False`, e.g. to ask before running a tool.

        Raises `panto.NoSuchCallError` when the call does not await a result, LookupError
        when its tool has no handler registered from Python."""
        call_id = call.id if isinstance(call, ToolCallStart) else call
        pending = self._pending.get(call_id)
        if pending is None or self._handle.ptr is None:
            raise NoSuchCallError(
                f"no tool call {call_id!r} awaits a result",
                call_id=call_id,
                status=_NO_SUCH_CALL,
                code=self._lib.status_name(_NO_SUCH_CALL),
            )
        tool = self._handle.tools.get(pending.name)
        if tool is None or tool.handler is None:
            raise LookupError(f"the tool {pending.name!r} has no handler registered with this agent")
        content, is_error = _execute(tool, pending)
        self._submit(call_id, content, is_error)
        if isinstance(content, str):
            return ToolResult(call_id, pending.name, content, is_error, ())
        # The parts as given; the stream's ToolResult event reports them as sent (fitted).
        text = "\n".join(p for p in content if isinstance(p, str))
        return ToolResult(call_id, pending.name, text, is_error, ())

    def _submit(self, call_id: str, content: Content, is_error: bool) -> None:
        raw_id = _native.utf8(call_id)
        result = _native.PantoToolResult()
        result.is_error = 1 if is_error else 0
        result.call_id = _native.string(raw_id)
        keep: Any = None
        if isinstance(content, str):
            raw = _native.utf8(content)
            result.content = _native.string(raw)
        else:
            array, keep = native_parts(content)
            result.parts = ctypes.cast(array, ctypes.POINTER(_native.PantoPart))
            result.part_count = len(array)
        handle = self._handle
        with handle.calls, handle.lock:
            ptr = handle.ptr
            if ptr is None:
                raise NoSuchCallError(
                    f"no tool call {call_id!r} awaits a result: the stream is closed",
                    call_id=call_id,
                    status=_NO_SUCH_CALL,
                    code=self._lib.status_name(_NO_SUCH_CALL),
                )
            rc = self._lib.submit_tool_result(ptr, ctypes.byref(result))
            if rc < 0:  # the detail is on the stream
                detail = _native.PantoError()
                self._lib.stream_error(ptr, detail)
                error = from_native(self._lib, detail, rc)
        if rc < 0:
            if isinstance(error, NoSuchCallError):
                error.call_id = call_id
            raise error
        self._pending.pop(call_id, None)

    def text(self) -> Iterator[str]:
        """Yields only the fragments of text blocks (not thinking, not tool calls)."""
        for ev in self:
            if type(ev) is ContentDelta and ev.block_kind == "text":
                yield ev.text

    async def atext(self) -> AsyncIterator[str]:
        """`text()` for coroutines: `async for piece in stream.atext()` reads the turn as
        `async for` does, never blocking the event loop."""
        async for ev in self:
            if type(ev) is ContentDelta and ev.block_kind == "text":
                yield ev.text

    def final_message(self) -> AssistantMessage:
        """Reads the rest of the turn and returns its last assistant message (in a turn with
        tool calls, the one after the last tool round) as a `panto.AssistantMessage`.

        It iterates as a `for` loop would, from where the stream is (events already read,
        e.g. by a partial `for` loop or `text()`, count too): tool handlers run, and a failure
        raises its `panto.Error`, as `next()` does (so does `panto.ResultPendingError` when
        a tool call awaits a result you have to give). Once the turn is over, calling it again
        returns the same message. `usage` is the last message's own, `turn_usage` the turn's
        total (MessageComplete). In a coroutine, `await stream.afinal_message()`."""
        for _ in self:
            pass
        return self._built_message()

    async def afinal_message(self) -> AssistantMessage:
        """`final_message()` for coroutines: reads the rest of the turn as `async for` does
        (the loop goes on meanwhile), then returns the last assistant message."""
        async for _ in self:
            pass
        return self._built_message()

    def _built_message(self) -> AssistantMessage:
        start, end, complete = self._msg_start, self._msg_end, self._complete
        if start is None or end is None or complete is None:
            rc = _native.ERR_STATE
            message = "the turn ended without a complete assistant message"
            raise StateError(message, status=rc, code=self._lib.status_name(rc))
        from .message import build_message  # only here: it costs as much as the events

        return build_message(start, self._msg_blocks, self._msg_details, end, complete)

    def final_json(self, output_type: Any = None) -> Any:
        """Reads the rest of the turn, as `final_message()` does, and returns its answer (the
        last assistant message's text) parsed as JSON, checked by the library against the
        turn's `response_format` (a json_schema format: of the schema, by the rules tool
        inputs are checked by). With `output_type` (a dataclass, a TypedDict or a pydantic model class, as
        `Agent.parse` takes it) the value is made into that type.

        Raises `panto.OutputError` when the answer is not that JSON (its `output` is the
        text; the turn itself ended normally), `panto.StateError` when the turn had no JSON
        response_format or the stream is closed, and the turn's failure as `next()` does.
        In a coroutine, `await stream.afinal_json(...)`."""
        for _ in self:
            pass
        return self._parsed_json(output_type)

    async def afinal_json(self, output_type: Any = None) -> Any:
        """`final_json()` for coroutines: reads the rest of the turn as `async for` does, then
        returns the answer parsed."""
        async for _ in self:
            pass
        return self._parsed_json(output_type)

    def _parsed_json(self, output_type: Any) -> Any:
        out = _native.PantoString()
        handle = self._handle
        with handle.calls, handle.lock:
            ptr = handle.ptr
            if ptr is None:
                rc = _native.ERR_STATE
                raise StateError("final_json(): the stream is closed", status=rc, code=self._lib.status_name(rc))
            rc = self._lib.stream_final_json(ptr, ctypes.byref(out))
            if rc < 0:
                detail = _native.PantoError()
                self._lib.stream_error(ptr, detail)
                raise from_native(self._lib, detail, rc)
            text = _native.copy_string(out)
        import json

        value = json.loads(text)
        if output_type is None:
            return value
        from ._output import converter

        try:
            return converter(output_type)(value)
        except (TypeError, ValueError) as exc:  # e.g. an enum value the schema let through
            rc = _native.ERR_OUTPUT
            raise OutputError(f"the answer does not make a {getattr(output_type, '__name__', 'value')}: {exc}",
                              output=text, status=rc, code=self._lib.status_name(rc)) from None

    @property
    def request_ids(self) -> List[str]:
        """The provider's request ids of the turn's requests so far, in order (the
        `request_id` of each MessageStart that had one): what a provider's support asks for."""
        return list(self._request_ids)

    # ---- state -------------------------------------------------------------------------

    @property
    def error(self) -> Optional[Error]:
        """The error that ended the turn, or None."""
        return self._error

    @property
    def done(self) -> bool:
        """True once the turn ended normally (the iteration reached its end)."""
        return self._done

    @property
    def closed(self) -> bool:
        return self._handle.ptr is None

    @property
    def agent(self) -> Any:
        """The panto.Agent that runs the turn."""
        return self._agent

    # ---- canceling and reopening -------------------------------------------------------

    def cancel(self) -> None:
        """Cancels the turn. Thread-safe: any thread may call it, also while another thread is
        blocked in `next()`, which then raises `panto.CanceledError` promptly (as does every
        later `next()`). What the model had said so far stays in the conversation as an
        assistant message with "stop_reason": "aborted"; the agent can run the next turn.
        Canceling twice, or a stream that is over or closed, does nothing."""
        handle = self._handle
        with handle.lock:
            ptr = handle.ptr
            if ptr is None:
                return
            # Events read ahead and not seen are not part of the message: given back, unless
            # a native call is running (on this stream: its events are another thread's; on
            # the agent: cancel() does not wait).
            calls = handle.calls
            if not handle.busy and calls.acquire(False):
                try:
                    self._give_back(ptr)
                finally:
                    calls.release()
            self._lib.stream_cancel(ptr)
        runner = self._runner
        if runner is not None:  # a next() waiting for the handlers returns
            runner.abandon()
        # An `async for` that waits steps at once (the library wakes its descriptor too, but
        # a retry's delay has none when no eventfd could be made: PantoWait.fd -1).
        waiter = self._waiter
        if waiter is not None:
            waiter.wake()

    def reopen(self) -> Self:
        """Runs the failed turn again and returns this stream, ready to iterate again. Only
        for a turn that failed when opening the provider call (an HTTP error answer such as a
        400, or a connection failure, before any event of the message): typically after
        `agent.set_config(...)` fixed the cause. The user message is not appended twice.

        Raises `panto.StateError` when the stream did not fail that way (it is running, over,
        failed later in the stream, or closed), `panto.BusyError` when another stream of the
        agent is unfinished."""
        handle = self._handle
        with handle.calls, handle.lock:
            ptr = handle.ptr
            rc = _native.ERR_STATE if ptr is None else self._lib.stream_reopen(ptr)
        if rc < 0:
            code = self._lib.status_name(rc)
            if rc == _native.ERR_STATE:
                if ptr is None:
                    why = "the stream is closed"
                elif self._error is not None:
                    why = f"it failed with {self._error.code}, not when opening the provider call"
                elif self._done:
                    why = "the turn is over"
                else:
                    why = "the turn has not failed"
                message = f"reopen() runs again a turn that failed when opening the provider call; {why}"
                raise StateError(message, status=rc, code=code)
            if rc == _native.ERR_BUSY:
                raise BusyError("reopen(): another stream of the agent is unfinished", status=rc, code=code)
            raise error_class(rc)(f"panto_stream_reopen failed ({code})", status=rc, code=code)
        self._error = None
        self._done = False
        self._pending.clear()
        self._forget_tools()
        self._request_ids = []
        self._batch = []
        self._batch_it = iter(self._batch)
        return self

    # ---- lifetime ----------------------------------------------------------------------

    def close(self) -> None:
        """Frees the native stream, closing its connection. A turn that had not ended ends as a
        canceled one does (see `cancel()`): what the model had said, up to the last event
        handed out, stays in the conversation with "stop_reason": "aborted", and later
        `next()` calls raise `panto.CanceledError`. May be called from another thread than the
        one iterating: a `next()` blocked there raises `panto.CanceledError` at once (and frees
        the stream as it returns). Safe to call more than once."""
        self._close()

    def _close(self, lock_timeout: float = -1) -> None:
        handle = self._handle
        if handle.ptr is None:
            return
        self._closing = True
        waiter = self._waiter
        if waiter is not None:  # an `async for` waiting for the stream's socket returns
            waiter.wake()
        self._pending.clear()
        self._forget_tools()
        handle.streams.discard(handle)
        if self._complete is not None:  # MessageComplete came: the turn had ended
            self._done = True
        if free_handle(handle, lock_timeout=lock_timeout, give_back=self._give_back):
            native = self._native
            if native is not None:  # no call on the stream from now on
                self._let_go(native)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self._close(lock_timeout=0.5)
        except Exception:  # interpreter shutdown: never raise from a finalizer
            pass

    def __repr__(self) -> str:
        state = "closed" if self.closed else "done" if self._done else "failed" if self._error else "open"
        return f"<panto.Stream {state}>"


def _execute(tool: Tool, call: ToolCallStart) -> Tuple[Union[str, List[Union[str, Media]]], bool]:
    """Runs a tool's handler on a call: (content, is_error). An Exception becomes an error
    result; BaseExceptions that are not Exceptions (KeyboardInterrupt, SystemExit) propagate."""
    try:
        content = tool.invoke(call.input)
    except Exception as exc:
        from ._tool_failure import failure_content  # only when a tool fails: keeps `import panto` cheap

        return failure_content(call, exc), True
    return content, False
