"""Tests of the provider emulator (bindings-py/panto/emulator), over real loopback HTTP.

Run: PYTHONPATH=bindings-py .venv/bin/python -m pytest -q tests/python/test_emulator.py
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from panto.emulator import Emulator, ScenarioError, parse
from panto.emulator.scenario import replay_scenario
from panto.emulator import wire
from panto.emulator.pieces import split_events, split_words

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "tests" / "fixtures" / "recorded"
SSE_FILES = sorted(RECORDED.glob("*/*.sse"))
assert len(SSE_FILES) >= 17, "the recorded transcripts are missing"

ANTHROPIC = "/v1/messages"
OPENAI = "/v1/chat/completions"
HEADERS = {
    ANTHROPIC: {"x-api-key": "test-key", "anthropic-version": "2023-06-01",
                "content-type": "application/json"},
    OPENAI: {"authorization": "Bearer test-key", "content-type": "application/json"},
}
BODIES = {
    ANTHROPIC: {"model": "claude-test", "max_tokens": 100, "stream": True,
                "messages": [{"role": "user", "content": "Hi"}]},
    OPENAI: {"model": "gpt-test", "stream": True, "stream_options": {"include_usage": True},
             "messages": [{"role": "user", "content": "Hi"}]},
}

# A message with every kind of block, used for both wire formats.
RICH = {
    "content": [
        {"type": "thinking", "thinking": "The user greets me.", "signature": "c2lnbmF0dXJl"},
        {"type": "text", "text": "Hello, wörld! Let me check."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather",
         "input": {"city": "Paris", "units": ["c", "f"]}},
        {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {}},
    ],
    "usage": {"input_tokens": 11, "output_tokens": 22, "cache_read_tokens": 3,
              "cache_write_tokens": 4, "reasoning_tokens": 5},
}


# ---- helpers -----------------------------------------------------------------------------


class Reply:
    def __init__(self, resp: http.client.HTTPResponse, body: bytes) -> None:
        self.status = resp.status
        self.reason = resp.reason
        self.headers = {k.lower(): v for k, v in resp.getheaders()}
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body)


def post(emu: Emulator, path: str, body: Any = None, headers: dict[str, str] | None = None,
         method: str = "POST", timeout: float = 5) -> Reply:
    """One request on a fresh connection; returns the whole reply."""
    conn = http.client.HTTPConnection(emu.host, emu.port, timeout=timeout)
    try:
        data = body if isinstance(body, (bytes, str)) or body is None else json.dumps(body)
        conn.request(method, path, data,
                     HEADERS.get(path, {}) if headers is None else headers)
        resp = conn.getresponse()
        return Reply(resp, resp.read())
    finally:
        conn.close()


def call(emu: Emulator, path: str, **body_changes: Any) -> Reply:
    return post(emu, path, dict(BODIES[path], **body_changes))


def sse_events(body: bytes) -> list[tuple[str | None, str]]:
    """(event name, data) for each SSE event, per the WHATWG rules we need here."""
    events = []
    for block in body.decode().split("\n\n"):
        if not block:
            continue
        name, data = None, []
        for line in block.split("\n"):
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
        events.append((name, "\n".join(data)))
    return events


def raw_request(emu: Emulator, path: str, timeout: float = 5,
                keep_alive: bool = False) -> tuple[bytes, bytes]:
    """Sends a request on a raw socket and returns (head, everything after it) until EOF."""
    body = json.dumps(BODIES[path]).encode()
    lines = [f"POST {path} HTTP/1.1", f"host: {emu.host}",
             f"connection: {'keep-alive' if keep_alive else 'close'}",
             f"content-length: {len(body)}"]
    lines += [f"{k}: {v}" for k, v in HEADERS[path].items()]
    with socket.create_connection((emu.host, emu.port), timeout=timeout) as s:
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def chunk_payloads(chunked: bytes) -> list[bytes]:
    """Decodes a chunked body into the payload of each chunk; asserts the 0-terminator."""
    chunks = []
    while True:
        size_line, _, chunked = chunked.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            assert chunked == b"\r\n", "bad terminator"
            return chunks
        chunks.append(chunked[:size])
        assert chunked[size : size + 2] == b"\r\n"
        chunked = chunked[size + 2 :]


def wait_for_requests(emu: Emulator, n: int) -> list[dict[str, Any]]:
    """The request log once it holds n requests (fails after 5 s)."""
    deadline = time.monotonic() + 5
    while len(log := emu.requests()) < n:
        assert time.monotonic() < deadline, f"{len(log)} requests logged, waiting for {n}"
        time.sleep(0.01)
    return log


@pytest.fixture
def emu():
    with Emulator() as e:
        yield e


# ---- Anthropic wire format ---------------------------------------------------------------


def test_anthropic_renders_every_block_kind(emu):
    emu.load({"responses": [{"message": RICH}]})
    r = call(emu, ANTHROPIC)
    assert r.status == 200
    assert r.headers["content-type"].startswith("text/event-stream")
    assert r.headers["transfer-encoding"] == "chunked"
    assert r.headers["request-id"].startswith("req_")

    events = sse_events(r.body)
    data = [json.loads(d) for _, d in events]  # every event's data is JSON
    for (name, _), d in zip(events, data):
        assert d["type"] == name
    names = [n for n, _ in events]
    assert names[:3] == ["message_start", "content_block_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    assert names.count("content_block_start") == names.count("content_block_stop") == 4

    start = data[0]["message"]
    assert start["id"] == "msg_emu_0001"
    assert start["model"] == "claude-test"  # echoes the request
    assert start["usage"] == {"input_tokens": 11, "cache_creation_input_tokens": 4,
                              "cache_read_input_tokens": 3, "output_tokens": 1}

    # Accumulate per block index, as a client would.
    blocks: dict[int, dict[str, Any]] = {}
    for d in data:
        if d["type"] == "content_block_start":
            blocks[d["index"]] = dict(d["content_block"], json="")
        elif d["type"] == "content_block_delta":
            b, delta = blocks[d["index"]], d["delta"]
            kind = delta["type"]
            if kind == "text_delta":
                b["text"] += delta["text"]
            elif kind == "thinking_delta":
                b["thinking"] += delta["thinking"]
            elif kind == "signature_delta":
                b["signature"] += delta["signature"]
            else:
                assert kind == "input_json_delta"
                b["json"] += delta["partial_json"]
    assert blocks[0]["thinking"] == "The user greets me."
    assert blocks[0]["signature"] == "c2lnbmF0dXJl"
    assert blocks[1]["text"] == "Hello, wörld! Let me check."
    assert (blocks[2]["id"], blocks[2]["name"]) == ("toolu_1", "get_weather")
    assert json.loads(blocks[2]["json"]) == {"city": "Paris", "units": ["c", "f"]}
    assert blocks[3]["json"] == ""  # a tool without arguments: one "" fragment, like the API

    tool_fragments = [d["delta"]["partial_json"] for d in data
                      if d["type"] == "content_block_delta" and d["index"] == 2]
    assert tool_fragments[0] == "" and len(tool_fragments) > 3  # streamed in pieces
    text_deltas = [d["delta"]["text"] for d in data
                   if d.get("delta", {}).get("type") == "text_delta"]
    assert text_deltas == ["Hello, ", "wörld! ", "Let ", "me ", "check."]

    final = data[-2]
    assert final["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}
    assert final["usage"] == {"input_tokens": 11, "cache_creation_input_tokens": 4,
                              "cache_read_input_tokens": 3, "output_tokens": 22,
                              "output_tokens_details": {"thinking_tokens": 5}}


def test_anthropic_ping_has_the_real_spacing(emu):
    emu.load({"responses": [{"message": {"content": [{"type": "text", "text": "x"}]}}]})
    assert b'event: ping\ndata: {"type": "ping"}\n\n' in call(emu, ANTHROPIC).body


def test_explicit_deltas_are_sent_verbatim(emu):
    emu.load({"responses": [{"message": {"content": [
        {"type": "text", "text": "Hello", "deltas": ["He", "", "llo"]},
        {"type": "tool_use", "name": "f", "input": {"a": 1}, "deltas": ["{\"a\"", ": 1}"]},
    ]}}], "repeat_last": True})
    data = [json.loads(d) for _, d in sse_events(call(emu, ANTHROPIC).body)]
    deltas = [d["delta"] for d in data if d["type"] == "content_block_delta"]
    assert deltas == [
        {"type": "text_delta", "text": "He"}, {"type": "text_delta", "text": ""},
        {"type": "text_delta", "text": "llo"},
        {"type": "input_json_delta", "partial_json": "{\"a\""},
        {"type": "input_json_delta", "partial_json": ": 1}"},
    ]
    chunks = [json.loads(d) for _, d in sse_events(call(emu, OPENAI).body) if d != "[DONE]"]
    args = [c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
            for c in chunks if c["choices"] and "tool_calls" in c["choices"][0]["delta"]]
    assert args == ["", "{\"a\"", ": 1}"]


def test_split_words_keeps_every_character():
    assert split_words("Hello big world") == ["Hello ", "big ", "world"]
    assert split_words("  two\n\nlines ") == ["  two\n\n", "lines "]
    assert split_words("   ") == ["   "]
    assert split_words("") == []


def test_split_events_keeps_every_byte():
    body = b"event: a\ndata: 1\n\ndata: 2\r\n\r\ndata: 3"
    assert split_events(body) == [b"event: a\ndata: 1\n\n", b"data: 2\r\n\r\n", b"data: 3"]


# ---- OpenAI wire format ------------------------------------------------------------------


def test_openai_renders_every_block_kind(emu):
    emu.load({"responses": [{"message": RICH}]})
    r = call(emu, OPENAI)
    assert r.status == 200
    assert r.headers["content-type"].startswith("text/event-stream")
    assert r.headers["x-request-id"].startswith("req_")
    assert r.body.endswith(b"data: [DONE]\n\n")

    events = sse_events(r.body)
    assert all(name is None for name, _ in events)  # OpenAI sends data lines only
    assert events[-1][1] == "[DONE]"
    chunks = [json.loads(d) for _, d in events[:-1]]
    for c in chunks:
        assert c["object"] == "chat.completion.chunk"
        assert c["id"] == "chatcmpl-emu0001"
        assert c["model"] == "gpt-test"
    *streamed, usage_chunk = chunks
    for c in streamed:
        assert c["usage"] is None  # include_usage: every chunk says usage null
        assert [ch["index"] for ch in c["choices"]] == [0]

    deltas = [c["choices"][0]["delta"] for c in streamed]
    assert deltas[0] == {"role": "assistant", "content": "", "refusal": None}
    content = "".join(d.get("content") or "" for d in deltas)
    reasoning = "".join(d.get("reasoning_content", "") for d in deltas)
    assert content == "Hello, wörld! Let me check."
    assert reasoning == "The user greets me."

    calls: dict[int, dict[str, str]] = {}
    for d in deltas:
        for tc in d.get("tool_calls", []):
            if "id" in tc:
                assert tc["type"] == "function" and tc["function"]["arguments"] == ""
                calls[tc["index"]] = {"id": tc["id"], "name": tc["function"]["name"],
                                      "arguments": ""}
            else:
                calls[tc["index"]]["arguments"] += tc["function"]["arguments"]
    assert calls[0]["id"] == "toolu_1" and calls[0]["name"] == "get_weather"
    assert json.loads(calls[0]["arguments"]) == {"city": "Paris", "units": ["c", "f"]}
    assert calls[1]["arguments"] == "{}"  # OpenAI sends {} for no arguments

    assert [c["choices"][0]["finish_reason"] for c in streamed].count("tool_calls") == 1
    assert streamed[-1]["choices"][0] == {"index": 0, "delta": {}, "logprobs": None,
                                          "finish_reason": "tool_calls"}
    assert usage_chunk["choices"] == []
    assert usage_chunk["usage"] == {
        "prompt_tokens": 14, "completion_tokens": 22, "total_tokens": 36,
        "prompt_tokens_details": {"cached_tokens": 3, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 5, "audio_tokens": 0,
                                      "accepted_prediction_tokens": 0,
                                      "rejected_prediction_tokens": 0}}


def test_openai_sends_openrouter_reasoning_details(emu):
    """A thinking's `openai_details`: each chunk's reasoning_details with the piece of the same
    place, the rest in chunks of their own; a thinking of no text sends details alone."""
    text = {"type": "reasoning.text", "text": "a", "format": "anthropic-claude-v1", "index": 0}
    sig = {"type": "reasoning.text", "signature": "S", "format": "anthropic-claude-v1", "index": 0}
    enc = {"type": "reasoning.encrypted", "data": "E", "index": 1}
    emu.load({"responses": [
        {"message": {"content": [
            {"type": "thinking", "thinking": "ab", "deltas": ["a", "b"], "openai_keys": ["reasoning"],
             "openai_details": [[text], [], [sig, enc]]},
            {"type": "text", "text": "Hi."}], "stop_reason": "end_turn"}},
        {"message": {"content": [
            {"type": "thinking", "thinking": "", "deltas": [], "openai_details": [[enc]]},
            {"type": "text", "text": "Hi."}], "stop_reason": "end_turn"}}]})
    for expected in ([{"reasoning": "a", "reasoning_details": [text]},
                      {"reasoning": "b", "reasoning_details": []},
                      {"reasoning_details": [sig, enc]}],
                     [{"reasoning_details": [enc]}]):
        chunks = [json.loads(d) for _, d in sse_events(call(emu, OPENAI).body)[:-1]]
        deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
        assert [d for d in deltas if "reasoning_details" in d] == expected


def test_openai_without_include_usage_has_no_usage(emu):
    emu.load({"responses": [{"message": {"content": [{"type": "text", "text": "Hi"}]}}]})
    r = call(emu, OPENAI, stream_options=None)
    chunks = [json.loads(d) for _, d in sse_events(r.body)[:-1]]
    assert all("usage" not in c for c in chunks)
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


@pytest.mark.parametrize("stop, finish", [("end_turn", "stop"), ("max_tokens", "length"),
                                          ("tool_use", "tool_calls"),
                                          ("content_filter", "content_filter"),
                                          ("refusal", "refusal")])
def test_stop_reason_mapping(emu, stop, finish):
    emu.load({"responses": [{"message": {"stop_reason": stop}}], "repeat_last": True})
    anthropic = [json.loads(d) for _, d in sse_events(call(emu, ANTHROPIC).body)]
    assert anthropic[-2]["delta"]["stop_reason"] == stop
    chunks = [json.loads(d) for _, d in sse_events(call(emu, OPENAI).body)[:-1]]
    assert chunks[-2]["choices"][0]["finish_reason"] == finish


def test_openai_tool_first_role_chunk_has_null_content(emu):
    emu.load({"responses": [{"message": {"content": [
        {"type": "tool_use", "name": "f", "input": {"x": "y"}}]}}]})
    chunks = [json.loads(d) for _, d in sse_events(call(emu, OPENAI).body)[:-1]]
    assert chunks[0]["choices"][0]["delta"]["content"] is None
    first_call = chunks[1]["choices"][0]["delta"]["tool_calls"][0]
    assert first_call["id"] == "call_emu_0001_0"


# ---- replay ------------------------------------------------------------------------------


@pytest.mark.parametrize("framing", ["chunked", "content-length"])
@pytest.mark.parametrize("chunk_size", [1, 7, 37])
def test_replay_is_byte_exact(framing, chunk_size):
    # One server for all files: replay mode is the scenario replay_scenario() builds.
    with Emulator(replay=SSE_FILES[0], chunk_size=chunk_size, framing=framing) as emu:
        for sse in SSE_FILES:
            want = sse.read_bytes()
            emu.load(replay_scenario(sse, chunk_size=chunk_size, framing=framing))
            path = OPENAI if sse.parent.name == "openai" else ANTHROPIC
            r = call(emu, path)
            assert r.status == 200
            assert hashlib.sha256(r.body).hexdigest() == hashlib.sha256(want).hexdigest(), sse
            if framing == "content-length":
                assert int(r.headers["content-length"]) == len(want)
                assert "transfer-encoding" not in r.headers
            else:
                # The writes really are chunk_size bytes: each is one HTTP chunk.
                head, rest = raw_request(emu, path)
                sizes = [len(c) for c in chunk_payloads(rest)]
                assert sizes[:-1] == [chunk_size] * (len(sizes) - 1), sse
                assert 0 < sizes[-1] <= chunk_size


def test_replay_serves_both_endpoints_every_time():
    sse = RECORDED / "anthropic" / "text_basic.sse"
    with Emulator(replay=sse) as emu:
        for path in (ANTHROPIC, OPENAI, ANTHROPIC):
            assert call(emu, path).body == sse.read_bytes()


def test_chunk_size_zero_writes_one_event_per_chunk():
    sse = RECORDED / "openai" / "tool_call.sse"
    with Emulator(replay=sse) as emu:
        head, rest = raw_request(emu, OPENAI)
    chunks = chunk_payloads(rest)
    assert chunks == split_events(sse.read_bytes())
    assert len(chunks) == sse.read_bytes().count(b"\n\n")


def test_scripted_message_is_one_chunk_per_event(emu):
    emu.load({"responses": [{"message": {"content": [{"type": "text", "text": "a b c"}]}}]})
    head, rest = raw_request(emu, ANTHROPIC)
    chunks = chunk_payloads(rest)
    assert all(c.startswith(b"event: ") and c.endswith(b"\n\n") and c.count(b"\n\n") == 1
               for c in chunks)


def test_close_framing(emu):
    sse = RECORDED / "anthropic" / "text_basic.sse"
    emu.load({"responses": [{"replay": str(sse), "framing": "close", "chunk_size": 50}]})
    head, rest = raw_request(emu, ANTHROPIC)
    head_text = head.decode().lower()
    assert "connection: close" in head_text
    assert "content-length" not in head_text and "transfer-encoding" not in head_text
    assert rest == sse.read_bytes()


def test_replay_relative_to_scenario_file(tmp_path):
    (tmp_path / "s.sse").write_bytes(b"data: {}\n\ndata: [DONE]\n\n")
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"responses": [{"replay": "s.sse"}]}))
    with Emulator(scenario=scenario) as emu:
        assert call(emu, OPENAI).body == b"data: {}\n\ndata: [DONE]\n\n"


# ---- HTTP errors and mid-stream errors ---------------------------------------------------


def test_scripted_errors_have_each_providers_shape(emu):
    emu.load({"responses": [
        {"error": {"type": "overloaded_error", "message": "Overloaded"}},
        {"error": {"type": "rate_limit_error", "message": "Slow down",
                   "code": "rate_limit_exceeded"}, "headers": {"retry-after": "2"}},
    ]})
    r = call(emu, ANTHROPIC)
    assert (r.status, r.reason) == (529, "Overloaded")
    assert r.headers["content-type"] == "application/json"
    assert r.json() == {"type": "error",
                        "error": {"type": "overloaded_error", "message": "Overloaded"},
                        "request_id": r.headers["request-id"]}
    r = call(emu, OPENAI)
    assert r.status == 429
    assert r.headers["retry-after"] == "2"
    assert r.json() == {"error": {"message": "Slow down", "type": "rate_limit_error",
                                  "param": None, "code": "rate_limit_exceeded"}}


def test_anthropic_stream_error(emu):
    emu.load({"responses": [{
        "message": {"content": [{"type": "text", "text": "one two three four"}]},
        "stream_error": {"type": "overloaded_error", "message": "Overloaded",
                         "after_events": 4}}]})
    events = sse_events(call(emu, ANTHROPIC).body)
    assert [n for n, _ in events] == ["message_start", "content_block_start", "ping",
                                      "content_block_delta", "error"]
    assert json.loads(events[-1][1]) == {
        "type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


def test_openai_stream_error_then_done(emu):
    emu.load({"responses": [{
        "message": {"content": [{"type": "text", "text": "one two three four"}]},
        "stream_error": {"type": "server_error", "message": "boom", "after_events": 2}}]})
    events = [d for _, d in sse_events(call(emu, OPENAI).body)]
    assert len(events) == 4 and events[-1] == "[DONE]"
    assert json.loads(events[1])["choices"][0]["delta"] == {"content": "one "}
    assert json.loads(events[2]) == {"error": {"message": "boom", "type": "server_error",
                                               "param": None, "code": None}}


def test_script_used_up(emu):
    emu.load({"responses": [{"message": {}}]})
    assert call(emu, ANTHROPIC).status == 200
    r = call(emu, ANTHROPIC)
    assert r.status == 500
    assert r.json()["error"] == {"type": "api_error",
                                 "message": "emulator: no scripted response left"}
    r = call(emu, OPENAI)
    assert r.status == 500 and r.json()["error"]["type"] == "server_error"
    assert r.json()["error"]["message"] == "emulator: no scripted response left"


def test_repeat_last_serves_forever_with_fresh_ids(emu):
    emu.load({"responses": [{"error": {"type": "api_error", "message": "x"}},
                            {"message": {}}], "repeat_last": True})
    assert call(emu, ANTHROPIC).status == 500
    ids = [json.loads(sse_events(call(emu, ANTHROPIC).body)[0][1])["message"]["id"]
           for _ in range(3)]
    assert ids == ["msg_emu_0002", "msg_emu_0003", "msg_emu_0004"]


# ---- request checks ----------------------------------------------------------------------


@pytest.mark.parametrize("path, headers, status, type_, text", [
    (ANTHROPIC, {"anthropic-version": "2023-06-01"}, 401, "authentication_error", "x-api-key"),
    (ANTHROPIC, {"x-api-key": "k"}, 400, "invalid_request_error", "anthropic-version"),
    (ANTHROPIC, {"anthropic-version": "2023-06-01", "authorization": "Bearer "}, 401,
     "authentication_error", "x-api-key"),
    (ANTHROPIC, {"anthropic-version": "2023-06-01", "authorization": "Basic dGVzdDprZXk="}, 401,
     "authentication_error", "x-api-key"),
    (OPENAI, {}, 401, "authentication_error", "API key"),
    (OPENAI, {"authorization": "Bearer "}, 401, "authentication_error", "API key"),
])
def test_missing_credentials(emu, path, headers, status, type_, text):
    emu.load({"responses": [{"message": {}}]})
    r = post(emu, path, BODIES[path], headers)
    assert r.status == status
    assert r.headers["content-type"] == "application/json"
    assert r.json()["error"]["type"] == type_
    assert text in r.json()["error"]["message"]
    assert call(emu, path).status == 200  # the refusal did not use up the script


def test_anthropic_takes_the_key_as_a_bearer_token(emu):
    # As the API does, and as the official SDK sends it (Authorization: Bearer, no x-api-key).
    emu.load({"responses": [{"message": {"content": [{"type": "text", "text": "Hi"}]}}]})
    r = post(emu, ANTHROPIC, BODIES[ANTHROPIC],
             {"anthropic-version": "2023-06-01", "authorization": "Bearer test-key",
              "content-type": "application/json"})
    assert r.status == 200, r.body
    assert sse_events(r.body)[-1][0] == "message_stop"


def test_the_anthropic_sdk_runs_a_turn():
    anthropic = pytest.importorskip("anthropic")
    with Emulator({"responses": [{"message": {"content": [{"type": "text", "text": "Hi there"}]}}]}) as emu:
        client = anthropic.Anthropic(base_url=emu.url, api_key="test-key", max_retries=0)
        with client.messages.stream(model="claude-test", max_tokens=100,
                                    messages=[{"role": "user", "content": "Hi"}]) as stream:
            assert stream.get_final_text() == "Hi there"
        assert emu.requests()[0]["headers"]["authorization"] == "Bearer test-key"


def test_require_api_key_false(emu):
    emu.load({"responses": [{"message": {}}], "require_api_key": False})
    assert post(emu, ANTHROPIC, BODIES[ANTHROPIC],
                {"anthropic-version": "2023-06-01"}).status == 200


@pytest.mark.parametrize("path, body, text", [
    (ANTHROPIC, "{not json", "parsing the body"),
    (ANTHROPIC, {"max_tokens": 1, "messages": [], "stream": True}, "model: Field required"),
    (ANTHROPIC, {"model": "m", "messages": [], "stream": True}, "max_tokens: Field required"),
    (ANTHROPIC, {"model": "m", "max_tokens": 1, "stream": True}, "messages: Field required"),
    (ANTHROPIC, {"model": "m", "max_tokens": 1, "messages": []}, "stream"),
    (OPENAI, "[1, 2", "parse the JSON body"),
    (OPENAI, {"messages": [], "stream": True}, "model"),
    (OPENAI, {"model": "m", "stream": True}, "messages"),
    (OPENAI, {"model": "m", "messages": [], "stream": False}, "stream"),
])
def test_bad_request_bodies(emu, path, body, text):
    r = post(emu, path, body)
    assert r.status == 400
    error = r.json()["error"]
    assert error["type"] == "invalid_request_error" and text in error["message"]


def test_unknown_path_and_method(emu):
    assert post(emu, "/v1/complete", BODIES[ANTHROPIC], HEADERS[ANTHROPIC]).status == 404
    r = post(emu, ANTHROPIC, None, HEADERS[ANTHROPIC], method="GET")
    assert r.status == 405 and r.json()["type"] == "error"


# ---- faults ------------------------------------------------------------------------------


def load_fault(emu: Emulator, kind: str, framing: str = "chunked", after: int = 300) -> None:
    text = "lorem ipsum " * 100
    emu.load({"responses": [{"message": {"content": [{"type": "text", "text": text}]},
                             "framing": framing,
                             "fault": {"after_bytes": after, "kind": kind}}]})


@pytest.mark.parametrize("framing", ["chunked", "content-length", "close"])
def test_fault_reset_raises_on_the_client(emu, framing):
    load_fault(emu, "reset", framing)
    with pytest.raises(ConnectionResetError):
        call(emu, ANTHROPIC)


@pytest.mark.parametrize("framing", ["chunked", "content-length"])
def test_fault_close_gives_an_incomplete_read(emu, framing):
    load_fault(emu, "close", framing, after=123)
    with pytest.raises(http.client.IncompleteRead) as e:
        call(emu, ANTHROPIC)
    assert len(e.value.partial) == 123


def test_fault_close_sends_no_chunk_terminator(emu):
    load_fault(emu, "close", after=200)
    head, rest = raw_request(emu, ANTHROPIC)
    assert not rest.endswith(b"0\r\n\r\n")
    with pytest.raises(ValueError):
        chunk_payloads(rest)  # runs out of data before a 0-chunk


def test_fault_stall_times_out_the_client(emu):
    load_fault(emu, "stall", after=100)
    conn = http.client.HTTPConnection(emu.host, emu.port, timeout=0.3)
    conn.request("POST", ANTHROPIC, json.dumps(BODIES[ANTHROPIC]), HEADERS[ANTHROPIC])
    resp = conn.getresponse()
    assert resp.status == 200
    assert len(resp.read(100)) == 100  # what was sent before the stall arrives
    started = time.monotonic()
    with pytest.raises(socket.timeout):
        resp.read(1)
    assert time.monotonic() - started >= 0.25
    conn.close()


def stalled_response(emu: Emulator) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    """A request whose answer stalls after 10 body bytes (the client waits up to 5 s)."""
    load_fault(emu, "stall", after=10)
    conn = http.client.HTTPConnection(emu.host, emu.port, timeout=5)
    conn.request("POST", ANTHROPIC, json.dumps(BODIES[ANTHROPIC]), HEADERS[ANTHROPIC])
    return conn, conn.getresponse()


def test_a_stall_ends_after_its_limit(monkeypatch):
    # The limit is a test's deadline: a client that waits on a stall for its timeout or cancel
    # gets the body cut short in the end (here before its own 5 s timeout), even when those
    # do not work.
    monkeypatch.setattr(wire, "HOLD_LIMIT_S", 0.3)
    with Emulator() as emu:
        conn, resp = stalled_response(emu)
        with pytest.raises(http.client.IncompleteRead) as e:
            resp.read()
        assert len(e.value.partial) == 10
        conn.close()


def test_close_ends_a_stall_promptly():
    with Emulator() as emu:
        conn, resp = stalled_response(emu)
        started = time.monotonic()
        emu.close()  # while the handler holds the stalled connection
        assert time.monotonic() - started < 2
        with pytest.raises(http.client.IncompleteRead):
            resp.read()  # the emulator cut the stalled connection
        conn.close()
    # Leaving the with closes again: close() is idempotent.


# ---- pacing, headers, connections --------------------------------------------------------


def test_delays(emu):
    emu.load({"responses": [{"message": {"content": [{"type": "text", "text": "a b c"}]},
                             "delay_ms": 150, "chunk_delay_ms": 20}]})
    started = time.monotonic()
    r = call(emu, ANTHROPIC)
    elapsed = time.monotonic() - started
    # 150 ms before the head, then 20 ms between two events (one write each).
    writes = len(sse_events(r.body))
    assert writes == 9
    assert elapsed >= 0.15 + (writes - 1) * 0.02
    assert r.status == 200


def test_script_headers_override_ours(emu):
    emu.load({"responses": [{"body": "not an event stream",
                             "headers": {"Content-Type": "text/plain", "x-extra": "1"}}]})
    r = call(emu, ANTHROPIC)
    assert r.headers["content-type"] == "text/plain"
    assert r.headers["x-extra"] == "1"
    assert r.body == b"not an event stream"


def test_keep_alive_serves_several_requests_on_one_connection(emu):
    emu.load({"responses": [{"message": {}}], "repeat_last": True})
    conn = http.client.HTTPConnection(emu.host, emu.port, timeout=5)
    for _ in range(3):
        conn.request("POST", ANTHROPIC, json.dumps(BODIES[ANTHROPIC]), HEADERS[ANTHROPIC])
        resp = conn.getresponse()
        assert resp.status == 200 and resp.read().endswith(b"message_stop\"}\n\n")
    conn.close()


def test_request_log_numbers_connections(emu):
    emu.load({"responses": [{"message": {}}], "repeat_last": True})
    conn = http.client.HTTPConnection(emu.host, emu.port, timeout=5)
    for _ in range(2):
        conn.request("POST", ANTHROPIC, json.dumps(BODIES[ANTHROPIC]), HEADERS[ANTHROPIC])
        conn.getresponse().read()
    call(emu, ANTHROPIC)  # a fresh connection
    conn.request("POST", ANTHROPIC, json.dumps(BODIES[ANTHROPIC]), HEADERS[ANTHROPIC])
    conn.getresponse().read()
    conn.close()
    assert [e["connection"] for e in emu.requests()] == [1, 1, 2, 1]
    # Each request's number on its connection, over the emulator's life.
    assert [e["connection_request"] for e in emu.requests()] == [1, 2, 1, 3]
    emu.load({"responses": [{"message": {}}]})  # numbering starts over with the load
    call(emu, ANTHROPIC)
    assert [e["connection"] for e in emu.requests()] == [1]
    assert [e["connection_request"] for e in emu.requests()] == [1]


def wait_for_connections(emu, **expected):
    deadline = time.monotonic() + 5
    while emu.connections() != expected and time.monotonic() < deadline:
        time.sleep(0.01)
    return emu.connections()


def test_connections_counts_accepted_connections_since_the_load(emu):
    emu.load({"responses": [{"message": {}}], "repeat_last": True})
    assert emu.connections() == {"accepted": 0, "tls_handshakes": 0}
    idle = socket.create_connection((emu.host, emu.port), timeout=5)  # no request on it
    try:
        call(emu, ANTHROPIC)
        assert wait_for_connections(emu, accepted=2, tls_handshakes=0) == \
            {"accepted": 2, "tls_handshakes": 0}
        assert len(emu.requests()) == 1
        emu.load({"responses": [{"message": {}}]})
        assert emu.connections() == {"accepted": 0, "tls_handshakes": 0}
        assert post(emu, "/_emulator/connections", method="GET").json() == \
            {"accepted": 1, "tls_handshakes": 0}  # the control request's own connection
    finally:
        idle.close()


def test_idle_close_closes_after_a_complete_response(emu):
    emu.load({"responses": [{"message": {}, "idle_close": True}]})
    head, rest = raw_request(emu, ANTHROPIC, keep_alive=True)  # reads until the server closes
    assert b"connection: close" not in head.lower()
    assert b"\r\n0\r\n\r\n" in rest and rest.endswith(b"0\r\n\r\n")


def test_read_delay_holds_the_body_unread(emu):
    emu.load({"responses": [{"message": {}, "read_delay_ms": 300}, {"message": {}}]})
    body = json.dumps(BODIES[ANTHROPIC]).encode()
    lines = [f"POST {ANTHROPIC} HTTP/1.1", f"host: {emu.host}", f"content-length: {len(body)}"]
    lines += [f"{k}: {v}" for k, v in HEADERS[ANTHROPIC].items()]
    with socket.create_connection((emu.host, emu.port), timeout=5) as s:
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        # Logged as the head arrives, its body not yet read; another request meanwhile gets
        # the next response.
        assert wait_for_requests(emu, 1)[0]["body"] is None
        assert call(emu, ANTHROPIC).status == 200
        assert s.recv(100).startswith(b"HTTP/1.1 200")
    log = emu.requests()
    assert log[0]["body"] == BODIES[ANTHROPIC] and [e["connection"] for e in log] == [1, 2]


def test_read_delay_with_the_client_gone(emu):
    emu.load({"responses": [{"message": {}, "read_delay_ms": 100}, {"message": {}}]})
    with socket.create_connection((emu.host, emu.port), timeout=5) as s:
        s.sendall(f"POST {ANTHROPIC} HTTP/1.1\r\ncontent-length: 1000000\r\n\r\n{{".encode())
        wait_for_requests(emu, 1)
    assert call(emu, ANTHROPIC).status == 200
    time.sleep(0.3)  # past the delay: the unread body is found cut short
    log = emu.requests()
    assert len(log) == 2 and log[0]["body"] is None


def test_read_delay_body_read_after_a_load_leaves_the_new_log_alone(emu):
    emu.load({"responses": [{"message": {}, "read_delay_ms": 200}]})
    body = json.dumps(BODIES[ANTHROPIC]).encode()
    lines = [f"POST {ANTHROPIC} HTTP/1.1", f"host: {emu.host}", f"content-length: {len(body)}"]
    lines += [f"{k}: {v}" for k, v in HEADERS[ANTHROPIC].items()]
    with socket.create_connection((emu.host, emu.port), timeout=5) as s:
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        wait_for_requests(emu, 1)
        emu.load({"responses": [{"message": {}}]})
        assert call(emu, ANTHROPIC, model="other").status == 200
        assert s.recv(100).startswith(b"HTTP/1.1 200")  # the late body was read meanwhile
    assert [e["body"]["model"] for e in emu.requests()] == ["other"]


def test_read_delay_refuses_a_body_that_is_not_json(emu):
    emu.load({"responses": [{"message": {}, "read_delay_ms": 10}]})
    r = post(emu, ANTHROPIC, "{not json")
    assert r.status == 400 and r.json()["error"]["type"] == "invalid_request_error"
    assert emu.requests()[0]["body"] == "{not json"


def test_chunked_request_body_is_accepted(emu):
    emu.load({"responses": [{"message": {}}]})
    conn = http.client.HTTPConnection(emu.host, emu.port, timeout=5)
    body = json.dumps(BODIES[ANTHROPIC]).encode()
    conn.request("POST", ANTHROPIC, iter([body[:10], body[10:]]), HEADERS[ANTHROPIC],
                 encode_chunked=True)
    assert conn.getresponse().status == 200
    conn.close()
    assert emu.requests()[0]["body"] == BODIES[ANTHROPIC]


# ---- request log and control API ---------------------------------------------------------


def test_request_log(emu):
    emu.load({"responses": [{"message": {}}]})
    call(emu, ANTHROPIC)
    post(emu, OPENAI, "plain text", HEADERS[OPENAI])  # refused, but logged
    log = emu.requests()
    assert [(e["method"], e["path"]) for e in log] == [("POST", ANTHROPIC), ("POST", OPENAI)]
    assert log[0]["body"] == BODIES[ANTHROPIC]
    assert log[0]["headers"]["x-api-key"] == "test-key"
    assert all(name == name.lower() for e in log for name in e["headers"])
    assert log[1]["body"] == "plain text"
    # The same log over HTTP.
    assert post(emu, "/_emulator/requests", method="GET").json() == log
    emu.load({"responses": []})
    assert emu.requests() == []


def test_control_api_scenario_and_reset(emu):
    r = post(emu, "/_emulator/scenario", {"responses": [{"message": {"id": "msg_x"}}]})
    assert r.status == 200 and r.json() == {"ok": True, "responses": 1}
    call(emu, ANTHROPIC)
    assert len(emu.requests()) == 1
    assert post(emu, "/_emulator/reset").json() == {"ok": True}
    assert emu.requests() == []
    assert call(emu, ANTHROPIC).status == 500  # reset emptied the scenario too


def test_control_api_refuses_a_bad_scenario(emu):
    emu.load({"responses": [{"message": {}}]})
    r = post(emu, "/_emulator/scenario", {"responses": [{"message": {}, "framing": "bogus"}]})
    assert r.status == 400
    assert r.json()["error"]["type"] == "scenario_error"
    assert "responses[0].framing" in r.json()["error"]["message"]
    assert post(emu, "/_emulator/scenario", "{oops").status == 400
    assert call(emu, ANTHROPIC).status == 200  # the old scenario is still there


# ---- scenario validation -----------------------------------------------------------------


@pytest.mark.parametrize("scenario, where", [
    ([], "scenario"),
    ({"responses": [], "extra": 1}, "unknown key 'extra'"),
    ({"responses": [{}]}, "exactly one of"),
    ({"responses": [{"message": {}, "body": ""}]}, "exactly one of"),
    ({"responses": [{"message": {"content": [
        {"type": "text", "text": "abc", "deltas": ["a", "b"]}]}}]},
     "responses[0].message.content[0].deltas"),
    ({"responses": [{"message": {"content": [
        {"type": "tool_use", "name": "f", "input": {"a": 1}, "deltas": ["{\"a\":2}"]}]}}]},
     "content[0].deltas"),
    ({"responses": [{"message": {"content": [{"type": "image"}]}}]}, "content[0].type"),
    ({"responses": [{"message": {"content": [{"type": "tool_use"}]}}]}, "missing 'name'"),
    ({"responses": [{"message": {"usage": {"input_tokens": -1}}}]}, "usage.input_tokens"),
    ({"responses": [{"message": {"usage": {"tokens": 1}}}]}, "unknown key 'tokens'"),
    ({"responses": [{"error": {"type": "x_error", "message": "m"}}]}, "responses[0].status"),
    ({"responses": [{"error": {"type": "api_error", "message": "m"}, "status": 200}]},
     "responses[0].status"),
    ({"responses": [{"body": "x", "stream_error": {"type": "t", "message": "m"}}]},
     "stream_error"),
    ({"responses": [{"message": {}, "fault": {"after_bytes": 1, "kind": "explode"}}]},
     "fault.kind"),
    ({"responses": [{"message": {}, "fault": {"kind": "reset"}}]}, "missing 'after_bytes'"),
    ({"responses": [{"message": {}, "chunk_size": -1}]}, "chunk_size"),
    ({"responses": [{"message": {}, "status": True}]}, "status"),
    ({"responses": [{"message": {}, "headers": {"a": 1}}]}, "headers"),
    ({"responses": [{"replay": "/nonexistent/x.sse"}]}, "cannot read"),
    ({"responses": [], "repeat_last": "yes"}, "repeat_last"),
])
def test_scenario_validation(scenario, where):
    with pytest.raises(ScenarioError) as e:
        parse(scenario)
    assert where in str(e.value)


def test_scenario_defaults():
    s = parse({"responses": [{"message": {"content": [
        {"type": "tool_use", "name": "f"}]}}, {"error": {"type": "overloaded_error",
                                                        "message": "m"}}]})
    message = s.responses[0].message
    assert message["stop_reason"] == "tool_use"
    assert message["usage"] == dict.fromkeys(message["usage"], 0)
    assert s.responses[0].framing == "chunked" and s.responses[0].chunk_size == 0
    assert s.responses[1].status == 529
    assert s.require_api_key is True and s.repeat_last is False


def test_fifty_concurrent_clients_all_get_their_answer(emu):
    # A load test opens many connections at once, faster than one thread accepts them. Held
    # here: the accept loop waits in its first connection until all 50 clients have connected
    # and sent their request, so the listen backlog must hold the other 49 (with Python's
    # default of 5, the kernel dropped the rest and their connects hung). Then each client
    # gets its whole stream.
    emu.load({"responses": [{"message": {"content": [{"type": "text", "text": "Hi there"}]}}],
              "repeat_last": True})
    clients = 50
    release = threading.Event()
    accept = emu._server.process_request

    def held_accept(request: Any, client_address: Any) -> None:
        release.wait(30)
        accept(request, client_address)

    emu._server.process_request = held_accept
    body = json.dumps(BODIES[ANTHROPIC]).encode()
    head = "".join(f"{k}: {v}\r\n" for k, v in HEADERS[ANTHROPIC].items())
    request = (f"POST {ANTHROPIC} HTTP/1.1\r\nhost: {emu.host}\r\nconnection: close\r\n"
               f"content-length: {len(body)}\r\n{head}\r\n").encode() + body
    socks: list[Any] = [None] * clients
    answers: list[Any] = [None] * clients
    start = threading.Barrier(clients)

    def connect(i: int) -> None:
        start.wait()
        try:
            s = socket.create_connection((emu.host, emu.port), timeout=5)
            s.sendall(request)
            socks[i] = s
        except OSError as e:
            socks[i] = e

    def read(i: int) -> None:
        data = b""
        try:
            while chunk := socks[i].recv(65536):
                data += chunk
        except OSError as e:
            data = e
        answers[i] = data

    try:
        threads = [threading.Thread(target=connect, args=(i,)) for i in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        refused = [s for s in socks if not isinstance(s, socket.socket)]
        assert refused == [], f"{len(refused)} of {clients} clients could not connect: {refused[:3]}"
    finally:
        release.set()
    try:
        threads = [threading.Thread(target=read, args=(i,)) for i in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for s in socks:
            s.close()
    for answer in answers:
        assert isinstance(answer, bytes), answer
        status, _, rest = answer.partition(b"\r\n\r\n")
        assert status.startswith(b"HTTP/1.1 200 OK\r\n")
        assert sse_events(b"".join(chunk_payloads(rest)))[-1][0] == "message_stop"
    assert emu.connections()["accepted"] == clients


# ---- command line ------------------------------------------------------------------------


def start_cli(*args: str) -> tuple[subprocess.Popen[str], str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "bindings-py"))
    proc = subprocess.Popen([sys.executable, "-m", "panto.emulator", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=ROOT)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    return proc, line


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_cli_replay_and_clean_exit(sig):
    sse = RECORDED / "openai" / "tool_call.sse"
    proc, line = start_cli("--replay", str(sse.relative_to(ROOT)), "--chunk-size", "7")
    try:
        assert line.startswith("panto-emulator listening on http://127.0.0.1:")
        port = int(line.rsplit(":", 1)[1])
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.request("POST", OPENAI, json.dumps(BODIES[OPENAI]), HEADERS[OPENAI])
        assert conn.getresponse().read() == sse.read_bytes()
        conn.close()
        proc.send_signal(sig)
        assert proc.wait(timeout=5) == 0
        assert proc.stdout.read() == ""  # exactly one line on stdout
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def test_cli_help_describes_scenarios_with_an_example_that_loads():
    env = dict(os.environ, PYTHONPATH=str(ROOT / "bindings-py"))
    out = subprocess.run([sys.executable, "-m", "panto.emulator", "--help"], capture_output=True,
                         text=True, env=env, cwd=ROOT, timeout=30, check=True).stdout
    from panto.emulator.scenario import _PAYLOADS, _RESPONSE_KEYS
    for key in ("responses", "repeat_last", "require_api_key", *_RESPONSE_KEYS, *_PAYLOADS):
        assert f'"{key}"' in out, f"--help does not name {key}"
    example = out.split("\nexample:", 1)[1].split("\n", 1)[1].split("\ncontrol API:", 1)[0]
    assert len(parse(json.loads(example)).responses) == 3
    readme = Path(out.rsplit("README.md beside this module, ", 1)[1].strip())
    assert readme.name == "README.md" and "## The scenario" in readme.read_text()


def test_cli_refuses_a_bad_scenario_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"responses": [{"message": {}, "framing": "bogus"}]}')
    proc, line = start_cli("--scenario", str(bad))
    try:
        assert line == ""
        assert proc.wait(timeout=5) == 2
        assert "responses[0].framing" in proc.stderr.read()
    finally:
        proc.stdout.close()
        proc.stderr.close()


# ---- HTTPS (tls=(cert, key), --tls-cert/--tls-key) ---------------------------------------

MAKE_CERTS = ROOT / "tests" / "net" / "make_certs.sh"


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    """The test CA, the server certificate for localhost and the unrelated CA, made by
    tests/net/make_certs.sh in a folder of this test run's own."""
    folder = tmp_path_factory.mktemp("tls")
    subprocess.run([str(MAKE_CERTS), str(folder)], check=True, timeout=60)
    return folder


