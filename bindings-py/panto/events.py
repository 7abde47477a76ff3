"""The events of a turn: frozen dataclasses, each with a `kind` field holding the stable name
of `panto_event_kind_name()` ("message_start", "block_start", ...).

Block kinds ("text", "thinking", "redacted_thinking", "tool_call", "server_block") and stop reasons ("end_turn", "max_tokens", ...)
are the stable names of `panto_block_kind_name()` and `panto_stop_reason_name()`.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from dataclasses import dataclass, field
    from typing import Any, Dict, Literal, Optional, Tuple, Union

    #: A content block's kind: the names of `panto_block_kind_name()`.
    BlockKind = Literal["text", "thinking", "redacted_thinking", "tool_call", "server_block"]
    #: Why a message ended: the names of `panto_stop_reason_name()` ("aborted": the turn was
    #: canceled; "other": a value panto does not know, see `provider_stop_reason`; "none":
    #: the provider gave none).
    StopReason = Literal["end_turn", "max_tokens", "stop_sequence", "tool_use", "refusal", "content_filter",
                         "pause_turn", "aborted", "other", "none", "budget"]
    #: What a part of a tool result holds.
    PartKind = Literal["text", "image", "document"]
else:
    # The same frozen dataclasses, cheaper to define and to make (see _frozen.py).
    from ._frozen import dataclass, field

__all__ = [
    "Usage",
    "Spent",
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
    "Event",
    "BlockKind",
    "StopReason",
    "PartKind",
]


@dataclass(frozen=True)
class Usage:
    """Token counts of a message or a turn, normalized across providers (input excludes cached tokens).
    `web_search_requests` and `web_fetch_requests`: Anthropic's server tools run (its
    `usage.server_tool_use`), billed per request."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    web_search_requests: int = 0
    web_fetch_requests: int = 0


@dataclass(frozen=True)
class Spent:
    """What a conversation's assistant messages used and cost (`Agent.spent`): their usages
    summed, and `cost` in USD at the model catalog's list prices, each message priced at the
    model that wrote it; None when one message's cost is unknown."""

    usage: Usage
    cost: Optional[float]


@dataclass(frozen=True)
class MessageStart:
    """An assistant message begins (a turn with tool calls has several). `request_id` is the
    provider's id of the HTTP request that brought it (its request-id or x-request-id
    header), "" when it sent none: what a provider's support asks for
    (`Stream.request_ids` gathers a turn's)."""

    id: str
    model: str
    request_id: str = ""
    kind: Literal["message_start"] = field(default="message_start", init=False)


@dataclass(frozen=True)
class BlockStart:
    """A content block starts at `index`. `block_kind` is "text", "thinking" (the model's
    reasoning, when the agent's `thinking` is on), "redacted_thinking" (reasoning the provider
    encrypted: its BlockComplete's `text` is the opaque data, with no ContentDelta before it),
    "tool_call" or "server_block" (a block of the provider's that panto keeps without reading
    it, see BlockComplete)."""

    index: int
    block_kind: BlockKind
    kind: Literal["block_start"] = field(default="block_start", init=False)


@dataclass(frozen=True)
class ContentDelta:
    """A new fragment of the block at `index`."""

    index: int
    block_kind: BlockKind
    text: str
    kind: Literal["content_delta"] = field(default="content_delta", init=False)


@dataclass(frozen=True)
class BlockComplete:
    """The block at `index` is complete; `text` is the whole block. A "server_block" (a block
    of the provider's that panto keeps without reading it: a server tool's call or result, a
    compaction, ...): `text` is its JSON object as received and `name` its type
    ("server_tool_use", "web_search_tool_result", ...); "" for other kinds. A "text" block's
    `citations` (Anthropic's, e.g. a web search's sources): a JSON array of the citation
    objects as received, "" when it has none."""

    index: int
    block_kind: BlockKind
    text: str
    name: str = ""
    citations: str = ""
    kind: Literal["block_complete"] = field(default="block_complete", init=False)


@dataclass(frozen=True)
class MessageEnd:
    """One assistant message ended; `usage` is that message's own. A `stop_reason` of
    "tool_use" means tool calls follow (ToolCallStart, ToolResult) and then another message.
    `cost`: the usage's cost in USD at the model's list prices (the model catalog, or the
    config's `model_info`), None when a price it needs is unknown."""

    stop_reason: StopReason
    provider_stop_reason: str
    usage: Usage
    cost: Optional[float] = None
    kind: Literal["message_end"] = field(default="message_end", init=False)


@dataclass(frozen=True)
class ToolDetails:
    """The model named a tool in the tool-call block at `index`; the input follows as
    ContentDelta fragments of JSON (block_kind "tool_call")."""

    index: int
    id: str
    name: str
    kind: Literal["tool_details"] = field(default="tool_details", init=False)


