"""Gemini request bodies checked against google-genai's own types, as test_request_fidelity.py
checks the other providers' against their SDKs'.

The REST body (`contents`, `systemInstruction`, `tools`, `toolConfig`, `generationConfig`) has
no single type in google-genai, whose request is the SDK's own shape; each member is validated
as the type the REST field holds (`Content`, `Tool`, `ToolConfig`, `GenerationConfig`), from
JSON as the API would read it (thought signatures decoded as base64). The types forbid
unknown keys, so a misspelled field is caught. google-genai is pinned in requirements-dev.txt.
"""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest

genai_types = pytest.importorskip("google.genai.types")

from panto.emulator import Emulator  # noqa: E402
from fidelity_checks import check_conformance_log, check_turns  # noqa: E402
from test_request_fidelity import (  # noqa: E402
    FAILING, MEDIA_TURN, SCREENSHOT, WEATHER, _answer, _run_turns, _text)

MEMBERS = {
    "contents": lambda v: [genai_types.Content.model_validate_json(json.dumps(c)) for c in v],
    "systemInstruction": lambda v: genai_types.Content.model_validate_json(json.dumps(v)),
    "tools": lambda v: [genai_types.Tool.model_validate_json(json.dumps(t)) for t in v],
    "toolConfig": lambda v: genai_types.ToolConfig.model_validate_json(json.dumps(v)),
    "generationConfig": lambda v: genai_types.GenerationConfig.model_validate_json(json.dumps(v)),
}


def validate_gemini(body: Any) -> list[str]:
    """What is wrong with a Gemini request body as google-genai's types see it."""
    if not isinstance(body, dict):
        return ["the body is not a JSON object"]
    problems = [f"top-level key {k!r} is not one panto writes" for k in body if k not in MEMBERS]
    for key, validate in MEMBERS.items():
        if key in body:
            try:
                validate(body[key])
            except pydantic.ValidationError as e:
                problems.append(f"{key}: {e}")
    return problems


G = {"provider": "gemini", "model": "gemini-3-test"}
SIGNED_CALLS = _answer({"type": "thinking", "thinking": "Look first.", "signature": "c2lnLXQ="},
                       {"type": "tool_use", "name": "screenshot", "input": {}},
                       {"type": "tool_use", "name": "get_weather", "input": {"city": "Oslo"}},
                       {"type": "tool_use", "name": "lookup", "input": {}})
SCENARIOS = [
    ("gemini_media_thinking_tool_round", dict(G, thinking="low", system="Be brief."),
     [MEDIA_TURN, "And now?"],
     {"responses": [SIGNED_CALLS, _answer({"type": "thinking", "thinking": "Done.",
                                           "signature": "c2lnLTI="}, _text("Seen.")),
                    _answer(_text("Still."))]},
     [SCREENSHOT, WEATHER, FAILING],
     ['"inlineData"', '"application/pdf"', '"thoughtSignature": "c2lnLXQ="', '"thought": true',
      '"functionResponse"', '"error"', "Sunny in Oslo", '"thinkingLevel": "low"',
      '"systemInstruction"']),
    ("gemini_request_params",
     dict(G, temperature=1.2, top_p=0.9, top_k=40, stop=["END"], seed=7, presence_penalty=0.5,
          frequency_penalty=0.25, tool_choice={"name": "get_weather"},
          thinking={"budget_tokens": 2048},
          response_format={"type": "json_schema", "name": "weather",
                           "schema": {"type": "object", "title": "W",
                                      "properties": {"t": {"type": "number"}},
                                      "required": ["t"]}},
          extra_body={"safetySettings": []}),
     ["Weather?"], {"responses": [_answer(_text('{"t": 3}'))]}, [WEATHER],
     ['"topK": 40', '"stopSequences": ["END"]', '"allowedFunctionNames": ["get_weather"]',
      '"thinkingBudget": 2048', '"responseJsonSchema"', '"responseMimeType": "application/json"']),
]


@pytest.fixture(scope="module")
def emulator():
    with Emulator() as emu:
        yield emu


@pytest.mark.parametrize("name,config,turns,scenario,tools,covers", SCENARIOS,
                         ids=[s[0] for s in SCENARIOS])
def test_representative_turns(emulator: Emulator, name: str, config: dict[str, Any],
                              turns: list[Any], scenario: dict[str, Any], tools: list[Any],
                              covers: list[str]) -> None:
    requests = _run_turns(emulator, config, turns, scenario, tools)
    for r in requests:
        if isinstance(r["body"], dict):
            r["body"].pop("safetySettings", None)  # (extra_body's: not panto's to check)
    check_turns(name, requests, turns, covers, lambda r: validate_gemini(r["body"]))


def test_conformance_requests() -> None:
    """The Gemini bodies of the last conformance run (tests/conformance/run.py), if any."""
    check_conformance_log("gemini", lambda e: ":streamGenerateContent" in str(e.get("path")),
                          lambda e: validate_gemini(e.get("body")))


def test_the_validator_catches_mistakes() -> None:
    good = {"contents": [{"role": "model", "parts": [
        {"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "c2ln"}]}]}
    assert validate_gemini(good) == []
    misspelled = {"contents": [{"role": "model", "parts": [
        {"functionCall": {"name": "f", "args": {}}, "thought_signature_": "c2ln"}]}]}
    assert validate_gemini(misspelled)
    assert validate_gemini(dict(good, messages=[]))
    assert validate_gemini({"generationConfig": {"maxTokens": 5}})
