"""The token-counting requests (Agent.count_tokens) checked against the official SDKs' own
request types, as test_request_fidelity.py checks the turns': Anthropic's
`MessageCountTokensParams` and OpenAI's Responses `InputTokenCountParams` (strict, no extra
key), for a prompt with a system prompt, a tool, its choice, thinking and a tool round."""

from __future__ import annotations

from typing import Any, Dict, List

import pydantic
import pytest
from anthropic.types.message_count_tokens_params import MessageCountTokensParams
from openai.types.responses.input_token_count_params import InputTokenCountParams

import panto
from panto.emulator import Emulator

pytestmark = pytest.mark.usefixtures("library")

STRICT = pydantic.ConfigDict(extra="forbid", strict=True)
CALL = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
TOOL_ROUND = {"responses": [{"message": {"content": [CALL], "stop_reason": "tool_use"}},
                            {"message": {"content": [{"type": "text", "text": "Sunny."}]}}]}


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return "Sunny"


@pytest.mark.parametrize("provider,path,params", [
    ("anthropic", "/v1/messages/count_tokens", MessageCountTokensParams),
    ("openai-responses", "/v1/responses/input_tokens", InputTokenCountParams),
])
def test_count_requests_are_the_sdks_count_params(provider: str, path: str, params: Any) -> None:
    options: Dict[str, Any] = {"tool_choice": "auto"}
    if provider == "anthropic":
        options["thinking"] = "low"
    else:
        options.update(reasoning_effort="low", temperature=0.5)
    with Emulator(scenario=TOOL_ROUND) as emu, \
            panto.Agent(provider=provider, model="claude-test" if provider == "anthropic" else "gpt-test",
                        base_url=emu.url, api_key="k", system="You are terse.", **options) as agent:
        agent.add_tool(get_weather)
        agent.count_tokens("What is the weather in Paris?")
        "".join(agent.run("What is the weather in Paris?").text())
        agent.count_tokens("And tomorrow?")
        bodies: List[Any] = [r["body"] for r in emu.requests() if r["path"] == path]
    assert len(bodies) == 2
    pydantic.TypeAdapter(List[params], config=STRICT).validate_python(bodies)
    for body in bodies:
        assert not {"max_tokens", "max_output_tokens", "stream", "temperature", "store", "include"} & set(body)
