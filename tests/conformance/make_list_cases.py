#!/usr/bin/env python3
"""Writes the model-list cases (`list_models_*`, issue 31): for each provider, the requests
its list endpoint must be sent (every page: the emulator's pages hold at most two models,
bindings-py/panto/emulator/models.py) and the line the step `{"list_models": true}` prints,
each model joined with the catalog (`known`, and the catalog's `max_input_tokens`, read from
libpanto/src/catalog/data.zig so that a catalog bump regenerates them); and an authentication
error (no key).

    .venv/bin/python tests/conformance/make_list_cases.py           # write them
    .venv/bin/python tests/conformance/make_list_cases.py --check   # fail if stale
"""
from __future__ import annotations

import datetime
import re
import sys
from pathlib import Path
from typing import Any, Optional

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "bindings-py"))
from case_files import case_texts, generate  # noqa: E402
from panto.emulator import models  # noqa: E402  (the emulator's lists, standard library only)

CASES = HERE / "cases"
CONFIG = {"api_key": "test-key"}
CATALOG_LINE = re.compile(r'\.family = \.(\w+), \.name = "([^"]+)"(?:, \.max_input = (\d+))?')


def catalog() -> dict[tuple[str, str], Optional[int]]:
    """(family, name) -> max_input (None: unknown) of every model of the catalog."""
    text = (ROOT / "libpanto/src/catalog/data.zig").read_text("utf-8")
    return {(m[1], m[2]): int(m[3]) if m[3] else None for m in CATALOG_LINE.finditer(text)}


def entry(family: str, id_: str, display_name: Optional[str], created: Optional[str]) -> dict[str, Any]:
    known = catalog()
    return {"id": id_, "display_name": display_name, "created": created, "known": (family, id_) in known,
            "max_input_tokens": known.get((family, id_))}


def rfc3339(unix: int) -> str:
    return datetime.datetime.fromtimestamp(unix, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def listed(line_models: list[dict[str, Any]], code: str = "ok") -> dict[str, Any]:
    return {"event": "list_models", "code": code, "models": line_models}


def case(provider: str, model: str, description: str, paths: list[str],
         line_models: list[dict[str, Any]], config: Optional[dict[str, Any]] = None,
         code: str = "ok") -> dict[str, Any]:
    return {"case": {
        "description": description,
        "config": {"provider": provider, "model": model, **(CONFIG if config is None else config)},
        "turns": [{"list_models": True}],
        "script": {"responses": []},
        "expect_requests": [{"method": "GET", "path": p} for p in paths]},
        "expected": [listed(line_models, code)]}


def cases() -> dict[str, dict[str, Any]]:
    anthropic = [entry("anthropic", i, n, c) for i, n, c in models.ANTHROPIC_MODELS]
    openai = [entry("openai", i, None, rfc3339(c)) for i, c in models.OPENAI_MODELS]
    gemini = [entry("gemini", i, n, None) for i, n in models.GEMINI_MODELS]
    bedrock = [entry("bedrock", i, n, None) for i, n, _ in models.BEDROCK_MODELS]
    second_anthropic = models.ANTHROPIC_MODELS[models.PAGE_SIZE - 1][0]
    return {
        "list_models_anthropic": case(
            "anthropic", "claude-test",
            "list_models on Anthropic: GET /v1/models, the second page asked after_id the first's last_id, the models in the provider's order with their display names and dates, joined with the catalog (a model it does not list: unknown)",
            ["/v1/models?limit=1000", f"/v1/models?limit=1000&after_id={second_anthropic}"], anthropic),
        "list_models_openai": case(
            "openai", "gpt-test",
            "list_models on OpenAI Chat Completions: GET /v1/models in one page, its Unix created times as RFC 3339, joined with the catalog",
            ["/v1/models"], openai),
        "list_models_openai_responses": case(
            "openai-responses", "gpt-test",
            "list_models on the Responses API: the same GET /v1/models",
            ["/v1/models"], openai),
        "list_models_gemini": case(
            "gemini", "gemini-test",
            "list_models on Gemini: GET /v1beta/models, the second page asked with the first's nextPageToken, the ids without models/",
            ["/v1beta/models?pageSize=1000", f"/v1beta/models?pageSize=1000&pageToken=page-{models.PAGE_SIZE}"], gemini),
        "list_models_bedrock": case(
            "bedrock", "anthropic.claude-test-v1:0",
            "list_models on Bedrock: ListFoundationModels (GET /foundation-models on the control plane, here the emulator's base URL), the model names as display names",
            ["/foundation-models"], bedrock),
        "list_models_auth_error": case(
            "anthropic", "claude-test",
            "list_models without an API key: the provider's 401 is an authentication error, no models",
            ["/v1/models?limit=1000"], [], config={}, code="authentication"),
    }


def folders() -> dict[Path, dict[str, str]]:
    return {CASES / name: case_texts(data["case"], data["expected"]) for name, data in cases().items()}


if __name__ == "__main__":
    sys.exit(generate(__doc__.splitlines()[0], "tests/conformance/make_list_cases.py", folders))
