"""What a stepped stream waits for (panto_step_events returned PANTO_WOULD_BLOCK), awaited on
the running asyncio loop: its descriptor (add_reader / add_writer, removed after) or its
deadline (CLOCK_MONOTONIC nanoseconds, as time.monotonic_ns gives them, turned into the loop's
own clock for call_at), whichever comes first. Works on any loop with add_reader (the default
one on Linux, uvloop)."""

from __future__ import annotations

import asyncio
import time

from . import _native

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Optional

__all__ = ["Waiter"]


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


class Waiter:
    """The one wait of a stream at a time: the tasks that iterate it share it (a descriptor
    takes one reader on a loop), and `wake` ends it from any thread (a close)."""

    __slots__ = ("fut", "unregister")

    def __init__(self) -> None:
        self.fut: Optional[asyncio.Future[None]] = None
        self.unregister: Optional[Callable[[], None]] = None

    async def io(self, loop: asyncio.AbstractEventLoop, wait: _native.PantoWait) -> None:
        """Until wait.fd is ready for wait.events, or wait.deadline_ns has passed."""
        fut = self.fut
        if fut is not None:  # another task of this stream waits already: the same wait
            await asyncio.shield(fut)
            return
        fut = self.fut = loop.create_future()
        fd, deadline = wait.fd, wait.deadline_ns
        timer = None
        if deadline >= 0:
            timer = loop.call_at(loop.time() + (deadline - time.monotonic_ns()) / 1e9, _resolve, fut)
        remove: Any = None
        if fd >= 0:
            if wait.events & _native.WAIT_WRITE:
                loop.add_writer(fd, _resolve, fut)
                remove = loop.remove_writer
            else:
                loop.add_reader(fd, _resolve, fut)
                remove = loop.remove_reader

        def unregister() -> None:
            self.unregister = None
            if remove is not None:
                remove(fd)
            if timer is not None:
                timer.cancel()

        self.unregister = unregister
        try:
            await fut
        finally:
            self.fut = None
            if self.unregister is not None:
                self.unregister()

    async def items(self, loop: asyncio.AbstractEventLoop, runner: Any) -> None:
        """Until the tool runner `runner` has an item (a result, progress), or calls no more."""
        fut = self.fut
        if fut is not None:
            await asyncio.shield(fut)
            return
        fut = self.fut = loop.create_future()
        runner.notify = lambda: loop.call_soon_threadsafe(_resolve, fut)
        try:
            if not runner.has_items() and runner.running:  # checked after notify is set: none lost
                await fut
        finally:
            self.fut = None
            runner.notify = None

    def wake(self) -> None:
        """Ends the wait (a close: the descriptor is about to be closed, so it is unregistered
        now when on the loop's thread). Any thread."""
        fut = self.fut
        if fut is None:
            return
        loop = fut.get_loop()
        try:
            try:
                on_loop = asyncio.get_running_loop() is loop
            except RuntimeError:  # no loop runs on this thread
                on_loop = False
            if on_loop:
                unregister = self.unregister
                if unregister is not None:
                    unregister()
                _resolve(fut)
            else:
                loop.call_soon_threadsafe(_resolve, fut)
        except RuntimeError:  # its loop is closed
            pass
