"""The panto Python consumer of `make bench` (see benchproto.py): PROVIDER BASE_URL [STREAMS]."""
import benchproto as bp

import panto

provider, base_url, streams = bp.args()
model = "gpt-4o-mini" if provider == "openai" else "claude-sonnet-4-6"
agents = [panto.Agent(provider=provider, model=model, base_url=base_url, api_key="bench", max_tokens=1024)
          for _ in range(streams)]
agent_iter = iter(agents)
ContentDelta = panto.ContentDelta


def one():
    agent = next(agent_iter)
    events = nbytes = 0
    with agent.run("Hello") as stream:
        for event in stream:
            if type(event) is ContentDelta:
                if not events:
                    bp.first()
                events += 1
                nbytes += len(event.text)
    return events, nbytes


bp.ready()
bp.end(*bp.run_threads(streams, one))
