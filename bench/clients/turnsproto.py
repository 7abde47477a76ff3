"""The latency workload of the Python consumers (bench/latency.py, bench/README.md): one
agent or client, one tool turn, then TURNS plain turns, each timed here.

    READY <cpu_s>                            agent or client made; the first request is next
    TOOL <seconds> <tool_calls> <text_bytes> the tool turn: TOOL_ROUNDS calls of `ping`, then text
    TURN <seconds> <text_bytes>              one plain turn (TURNS lines)
    END <cpu_s>

The server (bench/sse_server.py, /turns/) answers a prompt holding `tool rounds: 3` with three
tool calls, one a request, then text; any other prompt with text. The tool returns at once.
"""
import sys
import time

import benchproto as bp

TOOL_ROUNDS = 3
TOOL_PROMPT = f"Call ping until you are done (tool rounds: {TOOL_ROUNDS})."
PLAIN_PROMPT = "Hello"
TOOL_SPEC = {
    "name": "ping",
    "description": "Answers pong.",
    "input_schema": {"type": "object", "properties": {"round": {"type": "integer"}}},
}


def args():
    """PROVIDER BASE_URL TURNS"""
    if len(sys.argv) < 4:
        sys.exit(f"usage: {sys.argv[0]} anthropic|openai BASE_URL TURNS")
    return sys.argv[1], sys.argv[2], int(sys.argv[3])


def run(tool_turn, plain_turn, turns: int) -> None:
    """tool_turn() -> (tool_calls, text_bytes); plain_turn() -> text_bytes."""
    out = sys.stdout
    bp.ready()
    t = time.perf_counter()
    calls, nbytes = tool_turn()
    out.write(f"TOOL {time.perf_counter() - t:.6f} {calls} {nbytes}\n")
    out.flush()
    for _ in range(turns):
        t = time.perf_counter()
        nbytes = plain_turn()
        out.write(f"TURN {time.perf_counter() - t:.6f} {nbytes}\n")
        out.flush()
    out.write(f"END {bp.cpu():.6f}\n")
    out.flush()
