"""Agent.count_tokens (panto_agent_count_tokens): the provider's count of the next turn's
request, on the turns' kept-alive connection, nothing appended; a failed request raises the
typed error a turn's would; BusyError while a stream is unfinished; the estimate of OpenAI
Chat Completions, marked."""

from __future__ import annotations

from typing import Any, Dict

import pytest

import panto
from panto.emulator import Emulator

pytestmark = pytest.mark.usefixtures("library")


def hello_scenario() -> Dict[str, Any]:
    return {"responses": [{"message": {"content": [{"type": "text", "text": "Hello"}]}}], "repeat_last": True}


def test_the_provider_counts_the_next_turns_request_on_the_turns_connection() -> None:
    with Emulator(scenario=hello_scenario()) as emu, \
            panto.Agent(provider="anthropic", model="claude-test", base_url=emu.url, api_key="k") as agent:
        # The emulator's count (emulator/count.py): {model, messages: [{user, content: [{type,
        # text, cache_control: {}}]}]}, 4 objects and 5 words.
        assert agent.count_tokens("How many tokens is this?") == panto.TokenCount(input_tokens=9, estimated=False)
        assert agent.message_count == 0
        "".join(agent.run("Hi").text())
        # The conversation as it is: 1 + (1 + 1 + 1 word) + (1 + 1 + 1 word + the mark's 1).
        assert agent.count_tokens() == panto.TokenCount(input_tokens=8)
        requests = emu.requests()
        assert [r["path"] for r in requests] == ["/v1/messages/count_tokens", "/v1/messages", "/v1/messages/count_tokens"]
        assert "max_tokens" not in requests[0]["body"] and "stream" not in requests[0]["body"]
        assert [r["connection"] for r in requests] == [1, 1, 1]


def test_a_failed_count_is_typed_and_a_busy_agent_is_refused() -> None:
    with Emulator(scenario=hello_scenario()) as emu:
        with panto.Agent(provider="anthropic", model="claude-test", base_url=emu.url) as agent:
            with pytest.raises(panto.AuthenticationError) as caught:
                agent.count_tokens("hi")
            assert caught.value.http_status == 401
        with panto.Agent(provider="anthropic", model="claude-test", base_url=emu.url, api_key="k") as agent:
            with agent.run("Hi") as stream:
                with pytest.raises(panto.BusyError):
                    agent.count_tokens("hi")
                list(stream)
            with pytest.raises(TypeError):
                agent.count_tokens(42)  # type: ignore[arg-type]


def test_openai_chat_completions_is_estimated() -> None:
    with panto.Agent(provider="openai", model="gpt-4o", api_key="k") as agent:
        counted = agent.count_tokens("How many tokens is this?")  # 24 characters
        assert counted == panto.TokenCount(input_tokens=6, estimated=True)


def test_acount_tokens_answers_as_count_tokens_and_the_loop_goes_on_meanwhile() -> None:
    import asyncio

    async def main(agent: panto.Agent) -> tuple[panto.TokenCount, int]:
        ticks = 0
        done = asyncio.Event()

        async def tick() -> None:
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await asyncio.sleep(0)

        ticker = asyncio.create_task(tick())
        count = await agent.acount_tokens("How many tokens is this?")
        done.set()
        await ticker
        return count, ticks

    with Emulator(scenario=hello_scenario()) as emu, \
            panto.Agent(provider="anthropic", model="claude-test", base_url=emu.url, api_key="k") as agent:
        count, ticks = asyncio.run(main(agent))
        assert count == agent.count_tokens("How many tokens is this?") == panto.TokenCount(input_tokens=9)
        assert ticks > 0  # the loop ran another task while the count was asked
        with pytest.raises(panto.BusyError):
            with agent.run("Hi"):
                asyncio.run(agent.acount_tokens("hi"))
