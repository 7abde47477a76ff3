"""A careful hand-written httpx consumer of `make bench` (see benchproto.py): one POST,
`iter_lines()`, `json.loads` of each `data:` line, the text taken out by hand.

    httpx_client.py PROVIDER BASE_URL [STREAMS]
"""
import json

import benchproto as bp

import httpx

provider, base_url, streams = bp.args()
base_url = base_url.rstrip("/")
client = httpx.Client(timeout=600)
loads = json.loads

if provider == "anthropic":
    url = base_url + "/v1/messages"
    headers = {"x-api-key": "bench", "anthropic-version": "2023-06-01", "accept": "text/event-stream"}
    body = {"model": "claude-sonnet-4-6", "max_tokens": 1024, "stream": True,
            "messages": [{"role": "user", "content": "Hello"}]}
else:
    url = base_url + "/v1/chat/completions"
    headers = {"authorization": "Bearer bench", "accept": "text/event-stream"}
    body = {"model": "gpt-4o-mini", "stream": True, "stream_options": {"include_usage": True},
            "messages": [{"role": "user", "content": "Hello"}]}


def one_anthropic():
    events = nbytes = 0
    with client.stream("POST", url, json=body, headers=headers) as r:
        r.raise_for_status()
        for line in r.iter_lines():
            if line.startswith("data: "):
                d = loads(line[6:])
                if d["type"] == "content_block_delta":
                    text = d["delta"].get("text")
                    if text is not None:
                        if not events:
                            bp.first()
                        events += 1
                        nbytes += len(text)
                elif d["type"] == "error":
                    raise RuntimeError(d["error"])
    return events, nbytes


def one_openai():
    events = nbytes = 0
    with client.stream("POST", url, json=body, headers=headers) as r:
        r.raise_for_status()
        for line in r.iter_lines():
            if line.startswith("data: "):
                data = line[6:]
                if data == "[DONE]":
                    break
                choices = loads(data)["choices"]
                if choices:
                    content = choices[0]["delta"].get("content")
                    if content:
                        if not events:
                            bp.first()
                        events += 1
                        nbytes += len(content)
    return events, nbytes


bp.ready()
bp.end(*bp.run_threads(streams, one_anthropic if provider == "anthropic" else one_openai))