def client_context(ca: Path, version: ssl.TLSVersion | None = None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(ca))  # verifies the chain and the host name
    if version is not None:
        ctx.minimum_version = ctx.maximum_version = version
    return ctx


def https_post(emu: Emulator, ctx: ssl.SSLContext, path: str = ANTHROPIC,
               timeout: float = 5) -> Reply:
    conn = http.client.HTTPSConnection("localhost", emu.port, timeout=timeout, context=ctx)
    try:
        conn.request("POST", path, json.dumps(BODIES[path]), HEADERS[path])
        resp = conn.getresponse()
        return Reply(resp, resp.read())
    finally:
        conn.close()


@pytest.fixture
def tls_emu(certs):
    with Emulator(tls=(certs / "server.pem", certs / "server.key")) as e:
        yield e


@pytest.mark.parametrize("version", [None, ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3])
def test_https_serves_the_same_stream(tls_emu, certs, version):
    assert tls_emu.tls and tls_emu.url == f"https://localhost:{tls_emu.port}"
    sse = RECORDED / "anthropic" / "text_basic.sse"
    tls_emu.load({"responses": [{"replay": str(sse), "chunk_size": 7}]})
    r = https_post(tls_emu, client_context(certs / "ca.pem", version))
    assert r.status == 200
    assert r.body == sse.read_bytes()
    log = tls_emu.requests()
    assert [(q["method"], q["path"]) for q in log] == [("POST", ANTHROPIC)]
    assert log[0]["headers"]["host"] == f"localhost:{tls_emu.port}"


