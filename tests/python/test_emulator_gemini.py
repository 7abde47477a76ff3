"""The emulator's Gemini API (POST /v1beta/models/MODEL:streamGenerateContent?alt=sse): the
chunks of a scripted message (thought parts with their signature, a call without an id, the
first call signed, finishReason and usageMetadata on the last chunk), Google's error body and
stream error, and the refusals the API makes: a Gemini 3 call sent back without its
signature, function responses that do not match the calls."""

from __future__ import annotations

import base64
import http.client
import json
from typing import Any

import pytest

from panto.emulator import Emulator

HEADERS = {"x-goog-api-key": "test-key", "content-type": "application/json"}
USER = {"role": "user", "parts": [{"text": "Hi"}]}

MESSAGE = {
    "id": "resp-1",
    "model": "gemini-test",
    "content": [
        {"type": "thinking", "thinking": "The user greets me.", "signature": "sig-1",
         "deltas": ["The user ", "greets me."]},
        {"type": "tool_use", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "name": "get_time", "input": {}},
    ],
    "stop_reason": "tool_use",
    "usage": {"input_tokens": 11, "output_tokens": 22, "cache_read_tokens": 3,
              "reasoning_tokens": 5},
}


@pytest.fixture
def emu():
    with Emulator() as e:
        yield e


def post(emu: Emulator, body: Any, model: str = "gemini-test") -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(emu.host, emu.port, timeout=5)
    try:
        conn.request("POST", f"/v1beta/models/{model}:streamGenerateContent?alt=sse",
                     json.dumps(body), HEADERS)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def chunks(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(c.removeprefix("data: ")) for c in body.decode().split("\r\n\r\n") if c]


def test_a_message_streams_as_chunks_of_parts(emu):
    emu.load({"responses": [{"message": MESSAGE}]})
    status, body = post(emu, {"contents": [USER]})
    assert status == 200
    got = chunks(body)
    parts = [c["candidates"][0]["content"]["parts"] for c in got]
    assert parts[0] == [{"text": "The user ", "thought": True}]
    assert parts[1] == [{"text": "greets me.", "thought": True, "thoughtSignature": "sig-1"}]
    first_call, second_call = parts[2][0], parts[3][0]
    assert first_call["functionCall"] == {"name": "get_weather", "args": {"city": "Paris"}}
    assert base64.b64decode(first_call["thoughtSignature"], validate=True)
    assert second_call == {"functionCall": {"name": "get_time", "args": {}}}  # no id, unsigned
    assert all(c["responseId"] == "resp-1" for c in got)
    assert got[-1]["candidates"][0]["finishReason"] == "STOP"
    assert got[-1]["usageMetadata"] == {"promptTokenCount": 14, "candidatesTokenCount": 17,
                                        "thoughtsTokenCount": 5, "cachedContentTokenCount": 3,
                                        "totalTokenCount": 36}


def test_errors_in_googles_shape(emu):
    emu.load({"responses": [
        {"status": 429, "error": {"type": "rate_limit_error", "message": "Quota."}},
        {"message": MESSAGE, "stream_error": {"type": "UNAVAILABLE", "message": "Busy.",
                                              "after_events": 1}}]})
    status, body = post(emu, {"contents": [USER]})
    assert status == 429
    assert json.loads(body) == {"error": {"code": 429, "message": "Quota.",
                                          "status": "RESOURCE_EXHAUSTED"}}
    status, body = post(emu, {"contents": [USER]})
    assert status == 200
    assert chunks(body)[-1] == {"error": {"code": 503, "message": "Busy.", "status": "UNAVAILABLE"}}


def test_a_gemini_3_call_without_its_signature_is_refused(emu):
    emu.load({"responses": [{"message": MESSAGE}]})
    unsigned = [USER, {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}]
    status, body = post(emu, {"contents": unsigned}, model="gemini-3-test")
    assert status == 400
    assert json.loads(body)["error"]["status"] == "INVALID_ARGUMENT"
    assert "thought_signature" in json.loads(body)["error"]["message"]
    # Older models take it; so does Gemini 3 once the call is signed.
    assert post(emu, {"contents": unsigned})[0] == 200
    unsigned[1]["parts"][0]["thoughtSignature"] = "sig"
    emu.load({"responses": [{"message": MESSAGE}]})
    assert post(emu, {"contents": unsigned}, model="gemini-3-test")[0] == 200


def test_function_responses_must_answer_every_call(emu):
    emu.load({"responses": [{"message": MESSAGE}]})
    calls = {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}},
                                        {"functionCall": {"name": "g", "args": {}}}]}
    one = {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}
    status, body = post(emu, {"contents": [USER, calls, one]})
    assert status == 400
    assert "number of function response parts" in json.loads(body)["error"]["message"]
