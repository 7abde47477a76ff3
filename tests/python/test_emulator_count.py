"""The emulator's token-counting endpoints (emulator/count.py): Anthropic's count_tokens,
Gemini's countTokens, the Responses API's input_tokens and Bedrock's CountTokens answer a
count made up from the prompt (a token per word of its strings, one per object), outside the
scenario, and refuse what the real endpoints refuse: a member of the turn's request, no key."""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest

from panto.emulator import Emulator

ANTHROPIC = {"x-api-key": "k", "anthropic-version": "2023-06-01", "content-type": "application/json"}
BEARER = {"authorization": "Bearer k", "content-type": "application/json"}
GEMINI = {"x-goog-api-key": "k", "content-type": "application/json"}
USER = [{"type": "text", "text": "How many tokens is this?"}]


def post(emu: Emulator, path: str, body: Any, headers: dict[str, str]) -> tuple[int, Any]:
    conn = http.client.HTTPConnection(emu.host, emu.port, timeout=5)
    try:
        conn.request("POST", path, json.dumps(body), headers)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


@pytest.fixture(scope="module")
def emu() -> Any:
    with Emulator(scenario={"responses": []}) as e:
        yield e


CASES = [
    ("/v1/messages/count_tokens", ANTHROPIC,
     {"model": "m", "system": "Be brief.", "messages": [{"role": "user", "content": USER}]},
     {"input_tokens": 1 + 2 + 1 + 1 + 5}),
    ("/v1/responses/input_tokens", BEARER, {"model": "m", "input": "How many tokens is this?"},
     {"object": "response.input_tokens", "input_tokens": 1 + 5}),
    ("/v1beta/models/g:countTokens", GEMINI,
     {"generateContentRequest": {"model": "models/g", "contents": [{"role": "user", "parts": [{"text": "a b c"}]}]}},
     {"totalTokens": 1 + 1 + 1 + 3, "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 6}]}),
    ("/model/m%3A0/count-tokens", BEARER,
     {"input": {"converse": {"messages": [{"role": "user", "content": [{"text": "a b"}]}]}}},
     {"inputTokens": 1 + 1 + 1 + 2}),
]


@pytest.mark.parametrize("path,headers,body,want", CASES, ids=[c[0] for c in CASES])
def test_a_prompt_is_counted_and_logged_without_taking_a_scripted_response(emu: Emulator, path: str, headers: dict[str, str], body: Any, want: Any) -> None:
    emu.reset()
    assert post(emu, path, body, headers) == (200, want)
    assert [r["path"] for r in emu.requests()] == [path]


@pytest.mark.parametrize("path,headers,body,member", [
    ("/v1/messages/count_tokens", ANTHROPIC, {"model": "m", "max_tokens": 5, "messages": []}, "max_tokens"),
    ("/v1/responses/input_tokens", BEARER, {"model": "m", "input": [], "stream": True}, "stream"),
    ("/model/m/count-tokens", BEARER, {"input": {"converse": {"messages": [], "inferenceConfig": {}}}}, "inferenceConfig"),
])
def test_a_member_of_the_turns_request_is_refused(emu: Emulator, path: str, headers: dict[str, str], body: Any, member: str) -> None:
    status, answer = post(emu, path, body, headers)
    assert status == 400
    assert member in json.dumps(answer)


def test_no_key_is_refused_as_the_provider_refuses_it(emu: Emulator) -> None:
    status, answer = post(emu, "/v1/messages/count_tokens", {"model": "m", "messages": []},
                          {"anthropic-version": "2023-06-01"})
    assert status == 401 and answer["error"]["type"] == "authentication_error"
    status, _ = post(emu, "/v1beta/models/g:countTokens", {"contents": []}, {})
    assert status == 403
