"""panto: an LLM-agent runtime (Python binding of libpanto, through ctypes).

    import panto

    with panto.Agent(provider="anthropic", model="claude-sonnet-4-5") as agent:
        with agent.run("Hello") as stream:
            for event in stream:
                print(event)

Tools are typed functions or classes (`@panto.tool`, `panto.ToolClass`, `panto.Tool`) that the
stream runs for you while you iterate:

    @panto.tool
    def get_weather(city: str) -> str:
        '''Current weather for a city.'''
        return "Sunny"

    agent = panto.Agent(provider="anthropic", model="claude-sonnet-4-5", tools=[get_weather])

Resilience: retries (`retry=panto.RetryPolicy(...)`, seen as `panto.ProviderRetry` events),
timeouts (`timeouts=panto.Timeouts(...)`, `panto.APITimeoutError`), thinking levels
(`thinking="low"`), `agent.set_config(...)` between turns, `stream.cancel()` from any thread
(Ctrl-C cancels a blocked `next()` too) and `stream.reopen()` after a failed request.

The shared library is looked for at $PANTO_LIBRARY, then inside the package
(panto/_lib/libpanto.so). Importing panto never fails for want of a library: the first use
raises `panto.LibraryNotFound`, naming where it looked. A library built for another C ABI
version makes the import fail with ImportError.
"""

from __future__ import annotations

from . import _native
from .agent import Agent, Connections, McpServerStatus, TokenCount
from .config import THINKING_LEVELS, Budget, KeepAlive, RetryPolicy, Timeouts
from .errors import (
    APIConnectionError,
    APITimeoutError,
    AuthenticationError,
    BusyError,
    CanceledError,
    CapabilityError,
    ConfigError,
    ConversationError,
    Error,
    InvalidArgumentError,
    InvalidRequestError,
    LibraryNotFound,
    NoSuchCallError,
    NoSuchSessionError,
    NotFoundError,
    OutOfMemoryError,
    OutputError,
    OverloadedError,
    PermissionDeniedError,
    ProtocolError,
    RateLimitError,
    ResultPendingError,
    ApprovalPendingError,
    ServerError,
    SessionError,
    SessionLockedError,
    StateError,
    ToolLoopError,
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
    PendingCall,
    ApprovalRequest,
    UserMessage,
    ToolResult,
    Usage,
    Spent,
)
from .parts import Document, Image, Media
from .stream import Stream

# Imported on first use (PEP 562 __getattr__ below), to keep `import panto` cheap: the tools
# (with inspect and typing), the final message's classes, and the Event union (typing).
_LAZY = {
    "Param": "tools",
    "Registry": "tools",
    "Tool": "tools",
    "ToolClass": "tools",
    "ToolError": "_tool_failure",
    "as_tool": "tools",
    "to_content": "tools",
    "to_result": "tools",
    "tool": "tools",
    "report_progress": "_progress",
    "AssistantMessage": "message",
    "ContentBlock": "message",
    "RedactedThinkingBlock": "message",
    "ServerBlock": "message",
    "TextBlock": "message",
    "ThinkingBlock": "message",
    "ToolCallBlock": "message",
    "Event": "events",
    "Session": "session",
    "SessionInfo": "session",
    "SessionSummary": "session",
    "SessionParent": "session",
    "model_info": "models",
    "ModelInfo": "models",
    "ModelEntry": "models",
    "ModelPrice": "models",
    "LongContextPrice": "models",
    "ModelAbilities": "models",
}

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, List

    from .events import Event
    from .message import AssistantMessage, ContentBlock, RedactedThinkingBlock, ServerBlock, TextBlock, ThinkingBlock, ToolCallBlock
    from .models import LongContextPrice, ModelAbilities, ModelEntry, ModelInfo, ModelPrice, model_info
    from .session import Session, SessionInfo, SessionParent, SessionSummary
    from .tools import Param, Registry, Tool, ToolClass, as_tool, to_content, tool
    from ._tool_failure import ToolError
    from ._progress import report_progress


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # found directly from now on
    return value


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(_LAZY))


__version__ = "0.1.0"

#: The C ABI version (PANTO_ABI_VERSION) this package was written for.
ABI_VERSION = _native.ABI_VERSION


def library_version() -> str:
    """The loaded library's version (panto_version()). Raises LibraryNotFound without one."""
    return _library().version


def library_path() -> str:
    """The path of the loaded shared library. Raises LibraryNotFound without one."""
    return _library().path


def _library() -> _native.Library:
    lib = _native.LIB
    if lib is None:
        raise LibraryNotFound(_native.LOOKED_IN)
    return lib


__all__ = [
    "ABI_VERSION",
    "Agent",
    "Stream",
    "Event",
    "MessageStart",
    "BlockStart",
    "ContentDelta",
    "BlockComplete",
    "MessageEnd",
    "ToolDetails",
    "ToolCallStart",
    "ToolResult",
    "ToolProgress",
    "ApprovalCall",
    "PendingCall",
    "ApprovalRequest",
    "UserMessage",
    "Part",
    "MessageComplete",
    "ProviderRetry",
    "CompactionStart",
    "CompactionEnd",
    "Usage",
    "Spent",
    "Media",
    "Image",
    "Document",
    "AssistantMessage",
    "ContentBlock",
    "TextBlock",
    "ThinkingBlock",
    "RedactedThinkingBlock",
    "ServerBlock",
    "ToolCallBlock",
    "RetryPolicy",
    "Timeouts",
    "Budget",
    "KeepAlive",
    "Connections",
    "McpServerStatus",
    "TokenCount",
    "Session",
    "SessionInfo",
    "SessionSummary",
    "SessionParent",
    "model_info",
    "ModelInfo",
    "ModelEntry",
    "ModelPrice",
    "LongContextPrice",
    "ModelAbilities",
    "THINKING_LEVELS",
    "Tool",
    "ToolClass",
    "ToolError",
    "Param",
    "Registry",
    "tool",
    "as_tool",
    "to_content",
    "to_result",
    "report_progress",
    "Error",
    "LibraryNotFound",
    "InvalidArgumentError",
    "OutOfMemoryError",
    "ConfigError",
    "BusyError",
    "ResultPendingError",
    "ApprovalPendingError",
    "NoSuchCallError",
    "StateError",
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "InvalidRequestError",
    "RateLimitError",
    "OverloadedError",
    "ServerError",
    "APITimeoutError",
    "APIConnectionError",
    "ProtocolError",
    "CanceledError",
    "ToolLoopError",
    "CapabilityError",
    "ConversationError",
    "SessionError",
    "SessionLockedError",
    "NoSuchSessionError",
    "OutputError",
    "library_version",
    "library_path",
]
