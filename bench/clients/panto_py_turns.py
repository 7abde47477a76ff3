"""The panto Python consumer of the latency benchmark (see turnsproto.py): PROVIDER BASE_URL TURNS.
One agent; its `ping` tool has a handler, so the binding runs the tool loop."""
import turnsproto as tp

import panto

provider, base_url, turns = tp.args()
model = "gpt-4o-mini" if provider == "openai" else "claude-sonnet-4-6"
calls = 0


def ping(**tool_input):
    global calls
    calls += 1
    return "pong"


agent = panto.Agent(provider=provider, model=model, base_url=base_url, api_key="bench", max_tokens=1024,
                    tools=[panto.Tool.from_spec(tp.TOOL_SPEC, handler=ping)])
ContentDelta = panto.ContentDelta


def turn(prompt):
    nbytes = 0
    with agent.run(prompt) as stream:
        for event in stream:
            if type(event) is ContentDelta and event.block_kind == "text":
                nbytes += len(event.text)
    return nbytes


def tool_turn():
    global calls
    calls = 0
    nbytes = turn(tp.TOOL_PROMPT)
    return calls, nbytes


tp.run(tool_turn, lambda: turn(tp.PLAIN_PROMPT), turns)
