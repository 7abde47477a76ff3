"""Writes the issue 36 cases of a turn's budgets (config "budget"): `budget_tool_rounds`,
`budget_output_tokens`, `budget_wall_ms` and `budget_cost_usd`, one per budget reached, and
`budget_cost_usd_unpriced` (a cost budget on a model whose prices are unknown). Reaching one ends the turn
normally: `message_complete` with stop reason "budget" and the budget's name as
`provider_stop_reason`; the calls of a round it stops are answered "Skipped: the turn's budget
is spent." without a `tool_call_start`, and the next turn's request carries them (valid: every
call with its result, the user messages of a run sent as one). Each transcript is derived
here from the scenario and the rules (include/panto.h, docs/tool-use.md), never from a
driver's output.

    .venv/bin/python tests/conformance/make_budget_cases.py           # write them
    .venv/bin/python tests/conformance/make_budget_cases.py --check   # fail if stale

Python 3.11 standard library only."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from case_files import case_texts, generate
from make_tool_cases import CASES, CONFIG, DONE, Message, add, complete, result, tool, usage

SKIPPED = "Skipped: the turn's budget is spent."


def spent(kind: str, u: dict[str, int]) -> dict[str, Any]:
    return {"event": "message_complete", "stop_reason": "budget", "provider_stop_reason": kind, "usage": u}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def assistant(m: Message, stop: str | None = None) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if m.text is not None:
        content.append({"type": "text", "text": m.text})
    content += [{"type": "tool_call", "id": cid, "name": name, "input": inp} for cid, name, inp in m.calls]
    return {"role": "assistant", "content": content, "provider": "anthropic", "model": "claude-test",
            "stop_reason": stop or m.stop, "usage": m.usage}


def results(*rows: tuple[str, str, bool]) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "tool_result", "id": cid, "content": text, "is_error": err} for cid, text, err in rows]}


def cases() -> dict[str, tuple[dict[str, Any], list[Any]]]:
    out: dict[str, tuple[dict[str, Any], list[Any]]] = {}
    lookup = tool("lookup", {"return": "found"})
    first = Message("msg_round_1", calls=[("toolu_1", "lookup", {"i": 1})], i=30, o=9)
    second = Message("msg_round_2", calls=[("toolu_2", "lookup", {"i": 2})], i=40, o=9)
    reply = Message("msg_answer", text="All done.", i=50, o=4)

    data = {"description": "budget.tool_rounds 1: the first round runs; the second message's call is answered "
                           "\"Skipped: the turn's budget is spent.\" without a tool_call_start and the turn ends "
                           "normally, stop reason budget (provider_stop_reason tool_rounds). The next turn's "
                           "request carries the skipped result.",
            "config": dict(CONFIG, budget={"tool_rounds": 1}), "turns": ["go", "thanks"], "tools": [lookup],
            "script": {"responses": [first.response, second.response, reply.response]},
            "expect_requests": [{}, {}, {}], "print_conversation": True}
    lines = (first.lines() + first.starts() + [result("toolu_1", "lookup", "found")] + second.lines()
             + [spent("tool_rounds", add(first.usage, second.usage)), DONE, DONE]
             + reply.lines() + [complete("end_turn", reply.usage), DONE, DONE]
             + [{"event": "conversation", "messages": [
                 user("go"), assistant(first), results(("toolu_1", "found", False)), assistant(second),
                 results(("toolu_2", SKIPPED, True)), user("thanks"), assistant(reply)]}])
    out["budget_tool_rounds"] = (data, lines)

    data = {"description": "budget.output_tokens 4: the first message's 9 output tokens pass it, so its call is "
                           "skipped and the turn ends with stop reason budget (provider_stop_reason "
                           "output_tokens). The next turn's answer reaches it too, but ends the turn on its own: "
                           "end_turn.",
            "config": dict(CONFIG, budget={"output_tokens": 4}), "turns": ["go", "thanks"], "tools": [lookup],
            "script": {"responses": [first.response, reply.response]},
            "expect_requests": [{}, {}], "print_conversation": True}
    lines = (first.lines() + [spent("output_tokens", first.usage), DONE, DONE]
             + reply.lines() + [complete("end_turn", reply.usage), DONE, DONE]
             + [{"event": "conversation", "messages": [
                 user("go"), assistant(first), results(("toolu_1", SKIPPED, True)), user("thanks"),
                 assistant(reply)]}])
    out["budget_output_tokens"] = (data, lines)

    slow = dict(Message("msg_slow", text="Too late.", i=30, o=9).response, delay_ms=30000)
    data = {"description": "budget.wall_ms 100 and a provider that answers 30 s late: the deadline ends the "
                           "turn normally, with nothing streamed (stop reason budget, provider_stop_reason "
                           "wall_ms, no message_end). The next turn, its budget lifted by its options, sends "
                           "the user message that got no answer with the new one.",
            "config": dict(CONFIG, budget={"wall_ms": 100}),
            "turns": ["go", {"input": "thanks", "options": {"budget": {"wall_ms": None}}}],
            "script": {"responses": [slow, reply.response]},
            "expect_requests": [{}, {}], "print_conversation": True}
    lines = ([spent("wall_ms", usage(0, 0)), DONE, DONE]
             + reply.lines() + [complete("end_turn", reply.usage), DONE, DONE]
             + [{"event": "conversation", "messages": [user("go"), user("thanks"), assistant(reply)]}])
    out["budget_wall_ms"] = (data, lines)

    priced = dict(CONFIG, model_info={"price": {"input": 3, "output": 15}}, budget={"cost_usd": 0.0001})
    data = {"description": "budget.cost_usd 0.0001 on a model priced $3 / $15 a million tokens (model_info): the "
                           "first message's 30 input and 9 output tokens cost $0.000225, past it, so its call is "
                           "skipped and the turn ends with stop reason budget (provider_stop_reason cost_usd). "
                           "The next turn, its budget lifted by its options, carries the skipped result.",
            "config": priced,
            "turns": ["go", {"input": "thanks", "options": {"budget": {"cost_usd": None}}}], "tools": [lookup],
            "script": {"responses": [first.response, reply.response]},
            "expect_requests": [{}, {}], "print_conversation": True}
    lines = (first.lines() + [spent("cost_usd", first.usage), DONE, DONE]
             + reply.lines() + [complete("end_turn", reply.usage), DONE, DONE]
             + [{"event": "conversation", "messages": [
                 user("go"), assistant(first), results(("toolu_1", SKIPPED, True)), user("thanks"),
                 assistant(reply)]}])
    out["budget_cost_usd"] = (data, lines)

    refusal = ("budget.cost_usd needs the prices of anthropic model \"claude-test\", which the model catalog does "
               "not give: set them in the config's model_info, or lift the budget")
    error = {"event": "error", "code": "config", "http_status": 0, "type": "config_error", "message": refusal}
    data = {"description": "budget.cost_usd on a model the catalog does not price (and no model_info): the turn "
                           "fails with a config error before its first request, rather than run unbounded; the "
                           "user message is taken back (the turn kept nothing).",
            "config": dict(CONFIG, budget={"cost_usd": 1}), "turns": ["go"],
            "script": {"responses": []}, "expect_requests": [], "print_conversation": True}
    lines = [error, error, {"event": "conversation", "messages": []}]
    out["budget_cost_usd_unpriced"] = (data, lines)
    return out


def folders() -> dict[Path, dict[str, str]]:
    return {CASES / name: case_texts(data, lines) for name, (data, lines) in cases().items()}


if __name__ == "__main__":
    sys.exit(generate(__doc__.splitlines()[0], "tests/conformance/make_budget_cases.py", folders))
