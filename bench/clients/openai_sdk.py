"""The official openai SDK as a consumer of `make bench` (see benchproto.py).

    openai_sdk.py raw|stream|responses-raw|responses-stream BASE_URL [STREAMS]

raw:              client.chat.completions.create(stream=True), iterating the chunks
stream:           client.chat.completions.stream(), the helper that also accumulates the
                  completion ("content.delta" events)
responses-raw:    client.responses.create(stream=True), iterating the events
                  ("response.output_text.delta")
responses-stream: client.responses.stream(), the helper that also accumulates the response
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
# As panto sends a Responses request: nothing stored, the reasoning carried by the client.
responses_params = dict(model="gpt-4o-mini", input="Hello", max_output_tokens=1024, store=False)
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


def one_responses_raw():
    events = nbytes = 0
    for event in client.responses.create(stream=True, **responses_params):
        if event.type == "response.output_text.delta":
            if not events:
                bp.first()
            events += 1
            nbytes += len(event.delta)
    return events, nbytes


def one_responses_stream():
    events = nbytes = 0
    with client.responses.stream(**responses_params) as stream:
        for event in stream:
            if event.type == "response.output_text.delta":
                if not events:
                    bp.first()
                events += 1
                nbytes += len(event.delta)
    return events, nbytes


ONE = {"raw": one_raw, "stream": one_stream, "responses-raw": one_responses_raw,
       "responses-stream": one_responses_stream}
bp.ready()
bp.end(*bp.run_threads(streams, ONE[mode]))