@dataclass(frozen=True)
class ToolCallStart:
    """A tool call is about to run, with its complete `input` (a dict; `{}` when empty).

    `awaiting_result` is True for a host tool (one registered from Python): its result must
    be given before the next `next()`. The stream does so itself by running the tool's handler
    (unless the turn was started with `run_tools=False`, or the tool has no handler: then call
    `Stream.submit_tool_result()` or `Stream.run_tool()`). False when panto produces the result
    itself (a native tool such as `read`, an unknown tool, input that does not match the
    schema).

    `sequential` is True when the call runs alone: after the calls before it finished,
    before the calls after it start (its tool was declared `sequential=True`, or the agent's
    `tool_execution` is "sequential"); the other host calls of a message run at the same
    time (see `Stream`)."""

    id: str
    name: str
    input: Dict[str, Any]
    awaiting_result: bool
    sequential: bool = False
    kind: Literal["tool_call_start"] = field(default="tool_call_start", init=False)


@dataclass(frozen=True)
class Part:
    """One part of a tool result as it was sent to the model.

    `kind` is "text" (a text, or the note saying why an attachment was dropped), "image" or
    "document" (a PDF). For an image or a document: `media_type` ("image/png", "image/jpeg",
    "image/gif", "image/webp", "application/pdf"), `name` (the name given, or ""),
    `byte_size` (the size of the bytes sent), `width` and `height` (an image's pixels after
    fitting; 0 for a document), `data_base64` (the bytes sent, base64, as the conversation
    keeps them); `data` decodes them when asked. For text, `text` holds it and the others
    are "" and 0."""

    kind: PartKind
    text: str
    media_type: str
    name: str
    byte_size: int
    width: int
    height: int
    data_base64: str

    @property
    def data(self) -> bytes:
        """The bytes sent (b"" for text), decoded from `data_base64` on each access."""
        import binascii

        return binascii.a2b_base64(self.data_base64)


def _part_repr(self: Part) -> str:
    # The data is shown by its size only: an image's base64 is megabytes.
    if self.kind == "text":
        return f"Part(kind='text', text={self.text!r})"
    size = f", width={self.width}, height={self.height}" if self.kind == "image" else ""
    return (f"Part(kind={self.kind!r}, media_type={self.media_type!r}, name={self.name!r}, "
            f"byte_size={self.byte_size}{size})")


Part.__repr__ = _part_repr  # type: ignore[method-assign, assignment]


@dataclass(frozen=True)
class ToolResult:
    """The result of a tool call, as sent to the model; `is_error` marks a failure.

    `content` is the text sent. A result with media (a tool returned images or PDFs) has
    `parts`, every part in order (see `Part`), and `content` is its text parts joined with
    "\n"; a result that is text only has no parts (`()`)."""

    id: str
    name: str
    content: str
    is_error: bool
    parts: Tuple[Part, ...] = ()
    kind: Literal["tool_result"] = field(default="tool_result", init=False)


@dataclass(frozen=True)
class ToolProgress:
    """A host tool that is running reported progress (`panto.report_progress` inside it):
    `text` (may be "") and `fraction` (0 to 1, or None when the tool gave text only). It
    comes between the round's ToolCallStart and ToolResult events."""

    id: str
    name: str
    text: str
    fraction: Optional[float]
    kind: Literal["tool_progress"] = field(default="tool_progress", init=False)


@dataclass(frozen=True)
class ApprovalCall:
    """A tool call that waits for a person's answer (its tool says `"approval": "always"`, or
    an `approval_rules` entry says "ask"): its id, tool name and input."""

    id: str
    name: str
    input: Dict[str, Any]


@dataclass(frozen=True)
class PendingCall:
    """A call of the tool round an agent holds, left waiting for a person
    (`Agent.pending_round()`): a stream closed or canceled while a call waited for its
    answer, or a session whose process ended during a round (killed, say). `state`:
    "ask" (waits for a person's answer), "to_run" (has its answer, or needed none, and was not
    run: it runs when the turn is resumed), "started" (was handed to its runner and left no
    result: the process ended while it ran; it is never run again) or "answered" (has its
    result)."""

    id: str
    name: str
    input: Dict[str, Any]
    state: Literal["ask", "to_run", "started", "answered"]


@dataclass(frozen=True)
class ApprovalRequest:
    """The calls of the round that wait for a person's answer, before the round's other
    ToolCallStarts. Answer each with `Stream.approve(id)` (its ToolCallStart comes next and it
    runs as any call) or `Stream.deny(id, reason)` (its result is an error giving the model the
    reason); until then the stream raises `panto.ApprovalPendingError` once the other calls
    are done."""

    calls: Tuple[ApprovalCall, ...]
    kind: Literal["approval_request"] = field(default="approval_request", init=False)


