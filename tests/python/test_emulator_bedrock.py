"""The emulator's Bedrock ConverseStream API (POST /model/MODEL/converse-stream): the binary
event-stream messages of a scripted message, read back with botocore's own decoder (which
checks both CRCs); an exception message, and a message whose CRC is wrong; the error answer
with the exception's name in `x-amzn-errortype`; the credentials checked for presence and
SigV4 shape (a request botocore signs passes); the conversation rules the service enforces."""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest

eventstream = pytest.importorskip("botocore.eventstream")

from panto.emulator import Emulator  # noqa: E402

PATH = "/model/anthropic.claude-test-v1%3A0/converse-stream"
HEADERS = {"authorization": "Bearer test-key", "content-type": "application/json"}
USER = {"role": "user", "content": [{"text": "Hi"}]}

MESSAGE = {
    "content": [
        {"type": "thinking", "thinking": "The user greets me.", "signature": "sig-1",
         "deltas": ["The user ", "greets me."]},
        {"type": "text", "text": "Hello there", "deltas": ["Hello ", "there"]},
        {"type": "tool_use", "id": "tooluse_a", "name": "get_weather",
         "input": {"city": "Paris"}},
    ],
    "stop_reason": "tool_use",
    "usage": {"input_tokens": 11, "output_tokens": 22, "cache_read_tokens": 3,
              "cache_write_tokens": 4},
}


@pytest.fixture
def emu():
    with Emulator() as e:
        yield e


def post(emu: Emulator, body: Any, headers: dict[str, str] | None = None,
         path: str = PATH) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection(emu.host, emu.port, timeout=5)
    try:
        conn.request("POST", path, json.dumps(body), headers or HEADERS)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def messages(body: bytes) -> list[tuple[dict[str, Any], Any]]:
    """The (headers, parsed payload) of each message, as botocore decodes them."""
    buf = eventstream.EventStreamBuffer()
    buf.add_data(body)
    return [(m.headers, json.loads(m.payload)) for m in buf]


