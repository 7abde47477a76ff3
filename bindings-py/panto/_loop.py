"""panto's own event loop thread, for `async def` tool handlers run where no loop of the
program runs them (a stream iterated with `for`, `Stream.run_tool`, `Tool.invoke`)."""

from __future__ import annotations

import threading

# asyncio is imported at first use, not here: see _tool_runner.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import asyncio
    from typing import Any, Optional

__all__ = ["worker_loop", "run_awaitable"]

_loop: Optional[asyncio.AbstractEventLoop] = None
_loop_lock = threading.Lock()


def worker_loop() -> asyncio.AbstractEventLoop:
    """panto's event loop for `async def` handlers run outside `async for`: one daemon thread,
    started at first use."""
    global _loop
    with _loop_lock:
        if _loop is None:
            import asyncio

            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="panto-tool-loop", daemon=True).start()
            _loop = loop
        return _loop


def run_awaitable(awaitable: Any) -> Any:
    """Awaits `awaitable` on panto's loop thread and returns its result (or raises): for an
    async handler called where no loop runs it (`Stream.run_tool`, a sync-looking handler
    that returned a coroutine)."""

    import asyncio

    async def wait() -> Any:
        return await awaitable

    return asyncio.run_coroutine_threadsafe(wait(), worker_loop()).result()
