"""What panto knows of a model (panto_model_info, panto_agent_model_info): the catalog's entry
by provider and name, the agent's model with its config's model_info over it, and every model
the docs, the examples and the `panto` command name known to the catalog (issue 31)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator, Set, Tuple

import pytest

import panto

ROOT = Path(__file__).resolve().parents[2]


def test_a_listed_model_and_a_dated_name_of_it() -> None:
    info = panto.model_info("anthropic", "claude-sonnet-4-5")
    assert info is not None
    assert info.name == "claude-sonnet-4-5"
    assert info.catalog is not None and info.catalog.startswith("litellm ")
    assert info.max_input_tokens is not None and info.max_input_tokens >= 200_000
    assert info.max_output_tokens is not None and info.max_output_tokens > 0
    assert info.price.input is not None and info.price.output is not None
    assert info.price.output > info.price.input
    assert info.abilities.tools and info.abilities.images and info.abilities.thinking
    # A dated name the catalog does not list finds the alias's entry.
    assert panto.model_info("anthropic", "claude-sonnet-4-5-20990101") == info
    dated = panto.model_info("anthropic", "claude-sonnet-4-5-20250929")
    assert dated is not None and dated.price == info.price


def test_an_unknown_model_or_provider_is_none_never_a_guess() -> None:
    assert panto.model_info("anthropic", "claude-sonnet-4-5-turbo") is None
    assert panto.model_info("openai", "") is None
    assert panto.model_info("no-such-provider", "gpt-4o") is None


def test_both_openai_apis_know_the_same_models() -> None:
    assert panto.model_info("openai-responses", "gpt-4o") == panto.model_info("openai", "gpt-4o")


def test_unknown_prices_are_none_and_not_zero() -> None:
    # gpt-4o is not billed for cache writes: the catalog has no such price.
    info = panto.model_info("openai", "gpt-4o")
    assert info is not None
    assert info.price.cache_write_5m is None and info.price.cache_write_1h is None


def test_the_agents_model_with_its_model_info_over_the_catalog() -> None:
    with panto.Agent(provider="anthropic", model="claude-sonnet-4-5", api_key="k") as agent:
        assert agent.model_info == panto.model_info("anthropic", "claude-sonnet-4-5")
        agent.set_config(model_info={"max_output_tokens": 1000, "price": {"input": 1.5}})
        info = agent.model_info
        assert info is not None
        assert info.max_output_tokens == 1000
        assert info.price.input == 1.5
        listed = panto.model_info("anthropic", "claude-sonnet-4-5")
        assert listed is not None and info.price.output == listed.price.output
        agent.set_config(model="my-proxy-model", model_info={"max_input_tokens": 8000})
        mine = agent.model_info
        assert mine is not None
        assert (mine.name, mine.max_input_tokens, mine.catalog) == ("my-proxy-model", 8000, None)
        agent.set_config(model_info=None)
        assert agent.model_info is None


def test_to_config_round_trips_through_model_info() -> None:
    listed = panto.model_info("openai", "gpt-4o")
    assert listed is not None
    with panto.Agent(provider="openai", model="not-listed", api_key="k", model_info=listed.to_config()) as agent:
        mine = agent.model_info
        assert mine is not None
        assert (mine.max_input_tokens, mine.max_output_tokens, mine.price, mine.long_context, mine.abilities) == (
            listed.max_input_tokens,
            listed.max_output_tokens,
            listed.price,
            listed.long_context,
            listed.abilities,
        )


def test_a_closed_agent_raises() -> None:
    agent = panto.Agent(provider="anthropic", model="claude-sonnet-4-5", api_key="k")
    agent.close()
    with pytest.raises(panto.InvalidArgumentError):
        agent.model_info


# Names in the docs that stand for a model without being one (the emulator's, placeholders).
NOT_MODELS = {"panto-emulator", "m", "my-proxy-model", "NAME", "MODEL", "not-listed"}

NAMED = re.compile(r"""(?:\bmodel["']?\s*[:=]\s*["']|--model[ =]|\bModel:\s*")([A-Za-z0-9][A-Za-z0-9._:/-]*)""")


def named_models() -> Iterator[Tuple[str, str]]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "examples").rglob("*.*"))]
    for path in files:
        if path.suffix not in {".md", ".py", ".go", ".lua", ".c", ".h"}:
            continue
        for name in NAMED.findall(path.read_text(errors="replace")):
            if name not in NOT_MODELS and not name.startswith("-"):
                yield str(path.relative_to(ROOT)), name
    cli = (ROOT / "panto-cli" / "src" / "settings.zig").read_text()
    for name in re.findall(r'provider, "[^"]+"\)\) return "([^"]+)"|return "([^"]+)";\n}', cli):
        yield "panto-cli/src/settings.zig", next(n for n in name if n)


def test_every_model_the_docs_examples_and_the_command_name_is_known() -> None:
    providers = ["anthropic", "openai", "gemini", "bedrock"]
    seen: Set[str] = set()
    unknown = []
    for where, name in named_models():
        seen.add(name)
        if not any(panto.model_info(p, name) is not None for p in providers):
            unknown.append(f"{where}: {name}")
    assert len(seen) >= 5, seen  # the pattern still finds the docs' models
    assert unknown == []
