"""`panto.report_progress`: progress from inside a running tool, through a context variable
that the stream sets around each handler it runs (a worker thread's context, or the task of an
`async def` tool), so that it needs no argument and works in threads and coroutines alike."""

from __future__ import annotations

from contextvars import ContextVar

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Optional

    Reporter = Callable[[str, Optional[float]], None]

__all__ = ["report_progress"]

#: Set by the tool runner (_tool_runner.py) while a handler runs: where its progress goes.
REPORTER: "ContextVar[Optional[Reporter]]" = ContextVar("panto_report_progress", default=None)


def report_progress(text: str = "", fraction: Optional[float] = None) -> None:
    """Reports progress of the tool whose handler calls it: the stream yields a
    `panto.ToolProgress` event with `text` and `fraction` (0 to 1, or None) while the tool
    runs. Works in a sync handler (which runs in a worker thread) and in an `async def` one;
    threads the handler starts itself inherit it only through `contextvars.copy_context()`.
    Outside a tool run by a stream, and once its turn was canceled or closed, it does
    nothing. Never blocks: the progress reaches the stream's reader as the next event it reads.

    Raises TypeError for a text that is not a str or a fraction that is not a number, and
    ValueError for a fraction outside 0 to 1 (NaN included)."""
    if not isinstance(text, str):
        raise TypeError(f"report_progress() text must be a str, not {type(text).__name__}")
    if fraction is not None:
        if isinstance(fraction, bool) or not isinstance(fraction, (int, float)):
            raise TypeError(f"report_progress() fraction must be a number or None, not {type(fraction).__name__}")
        if not 0 <= fraction <= 1:  # NaN fails both comparisons
            raise ValueError(f"report_progress() fraction must be between 0 and 1, not {fraction!r}")
        fraction = float(fraction)
    reporter = REPORTER.get()
    if reporter is not None:
        reporter(text, fraction)