def test_https_with_another_ca_fails_the_handshake(tls_emu, certs):
    with pytest.raises(ssl.SSLCertVerificationError):
        https_post(tls_emu, client_context(certs / "other-ca.pem"))
    assert tls_emu.requests() == []
    # The emulator goes on serving.
    tls_emu.load({"responses": [{"message": {"content": [{"type": "text", "text": "ok"}]}}]})
    assert https_post(tls_emu, client_context(certs / "ca.pem")).status == 200


def test_https_keep_alive_and_close_framing(tls_emu, certs):
    """Two requests on one TLS connection; a body framed by the connection's end arrives
    whole (the emulator ends TLS with close_notify, not a bare FIN)."""
    msg = {"message": {"content": [{"type": "text", "text": "one two three"}]}}
    tls_emu.load({"responses": [msg, dict(msg, framing="close")]})
    conn = http.client.HTTPSConnection("localhost", tls_emu.port, timeout=5,
                                       context=client_context(certs / "ca.pem"))
    try:
        bodies = []
        for _ in range(2):
            conn.request("POST", ANTHROPIC, json.dumps(BODIES[ANTHROPIC]), HEADERS[ANTHROPIC])
            resp = conn.getresponse()
            assert resp.status == 200
            bodies.append(resp.read())
        assert resp.getheader("connection") == "close"
        assert bodies[0] == bodies[1].replace(b"msg_emu_0002", b"msg_emu_0001")
        assert bodies[1].endswith(b'data: {"type":"message_stop"}\n\n')
    finally:
        conn.close()


