"""The exceptions of panto: one base class, `panto.Error`, and one subclass per error code.

Every error carries the fields of the C `PantoError`:

- `status`: the negative PantoStatus (e.g. -10),
- `code`: its stable name from `panto_status_name()` (e.g. "authentication"),
- `http_status`: the provider's HTTP status, or None when the failure was not an HTTP answer,
- `error_type`: the provider's error type (e.g. "authentication_error"), or None,
- `message`: a human-readable message (never contains an API key),
- `request_id`: the provider's request id, or None,
- `retry_after`: the seconds the provider asked to wait before trying again (its
  `retry-after-ms` or `retry-after` header), or None when it did not say,
- `headers`: the failed response's headers of interest, names in lower case (request-id,
  x-request-id, retry-after, retry-after-ms, x-should-retry, anthropic-ratelimit-*,
  x-ratelimit-*, x-amzn-requestid, x-amzn-errortype); `{}` when none or when the failure was not an HTTP answer.

`OutputError` also has `output`: the model's answer that is not the JSON asked for.
"""

from __future__ import annotations

from . import _native

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple, Type

__all__ = [
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
]


class Error(Exception):
    """Base class of every panto error."""

    #: The PantoStatus this class stands for; 0 for errors that have no C code.
    STATUS: int = 0

    def __init__(
        self,
        message: str,
        *,
        status: Optional[int] = None,
        code: Optional[str] = None,
        http_status: Optional[int] = None,
        error_type: Optional[str] = None,
        request_id: Optional[str] = None,
        retry_after: Optional[float] = None,
        headers: Optional[Dict[str, str]] = None,
    ) -> None:
        super().__init__(message)
        self.message: str = message
        self.status: int = self.STATUS if status is None else status
        self.code: str = code if code is not None else _default_code(type(self))
        self.http_status: Optional[int] = http_status
        self.error_type: Optional[str] = error_type
        self.request_id: Optional[str] = request_id
        self.retry_after: Optional[float] = retry_after
        self.headers: Dict[str, str] = dict(headers) if headers else {}

    def __str__(self) -> str:
        detail = []
        if self.http_status is not None:
            detail.append(f"HTTP {self.http_status}")
        if self.error_type:
            detail.append(self.error_type)
        if self.request_id:
            detail.append(f"request id {self.request_id}")
        text = f"{self.code}: {self.message}" if self.message else self.code
        return f"{text} ({', '.join(detail)})" if detail else text

    def __reduce__(self) -> Tuple[Any, ...]:
        # Keyword-only fields survive pickling (e.g. across multiprocessing).
        return (_rebuild, (type(self), self.message, self.__dict__.copy()))


def _rebuild(cls: Type[Error], message: str, state: Dict[str, object]) -> Error:
    err = cls.__new__(cls)
    Exception.__init__(err, message)
    err.__dict__.update(state)
    return err


class LibraryNotFound(Error, ImportError):
    """No panto shared library was found: raised on first use (Agent(), library_version()),
    not on `import panto`. It is both a panto.Error and an ImportError.
    `looked_in` lists the paths searched."""

    def __init__(self, looked_in: List[str]) -> None:
        self.looked_in: List[str] = list(looked_in)
        places = "\n  ".join(self.looked_in)
        super().__init__(
            "panto: the shared library libpanto was not found; looked in:\n  "
            + places
            + "\nBuild it (`zig build` -> zig-out/lib/libpanto.so) and set PANTO_LIBRARY to its path.",
            code="library_not_found",
        )
        ImportError.__init__(self, self.message)

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> Tuple[Any, ...]:
        return (LibraryNotFound, (self.looked_in,))


class InvalidArgumentError(Error):
    STATUS: int = _native.ERR_INVALID_ARGUMENT


class OutOfMemoryError(Error):
    STATUS: int = _native.ERR_OUT_OF_MEMORY


class ConfigError(Error):
    STATUS: int = _native.ERR_CONFIG


