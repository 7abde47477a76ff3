"""The official AWS SDK for Python (boto3) as a consumer of `make bench` (see benchproto.py).

    bedrock_sdk.py BASE_URL [STREAMS]

client("bedrock-runtime").converse_stream(), iterating its EventStream (botocore decodes
the binary event-stream frames and checks their CRCs) and reading each contentBlockDelta's
text; one shared client, endpoint_url the bench server's base (…/n/N), SigV4 with the fixed
AWS_* keys the harness puts in the environment (signed once per request, before the stream).
"""
import sys

import benchproto as bp

import boto3
from botocore.config import Config

sys.argv.insert(1, "bedrock")
_, base_url, streams = bp.args()
client = boto3.client("bedrock-runtime", endpoint_url=base_url, config=Config(
    retries={"total_max_attempts": 1}, read_timeout=600, max_pool_connections=max(10, streams)))
messages = [{"role": "user", "content": [{"text": "Hello"}]}]


def one():
    events = nbytes = 0
    response = client.converse_stream(modelId="anthropic.claude-sonnet-4-5-20250929-v1:0", messages=messages,
                                      inferenceConfig={"maxTokens": 1024})
    for event in response["stream"]:
        delta = event.get("contentBlockDelta")
        if delta is not None:
            text = delta["delta"].get("text")
            if text:
                if not events:
                    bp.first()
                events += 1
                nbytes += len(text)
    return events, nbytes


bp.ready()
bp.end(*bp.run_threads(streams, one))
