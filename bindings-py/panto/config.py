"""The agent's resilience settings: `RetryPolicy`, `Timeouts`, `KeepAlive`, a turn's `Budget`
and the thinking levels.

Each takes a dataclass or a plain dict (the JSON object of `panto_agent_new`). A field left
None keeps the library's default (or, in `Agent.set_config`, the agent's current value).
Values are judged by the library: one it refuses raises `panto.ConfigError`.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from dataclasses import dataclass
    from typing import Any, Dict, Optional, Tuple, Union
else:
    from ._frozen import dataclass  # the same frozen dataclasses, cheaper (see _frozen.py)

__all__ = ["RetryPolicy", "Timeouts", "KeepAlive", "Budget", "THINKING_LEVELS"]

#: The values of `thinking`: Anthropic extended thinking with budget_tokens 1024 / 2048 /
#: 8192 / 16384, OpenAI `reasoning_effort` of the same name; "off" (the default) sends neither.
THINKING_LEVELS: Tuple[str, ...] = ("off", "minimal", "low", "medium", "high")


@dataclass(frozen=True)
class RetryPolicy:
    """How failed provider calls are retried (HTTP 408, 409, 429, 5xx and connection errors,
    and error events or dropped connections before any content of the message).

    Backoff is `initial_delay_ms * 2**n`, capped at `max_delay_ms`, with jitter. A provider's
    `retry-after-ms` / `Retry-After` is honored up to `max_retry_after_ms`; beyond it, the
    error is raised. Library defaults: 2 retries, 500 ms initial, 8000 ms max, 60000 ms
    retry-after cap. `RetryPolicy(max_retries=0)` turns retrying off."""

    max_retries: Optional[int] = None
    initial_delay_ms: Optional[int] = None
    max_delay_ms: Optional[int] = None
    max_retry_after_ms: Optional[int] = None

    def to_json(self) -> Dict[str, int]:
        return _fields_to_json(self)


@dataclass(frozen=True)
class Timeouts:
    """Limits that end a turn with `panto.APITimeoutError` (0 disables one): `connect_ms` to
    open a connection, TCP connect, a proxy's CONNECT tunnel and the TLS handshake included
    (default 10000), `first_byte_ms` from sending a request to its response head (default
    60000), `idle_ms` between two events that carry progress, pings do not count (default
    90000), `total_ms` for all the provider calls of one turn (default 600000)."""

    connect_ms: Optional[int] = None
    first_byte_ms: Optional[int] = None
    idle_ms: Optional[int] = None
    total_ms: Optional[int] = None

    def to_json(self) -> Dict[str, int]:
        return _fields_to_json(self)


@dataclass(frozen=True)
class KeepAlive:
    """The connections kept open between an agent's requests (the tool rounds of a turn,
    later turns): `idle_ms` is how long a connection may stay unused and still carry the next
    request (default 60000; one idle longer is closed, one the server closed meanwhile is
    replaced silently); 0 keeps none: each request opens its own connection, closed after its
    response. HTTPS through a proxy keeps its CONNECT tunnel alive the same way.
    `Agent.connections` counts the connections opened and reused."""

    idle_ms: Optional[int] = None

    def to_json(self) -> Dict[str, int]:
        return _fields_to_json(self)

@dataclass(frozen=True)
class Budget:
    """What one turn may spend (the agent's `budget`, or one turn's: `run(text,
    budget=...)`): `output_tokens` summed over its messages, `tool_rounds` taken, `wall_ms`
    from its first request. Reaching one ends the turn normally: `MessageComplete` with
    `stop_reason` "budget" and `budget_kind` naming it; the calls of a round it stops get the
    error result "Skipped: the turn's budget is spent.", and what was streamed of a message
    the wall time cut is kept (stored as "aborted"). A field left None keeps the agent's (no
    budget by default); to lift one for a turn, give a dict: `budget={"wall_ms": None}`.
    `max_tool_iterations` and `timeouts.total_ms` stay errors. `cost_usd` is the turn's cost
    in US dollars at the model's list prices (`MessageComplete.cost`), summed as
    `output_tokens` is; a model whose prices panto does not know (nor `model_info` gives)
    fails the turn with `panto.ConfigError` before its first request."""

    output_tokens: Optional[int] = None
    tool_rounds: Optional[int] = None
    wall_ms: Optional[int] = None
    cost_usd: Optional[float] = None

    def to_json(self) -> Dict[str, Union[int, float]]:
        out: Dict[str, Union[int, float]] = {}
        for name in type(self).__match_args__:  # the fields, in order
            value = getattr(self, name)
            if value is None:
                continue
            if name == "cost_usd":
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise TypeError(f"Budget.cost_usd must be a number of dollars, not {type(value).__name__}")
                out[name] = float(value)
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"Budget.{name} must be an int, not {type(value).__name__}")
            out[name] = value
        return out


def _fields_to_json(obj: Any) -> Dict[str, int]:
    out: Dict[str, int] = {}
    for name in type(obj).__match_args__:  # the fields, in order
        value = getattr(obj, name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{type(obj).__name__}.{name} must be an int (milliseconds), not {type(value).__name__}")
        out[name] = value
    return out


if TYPE_CHECKING:
    RetryArg = Union[RetryPolicy, Mapping[str, Any]]
    TimeoutsArg = Union[Timeouts, Mapping[str, Any]]
    KeepAliveArg = Union[KeepAlive, Mapping[str, Any]]
    BudgetArg = Union[Budget, Mapping[str, Any]]
    ReadToolArg = Union[str, "os.PathLike[str]", Mapping[str, Any]]
    #: "auto" | "none" | "required" | "any", {"name": tool}, or a panto.Tool (that one).
    ToolChoiceArg = Union[str, Mapping[str, Any], Any]
    #: A level ("off" | "debug" | "body") or {"level": ..., "file": path}.
    LogArg = Union[str, Mapping[str, Any]]


def _section(name: str, value: Any, cls: type) -> Any:
    from collections.abc import Mapping  # here: `import panto` does not need collections

    if isinstance(value, cls):
        return value.to_json()  # type: ignore[attr-defined]
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{name} must be a panto.{cls.__name__} or a dict, not {type(value).__name__}")


def config_value(key: str, value: Any) -> Any:
    """The JSON value of one configuration key, from what the Python API takes. None stays
    None (JSON null); keys this package does not know pass through for the library to judge."""
    if value is None:
        return None
    if key == "retry":
        return _section("retry", value, RetryPolicy)
    if key == "timeouts":
        return _section("timeouts", value, Timeouts)
    if key == "keep_alive":
        return _section("keep_alive", value, KeepAlive)
    if key == "budget":
        return _section("budget", value, Budget)
    if key == "capabilities":
        if isinstance(value, (str, bytes)):
            raise TypeError("capabilities must be a list of str, not a single str")
        return list(value)
    if key == "read_tool":
        if isinstance(value, (str, os.PathLike)):
            return {"root": os.fspath(value)}
        return dict(value)
    if key == "response_format":
        from ._output import response_format  # only when asked for: it brings the schema machinery

        return response_format(value)
    if key == "stop":
        return value if isinstance(value, str) else list(value)
    if key in ("server_tools", "hosted_mcp_servers"):
        if hasattr(value, "keys") or isinstance(value, (str, bytes)):
            raise TypeError(f"{key} must be a list of dicts, not a single dict")
        return [dict(item) for item in value]
    if key == "log" and isinstance(value, str):
        return {"level": value}
    if key == "tool_choice" and not isinstance(value, (str, dict)):
        name = getattr(value, "name", None)  # a panto.Tool: that tool
        if isinstance(name, str):
            return {"name": name}
    return value
