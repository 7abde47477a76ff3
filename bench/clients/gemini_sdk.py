"""The official google-genai SDK as a consumer of `make bench` (see benchproto.py).

    gemini_sdk.py BASE_URL [STREAMS]

client.models.generate_content_stream(), iterating the GenerateContentResponse chunks and
reading each one's `.text`, the SDK's documented way; one shared client (http_options'
base_url is the bench server's base, …/n/N).
"""
import sys

import benchproto as bp

from google import genai
from google.genai import types

sys.argv.insert(1, "gemini")
_, base_url, streams = bp.args()
# v1beta, panto's (the SDK's default is v1); timeout in milliseconds; no retries, as the other peers.
client = genai.Client(api_key="bench", http_options=types.HttpOptions(
    base_url=base_url, api_version="v1beta", timeout=600_000, retry_options=types.HttpRetryOptions(attempts=1)))
config = types.GenerateContentConfig(max_output_tokens=1024)


def one():
    events = nbytes = 0
    for chunk in client.models.generate_content_stream(model="gemini-2.5-flash", contents="Hello", config=config):
        text = chunk.text
        if text:
            if not events:
                bp.first()
            events += 1
            nbytes += len(text)
    return events, nbytes


bp.ready()
bp.end(*bp.run_threads(streams, one))
