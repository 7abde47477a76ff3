"""A turn's budget (config "budget", issue 36) from Python: `panto.Budget` or a dict, on the
agent, in set_config and for one turn; `MessageComplete.budget_kind`. The turns that reach a
budget run in the conformance cases budget_* (all four languages)."""
from __future__ import annotations

import pytest

import panto

pytestmark = pytest.mark.usefixtures("library")


def test_the_budget_given_is_the_agents_and_set_config_changes_one_budget() -> None:
    with panto.Agent(provider="anthropic", model="claude-test", base_url="http://127.0.0.1:9", api_key="k",
                     budget=panto.Budget(tool_rounds=0, wall_ms=5000)) as agent:
        assert agent.settings["budget"] == {"output_tokens": None, "tool_rounds": 0, "wall_ms": 5000, "cost_usd": None}
        agent.set_config(budget={"wall_ms": None, "output_tokens": 300})
        assert agent.settings["budget"] == {"output_tokens": 300, "tool_rounds": 0, "wall_ms": None, "cost_usd": None}
        agent.set_config(budget=panto.Budget(cost_usd=0.5))
        assert agent.settings["budget"]["cost_usd"] == 0.5
        with pytest.raises(panto.ConfigError, match="budget.cost_usd must be a number of dollars above 0"):
            agent.set_config(budget=panto.Budget(cost_usd=-1))
        with pytest.raises(TypeError, match="Budget.cost_usd must be a number of dollars"):
            agent.set_config(budget=panto.Budget(cost_usd="1"))  # type: ignore[arg-type]
        with pytest.raises(panto.ConfigError, match="budget.tool_rounds must be an integer from 0 to 1000"):
            agent.set_config(budget=panto.Budget(tool_rounds=-1))
        with pytest.raises(TypeError, match="Budget.wall_ms must be an int"):
            agent.set_config(budget=panto.Budget(wall_ms=1.5))  # type: ignore[arg-type]
        # A turn's budget is the turn's: the agent's stays.
        with agent.run("hi", budget=panto.Budget(tool_rounds=2)) as stream:
            stream.close()
        assert agent.settings["budget"]["tool_rounds"] == 0


def test_budget_kind_names_the_budget_only_when_one_ended_the_turn() -> None:
    usage = panto.Usage(input_tokens=1, output_tokens=2, cache_read_tokens=0, cache_write_tokens=0,
                        reasoning_tokens=0)
    assert panto.MessageComplete("budget", "wall_ms", usage).budget_kind == "wall_ms"
    assert panto.MessageComplete("end_turn", "end_turn", usage).budget_kind is None
