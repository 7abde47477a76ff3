"""The events of a turn: frozen dataclasses, each with a `kind` field holding the stable name
of `panto_event_kind_name()` ("message_start", "block_start", ...).

Block kinds ("text", "thinking", "tool_call") and stop reasons ("end_turn", "max_tokens", ...)
are the stable names of `panto_block_kind_name()` and `panto_stop_reason_name()`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

__all__ = [
    "Usage",
    "MessageStart",
    "BlockStart",
    "ContentDelta",
    "BlockComplete",
    "MessageComplete",
    "Event",
]

@dataclass(frozen=True)
class Usage:
    """Token counts of a turn, normalized across providers (input excludes cached tokens)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0


@dataclass(frozen=True)
class MessageStart:
    """The provider started its answer."""

    id: str
    model: str
    kind: str = field(default="message_start", init=False)


@dataclass(frozen=True)
class BlockStart:
    """A content block (text, thinking, tool call) starts at `index`."""

    index: int
    block_kind: str
    kind: str = field(default="block_start", init=False)


@dataclass(frozen=True)
class ContentDelta:
    """A new fragment of the block at `index`."""

    index: int
    block_kind: str
    text: str
    kind: str = field(default="content_delta", init=False)


@dataclass(frozen=True)
class BlockComplete:
    """The block at `index` is complete; `text` is the whole block."""

    index: int
    block_kind: str
    text: str
    kind: str = field(default="block_complete", init=False)


@dataclass(frozen=True)
class MessageComplete:
    """The answer is complete: the last event of a turn."""

    stop_reason: str
    provider_stop_reason: str
    usage: Usage
    kind: str = field(default="message_complete", init=False)


Event = Union[MessageStart, BlockStart, ContentDelta, BlockComplete, MessageComplete]
