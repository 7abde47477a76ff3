"""`/model` alone (a picker over the catalog's models of the provider) and Ctrl-P (the next model
of the config file's `models` list), issue 35. Driven in a tmux pane against the emulator."""
from __future__ import annotations

import shutil

import pytest

from conftest import text_reply
from test_interactive import pane  # noqa: F401  (the fixture)

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def test_model_alone_picks_from_the_catalog_with_the_current_one_selected(emulator, pane):
    emu = emulator({"responses": [text_reply("Hi from haiku.")]})
    p = pane("--model", "claude-sonnet-4-5")
    screen = p.command("/model", "Pick a model")
    assert "anthropic models in the catalog" in screen
    assert "claude-sonnet-4-5  200k in · $3 / $15 per Mtok" in screen
    # Esc leaves: the model is said, and stays.
    p.keys("Escape")
    p.wait_for(lambda s: s.rstrip().endswith("claude-sonnet-4-5 (anthropic)\n>"))
    # The current model is selected first: one row up is the model sorted before it.
    p.command("/model", "Pick a model")
    p.keys("Up", "Enter")
    screen = p.wait_for("model: claude-")
    switched = screen.split("model: ")[-1].split(" ")[0]
    assert switched != "claude-sonnet-4-5" and switched < "claude-sonnet-4-5"
    assert "Pick a model" not in p.screen()  # the list was taken off
    p.type("hello")
    p.wait_for("Hi from haiku.")
    assert emu.requests()[0]["body"]["model"] == switched


def test_typing_in_the_picker_filters_its_rows(emulator, pane):
    emulator({"responses": []})
    p = pane("--model", "claude-sonnet-4-5")
    p.command("/model", "Pick a model")
    p.keys("HAIKU-4")
    screen = p.wait_for("filter: HAIKU-4")
    rows = [r for r in screen.split("filter: HAIKU-4")[-1].splitlines() if "Mtok" in r or " in" in r]
    assert rows and all("haiku-4" in r for r in rows), rows
    p.keys("BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "zzz")
    p.wait_for("(no row holds it: Backspace)")
    p.keys("Enter")  # nothing to take: the picker stays
    p.keys("BSpace", "BSpace", "BSpace", "haiku-4-5")
    p.wait_for("filter: haiku-4-5")
    p.keys("Enter")
    p.wait_for("model: claude-haiku-4-5")


def test_ctrl_p_cycles_through_the_configured_models(emulator, pane, write_config):
    emu = emulator({"responses": [text_reply("one"), text_reply("two"), text_reply("three")]})
    # A name without a provider keeps the one in use, as /model NAME does.
    write_config({"models": ["claude-sonnet-4-5", "openai:gpt-5", "anthropic:claude-haiku-4-5"]})
    p = pane("--model", "claude-sonnet-4-5")
    p.keys("C-p")
    p.wait_for(lambda s: "gpt-5 · context" in s)
    p.type("first")
    p.wait_for("one")
    p.keys("C-p")
    p.wait_for(lambda s: "claude-haiku-4-5 · context" in s)
    p.type("second")
    p.wait_for("two")
    p.keys("C-p")  # round again to the first
    p.wait_for(lambda s: s.count("claude-sonnet-4-5 · context") >= 1)
    p.type("third")
    p.wait_for("three")
    reqs = emu.requests()
    assert "/messages" not in reqs[0]["path"] and reqs[0]["body"]["model"] == "gpt-5"
    assert reqs[1]["path"].endswith("/messages") and reqs[1]["body"]["model"] == "claude-haiku-4-5"
    assert reqs[2]["body"]["model"] == "claude-sonnet-4-5"


def test_ctrl_p_without_a_models_list_browses_the_history(emulator, pane):
    emulator({"responses": [text_reply("ok")]})
    p = pane()
    p.type("an earlier line")
    p.wait_for("ok")
    p.keys("C-p")
    p.wait_for(lambda s: s.rstrip().endswith("> an earlier line"))


def test_a_models_list_that_is_not_one_is_refused(emulator, run_panto, write_config):
    emulator({"responses": []})
    write_config({"models": "gpt-5"})
    r = run_panto("-p", "x")
    assert r.returncode == 2 and "models must be an array of model names" in r.stderr