def test_a_message_streams_as_event_stream_messages(emu):
    emu.load({"responses": [{"message": MESSAGE}]})
    status, head, body = post(emu, {"messages": [USER]})
    assert status == 200
    assert head["content-type"] == "application/vnd.amazon.eventstream"
    got = messages(body)
    assert all(h[":message-type"] == "event" and h[":content-type"] == "application/json"
               for h, _ in got)
    events = [(h[":event-type"], {k: v for k, v in p.items() if k != "p"}) for h, p in got]
    assert events == [
        ("messageStart", {"role": "assistant"}),
        ("contentBlockDelta", {"contentBlockIndex": 0,
                               "delta": {"reasoningContent": {"text": "The user "}}}),
        ("contentBlockDelta", {"contentBlockIndex": 0,
                               "delta": {"reasoningContent": {"text": "greets me."}}}),
        ("contentBlockDelta", {"contentBlockIndex": 0,
                               "delta": {"reasoningContent": {"signature": "sig-1"}}}),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "Hello "}}),
        ("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "there"}}),
        ("contentBlockStop", {"contentBlockIndex": 1}),
        ("contentBlockStart", {"contentBlockIndex": 2, "start": {
            "toolUse": {"toolUseId": "tooluse_a", "name": "get_weather"}}}),
        ("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"toolUse": {"input": '{"city":'}}}),
        ("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"toolUse": {"input": '"Paris"}'}}}),
        ("contentBlockStop", {"contentBlockIndex": 2}),
        ("messageStop", {"stopReason": "tool_use"}),
        ("metadata", {"usage": {"inputTokens": 11, "outputTokens": 22, "totalTokens": 40,
                                "cacheReadInputTokens": 3, "cacheWriteInputTokens": 4},
                      "metrics": {"latencyMs": 101}}),
    ]
    assert all(isinstance(p["p"], str) for _, p in got)  # the service's padding member


def test_an_exception_message_ends_the_stream(emu):
    emu.load({"responses": [{"message": MESSAGE, "stream_error": {
        "type": "rate_limit_error", "message": "Too many tokens", "after_events": 1}}]})
    got = messages(post(emu, {"messages": [USER]})[2])
    assert len(got) == 2
    headers, payload = got[1]
    assert headers[":message-type"] == "exception"
    assert headers[":exception-type"] == "throttlingException"
    assert payload == {"message": "Too many tokens"}


def test_a_bad_crc_is_caught_by_botocore(emu):
    emu.load({"responses": [{"message": MESSAGE, "stream_error": {
        "type": "bad_crc", "message": "x", "after_events": 1}}]})
    body = post(emu, {"messages": [USER]})[2]
    with pytest.raises(eventstream.ChecksumMismatch):
        messages(body)


def test_an_error_answer_names_its_exception_in_a_header(emu):
    emu.load({"responses": [{"error": {"type": "rate_limit_error", "message": "slow down"}}]})
    status, head, body = post(emu, {"messages": [USER]})
    assert status == 429
    assert head["x-amzn-errortype"].startswith("ThrottlingException:")
    assert json.loads(body) == {"message": "slow down"}
    assert head["x-amzn-requestid"]


def test_credentials_are_checked_for_presence_and_shape(emu):
    emu.load({"responses": [{"message": MESSAGE}], "repeat_last": True})
    status, head, _ = post(emu, {"messages": [USER]}, {"content-type": "application/json"})
    assert (status, head["x-amzn-errortype"].split(":")[0]) == (
        403, "MissingAuthenticationTokenException")
    bad = {"authorization": "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/s3/aws4_request"
                            ", SignedHeaders=host;x-amz-date, Signature=" + "0" * 64,
           "x-amz-date": "20260101T000000Z"}
    status, head, _ = post(emu, {"messages": [USER]}, bad)
    assert (status, head["x-amzn-errortype"].split(":")[0]) == (
        403, "IncompleteSignatureException")


def test_a_request_botocore_signs_is_accepted(emu):
    auth = pytest.importorskip("botocore.auth")
    credentials = pytest.importorskip("botocore.credentials")
    awsrequest = pytest.importorskip("botocore.awsrequest")
    emu.load({"responses": [{"message": MESSAGE}]})
    body = json.dumps({"messages": [USER]})
    request = awsrequest.AWSRequest(method="POST", url=f"{emu.url}{PATH}", data=body,
                                    headers={"content-type": "application/json"})
    auth.SigV4Auth(credentials.Credentials("AKIDEXAMPLE", "secret", "token"), "bedrock",
                   "us-east-1").add_auth(request)
    headers = {k.lower(): v for k, v in request.headers.items()}
    headers.pop("host", None)
    status, _, _ = post(emu, json.loads(body), headers)
    assert status == 200


@pytest.mark.parametrize("conversation,needle", [
    ([{"role": "assistant", "content": [{"text": "Hi"}]}], "must start with a user message"),
    ([USER, USER], "must alternate"),
    ([USER, {"role": "assistant", "content": [{"toolUse": {"toolUseId": "a", "name": "f",
                                                            "input": {}}}]},
      {"role": "user", "content": [{"text": "no result"}]}], "Expected toolResult blocks"),
    ([USER, {"role": "user", "content": []}], "must not be null or empty"),
])
def test_the_conversation_rules_are_enforced(emu, conversation, needle):
    emu.load({"responses": [{"message": MESSAGE}]})
    status, head, body = post(emu, {"messages": conversation})
    assert status == 400
    assert head["x-amzn-errortype"].startswith("ValidationException:")
    assert needle in json.loads(body)["message"]


POINT = {"cachePoint": {"type": "default"}}


@pytest.mark.parametrize("body,needle", [
    # Five points: the tools', the system prompt's and three in the messages.
    ({"toolConfig": {"tools": [{"toolSpec": {"name": "f", "inputSchema": {"json": {}}}}, POINT]},
      "system": [{"text": "Sys"}, POINT],
      "messages": [{"role": "user", "content": [{"text": "a"}, POINT]},
                   {"role": "assistant", "content": [{"text": "b"}, POINT]},
                   {"role": "user", "content": [{"text": "c"}, POINT]}]}, "A maximum of 4 cache points"),
    ({"messages": [{"role": "user", "content": [{"text": "a"}, {"cachePoint": {"type": "ephemeral"}}]}]},
     "type must be 'default'"),
    ({"messages": [{"role": "user", "content": [{"text": "a"}, {"cachePoint": {"type": "default", "ttl": "24h"}}]}]},
     "ttl one of 5m, 1h"),
    # 5 minutes on the system prompt, then 1 hour on a message: longer after shorter.
    ({"system": [{"text": "Sys"}, POINT],
      "messages": [{"role": "user", "content": [{"text": "a"}, {"cachePoint": {"type": "default", "ttl": "1h"}}]}]},
     "must not be longer than an earlier one's"),
    # Structured output: the schema is a string holding JSON, not the object itself.
    ({"messages": [USER], "outputConfig": {"textFormat": {"type": "json_schema", "structure": {
        "jsonSchema": {"schema": {"type": "object"}, "name": "x"}}}}}, "structure.jsonSchema.schema a string"),
    ({"messages": [USER], "outputConfig": {"textFormat": {"type": "json_schema", "structure": {
        "jsonSchema": {"schema": "{not json", "name": "x"}}}}}, "not valid JSON"),
    # A document named like a file: the dot (and an underscore, two spaces) are refused.
    ({"messages": [{"role": "user", "content": [{"document": {"format": "pdf", "name": "notes.pdf",
                                                              "source": {"bytes": "JVBE"}}}]}]}, "document file name"),
    ({"messages": [{"role": "user", "content": [{"document": {"format": "pdf", "name": "a  b",
                                                              "source": {"bytes": "JVBE"}}}]}]}, "document file name"),
])
def test_cache_points_and_output_config_are_checked_as_the_service_checks_them(emu, body, needle):
    emu.load({"responses": [{"message": MESSAGE}]})
    status, head, answer = post(emu, body)
    assert status == 400
    assert head["x-amzn-errortype"].startswith("ValidationException:")
    assert needle in json.loads(answer)["message"]


def test_cache_points_within_the_rules_are_taken_and_make_the_usage(emu):
    # With a prompt cache: the first request writes its marked prefix, the second reads it.
    emu.load({"prompt_cache": {"unit_tokens": 10}, "responses": [{"message": MESSAGE}, {"message": MESSAGE}]})
    body = {"system": [{"text": "Sys"}, {"cachePoint": {"type": "default", "ttl": "1h"}}],
            "messages": [{"role": "user", "content": [{"text": "a"}, POINT]}]}
    usages = []
    for _ in range(2):
        status, _, answer = post(emu, body)
        assert status == 200
        usages += [p["usage"] for h, p in messages(answer) if h[":event-type"] == "metadata"]
    assert usages[0]["cacheWriteInputTokens"] == 20 and "cacheReadInputTokens" not in usages[0]
    assert usages[1]["cacheReadInputTokens"] == 20 and "cacheWriteInputTokens" not in usages[1]
    assert usages[0]["inputTokens"] == usages[1]["inputTokens"] == 0