def test_https_faults(tls_emu, certs):
    ctx = client_context(certs / "ca.pem")
    load_fault(tls_emu, "close", "content-length", after=123)
    with pytest.raises(http.client.IncompleteRead) as e:
        https_post(tls_emu, ctx)
    assert len(e.value.partial) == 123
    load_fault(tls_emu, "reset")
    # Under TLS the RST surfaces as a reset or as a short read, depending on when it lands.
    with pytest.raises((ConnectionResetError, http.client.IncompleteRead)):
        https_post(tls_emu, ctx)


def test_https_connections_counts_completed_handshakes(tls_emu, certs):
    tls_emu.load({"responses": [{"message": {}}]})
    silent = socket.create_connection(("127.0.0.1", tls_emu.port), timeout=5)  # no handshake
    try:
        assert https_post(tls_emu, client_context(certs / "ca.pem")).status == 200
        assert wait_for_connections(tls_emu, accepted=2, tls_handshakes=1) == \
            {"accepted": 2, "tls_handshakes": 1}
    finally:
        silent.close()


def test_https_ignores_clients_that_do_not_speak_tls(tls_emu, certs):
    # A plain-HTTP request gets the connection closed; a client that connects and says
    # nothing holds up nobody (each handshake runs on the connection's own thread).
    idle = socket.create_connection(("127.0.0.1", tls_emu.port), timeout=5)
    try:
        with socket.create_connection(("127.0.0.1", tls_emu.port), timeout=5) as s:
            s.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n")
            try:
                got = s.recv(65536)
            except ConnectionResetError:
                got = b""
            assert not got.startswith(b"HTTP/")
        tls_emu.load({"responses": [{"message": {"content": [{"type": "text", "text": "ok"}]}}]})
        assert https_post(tls_emu, client_context(certs / "ca.pem")).status == 200
    finally:
        idle.close()


