"""What a type checker must conclude about ordinary uses of panto (test_typing.py checks this
file with `mypy --strict` and pyright; it is never run).

`assert_type` states a type the checker must infer; a line ending in `# type: ignore[CODE]`
must be an error (both checkers report an ignore that silences nothing).
"""

from __future__ import annotations

from typing_extensions import assert_type

import panto


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
