"""The official openai SDK in the latency benchmark (see turnsproto.py): BASE_URL TURNS.
One client for everything. The tool loop by hand, as the SDK's users write it: stream a
completion with chat.completions.stream() (the helper that accumulates it), and while it
stops for tool_calls, append it and the tools' results to the conversation and ask again.
The conversation carries over from turn to turn, as panto's agent does.
BASE_URL is the bench server's base (…/turns/N); the SDK is given BASE_URL/v1."""
import sys

import turnsproto as tp

import openai

sys.argv.insert(1, "openai")
_, base_url, turns = tp.args()
client = openai.OpenAI(base_url=base_url.rstrip("/") + "/v1", api_key="bench", max_retries=0, timeout=600)
tools = [{"type": "function", "function": {"name": tp.TOOL_SPEC["name"], "description": tp.TOOL_SPEC["description"],
                                           "parameters": tp.TOOL_SPEC["input_schema"]}}]
messages = []


def turn(prompt):
    messages.append({"role": "user", "content": prompt})
    calls = nbytes = 0
    while True:
        with client.chat.completions.stream(model="gpt-4o-mini", messages=messages, tools=tools,
                                            stream_options={"include_usage": True}) as stream:
            for event in stream:
                if event.type == "content.delta" and event.delta:
                    nbytes += len(event.delta)
            completion = stream.get_final_completion()
        choice = completion.choices[0]
        messages.append(choice.message.model_dump(exclude_none=True, include={"role", "content", "tool_calls"}))
        if choice.finish_reason != "tool_calls":
            return calls, nbytes
        for call in choice.message.tool_calls:
            calls += 1
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "pong"})


tp.run(lambda: turn(tp.TOOL_PROMPT), lambda: turn(tp.PLAIN_PROMPT)[1], turns)