def test_https_close_ends_a_stall_promptly(certs):
    with Emulator(tls=(certs / "server.pem", certs / "server.key")) as emu:
        load_fault(emu, "stall", after=10)
        conn = http.client.HTTPSConnection("localhost", emu.port, timeout=5,
                                           context=client_context(certs / "ca.pem"))
        conn.request("POST", ANTHROPIC, json.dumps(BODIES[ANTHROPIC]), HEADERS[ANTHROPIC])
        resp = conn.getresponse()
        idle = socket.create_connection(("127.0.0.1", emu.port), timeout=5)  # no handshake
        started = time.monotonic()
        emu.close()
        assert time.monotonic() - started < 2
        with pytest.raises((http.client.IncompleteRead, ssl.SSLError)):
            resp.read()
        conn.close()
        idle.close()


def test_cli_https(certs):
    proc, line = start_cli("--tls-cert", str(certs / "server.pem"),
                           "--tls-key", str(certs / "server.key"))
    try:
        assert line.startswith("panto-emulator listening on https://localhost:")
        port = int(line.rsplit(":", 1)[1])
        conn = http.client.HTTPSConnection("localhost", port, timeout=5,
                                           context=client_context(certs / "ca.pem"))
        conn.request("GET", "/_emulator/requests")
        assert json.loads(conn.getresponse().read()) == []
        conn.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=5) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def test_cli_https_needs_both_files(certs):
    proc, line = start_cli("--tls-cert", str(certs / "server.pem"))
    try:
        assert line == ""
        assert proc.wait(timeout=5) == 2
        assert "--tls-cert and --tls-key go together" in proc.stderr.read()
    finally:
        proc.stdout.close()
        proc.stderr.close()
