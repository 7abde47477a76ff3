"""make bench's server (bench/sse_server.py) against panto's decoders and botocore's framing:
every body it serves is a stream panto reads to its end, counting exactly the N deltas and the
text that /stats announces, in each of the five wire formats; its Content-Length is the size
/stats gives; and its Bedrock body is event-stream messages that botocore's own parser takes
(prelude and message CRCs checked). `make bench` counts the same way, at scale: this keeps the
bodies right without running it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator

import pytest

import panto

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
N = 200  # not a multiple of the 64 words: the last period is cut short
PROVIDERS = ["anthropic", "openai", "openai-responses", "gemini", "bedrock"]
MODELS = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-4o-mini", "openai-responses": "gpt-4o-mini",
          "gemini": "gemini-2.5-flash", "bedrock": "anthropic.claude-sonnet-4-5-20250929-v1:0"}
PATHS = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions", "openai-responses": "/v1/responses",
         "gemini": "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
         "bedrock": "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"}


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "bench", "sse_server.py"), "--port", "0"],
                            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.startswith("listening http://"), line
        yield line.split()[1]
    finally:
        proc.terminate()
        proc.wait(10)


def _stats(server: str) -> dict:
    with urllib.request.urlopen(f"{server}/n/{N}/stats", timeout=30) as r:
        return json.load(r)


def _post(url: str) -> tuple[bytes, str]:
    request = urllib.request.Request(url, data=b'{"stream":true}', headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as r:
        return r.read(), r.headers["content-type"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_panto_reads_every_delta(server: str, provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    key = {"api_key": "bench"}
    if provider == "bedrock":  # signed with fixed keys, as bench/run.py's AWS_ENV
        key = {}
        monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
        monkeypatch.setenv("AWS_REGION", "us-east-1")
    agent = panto.Agent(provider=provider, model=MODELS[provider], base_url=f"{server}/n/{N}", max_tokens=1024, **key)
    events, text = 0, []
    with agent.run("Hello") as stream:
        for event in stream:
            if type(event) is panto.ContentDelta:
                events += 1
                text.append(event.text)
    stats = _stats(server)
    assert events == stats["events"] == N
    assert len("".join(text)) == stats["text_bytes"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_body_size_is_in_stats(server: str, provider: str) -> None:
    body, content_type = _post(f"{server}/n/{N}{PATHS[provider]}")
    assert len(body) == _stats(server)[f"{provider}_body_bytes"]
    binary = provider == "bedrock"
    assert content_type.startswith("application/vnd.amazon.eventstream" if binary else "text/event-stream")


def test_bedrock_frames_parse_with_botocore(server: str) -> None:
    eventstream = pytest.importorskip("botocore.eventstream")
    body, _ = _post(f"{server}/n/{N}{PATHS['bedrock']}")
    buffer = eventstream.EventStreamBuffer()
    buffer.add_data(body)  # a bad CRC or length raises as it is read
    messages = list(buffer)
    kinds = [m.headers[":event-type"] for m in messages]
    assert kinds == ["messageStart"] + ["contentBlockDelta"] * N + ["contentBlockStop", "messageStop", "metadata"]
    assert all(m.headers[":message-type"] == "event" for m in messages)
    payloads = [json.loads(m.payload) for m in messages]
    assert len("".join(p["delta"]["text"] for p in payloads[1:-3])) == _stats(server)["text_bytes"]
    assert payloads[-1]["usage"]["outputTokens"] == N
