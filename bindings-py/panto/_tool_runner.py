"""Running a stream's host tool calls at the same time (docs/python.md, "Tools that run at the
same time").

The calls of a message that are not sequential all start at once: a sync handler on a worker
thread (an elastic pool of daemon threads, one per call running), an `async def` handler as a
task on an event loop (the one running `async for`, else panto's own loop thread). A
sequential call starts once every earlier call has finished, and no later call starts before
it finishes. Handlers never touch the native stream: they put their progress and their result
on a queue, which the thread that reads the stream drains (`collect`) to submit them, so that
the library is only ever called from that thread.

Canceling or closing the stream while calls run `abandon`s them: nothing more is submitted,
progress reported after it is dropped, `async def` handlers are canceled (CancelledError
inside them), and sync handlers, which Python cannot stop, finish on their thread with their
result dropped. Neither waits for a handler.
"""

from __future__ import annotations

import threading
from _queue import Empty, SimpleQueue

from ._loop import worker_loop
from ._progress import REPORTER
from ._tool_failure import failure_content

# asyncio is imported where an `async def` handler runs, never at import: this module is
# imported at a stream's first tool call, and asyncio's import (about 27 ms) would be paid
# in every sync tool turn's first round.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import asyncio
    from typing import Any, Callable, Dict, List, Optional, Tuple, Union

    from .events import ToolCallStart
    from .parts import Media
    from .tools import Tool

    Content = Union[str, List[Union[str, Media]]]
    #: ("progress", call, text, fraction) | ("result", call, content, is_error) |
    #: ("raise", call, exception, None): what a handler sends to the reading thread.
    Item = Tuple[str, ToolCallStart, Any, Any]

__all__ = ["ToolRunner"]

class _Job:
    __slots__ = ("call", "tool", "task")

    def __init__(self, call: ToolCallStart, tool: Tool) -> None:
        self.call = call
        self.tool = tool
        self.task: Optional[asyncio.Task[None]] = None  # an async handler's, once it runs