class BusyError(Error):
    STATUS: int = _native.ERR_BUSY


class ResultPendingError(Error):
    """`next()` was called while a host tool call awaits its result: submit it with
    `Stream.submit_tool_result()` and call `next()` again (not sticky: the stream is unchanged).
    `call_ids` lists the calls that await a result, when known."""

    STATUS: int = _native.ERR_RESULT_PENDING

    def __init__(self, message: str, *, call_ids: Optional[List[str]] = None, **kw: object) -> None:
        super().__init__(message, **kw)  # type: ignore[arg-type]
        self.call_ids: List[str] = list(call_ids or ())


class ApprovalPendingError(Error):
    """`next()` (or the `for` over the stream) stopped: every tool call of the round that could
    run is done, and a call an `ApprovalRequest` listed waits for a person's answer. Answer
    each with `Stream.approve()` or `Stream.deny()`, then iterate again (not sticky: the
    stream is unchanged). `calls` lists the waiting calls (`panto.ApprovalCall`)."""

    STATUS: int = _native.ERR_APPROVAL_PENDING

    def __init__(self, message: str, *, calls: Optional[List[Any]] = None, **kw: object) -> None:
        super().__init__(message, **kw)  # type: ignore[arg-type]
        self.calls: List[Any] = list(calls or ())


class NoSuchCallError(Error):
    """`Stream.submit_tool_result()` named a call that does not await a result (an unknown id,
    one already answered, or one panto handles itself). `call_id` is the id given."""

    STATUS: int = _native.ERR_NO_SUCH_CALL

    def __init__(self, message: str, *, call_id: Optional[str] = None, **kw: object) -> None:
        super().__init__(message, **kw)  # type: ignore[arg-type]
        self.call_id: Optional[str] = call_id


class StateError(Error):
    """The call does not fit the object's state, e.g. `Stream.reopen()` on a stream that did not
    fail at the provider-open boundary (an HTTP error answer or a failed connection before any
    event of the message), or on a closed stream."""

    STATUS: int = _native.ERR_STATE


class AuthenticationError(Error):
    STATUS: int = _native.ERR_AUTHENTICATION


class PermissionDeniedError(Error):
    STATUS: int = _native.ERR_PERMISSION


class NotFoundError(Error):
    STATUS: int = _native.ERR_NOT_FOUND


class InvalidRequestError(Error):
    STATUS: int = _native.ERR_INVALID_REQUEST


class RateLimitError(Error):
    STATUS: int = _native.ERR_RATE_LIMIT


class OverloadedError(Error):
    STATUS: int = _native.ERR_OVERLOADED


class ServerError(Error):
    STATUS: int = _native.ERR_SERVER


class APITimeoutError(Error):
    """A timeout of the agent's `timeouts` ended the turn: no connection within `connect_ms`,
    no answer within `first_byte_ms`, no progress within `idle_ms`, or the turn took longer
    than `total_ms`. Its `error_type` is
    "timeout_error" (panto's own). Named so as not to shadow the builtin TimeoutError."""

    STATUS: int = _native.ERR_TIMEOUT


class APIConnectionError(Error):
    """Connecting failed or the connection broke (not the builtin ConnectionError)."""

    STATUS: int = _native.ERR_CONNECTION


class ProtocolError(Error):
    STATUS: int = _native.ERR_PROTOCOL


class CanceledError(Error):
    """The turn was canceled: `Stream.cancel()` (from any thread), `Stream.close()` before the
    turn ended, or Ctrl-C while `next()` was blocked (which raises KeyboardInterrupt; later
    `next()` calls raise this). What the model had said so far stays in the conversation, with
    "stop_reason": "aborted". Its `error_type` is "canceled_error"."""

    STATUS: int = _native.ERR_CANCELED


class ToolLoopError(Error):
    """The turn took more tool rounds than the agent's `max_tool_iterations`."""

    STATUS: int = _native.ERR_TOOL_LOOP


