"""Stream: the events of one turn, as an iterator and a context manager."""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Any, Iterator, Optional, Type

from . import _native
from .errors import CanceledError, Error, from_native
from .events import BlockComplete, BlockStart, ContentDelta, Event, MessageComplete, MessageStart, Usage

if TYPE_CHECKING:
    from .agent import Agent

__all__ = ["Stream"]

_EVENT = _native.EVENT
_DONE = _native.DONE
_MESSAGE_START = _native.EVENT_MESSAGE_START
_BLOCK_START = _native.EVENT_BLOCK_START
_CONTENT_DELTA = _native.EVENT_CONTENT_DELTA
_BLOCK_COMPLETE = _native.EVENT_BLOCK_COMPLETE
_MESSAGE_COMPLETE = _native.EVENT_MESSAGE_COMPLETE
_copy = _native.copy_string


class StreamHandle:
    """The native stream pointer, shared by the Stream and its Agent. The Agent frees the
    handles it still holds before it frees itself, so freeing is safe in any order (garbage
    collection of a cycle, interpreter shutdown). `ptr` is None once freed."""

    __slots__ = ("ptr",)

    def __init__(self, ptr: Any) -> None:
        self.ptr: Optional[Any] = ptr  # a non-NULL _native.StreamPtr, or None


class Stream:
    """The events of one turn (made by `Agent.run`).

    Iterate it to read the events; iteration ends after MessageComplete. A failure raises the
    matching `panto.Error` subclass, and every later `next()` raises the same error again.
    `close()` (or leaving a `with` block) frees the native stream and its connection; a turn
    closed before it ended commits no assistant message and later `next()` calls raise
    `panto.CanceledError`.

    A stream is not thread-safe: use it, and its agent, from one thread at a time.
    """

    def __init__(self, agent: "Agent", handle: StreamHandle) -> None:
        # Made by Agent.run only.
        self._agent = agent  # the C API needs the agent to outlive its streams
        self._lib = agent._lib
        self._next = self._lib.next_event
        self._block_kind_name = self._lib.block_kind_name
        self._handle = handle
        self._ev = _native.PantoEvent()  # reused for every event
        self._done = False
        self._error: Optional[Error] = None

    # ---- iteration ---------------------------------------------------------------------

    def __iter__(self) -> "Stream":
        return self

    def __next__(self) -> Event:
        ptr = self._handle.ptr
        if ptr is None:
            return self._next_closed()
        ev = self._ev
        while True:
            rc = self._next(ptr, ev)
            if rc == _EVENT:
                kind = ev.kind
                if kind == _CONTENT_DELTA:
                    return ContentDelta(ev.index, self._block_kind_name(ev.block_kind), _copy(ev.text))
                if kind == _BLOCK_START:
                    return BlockStart(ev.index, self._block_kind_name(ev.block_kind))
                if kind == _BLOCK_COMPLETE:
                    return BlockComplete(ev.index, self._block_kind_name(ev.block_kind), _copy(ev.text))
                if kind == _MESSAGE_START:
                    return MessageStart(_copy(ev.id), _copy(ev.model))
                if kind == _MESSAGE_COMPLETE:
                    u = ev.usage
                    return MessageComplete(
                        self._lib.stop_reason_name(ev.stop_reason),
                        _copy(ev.provider_stop_reason),
                        Usage(
                            u.input_tokens,
                            u.output_tokens,
                            u.cache_read_tokens,
                            u.cache_write_tokens,
                            u.reasoning_tokens,
                        ),
                    )
                continue  # a kind newer than this package: skip it
            if rc == _DONE:
                self._done = True
                raise StopIteration
            if rc < 0:
                detail = _native.PantoError()
                self._lib.stream_error(ptr, detail)
                self._error = from_native(self._lib, detail, rc)
                raise self._error
            raise Error(f"panto_next_event returned the unexpected status {rc}", status=rc)

    def _next_closed(self) -> Event:
        if self._error is not None:
            raise self._error.with_traceback(None)
        if self._done:
            raise StopIteration
        self._error = CanceledError("the stream was closed before the turn ended")
        raise self._error

    def text(self) -> Iterator[str]:
        """Yields only the fragments of text blocks (not thinking, not tool calls)."""
        for ev in self:
            if type(ev) is ContentDelta and ev.block_kind == "text":
                yield ev.text

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
    def agent(self) -> "Agent":
        return self._agent

    # ---- lifetime ----------------------------------------------------------------------

    def close(self) -> None:
        """Frees the native stream, closing its connection. Safe to call more than once."""
        handle = self._handle
        ptr = handle.ptr
        if ptr is None:
            return
        handle.ptr = None
        self._agent._forget_stream(handle)
        self._lib.stream_free(ptr)

    def __enter__(self) -> "Stream":
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
            self.close()
        except Exception:  # interpreter shutdown: never raise from a finalizer
            pass

    def __repr__(self) -> str:
        state = "closed" if self.closed else "done" if self._done else "failed" if self._error else "open"
        return f"<panto.Stream {state}>"