class ToolRunner:
    """The host tool calls of one stream that the stream runs itself. Used by the thread that
    reads the stream (under the stream's reading, one thread at a time), except `wake` and
    `abandon`, which any thread may call."""

    def __init__(self, pending: Dict[str, ToolCallStart]) -> None:
        self._pending = pending  # the stream's calls that await a result (answered: skipped)
        self._queue: SimpleQueue[Optional[Item]] = SimpleQueue()
        self._waiting: List[_Job] = []  # scheduled, not started, in call order
        self._running: Dict[str, _Job] = {}
        self._alone = False  # a sequential call is running
        self._abandoned = False
        #: Called (from any thread) after each item sent: how a stepped `async for`, which
        #: awaits instead of blocking in `collect`, learns that one came (None: nobody waits).
        self.notify: Optional[Callable[[], None]] = None

    def schedule(self, call: ToolCallStart, tool: Tool) -> None:
        """Queues a call announced by ToolCallStart; it starts at `start_ready`."""
        self._waiting.append(_Job(call, tool))

    @property
    def busy(self) -> bool:
        """Calls to start, running, or results not collected yet."""
        return not self._abandoned and (bool(self._waiting or self._running) or not self._queue.empty())

    @property
    def abandoned(self) -> bool:
        """The stream was canceled or closed: no result will be collected."""
        return self._abandoned

    @property
    def running(self) -> bool:
        """Calls to start or running: results will come."""
        return not self._abandoned and bool(self._waiting or self._running)

    def start_ready(self, loop: Optional[asyncio.AbstractEventLoop]) -> None:
        """Starts the waiting calls the sequential rule lets start; `async def` handlers on
        `loop` (the loop running `async for`), or on panto's loop thread when None."""
        while self._waiting and not self._alone and not self._abandoned:
            job = self._waiting[0]
            if job.call.id not in self._pending:  # answered by hand meanwhile
                self._waiting.pop(0)
                continue
            if job.call.sequential and self._running:
                return  # after every earlier call, and before every later one
            self._waiting.pop(0)
            self._running[job.call.id] = job
            self._alone = job.call.sequential
            self._start(job, loop)

    def _put(self, item: Optional[Item]) -> None:
        self._queue.put(item)
        notify = self.notify
        if notify is not None:
            notify()

    def _start(self, job: _Job, loop: Optional[asyncio.AbstractEventLoop]) -> None:
        put = self._put
        call = job.call

        def report(text: str, fraction: Optional[float]) -> None:
            if not self._abandoned:
                put(("progress", call, text, fraction))

        if job.tool.is_async:
            import asyncio

            target = loop if loop is not None and not loop.is_closed() else worker_loop()
            try:
                asyncio.run_coroutine_threadsafe(self._run_async(job, report), target)
            except RuntimeError as exc:  # the loop closed meanwhile
                put(("result", call, f"the tool could not start: {exc}", True))
        else:
            _WORKERS.run(lambda: self._run_sync(job, report))

    def _run_sync(self, job: _Job, report: Callable[[str, Optional[float]], None]) -> None:
        token = REPORTER.set(report)
        try:
            content = job.tool.invoke(job.call.input)
        except Exception as exc:
            self._failed(job, exc)
        except BaseException as exc:  # SystemExit and the like: raised by the reader's next()
            self._put(("raise", job.call, exc, None))
        else:
            self._put(("result", job.call, content, False))
        finally:
            REPORTER.reset(token)

    async def _run_async(self, job: _Job, report: Callable[[str, Optional[float]], None]) -> None:
        import asyncio

        REPORTER.set(report)  # the task's own context
        # Seen by abandon(), which sets _abandoned first: one of the two sees the other.
        job.task = asyncio.current_task()
        if self._abandoned:
            return
        try:
            content = await job.tool.ainvoke(job.call.input)
        except asyncio.CancelledError:
            if not self._abandoned:  # canceled by someone else, e.g. its loop ending
                self._put(("result", job.call, "the tool was canceled", True))
            raise
        except Exception as exc:
            self._failed(job, exc)
        except BaseException as exc:
            self._put(("raise", job.call, exc, None))
        else:
            self._put(("result", job.call, content, False))

    def _failed(self, job: _Job, exc: Exception) -> None:
        """An Exception of a handler: an error result (see _tool_failure)."""
        self._put(("result", job.call, failure_content(job.call, exc), True))

    def collect(self, block: bool) -> List[Item]:
        """The progress and results handlers sent, in the order they sent them; with `block`,
        waits for one first while a call runs (or until `wake`). A call whose result (or
        exception) is collected is done: the calls waiting for it may start."""
        items: List[Item] = []
        queue = self._queue
        try:
            item = queue.get(block and bool(self._running) and not self._abandoned)
            while True:
                if item is not None:
                    items.append(item)
                    if item[0] != "progress":
                        job = self._running.pop(item[1].id, None)
                        if job is not None and job.call.sequential:
                            self._alone = False
                item = queue.get(False)
        except Empty:
            pass
        return [] if self._abandoned else items

    def has_items(self) -> bool:
        """Something to collect."""
        return not self._queue.empty()

    def wake(self) -> None:
        """Makes a blocked `collect` return (a cancel from another thread)."""
        self._put(None)

    def abandon(self) -> None:
        """The turn was canceled or closed: see the module's doc. Any thread."""
        self._abandoned = True
        self._waiting = []
        for job in list(self._running.values()):
            task = job.task
            if task is not None:
                try:
                    task.get_loop().call_soon_threadsafe(task.cancel)
                except RuntimeError:  # its loop is closed: the task is gone with it
                    pass
        self.wake()


class _Workers:
    """Daemon threads for sync handlers: each call gets an idle thread or a new one, so all
    the calls of a round start at once however many; a thread idle for a minute ends.
    Daemon: a handler that never returns does not keep the interpreter from exiting."""

    IDLE_SECONDS = 60.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: List[SimpleQueue[Callable[[], None]]] = []  # the inboxes of idle threads

    def run(self, task: Callable[[], None]) -> None:
        with self._lock:
            inbox = self._idle.pop() if self._idle else None
        if inbox is not None:
            inbox.put(task)
            return
        thread = threading.Thread(target=self._work, args=(task,), name="panto-tool", daemon=True)
        thread.start()

    def _work(self, task: Callable[[], None]) -> None:
        inbox: SimpleQueue[Callable[[], None]] = SimpleQueue()
        while True:
            task()
            del task
            with self._lock:
                self._idle.append(inbox)
            try:
                task = inbox.get(timeout=self.IDLE_SECONDS)
            except Empty:
                with self._lock:
                    if inbox in self._idle:  # not claimed: end
                        self._idle.remove(inbox)
                        return
                task = inbox.get()  # claimed as it timed out: its task is on the way


_WORKERS = _Workers()
