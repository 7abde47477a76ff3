"""The official anthropic SDK in the latency benchmark (see turnsproto.py): BASE_URL TURNS.
One client for everything. The tool loop by hand, as the SDK's users write it: stream a
message with messages.stream() (the helper that accumulates it), and while it stops for
tool_use, append it and the tools' results to the conversation and ask again. The
conversation carries over from turn to turn, as panto's agent does."""
import sys

import turnsproto as tp

import anthropic

sys.argv.insert(1, "anthropic")
_, base_url, turns = tp.args()
client = anthropic.Anthropic(base_url=base_url, api_key="bench", max_retries=0, timeout=600)
messages = []


def turn(prompt):
    messages.append({"role": "user", "content": prompt})
    calls = nbytes = 0
    while True:
        with client.messages.stream(model="claude-sonnet-4-6", max_tokens=1024, messages=messages,
                                    tools=[tp.TOOL_SPEC]) as stream:
            for event in stream:
                if event.type == "text":
                    nbytes += len(event.text)
            message = stream.get_final_message()
        messages.append({"role": "assistant", "content": message.content})
        if message.stop_reason != "tool_use":
            return calls, nbytes
        results = []
        for block in message.content:
            if block.type == "tool_use":
                calls += 1
                results.append({"type": "tool_result", "tool_use_id": block.id, "content": "pong"})
        messages.append({"role": "user", "content": results})


tp.run(lambda: turn(tp.TOOL_PROMPT), lambda: turn(tp.PLAIN_PROMPT)[1], turns)
