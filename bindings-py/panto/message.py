"""The final assistant message of a turn, as `Stream.final_message()` returns it: frozen
dataclasses built from the turn's events."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Literal, Optional, Sequence, Tuple, Union

from .events import BlockComplete, MessageComplete, MessageEnd, MessageStart, ToolDetails, Usage

if TYPE_CHECKING:
    from .events import StopReason

__all__ = [
    "TextBlock",
    "ThinkingBlock",
    "RedactedThinkingBlock",
    "ServerBlock",
    "ToolCallBlock",
    "ContentBlock",
    "AssistantMessage",
]


@dataclass(frozen=True)
class TextBlock:
    """Text the model wrote; `citations`: its citations (Anthropic's), a JSON array of the
    citation objects as received, "" when it has none."""

    text: str
    citations: str = ""
    kind: Literal["text"] = field(default="text", init=False)


@dataclass(frozen=True)
class ThinkingBlock:
    """The model's reasoning (when the agent's `thinking` is on)."""

    text: str
    kind: Literal["thinking"] = field(default="thinking", init=False)


@dataclass(frozen=True)
class RedactedThinkingBlock:
    """Reasoning the provider encrypted: `data` is opaque."""

    data: str
    kind: Literal["redacted_thinking"] = field(default="redacted_thinking", init=False)


@dataclass(frozen=True)
class ServerBlock:
    """A block of the provider's that panto keeps without reading it (a server tool's call or
    result, a compaction, ...): `name` is its type, `json` its JSON object as received."""

    name: str
    json: str
    kind: Literal["server_block"] = field(default="server_block", init=False)


@dataclass(frozen=True)
class ToolCallBlock:
    """A tool call: `input` is the parsed JSON object (`{}` when empty, or when `raw_input`,
    the JSON text as the model streamed it, is not a JSON object, e.g. cut by max_tokens)."""

    id: str
    name: str
    input: Dict[str, Any]
    raw_input: str
    kind: Literal["tool_call"] = field(default="tool_call", init=False)


ContentBlock = Union[TextBlock, ThinkingBlock, RedactedThinkingBlock, ServerBlock, ToolCallBlock]


@dataclass(frozen=True)
class AssistantMessage:
    """The last assistant message of a turn (in a turn with tool rounds, the one after the
    last round), built from its events.

    `id` and `model` come from its MessageStart; `content` holds its blocks in order;
    `stop_reason`, `provider_stop_reason` and `usage` come from its MessageEnd (`usage` is
    that message's own); `turn_usage` is the MessageComplete's, summed over every message of
    the turn."""

    id: str
    model: str
    content: Tuple[ContentBlock, ...]
    stop_reason: StopReason
    provider_stop_reason: str
    usage: Usage
    turn_usage: Usage

    @property
    def text(self) -> str:
        """The text blocks, concatenated."""
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def tool_calls(self) -> Tuple[ToolCallBlock, ...]:
        """The tool-call blocks, in order."""
        return tuple(b for b in self.content if isinstance(b, ToolCallBlock))


def _tool_input(raw: str) -> Dict[str, Any]:
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def build_message(
    start: MessageStart,
    blocks: Sequence[BlockComplete],
    details: Dict[int, ToolDetails],
    end: MessageEnd,
    complete: MessageComplete,
) -> AssistantMessage:
    """An AssistantMessage from the events of one message and the turn's MessageComplete.
    Blocks of a kind newer than this package are left out."""
    content: List[ContentBlock] = []
    for b in sorted(blocks, key=lambda b: b.index):
        kind = b.block_kind
        if kind == "text":
            content.append(TextBlock(b.text, b.citations))
        elif kind == "thinking":
            content.append(ThinkingBlock(b.text))
        elif kind == "redacted_thinking":
            content.append(RedactedThinkingBlock(b.text))
        elif kind == "server_block":
            content.append(ServerBlock(b.name, b.text))
        elif kind == "tool_call":
            d: Optional[ToolDetails] = details.get(b.index)
            content.append(ToolCallBlock(d.id if d else "", d.name if d else "", _tool_input(b.text), b.text))
    return AssistantMessage(
        id=start.id,
        model=start.model,
        content=tuple(content),
        stop_reason=end.stop_reason,
        provider_stop_reason=end.provider_stop_reason,
        usage=end.usage,
        turn_usage=complete.usage,
    )
