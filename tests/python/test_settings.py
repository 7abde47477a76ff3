"""`Agent.settings` (panto_agent_settings): the settings the agent holds, in the constructor's
keys, never the key; after a provider switch, the address and model the switch gave."""
from __future__ import annotations

import pytest

import panto

pytestmark = pytest.mark.usefixtures("library")


def test_the_settings_given_and_the_defaults() -> None:
    with panto.Agent(provider="anthropic", model="claude-test", base_url="http://127.0.0.1:9",
                     api_key="sk-secret", system="Be brief.", thinking="low",
                     capabilities=["fs.read"]) as agent:
        settings = agent.settings
    assert settings == {
        "provider": "anthropic", "model": "claude-test", "base_url": "http://127.0.0.1:9",
        "system": "Be brief.", "max_tokens": 4096, "thinking": "low", "max_tool_iterations": 10,
        "capabilities": ["fs.read"],
        "budget": {"output_tokens": None, "tool_rounds": None, "wall_ms": None, "cost_usd": None},
    }
    assert "sk-secret" not in repr(settings)


def test_a_provider_switch_shows_the_new_providers_address(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://anthropic.test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "a-key")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://openai.test/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "o-key")
    with panto.Agent(provider="anthropic", model="claude-test") as agent:
        assert agent.settings["base_url"] == "http://anthropic.test"
        agent.set_config(provider="openai", model="gpt-test", system=None)
        settings = agent.settings
        assert (settings["provider"], settings["model"], settings["base_url"], settings["system"]) == \
            ("openai", "gpt-test", "http://openai.test/v1", None)
        # Refused changes leave the settings as they were.
        with pytest.raises(panto.ConfigError):
            agent.set_config(thinking="very")
        assert agent.settings == settings


def test_a_closed_agent_has_none() -> None:
    agent = panto.Agent(provider="openai", model="m", base_url="http://127.0.0.1:9", api_key="k")
    agent.close()
    with pytest.raises(panto.InvalidArgumentError):
        agent.settings
