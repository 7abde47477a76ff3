"""Steering and follow-ups (issue 36): `Stream.steer()` puts a message into the running turn
after the current tool round's results, `Stream.follow_up()` runs another turn in the same
stream; `UserMessage` events mark where each entered; the requests stay valid."""
from __future__ import annotations

import asyncio
import threading
from typing import Any, Dict, List

import pytest

import panto
from panto.emulator import Emulator

pytestmark = pytest.mark.usefixtures("library")

TOOL_CALL = {"message": {"content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                                      "input": {"city": "Paris"}}], "stop_reason": "tool_use"}}
HELLO = {"message": {"content": [{"type": "text", "text": "Hello world"}], "stop_reason": "end_turn",
                     "usage": {"input_tokens": 7, "output_tokens": 2}}}


@panto.tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return "sunny"


def new_agent(emu: Emulator, provider: str = "anthropic") -> panto.Agent:
    return panto.Agent(provider=provider, model="test-model", base_url=emu.url, api_key="test-key",
                       tools=[get_weather])


def kinds(events: List[Any]) -> List[str]:
    return [e.kind for e in events]


def test_a_steer_goes_to_the_model_with_the_rounds_results(provider: str) -> None:
    with Emulator(scenario={"responses": [TOOL_CALL, HELLO]}) as emu, new_agent(emu, provider) as agent:
        with agent.run("Weather in Paris?", run_tools=False) as stream:
            events: List[Any] = []
            with pytest.raises(panto.ResultPendingError):
                for ev in stream:
                    events.append(ev)
            stream.steer("In Celsius, please.")
            stream.submit_tool_result("toolu_1", "21 C")
            events += list(stream)
        said = [e for e in events if isinstance(e, panto.UserMessage)]
        assert said == [panto.UserMessage("steer", "In Celsius, please.")]
        assert kinds(events).index("user_message") == kinds(events).index("tool_result") + 1
        assert kinds(events).count("message_complete") == 1
        # One user message: the result, then the steer.
        last_user = agent.conversation[-2]
        assert [b["type"] for b in last_user["content"]] == ["tool_result", "text"]
        assert last_user["content"][1]["text"] == "In Celsius, please."
        sent = emu.requests()[1]["body"]["messages"]
        if provider == "anthropic":
            assert [b["type"] for b in sent[-1]["content"]] == ["tool_result", "text"]
        else:  # the tool message, then the user's
            assert [m["role"] for m in sent[-2:]] == ["tool", "user"]
            assert sent[-1]["content"] == "In Celsius, please."


def test_a_follow_up_runs_the_streams_next_turn_with_its_own_usage(provider: str) -> None:
    with Emulator(scenario={"responses": [HELLO, HELLO]}) as emu, new_agent(emu, provider) as agent:
        with agent.run("Hi") as stream:
            with pytest.raises(panto.InvalidArgumentError):
                stream.follow_up("")
            stream.follow_up("And then?")
            events = list(stream)
            with pytest.raises(panto.StateError):  # over: refused, not lost
                stream.follow_up("too late")
            with pytest.raises(panto.StateError):
                stream.steer("too late")
        completes = [e for e in events if isinstance(e, panto.MessageComplete)]
        assert len(completes) == 2
        assert completes[0].usage == completes[1].usage  # (each turn's own, not summed)
        first_end = kinds(events).index("message_complete")
        assert events[first_end + 1] == panto.UserMessage("follow_up", "And then?")
        assert [m["role"] for m in agent.conversation] == ["user", "assistant", "user", "assistant"]
        assert len(emu.requests()) == 2


def test_a_follow_up_from_another_thread_while_the_stream_is_read() -> None:
    with Emulator(scenario={"responses": [HELLO, HELLO]}) as emu, new_agent(emu) as agent:
        with agent.run("Hi") as stream:
            events: List[Any] = []
            for ev in stream:
                events.append(ev)
                if ev.kind == "message_start" and len(events) == 1:
                    other = threading.Thread(target=stream.follow_up, args=("From the web handler",))
                    other.start()
                    other.join()
        assert panto.UserMessage("follow_up", "From the web handler") in events
        assert kinds(events).count("message_complete") == 2


def test_async_for_goes_on_with_a_follow_up() -> None:
    async def main(stream: panto.Stream) -> List[Any]:
        stream.follow_up("And then?")
        return [ev async for ev in stream]

    with Emulator(scenario={"responses": [HELLO, HELLO]}) as emu, new_agent(emu) as agent:
        with agent.run("Hi") as stream:
            events = asyncio.run(main(stream))
        assert kinds(events).count("message_complete") == 2
        assert panto.UserMessage("follow_up", "And then?") in events


def test_continue_turn_answers_an_imported_round(provider: str) -> None:
    # What a worker that ran the tool hands on: the conversation ending with the round's results.
    after_round = {"version": 1, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
        {"role": "assistant", "content": [{"type": "tool_call", "id": "toolu_1", "name": "get_weather",
                                           "input": {"city": "Paris"}}],
         "provider": provider, "model": "test-model", "stop_reason": "tool_use"},
        {"role": "user", "content": [{"type": "tool_result", "id": "toolu_1", "content": "21 C",
                                      "is_error": False}]}]}
    with Emulator(scenario={"responses": [HELLO]}) as emu, new_agent(emu, provider) as agent:
        with pytest.raises(panto.ConversationError):
            agent.continue_turn()  # nothing to answer
        agent.import_(after_round)
        with agent.continue_turn(max_tokens=77) as stream:
            assert [e.kind for e in stream][-1] == "message_complete"
        assert [m["role"] for m in agent.conversation] == ["user", "assistant", "user", "assistant"]
        (request,) = emu.requests()
        assert 77 in (request["body"].get("max_tokens"), request["body"].get("max_completion_tokens"))
        assert "21 C" in str(request["body"]["messages"])
        with pytest.raises(panto.ConversationError):
            agent.continue_turn()  # answered: nothing left
