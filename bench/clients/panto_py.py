"""The panto Python consumer of `make bench` (see benchproto.py): PROVIDER BASE_URL [STREAMS].
With BENCH_TOGETHER=1, every stream waits after its first delta until all have one (the
1,000-stream memory measurement: all open at once)."""
import os
import threading

import benchproto as bp

import panto

provider, base_url, streams = bp.args()
MODELS = {"openai": "gpt-4o-mini", "openai-responses": "gpt-4o-mini", "gemini": "gemini-2.5-flash",
          "bedrock": "anthropic.claude-sonnet-4-5-20250929-v1:0"}
model = MODELS.get(provider, "claude-sonnet-4-6")
# Bedrock signs (SigV4) with the AWS_* keys the harness puts in the environment: no api_key.
key = {} if provider == "bedrock" else {"api_key": "bench"}
agents = [panto.Agent(provider=provider, model=model, base_url=base_url, max_tokens=1024, **key)
          for _ in range(streams)]
agent_iter = iter(agents)
ContentDelta = panto.ContentDelta
together = threading.Barrier(streams, timeout=120) if streams > 1 and os.environ.get("BENCH_TOGETHER") == "1" else None


def one():
    agent = next(agent_iter)
    events = nbytes = 0
    try:
        with agent.run("Hello") as stream:
            for event in stream:
                if type(event) is ContentDelta:
                    if not events:
                        bp.first()
                        if together:
                            together.wait()
                    events += 1
                    nbytes += len(event.text)
    finally:
        if together and not events:
            together.abort()  # do not leave the others waiting
    return events, nbytes


bp.ready()
bp.end(*bp.run_threads(streams, one))