@dataclass(frozen=True)
class UserMessage:
    """A message of the user's entered the conversation during the stream: `source`
    "steer" (`Stream.steer()`, after a tool round's results, read by the model in the round's
    next request) or "follow_up" (`Stream.follow_up()`, or a steer no round took: the user
    message of the stream's next turn, after the previous turn's MessageComplete)."""

    source: Literal["steer", "follow_up"]
    text: str
    kind: Literal["user_message"] = field(default="user_message", init=False)


@dataclass(frozen=True)
class MessageComplete:
    """The turn is complete: its last event. `usage` is summed over the turn's messages;
    `stop_reason` is the last message's, or "budget" when the turn's budget ended it
    (`budget_kind` names which). `cost`: the turn's cost in USD, the sum of its
    messages' (a compaction summary's too), None when one of them is unknown."""

    stop_reason: StopReason
    provider_stop_reason: str
    usage: Usage
    cost: Optional[float] = None
    kind: Literal["message_complete"] = field(default="message_complete", init=False)

    @property
    def budget_kind(self) -> Optional[Literal["output_tokens", "tool_rounds", "wall_ms"]]:
        """The budget that ended the turn (the library names it in `provider_stop_reason`),
        or None when none did."""
        if self.stop_reason != "budget":
            return None
        return self.provider_stop_reason  # type: ignore[return-value]


@dataclass(frozen=True)
class ProviderRetry:
    """A provider call failed in a way worth retrying (HTTP 408, 409, 429, 5xx, a dropped
    connection, or an error event before any content of the message): the next `next()`
    waits `delay_ms` milliseconds, then asks again, and the message starts over with a new
    MessageStart. `attempt` counts the retries of this message from 1; `http_status` is the
    failed answer's status, or None when it was not an HTTP answer; `reason` is the error's
    type and message. See the agent's `retry` policy."""

    attempt: int
    delay_ms: int
    http_status: Optional[int]
    reason: str
    kind: Literal["provider_retry"] = field(default="provider_retry", init=False)


@dataclass(frozen=True)
class CompactionStart:
    """Older messages are about to be summarized (docs/conversations.md, "Compaction"):
    `tokens_before` is the context's estimated size; `reason` is "threshold" (the next
    request would pass the model's context window less the agent's `reserve_tokens`) or
    "manual" (`Agent.compact()`). The summary request's own events are not shown."""

    tokens_before: int
    reason: Literal["threshold", "manual"]
    kind: Literal["compaction_start"] = field(default="compaction_start", init=False)


@dataclass(frozen=True)
class CompactionEnd:
    """The conversation's first `message_count` messages were replaced by one user message
    holding `summary`; `tokens_after` is the estimated size of the conversation now."""

    tokens_before: int
    tokens_after: int
    message_count: int
    summary: str
    kind: Literal["compaction_end"] = field(default="compaction_end", init=False)


#: The classes of the events of a stream: `Event` is their Union.
_EVENT_CLASSES = (MessageStart, BlockStart, ContentDelta, BlockComplete, MessageEnd, ToolDetails,
                  ToolCallStart, ToolResult, ToolProgress, MessageComplete, ProviderRetry,
                  CompactionStart, CompactionEnd, ApprovalRequest, UserMessage)

if TYPE_CHECKING:  # the same classes, written out for type checkers
    Event = Union[MessageStart, BlockStart, ContentDelta, BlockComplete, MessageEnd, ToolDetails,
                  ToolCallStart, ToolResult, ToolProgress, MessageComplete, ProviderRetry,
                  CompactionStart, CompactionEnd, ApprovalRequest, UserMessage]
    """Any event of a stream."""


#: The names of the Literal types above, for their run-time forms.
_LITERALS = {
    "BlockKind": ("text", "thinking", "redacted_thinking", "tool_call", "server_block"),
    "StopReason": ("end_turn", "max_tokens", "stop_sequence", "tool_use", "refusal", "content_filter",
                   "pause_turn", "aborted", "other", "none", "budget"),
    "PartKind": ("text", "image", "document"),
}


def __getattr__(name: str) -> Any:
    # `Event` (a typing.Union) and the Literal types are made on first use: importing typing
    # costs more than the rest of this module.
    if name == "Event":
        from typing import Union

        union: Any = Union.__getitem__(_EVENT_CLASSES)  # Union[MessageStart, ...], made at run time
        globals()["Event"] = union
        return union
    if name in _LITERALS:
        from typing import Literal

        literal: Any = Literal.__getitem__(_LITERALS[name])
        globals()[name] = literal
        return literal
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
