"""Ctrl-C for a `next()` blocked in native code on the main thread.

Python runs signal handlers only between bytecodes of the main thread, so a SIGINT that
arrives while the main thread waits in `panto_next_events` (the GIL released, as ctypes.CDLL
does) would raise KeyboardInterrupt only once the provider sends something. This module
makes it prompt: the native call is canceled (`panto_stream_cancel`), returns at once, and
the KeyboardInterrupt is raised from `next()`.

Only on the main thread (elsewhere the native call is made directly), and only when SIGINT
means KeyboardInterrupt (its handler is `signal.default_int_handler`, checked when the signal
comes). Two ways:

- Fast (the usual one): during the native call panto owns Python's signal wakeup fd
  (`signal.set_wakeup_fd`), which the C-level signal handler writes the signal number to.
  A daemon thread reading the other end cancels the stream on a SIGINT. Cost: two
  `set_wakeup_fd` calls per native call (about 1.5 µs), which reads a whole batch of events;
  the fd is given back after each call.
- Fallback, when someone else holds the wakeup fd (an event loop, a GUI toolkit): the native
  call runs on a helper thread while the main thread waits on a lock, which signals do
  interrupt; on KeyboardInterrupt the stream is canceled and the helper waited for. Costs a
  thread handoff per native call (about 35 µs).

Imported by the first native call that may block (stream.py), not by `import panto`.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import threading
from _thread import start_new_thread

TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal as _signal
    from typing import Any, Callable, Optional, Tuple
else:
    try:  # what the signal module wraps: importing that one costs milliseconds (it brings enum)
        import _signal
    except ImportError:  # pragma: no cover - not CPython
        import signal as _signal

__all__ = ["blocking_call"]

_SIGINT = int(_signal.SIGINT)
_default_int_handler = _signal.default_int_handler
_getsignal = _signal.getsignal  # slow (µs): never called per event
_set_wakeup_fd = _signal.set_wakeup_fd
_get_ident = threading.get_ident

try:  # runs the pending Python signal handlers now (raises their exception)
    _check_signals: Optional[Callable[[], int]] = ctypes.pythonapi.PyErr_CheckSignals
except AttributeError:  # not CPython
    _check_signals = None


class _Target:
    """What the daemon thread cancels: the handle whose native call the main thread is in."""

    __slots__ = ("handle", "fired")

    def __init__(self) -> None:
        self.handle: Any = None  # a stream.StreamHandle
        self.fired = False  # the stream was canceled because of a SIGINT


class _Watcher:
    """The read end of panto's wakeup fd, and the daemon thread that reads it."""

    def __init__(self) -> None:
        self.target = _Target()
        self.main_ident = threading.main_thread().ident
        self.fd = -1  # the write end, once the thread runs
        self._lock = threading.Lock()
        # Held by the thread while it cancels (it holds the stream's lock then). At exit it is
        # taken for good: a daemon thread frozen by the interpreter's finalization while it
        # held a stream's lock would make that stream's finalizer wait forever.
        self._canceling = threading.Lock()
        atexit.register(self._quiesce)

    def start(self) -> int:
        """Starts the thread on first use; returns the write end."""
        with self._lock:
            if self.fd < 0:
                r, w = os.pipe()  # non-inheritable by default
                os.set_blocking(w, False)  # set_wakeup_fd requires it
                # A bare thread, daemon-like: threading.Thread.start() would wait for it to run.
                start_new_thread(self._run, (r,))
                self.fd = w
        return self.fd

    def _quiesce(self) -> None:
        self._canceling.acquire()

    def after_fork(self) -> None:
        # The child has no thread: start another one on first use. The forking thread is
        # the child's main thread.
        self.fd = -1
        self.target = _Target()
        self._lock = threading.Lock()
        self._canceling = threading.Lock()
        self.main_ident = _get_ident()

    def _run(self, r: int) -> None:
        target = self.target
        canceling = self._canceling
        while True:
            try:
                data = os.read(r, 512)
            except OSError:
                return
            if not data:
                return
            if _SIGINT in data and _getsignal(_SIGINT) is _default_int_handler:
                with canceling:
                    handle = target.handle
                    if handle is not None and handle.cancel_busy():
                        target.fired = True


class _Runner:
    """A helper thread that makes the native call while the main thread waits."""

    def __init__(self) -> None:
        self.after_fork()

    def after_fork(self) -> None:
        self._go = threading.Lock()
        self._go.acquire()
        self._done = threading.Lock()
        self._done.acquire()
        self._job: Any = None
        self._result: Any = None
        self._started = False

    def _run(self) -> None:
        while True:
            self._go.acquire()
            fn, args = self._job
            try:
                self._result = (fn(*args), None)
            except BaseException as e:  # handed to the caller
                self._result = (0, e)
            self._done.release()

    def call(self, handle: Any, fn: Callable[..., int], args: Tuple[Any, ...]) -> int:
        if not self._started:
            threading.Thread(target=self._run, name="panto-next", daemon=True).start()
            self._started = True
        self._job = (fn, args)
        self._go.release()
        try:
            self._done.acquire()  # signal handlers run while it waits; their exceptions raise
        except BaseException:
            handle.cancel_busy()  # the native call returns at once
            while True:
                try:
                    self._done.acquire()
                    break
                except BaseException:  # another Ctrl-C while it returns: keep waiting
                    pass
            raise
        rc, exc = self._result
        self._result = None
        if exc is not None:
            raise exc
        return int(rc)


_watcher = _Watcher()
_runner = _Runner()


def _after_fork_in_child() -> None:
    _watcher.after_fork()
    _runner.after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def blocking_call(handle: Any, fn: Callable[..., int], *args: Any) -> int:
    """`fn(*args)`, a native call that may block on the stream of `handle`, made so that
    Ctrl-C interrupts it (see the module's doc). `handle.busy` must be set by the caller."""
    watcher = _watcher
    if _get_ident() != watcher.main_ident:
        return fn(*args)
    fd = watcher.fd
    if fd < 0:
        fd = watcher.start()
    try:
        old = _set_wakeup_fd(fd)
    except ValueError:  # not the main interpreter
        return fn(*args)
    if old != -1 and old != fd:  # someone else's: give it back
        _set_wakeup_fd(old)
        if _getsignal(_SIGINT) is _default_int_handler:
            return _runner.call(handle, fn, args)  # interruptible on a helper thread
        return fn(*args)  # SIGINT is not KeyboardInterrupt: nothing to interrupt for
    target = watcher.target
    target.fired = False
    target.handle = handle
    try:
        rc = fn(*args)
    finally:
        target.handle = None
        _set_wakeup_fd(-1)
    if target.fired:
        target.fired = False
        if _check_signals is not None:
            _check_signals()  # raises the KeyboardInterrupt here rather than a few bytecodes on
    return rc
