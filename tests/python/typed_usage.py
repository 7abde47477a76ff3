"""What a type checker must conclude about ordinary uses of panto (test_typing.py checks this
file with `mypy --strict` and pyright; it is never run).

`assert_type` states a type the checker must infer; a line ending in `# type: ignore[CODE]`
must be an error (both checkers report an ignore that silences nothing).
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Optional

from typing_extensions import assert_type

import panto
from panto.conversation import AssistantMessageDict, MessageDict, ToolCallBlockDict, UserMessageDict
from panto.events import BlockKind, StopReason


def session_in_with() -> None:
    with panto.Session("work", dir="sessions", provider="anthropic", model="claude-sonnet-4-5") as session:
        assert_type(session, panto.Session)
        assert_type(session.info, panto.SessionInfo)
        assert_type(session.id, str)
        assert_type(session.fork(), panto.SessionInfo)
    assert_type(panto.Session.resume("work", provider="anthropic", model="m"), panto.Session)
    assert_type(panto.Session.from_config({"provider": "anthropic", "model": "m"}), panto.Session)


def agent_and_stream(agent: panto.Agent) -> None:
    with agent as same:
        assert_type(same, panto.Agent)
    with agent.run("Hello") as stream:
        assert_type(stream, panto.Stream)
        assert_type(stream.reopen(), panto.Stream)


async def stream_async(agent: panto.Agent) -> None:
    async with agent.run("Hello") as stream:
        assert_type(stream, panto.Stream)
        async for event in stream:
            assert_type(event, panto.Event)


def kinds_narrow(stream: panto.Stream) -> None:
    for event in stream:
        if event.kind == "content_delta":
            assert_type(event, panto.ContentDelta)
            assert_type(event.block_kind, BlockKind)
            if event.block_kind == "text":
                print(event.text)
            elif event.block_kind == "reasoning":  # type: ignore[comparison-overlap]
                pass
        elif event.kind == "message_complete":
            assert_type(event, panto.MessageComplete)
            assert_type(event.stop_reason, StopReason)
            if event.stop_reason == "length":  # type: ignore[comparison-overlap]
                pass
        elif event.kind == "tool_result":
            assert_type(event, panto.ToolResult)
    message = stream.final_message()
    assert_type(message.stop_reason, StopReason)
    for block in message.content:
        if block.kind == "tool_call":
            assert_type(block, panto.ToolCallBlock)


def conversation_messages(agent: panto.Agent) -> None:
    conversation = agent.conversation
    assert_type(conversation, list[MessageDict])
    for message in conversation:
        if message["role"] == "assistant":
            assert_type(message, AssistantMessageDict)
            assert_type(message["stop_reason"], StopReason)
            assert_type(message["usage"]["output_tokens"], int)
            for block in message["content"]:
                if block["type"] == "tool_call":
                    assert_type(block, ToolCallBlockDict)
                elif block["type"] == "image":  # type: ignore[comparison-overlap]
                    pass
        else:
            assert_type(message, UserMessageDict)
            message["model"]  # type: ignore[typeddict-item]


@panto.tool
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


@panto.tool(name="convert", capabilities=["net"])
async def convert(amount: float, to: str = panto.Param("Target currency", default="EUR")) -> str:
    """Converts an amount."""
    return f"{amount} {to}"


def search(query: str = panto.Param("What to look for"),
           limit: int = panto.Param("At most this many", default=10, schema={"minimum": 1})) -> list[str]:
    return [query] * limit


class Convert(panto.ToolClass):
    """Converts an amount."""

    amount: float
    to: str = panto.Param("Target currency", default="EUR")

    def run(self) -> str:
        return f"{self.amount} {self.to}"


@panto.tool
class Weather:
    """Current weather."""

    city: str

    def run(self) -> str:
        return self.city


def tools_keep_their_signature() -> None:
    assert_type(add(1, 2), int)
    add("x", 2)  # type: ignore[arg-type]
    add(1)  # type: ignore[call-arg]
    assert_type(add.name, str)
    assert_type(add.spec(), dict[str, Any])
    typed: panto.Tool[[int, int], int] = add
    typed_async: Optional[Callable[[float, str], Awaitable[str]]] = convert.handler
    untyped: panto.Tool = add
    print(typed, typed_async, untyped)
    assert_type(Weather, type[Weather])
    assert_type(Convert(amount=1.0).to, str)
    tools = panto.Registry()
    registered: panto.Tool[[str, int], list[str]] = tools.register(search)
    assert_type(registered("x", 2), list[str])

    @tools.register(sequential=True)
    def slow(seconds: float) -> float:
        return seconds

    assert_type(slow(1.0), float)
    assert_type(panto.as_tool(Weather), panto.Tool)
    agent = panto.Agent(provider="anthropic", model="m", tools=[add, convert, Convert, Weather, tools])
    assert_type(agent.get_tool("add"), Optional[panto.Tool])
