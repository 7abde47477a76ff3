"""The conversation's messages and blocks as `Agent.conversation` gives them: the "messages" of
the exported document (docs/conversations.md, "The format, version 1"), as TypedDicts, so that
`message["role"] == "assistant"` or `block["type"] == "tool_call"` narrows to the keys that
message or block has.

    for message in agent.conversation:
        if message["role"] == "assistant":
            print(message["model"], message["stop_reason"])
        for block in message["content"]:
            if block["type"] == "text":
                print(block["text"])

Keys that are present only sometimes (a thinking block's `signature`, a media block's `name`, a
user message's `cache` and `compaction`) are optional keys. Imported on first use (`import
panto` does not import typing).
"""

from __future__ import annotations

from typing import Any, Dict, List, Literal, TypedDict, Union

from .events import StopReason  # at run time too: the types resolve (typing.get_type_hints, pydantic)

__all__ = [
    "TextBlockDict",
    "ThinkingBlockDict",
    "RedactedThinkingBlockDict",
    "ImageBlockDict",
    "DocumentBlockDict",
    "ServerBlockDict",
    "ToolCallBlockDict",
    "ToolResultBlockDict",
    "UserBlockDict",
    "AssistantBlockDict",
    "UsageDict",
    "CompactionDict",
    "UserMessageDict",
    "AssistantMessageDict",
    "MessageDict",
]


class _TextRequired(TypedDict):
    type: Literal["text"]
    text: str


class TextBlockDict(_TextRequired, total=False):
    """Text; `signature` when the provider signed it (a Gemini thought signature);
    `citations` on an assistant's text that has them (Anthropic's): a JSON array of the
    citation objects as the provider sent them, as a string."""

    signature: str
    citations: str


class _ThinkingRequired(TypedDict):
    type: Literal["thinking"]
    text: str


class ThinkingBlockDict(_ThinkingRequired, total=False):
    """The model's reasoning; `signature` when the provider gave one."""

    signature: str


class RedactedThinkingBlockDict(TypedDict):
    """Reasoning the provider encrypted: `text` is its opaque data."""

    type: Literal["redacted_thinking"]
    text: str


class _ImageRequired(TypedDict):
    type: Literal["image"]
    media_type: Literal["image/png", "image/jpeg", "image/gif", "image/webp"]
    data: str


class ImageBlockDict(_ImageRequired, total=False):
    """An image: `data` is base64; `name` when one was given."""

    name: str


class _DocumentRequired(TypedDict):
    type: Literal["document"]
    media_type: Literal["application/pdf"]
    data: str


class DocumentBlockDict(_DocumentRequired, total=False):
    """A PDF: `data` is base64; `name` when one was given."""

    name: str


class ServerBlockDict(TypedDict):
    """A block of the provider's that panto keeps without reading it (a server tool's call or
    result, a compaction, ...): `name` is its type, `json` its JSON object as received."""

    type: Literal["server_block"]
    name: str
    json: str


class _ToolCallRequired(TypedDict):
    type: Literal["tool_call"]
    id: str
    name: str
    input: Dict[str, Any]


class ToolCallBlockDict(_ToolCallRequired, total=False):
    """A tool call; `signature` when the provider signed it (a Gemini thought signature)."""

    signature: str


class ToolResultBlockDict(TypedDict):
    """A tool's result: `content` is a string, or its blocks when the result has media."""

    type: Literal["tool_result"]
    id: str
    content: Union[str, List[Union[TextBlockDict, ImageBlockDict, DocumentBlockDict]]]
    is_error: bool


#: The blocks of a user message.
UserBlockDict = Union[TextBlockDict, ImageBlockDict, DocumentBlockDict, ToolResultBlockDict]
#: The blocks of an assistant message.
AssistantBlockDict = Union[TextBlockDict, ThinkingBlockDict, RedactedThinkingBlockDict, ServerBlockDict,
                           ToolCallBlockDict]


class _UsageRequired(TypedDict):
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int


class UsageDict(_UsageRequired, total=False):
    #: Anthropic's server tools run for the message: present only when not 0.
    web_search_requests: int
    web_fetch_requests: int


class CompactionDict(TypedDict):
    """The messages a compaction's summary replaced, and the context's size before it."""

    message_count: int
    tokens_before: int


class _UserRequired(TypedDict):
    role: Literal["user"]
    content: List[UserBlockDict]


class UserMessageDict(_UserRequired, total=False):
    """A user message: `cache` (always True when present) marks a prompt-cache breakpoint;
    `compaction` marks the summary of compacted messages."""

    cache: bool
    compaction: CompactionDict


class _AssistantRequired(TypedDict):
    role: Literal["assistant"]
    content: List[AssistantBlockDict]
    provider: Literal["anthropic", "openai", "openai-responses", "gemini", "bedrock"]
    model: str
    stop_reason: StopReason
    usage: UsageDict


class AssistantMessageDict(_AssistantRequired, total=False):
    """An assistant message, with the provider and model the request went to, why it stopped
    ("aborted": its turn was canceled) and its usage. `reasoning_details` when an
    OpenAI-compatible server gave them (OpenRouter): a JSON array of its reasoning elements, as
    a string; they go back with the message's tool calls to the same model only. `container`
    when Anthropic's code execution ran: its container's id, which later requests to Anthropic
    carry."""

    reasoning_details: str
    container: str


#: A message of the conversation.
MessageDict = Union[UserMessageDict, AssistantMessageDict]
