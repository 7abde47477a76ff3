"""The official openai SDK as a consumer of `make bench` (see benchproto.py).

    openai_sdk.py raw|stream BASE_URL [STREAMS]

raw:    client.chat.completions.create(stream=True), iterating the chunks
stream: client.chat.completions.stream(), the helper that also accumulates the completion
        ("content.delta" events)
BASE_URL is the bench server's base (…/n/N); the SDK is given BASE_URL/v1.
"""
import sys

import benchproto as bp

import openai

mode = sys.argv[1]
sys.argv[1] = "openai"
_, base_url, streams = bp.args()
params = dict(model="gpt-4o-mini", messages=[{"role": "user", "content": "Hello"}],
              stream_options={"include_usage": True})
client = openai.OpenAI(base_url=base_url.rstrip("/") + "/v1", api_key="bench", max_retries=0, timeout=600)


def one_raw():
    events = nbytes = 0
    for chunk in client.chat.completions.create(stream=True, **params):
        if chunk.choices:
            content = chunk.choices[0].delta.content
            if content:
                if not events:
                    bp.first()
                events += 1
                nbytes += len(content)
    return events, nbytes


def one_stream():
    events = nbytes = 0
    with client.chat.completions.stream(**params) as stream:
        for event in stream:
            if event.type == "content.delta" and event.delta:
                if not events:
                    bp.first()
                events += 1
                nbytes += len(event.delta)
    return events, nbytes


bp.ready()
bp.end(*bp.run_threads(streams, one_raw if mode == "raw" else one_stream))
