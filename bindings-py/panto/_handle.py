"""The native stream pointer and how it is freed, safely against threads and finalizers.

Shared by stream.py (which reads the stream) and agent.py (which makes streams and frees those
still open when it closes), so that neither imports the other for it.
"""

from __future__ import annotations

from _thread import allocate_lock, get_ident

from . import _native

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _thread import LockType
    from typing import Any, Callable, Dict, List, Optional, Set

    from .tools import Tool


class StreamHandle:
    """The native stream pointer, shared by the Stream and its Agent. The Agent frees the
    handles it still holds before it frees itself, so freeing is safe in any order (garbage
    collection of a cycle, interpreter shutdown). `ptr` is None once freed, or once a close
    left the freeing to the thread inside a call on it (`busy`).

    Threads: the C API is not thread-safe. `calls`, the agent's reentrant lock, is held during
    every native call on the agent or one of its streams, and while reading what the call left
    (events, error detail), except panto_stream_cancel, which is made under `lock` alone and so
    never waits. Reentrant: a finalizer that runs between two native calls of the thread
    holding it (garbage collection) frees its stream at once. `orphans` is the agent's list
    of native streams whose finalizer found `calls` taken by another thread: the next holder
    frees them (free_orphans).

    `lock` guards `ptr`. `busy` is the ident of the thread inside (or about to enter) a native
    call that may block (panto_next_events) and reads the batch it filled, 0 when none: a
    close meanwhile cancels that call and leaves the freeing to that thread, which frees the
    stream when its call returned (see `end_call`, Stream._read), so that no call ever runs on a freed
    stream. `batch` is the list of the events the Stream read and has still to hand out: a
    close empties it, so that they are not handed out. `tools` and `streams` are the agent's
    (its host tools by name, and its open handles)."""

    __slots__ = ("ptr", "lib", "lock", "calls", "orphans", "busy", "batch", "tools", "streams")

    def __init__(self, lib: _native.Library, ptr: Any, calls: Any, orphans: List[Any], tools: Dict[str, Tool], streams: Set[StreamHandle]) -> None:
        self.ptr: Optional[Any] = ptr  # a non-NULL _native.StreamPtr, or None
        self.lib: _native.Library = lib
        self.lock: LockType = allocate_lock()
        self.calls: Any = calls  # a _thread.RLock
        self.orphans: List[Any] = orphans
        self.busy: int = 0
        self.batch: List[Any] = []
        self.tools: Dict[str, Tool] = tools
        self.streams: Set[StreamHandle] = streams

    def begin_call(self) -> Optional[Any]:
        """Before a native call that may block (`calls` is held): the pointer, marked busy by
        this thread; None when the stream is closed."""
        with self.lock:
            ptr = self.ptr
            if ptr is not None:
                self.busy = get_ident()
            return ptr

    def end_call(self) -> bool:
        """After that call returned (`calls` is held): False when the stream is still open;
        True when another thread closed it meanwhile and so left it to this one to free (with
        `ptr`, which this thread still holds), once it gave back the events the call read."""
        with self.lock:
            self.busy = 0
            return self.ptr is None

    def cancel_busy(self) -> bool:
        """Cancels only while a thread is inside panto_next_events (for Ctrl-C)."""
        with self.lock:
            ptr = self.ptr
            if ptr is None or not self.busy:
                return False
            self.lib.stream_cancel(ptr)
            return True


def free_handle(handle: StreamHandle, *, lock_timeout: float = -1, give_back: Optional[Callable[[Any], None]] = None) -> bool:
    """Closes the native stream of `handle` (once; later calls do nothing): panto_stream_free,
    which ends an unfinished turn by the close policy (what was received stays in the
    conversation, marked "aborted"). `give_back(ptr)` first gives the library back the events
    read ahead that the user did not see (Stream._give_back).

    When a thread is inside a native call on the stream (a `next()` blocked on another
    thread), the call is canceled and that thread frees the stream when it returns
    (StreamHandle.end_call): returns False then, True when the stream was freed here.

    Finalizers pass a `lock_timeout`: when the handle's lock is not free by then (a daemon
    thread frozen by the interpreter's finalization while it held it), the stream is left
    unfreed rather than waited for forever; and they never wait for `calls`: when another
    thread holds it, the stream is queued for that thread to free (free_orphans)."""
    lib = handle.lib
    if not handle.lock.acquire(timeout=lock_timeout):
        return False
    try:
        ptr = handle.ptr
        if ptr is None:
            return False
        busy = handle.busy
        if busy == get_ident():  # e.g. a signal handler that runs inside next()
            raise RuntimeError("a panto stream cannot be closed from inside its own next()")
        handle.ptr = None  # no native call starts from now on; cancel() does nothing
        if busy:  # the thread in next() returns at once, and frees it
            lib.stream_cancel(ptr)
            return False
    finally:
        handle.lock.release()
    calls = handle.calls
    if lock_timeout < 0:
        calls.acquire()
    elif not calls.acquire(False):
        handle.orphans.append(ptr)
        return True
    try:
        free_orphans(lib, handle.orphans)
        if give_back is not None:
            give_back(ptr)
        handle.batch.clear()  # what was read ahead is not handed out after the close
        lib.stream_free(ptr)
    finally:
        calls.release()
    return True


def free_orphans(lib: _native.Library, orphans: List[Any]) -> None:
    """Frees the native streams a finalizer queued (see free_handle); `calls` is held."""
    while orphans:
        lib.stream_free(orphans.pop())