class CapabilityError(Error):
    """The model called a tool the agent was not granted the capabilities for; no tool of that
    message ran."""

    STATUS: int = _native.ERR_CAPABILITY


class ConversationError(Error):
    """A conversation was refused: `Agent.import_()` of a document that is not a valid
    export (the message names the first problem, e.g. `messages[3].content[1]: tool_result
    "call_9" answers no tool call of messages[2]`), or `Agent.truncate()` that would keep tool
    calls without their results. Nothing changed."""

    STATUS: int = _native.ERR_CONVERSATION


class SessionError(Error):
    """The session store failed: its file could not be created, written or read, or is not a
    session, or the session id is taken (`mode="create"`, `Session.fork()`). A failed write
    during a turn fails the turn; the conversation in memory keeps the message."""

    STATUS: int = _native.ERR_SESSION


class SessionLockedError(SessionError):
    """Another agent, of this process or another, has the session open: a session has one
    writer at a time."""

    STATUS: int = _native.ERR_SESSION_LOCKED


class NoSuchSessionError(SessionError, FileNotFoundError):
    """No session with that id in the directory (`mode="resume"`). Also a
    FileNotFoundError, so `except FileNotFoundError` catches it."""

    STATUS: int = _native.ERR_NO_SUCH_SESSION


class OutputError(Error):
    """The model's answer is not the JSON the turn's `response_format` asked for: not JSON,
    or not of the schema (`Stream.final_json()`, `Agent.parse()`). `message` says what is
    wrong; `output` is the answer's text, as it came. The turn itself ended normally: the
    answer is in the conversation."""

    STATUS: int = _native.ERR_OUTPUT

    def __init__(self, message: str, *, output: str = "", **kw: object) -> None:
        super().__init__(message, **kw)  # type: ignore[arg-type]
        self.output: str = output


_BY_STATUS: Dict[int, Type[Error]] = {
    cls.STATUS: cls
    for cls in (
        InvalidArgumentError,
        OutOfMemoryError,
        ConfigError,
        BusyError,
        ResultPendingError,
        ApprovalPendingError,
        NoSuchCallError,
        StateError,
        AuthenticationError,
        PermissionDeniedError,
        NotFoundError,
        InvalidRequestError,
        RateLimitError,
        OverloadedError,
        ServerError,
        APITimeoutError,
        APIConnectionError,
        ProtocolError,
        CanceledError,
        ToolLoopError,
        CapabilityError,
        ConversationError,
        SessionError,
        SessionLockedError,
        NoSuchSessionError,
        OutputError,
    )
}

def _default_code(cls: Type[Error]) -> str:
    lib = _native.LIB
    return lib.status_name(cls.STATUS) if lib is not None and cls.STATUS else "unknown"


def error_class(status: int) -> Type[Error]:
    """The exception class for a negative PantoStatus (Error for a code it does not know)."""
    return _BY_STATUS.get(status, Error)


def from_native(lib: "_native.Library", detail: _native.PantoError, rc: int) -> Error:
    """Builds the exception for a call that returned `rc` (< 0) from the PantoError the
    library filled for it."""
    status = rc
    http_status = detail.http_status
    retry_after = detail.retry_after
    headers = _native.copy_string(detail.headers)
    cls = error_class(status)
    error = cls(
        _native.copy_string(detail.message),
        status=status,
        code=lib.status_name(status),
        http_status=http_status if http_status else None,
        error_type=_native.copy_string(detail.type) or None,
        request_id=_native.copy_string(detail.request_id) or None,
        retry_after=retry_after if retry_after >= 0 else None,
        headers=_headers(headers) if headers and headers != "{}" else None,
    )
    if isinstance(error, OutputError):
        error.output = _native.copy_string(detail.output)
    return error


def _headers(text: str) -> Dict[str, str]:
    """The headers' JSON object; {} if it is not one (it always is: the library writes it)."""
    import json  # only for a failed HTTP answer: keeps `import panto` cheap

    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}
