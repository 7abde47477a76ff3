"""The emulator's OpenAI Responses API (POST /v1/responses): the streaming events of a
scripted message, a reasoning item's encrypted content only in output_item.done, a max_tokens
stop as response.incomplete, a scripted stream error as an `error` event, and the refusal of a
reasoning item sent back without its encrypted content."""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest

from panto.emulator import Emulator

PATH = "/v1/responses"
HEADERS = {"authorization": "Bearer test-key", "content-type": "application/json"}
BODY = {"model": "gpt-test", "stream": True, "store": False,
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "Hi"}]}]}

MESSAGE = {
    "content": [
        {"type": "thinking", "thinking": "The user greets me.", "signature": "enc-1",
         "deltas": ["The user ", "greets me."]},
        {"type": "text", "text": "Hello!", "deltas": ["Hel", "lo!"]},
        {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}},
    ],
    "stop_reason": "tool_use",
    "usage": {"input_tokens": 11, "output_tokens": 22, "cache_read_tokens": 3,
              "reasoning_tokens": 5},
}


@pytest.fixture
def emu():
    with Emulator() as e:
        yield e


def post(emu: Emulator, body: Any) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(emu.host, emu.port, timeout=5)
    try:
        conn.request("POST", PATH, json.dumps(body), HEADERS)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def events(body: bytes) -> list[dict[str, Any]]:
    """Each event's data, checked to name the same type as its `event:` line."""
    out = []
    for block in body.decode().split("\n\n"):
        if not block:
            continue
        name, data = block.split("\n")
        data_json = json.loads(data.removeprefix("data: "))
        assert name == "event: " + data_json["type"]
        out.append(data_json)
    return out


def test_a_message_streams_as_responses_items(emu):
    emu.load({"responses": [{"message": MESSAGE}]})
    status, body = post(emu, BODY)
    assert status == 200
    got = events(body)
    assert [e["sequence_number"] for e in got] == list(range(len(got)))
    assert [e["type"] for e in got][:2] == ["response.created", "response.in_progress"]
    added = [e for e in got if e["type"] == "response.output_item.added"]
    done = [e for e in got if e["type"] == "response.output_item.done"]
    assert [e["item"]["type"] for e in added] == ["reasoning", "message", "function_call"]
    assert [e["output_index"] for e in done] == [0, 1, 2]
    assert "encrypted_content" not in added[0]["item"]
    assert done[0]["item"]["encrypted_content"] == "enc-1"
    assert done[0]["item"]["summary"] == [{"type": "summary_text", "text": "The user greets me."}]
    summary = [e["delta"] for e in got if e["type"] == "response.reasoning_summary_text.delta"]
    assert summary == ["The user ", "greets me."]
    assert [e["delta"] for e in got if e["type"] == "response.output_text.delta"] == ["Hel", "lo!"]
    arguments = "".join(e["delta"] for e in got
                        if e["type"] == "response.function_call_arguments.delta")
    assert json.loads(arguments) == {"city": "Paris"}
    assert done[2]["item"]["call_id"] == "call_1" and done[2]["item"]["name"] == "get_weather"
    end = got[-1]
    assert end["type"] == "response.completed"
    assert end["response"]["usage"] == {
        "input_tokens": 14, "input_tokens_details": {"cached_tokens": 3}, "output_tokens": 22,
        "output_tokens_details": {"reasoning_tokens": 5}, "total_tokens": 36}


def test_max_tokens_is_incomplete_and_a_stream_error_an_error_event(emu):
    cut = dict(MESSAGE, content=MESSAGE["content"][1:2], stop_reason="max_tokens")
    emu.load({"responses": [{"message": cut},
                            {"message": cut, "stream_error": {"after_events": 2,
                                                              "type": "server_error",
                                                              "message": "Boom."}}]})
    end = events(post(emu, BODY)[1])[-1]
    assert end["type"] == "response.incomplete"
    assert end["response"]["incomplete_details"] == {"reason": "max_output_tokens"}
    got = events(post(emu, BODY)[1])
    assert [e["type"] for e in got] == ["response.created", "response.in_progress", "error"]
    assert got[-1]["code"] == "server_error" and got[-1]["message"] == "Boom."


def test_a_reasoning_item_without_encrypted_content_is_refused_when_not_stored(emu):
    emu.load({"responses": [{"message": MESSAGE}]})
    item = {"type": "reasoning", "id": "rs_1", "summary": []}
    status, body = post(emu, dict(BODY, input=BODY["input"] + [item]))
    assert status == 404
    assert "not found" in json.loads(body)["error"]["message"]
