"""What a tool handler's exception becomes (docs/tool-use.md, "Bindings"): the error result
the model reads, and, for a failure the handler did not mean, a WARNING with the traceback on
the `panto` logger, so that the developer sees it.

The result has the same shape in every language: a failure the handler means (Python
`raise panto.ToolError(text)`, Go's returned error, Lua's `return nil, text` or
`error(text, 0)`) is its text as is; one it does not mean names its kind first (Python
`KeyError: 'city'`, Go `panic: ...`), so that the model (and whoever reads the conversation)
can tell a missing key from a message that says only `'city'`.
"""

from __future__ import annotations

import logging

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .events import ToolCallStart

__all__ = ["ToolError", "failure_content"]

_log = logging.getLogger("panto")


class ToolError(Exception):
    """Raised by a tool handler to fail on purpose: the model reads the message as it is
    (`raise panto.ToolError("no such city")` gives the error result `no such city`), and
    nothing is logged above DEBUG. Any other exception of a handler is a WARNING with its
    traceback, and its result names its type (`KeyError: 'city'`)."""


def failure_content(call: ToolCallStart, exc: Exception) -> str:
    """The content of the error result for the Exception a handler of `call` raised; logs it."""
    if isinstance(exc, ToolError):
        _log.debug("tool %s (call %s) failed: %s", call.name, call.id, exc)
        return str(exc)
    content = describe(exc)
    _log.warning("tool %s (call %s) raised %s", call.name, call.id, content, exc_info=exc)
    return content


def describe(exc: BaseException) -> str:
    """`TypeName: message`, or the type's name alone for an exception without a message, as
    the last line of a Python traceback reads (without the module)."""
    text = str(exc)
    name = type(exc).__name__
    return f"{name}: {text}" if text else name
