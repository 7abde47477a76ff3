"""The panto Python client of the tool-round benchmark (bench/README.md, "Tool round"):
BASE_URL MODE ROUNDS. One agent, one host tool `wait` that sleeps 200 ms; ROUNDS turns, each
asking for three calls of it, which the binding runs at the same time (MODE parallel) or one
after another (MODE sequential). Prints {"mode", "wall_ms"} per round."""
import json
import sys
import time

import panto


def wait(**_input):
    time.sleep(0.2)
    return "ok"


def main(argv):
    base_url, mode, rounds = argv[1], argv[2], int(argv[3])
    spec = {"name": "wait", "description": "Waits 200 ms.",
            "input_schema": {"type": "object", "properties": {"i": {"type": "integer"}}}}
    agent = panto.Agent.from_config({"provider": "anthropic", "model": "bench-model", "api_key": "bench-key",
                                     "base_url": base_url, "tool_execution": mode},
                                    tools=[panto.Tool.from_spec(spec, handler=wait)])
    with agent:
        for n in range(1, rounds + 1):
            start = time.monotonic()
            with agent.run(f"round {n}") as stream:
                answer = stream.final_message()
            wall_ms = (time.monotonic() - start) * 1000
            if answer.text != "done":
                print(f"round {n}: the answer is {answer.text!r}, not 'done'", file=sys.stderr)
                return 1
            print(json.dumps({"mode": mode, "wall_ms": wall_ms}), flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except panto.Error as err:
        print(f"the turn failed: {err}", file=sys.stderr)
        sys.exit(1)
