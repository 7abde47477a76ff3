"""What a type checker must conclude about ordinary uses of panto (test_typing.py checks this
file with `mypy --strict` and pyright; it is never run).

`assert_type` states a type the checker must infer; a line ending in `# type: ignore[CODE]`
must be an error (both checkers report an ignore that silences nothing).
"""

from __future__ import annotations

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
