"""Writes the cases of what a conversation has spent (`{"spent": true}`: C `panto_agent_spent`,
Python `agent.spent`, Go `agent.Spent()`, Lua `agent:spent()`): `spent_summed_and_priced` (the
assistant messages' usages summed, each priced at the config's model_info for its own model)
and `spent_unknown_model` (a model no price is known for: the usage still summed, the cost
null). Each transcript is derived here from the scenario and the rules (include/panto.h),
never from a driver's output.

    .venv/bin/python tests/conformance/make_spent_cases.py           # write them
    .venv/bin/python tests/conformance/make_spent_cases.py --check   # fail if stale

Python 3.11 standard library only."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from case_files import case_texts, generate
from make_tool_cases import CASES, CONFIG, DONE, Message, add, complete, usage

PRICE = {"input": 2, "output": 10}  # USD per million tokens (model_info)


def cost(u: dict[str, int]) -> float:
    """catalog/cost.zig's sum for a usage without cache or reasoning tokens."""
    return u["input_tokens"] * PRICE["input"] / 1_000_000 + u["output_tokens"] * PRICE["output"] / 1_000_000


def spent(u: dict[str, int], dollars: float | None) -> dict[str, Any]:
    return {"event": "spent", "code": "ok", "usage": u, "cost": dollars}


def cases() -> dict[str, tuple[dict[str, Any], list[Any]]]:
    out: dict[str, tuple[dict[str, Any], list[Any]]] = {}
    one = Message("msg_one", text="One.", i=1200, o=300)
    two = Message("msg_two", text="Two.", i=1000, o=100)
    turns: list[Any] = [{"spent": True}, "first", "second", {"spent": True}]
    script = {"responses": [one.response, two.response]}

    data = {"description": "spent: nothing before a turn (cost 0); after two turns, the assistant messages' "
                           "usages summed and their cost, each at the model_info prices of the model that "
                           "wrote it (input 2, output 10 USD per million tokens).",
            "config": dict(CONFIG, model_info={"price": PRICE}), "turns": turns, "script": script}
    lines = ([spent(usage(0, 0), 0.0)]
             + one.lines() + [complete("end_turn", one.usage), DONE, DONE]
             + two.lines() + [complete("end_turn", two.usage), DONE, DONE]
             + [spent(add(one.usage, two.usage), 0.0 + cost(one.usage) + cost(two.usage))])
    out["spent_summed_and_priced"] = (data, lines)

    data = {"description": "spent of a model the catalog lacks and no model_info prices: the usages summed, "
                           "the cost null (unknown, never a guess).",
            "config": CONFIG, "turns": turns, "script": script}
    lines = ([spent(usage(0, 0), 0.0)]
             + one.lines() + [complete("end_turn", one.usage), DONE, DONE]
             + two.lines() + [complete("end_turn", two.usage), DONE, DONE]
             + [spent(add(one.usage, two.usage), None)])
    out["spent_unknown_model"] = (data, lines)
    return out


def folders() -> dict[Path, dict[str, str]]:
    return {CASES / name: case_texts(data, lines) for name, (data, lines) in cases().items()}


if __name__ == "__main__":
    sys.exit(generate(__doc__.splitlines()[0], "tests/conformance/make_spent_cases.py", folders))
