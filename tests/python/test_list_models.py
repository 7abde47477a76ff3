"""Agent.list_models (panto_agent_list_models): the provider's models, every page (the
emulator's Anthropic list is two pages: emulator/models.py), typed entries joined with the
catalog (None for a model it does not list), on the turns' connection; a failed request
raises the typed error a turn's would; BusyError while a stream is unfinished;
alist_models in a worker thread."""

from __future__ import annotations

import asyncio

import pytest

import panto
from panto.emulator import Emulator

pytestmark = pytest.mark.usefixtures("library")

HELLO = {"responses": [{"message": {"content": [{"type": "text", "text": "Hello"}]}}], "repeat_last": True}


def test_every_page_in_order_each_joined_with_the_catalog() -> None:
    with Emulator(scenario=HELLO) as emu, \
            panto.Agent(provider="anthropic", model="claude-test", base_url=emu.url, api_key="k") as agent:
        listed = agent.list_models()
        assert [m.id for m in listed] == ["claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001", "claude-emulator-1"]
        first = listed[0]
        assert (first.display_name, first.created) == ("Claude Sonnet 4.5", "2025-09-29T00:00:00Z")
        assert first.info == panto.model_info("anthropic", "claude-sonnet-4-5-20250929")
        assert first.info is not None and first.info.max_input_tokens == 200000
        assert listed[2].info is None
        assert [r["path"] for r in emu.requests()] == [
            "/v1/models?limit=1000", "/v1/models?limit=1000&after_id=claude-haiku-4-5-20251001"]
        assert [r["connection"] for r in emu.requests()] == [1, 1]  # one kept-alive connection


def test_gemini_ids_without_models_and_openai_dates_as_rfc3339() -> None:
    with Emulator(scenario=HELLO) as emu:
        with panto.Agent(provider="gemini", model="gemini-2.5-flash", base_url=emu.url, api_key="k") as agent:
            assert [m.id for m in agent.list_models()] == ["gemini-2.5-flash", "gemini-2.5-pro", "gemini-emulator-1"]
        with panto.Agent(provider="openai", model="gpt-4o", base_url=emu.url, api_key="k") as agent:
            gpt = agent.list_models()[0]
            assert (gpt.id, gpt.display_name, gpt.created) == ("gpt-4o", None, "2024-05-10T18:50:49Z")


def test_a_failed_list_is_typed_and_a_busy_agent_is_refused() -> None:
    with Emulator(scenario=HELLO) as emu:
        with panto.Agent(provider="anthropic", model="claude-test", base_url=emu.url) as agent:
            with pytest.raises(panto.AuthenticationError) as caught:
                agent.list_models()
            assert caught.value.http_status == 401
        with panto.Agent(provider="anthropic", model="claude-test", base_url=emu.url, api_key="k") as agent:
            with agent.run("Hi") as stream:
                with pytest.raises(panto.BusyError):
                    agent.list_models()
                list(stream)


def test_alist_models_answers_as_list_models() -> None:
    with Emulator(scenario=HELLO) as emu, \
            panto.Agent(provider="anthropic", model="claude-test", base_url=emu.url, api_key="k") as agent:
        assert asyncio.run(agent.alist_models()) == agent.list_models()
