"""The official anthropic SDK as a consumer of `make bench` (see benchproto.py).

    anthropic_sdk.py raw|stream BASE_URL [STREAMS] [--async]

raw:    client.messages.create(stream=True), iterating the raw events
stream: client.messages.stream(), the helper that also accumulates the message ("text" events)
With STREAMS > 1 the streams run on as many threads sharing one client, or with --async
as asyncio tasks sharing one AsyncAnthropic client.
"""
import sys

import benchproto as bp

import anthropic

mode = sys.argv[1]
use_async = "--async" in sys.argv
sys.argv = [a for a in sys.argv if a != "--async"]
sys.argv[1] = "anthropic"
_, base_url, streams = bp.args()
params = dict(model="claude-sonnet-4-6", max_tokens=1024, messages=[{"role": "user", "content": "Hello"}])


def one_raw(client):
    events = nbytes = 0
    for event in client.messages.create(stream=True, **params):
        if event.type == "content_block_delta" and event.delta.type == "text_delta":
            if not events:
                bp.first()
            events += 1
            nbytes += len(event.delta.text)
    return events, nbytes


def one_stream(client):
    events = nbytes = 0
    with client.messages.stream(**params) as stream:
        for event in stream:
            if event.type == "text":
                if not events:
                    bp.first()
                events += 1
                nbytes += len(event.text)
    return events, nbytes


async def one_async(client):
    events = nbytes = 0
    if mode == "raw":
        async for event in await client.messages.create(stream=True, **params):
            if event.type == "content_block_delta" and event.delta.type == "text_delta":
                if not events:
                    bp.first()
                events += 1
                nbytes += len(event.delta.text)
    else:
        async with client.messages.stream(**params) as stream:
            async for event in stream:
                if event.type == "text":
                    if not events:
                        bp.first()
                    events += 1
                    nbytes += len(event.text)
    return events, nbytes


if use_async:
    import asyncio

    async def main():
        client = anthropic.AsyncAnthropic(base_url=base_url, api_key="bench", max_retries=0, timeout=600)
        bp.ready()
        results = await asyncio.gather(*(one_async(client) for _ in range(streams)))
        bp.end(sum(r[0] for r in results), sum(r[1] for r in results))

    asyncio.run(main())
else:
    client = anthropic.Anthropic(base_url=base_url, api_key="bench", max_retries=0, timeout=600)
    one = one_raw if mode == "raw" else one_stream
    bp.ready()
    bp.end(*bp.run_threads(streams, lambda: one(client)))
