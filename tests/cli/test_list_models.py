"""`panto --list-models`: the provider's models (the emulator's three Anthropic models, on two
pages: bindings-py/panto/emulator/models.py), a line each with the catalog's figures or
"unknown"; --json gives the library's joined list; a refused key exits as a turn would."""
from __future__ import annotations

import json


def test_a_line_per_model_with_the_catalogs_figures(emulator, run_panto):
    emu = emulator()
    r = run_panto("--list-models")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "claude-sonnet-4-5-20250929  200000 input tokens  $3 in, $15 out per Mtok",
        "claude-haiku-4-5-20251001   200000 input tokens  $1 in, $5 out per Mtok",
        "claude-emulator-1           unknown",
    ]
    assert [r["path"] for r in emu.requests()] == [
        "/v1/models?limit=1000", "/v1/models?limit=1000&after_id=claude-haiku-4-5-20251001"]


def test_json_gives_the_joined_list(emulator, run_panto):
    emulator()
    r = run_panto("--list-models", "--json")
    assert r.returncode == 0, r.stderr
    listed = json.loads(r.stdout)
    assert [m["id"] for m in listed] == ["claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001", "claude-emulator-1"]
    assert listed[0]["display_name"] == "Claude Sonnet 4.5" and listed[0]["created"] == "2025-09-29T00:00:00Z"
    assert listed[0]["model_info"]["max_output_tokens"] == 64000
    assert listed[2]["model_info"] is None


def test_a_refused_key_exits_as_an_authentication_failure(emulator, run_panto, cli_env):
    emulator()
    del cli_env["ANTHROPIC_API_KEY"]
    r = run_panto("--list-models")
    assert r.returncode == 3 and r.stdout == ""
    assert r.stderr.startswith("panto: the model list failed (authentication): ")
