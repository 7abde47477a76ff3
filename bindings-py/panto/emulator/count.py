"""The token-counting endpoints: Anthropic's `count_tokens`, Gemini's `countTokens`, the
Responses API's `input_tokens` and Bedrock's `CountTokens`.

They answer at once, outside the scenario (a count consumes no scripted response), with a
count the emulator makes up from the request: one token per word of every string in the
body, the values of `model`, `role` and `type` aside, plus one per object. So the same
prompt always counts the same, and a longer one more. As the real endpoints do, each refuses
a member it does not take (a turn's `max_tokens` or `stream`): the body must be the prompt.
"""

from __future__ import annotations

import re
from types import ModuleType
from typing import Any, Callable, Mapping, NamedTuple

from . import anthropic, bedrock, gemini, responses
from .call import Rejection


class Endpoint(NamedTuple):
    provider: ModuleType
    pattern: re.Pattern[str]
    members: frozenset[str]  # what the body may hold
    required: tuple[str, ...]
    prompt: Callable[[dict[str, Any]], Any]  # the part of the body that is counted
    answer: Callable[[int], dict[str, Any]]


ENDPOINTS = (
    Endpoint(anthropic, re.compile(r"^/v1/messages/count_tokens$"),
             frozenset({"model", "messages", "system", "tools", "tool_choice", "thinking",
                        "mcp_servers", "context_management"}),
             ("model", "messages"), lambda b: b, lambda n: {"input_tokens": n}),
    Endpoint(responses, re.compile(r"^/v1/responses/input_tokens$"),
             frozenset({"model", "input", "instructions", "tools", "tool_choice",
                        "parallel_tool_calls", "reasoning", "text", "truncation",
                        "conversation", "previous_response_id"}),
             ("model",), lambda b: b,
             lambda n: {"object": "response.input_tokens", "input_tokens": n}),
    Endpoint(gemini, re.compile(r"^/v1beta/(?:models|tunedModels)/[^/:]+:countTokens$"),
             frozenset({"contents", "generateContentRequest"}), (),
             lambda b: b.get("generateContentRequest") or b.get("contents"),
             lambda n: {"totalTokens": n,
                        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": n}]}),
    Endpoint(bedrock, re.compile(r"^/model/[^/]+/count-tokens$"), frozenset({"input"}),
             ("input",), lambda b: b["input"].get("converse") if isinstance(b["input"], dict) else None,
             lambda n: {"inputTokens": n}),
)

_CONVERSE_MEMBERS = frozenset({"messages", "system", "toolConfig", "additionalModelRequestFields"})


def endpoint_for(path: str) -> Endpoint | None:
    return next((e for e in ENDPOINTS if e.pattern.match(path)), None)


def check(e: Endpoint, headers: Mapping[str, str], body: Any, require_api_key: bool
          ) -> Rejection | None:
    """The provider's refusal of the credentials, then the body's members."""
    refused = credentials_refusal(e.provider, headers, require_api_key)
    if refused is not None:
        return refused
    invalid = e.provider.error_type_for(400)
    if not isinstance(body, dict):
        return Rejection(400, invalid, "the body is not a JSON object")
    for key in body:
        if key not in e.members:
            return Rejection(400, invalid, f"{key}: Extra inputs are not permitted")
    for key in e.required:
        if key not in body:
            return Rejection(400, invalid, f"{key}: Field required")
    prompt = e.prompt(body)
    if not isinstance(prompt, (dict, list)):
        return Rejection(400, invalid, "no prompt to count")
    if e.provider is bedrock:
        for key in prompt if isinstance(prompt, dict) else ():
            if key not in _CONVERSE_MEMBERS:
                return Rejection(400, invalid, f"input.converse.{key}: not a member")
    if e.provider is gemini and isinstance(prompt, dict) and not str(prompt.get("model", "")).startswith(("models/", "tunedModels/")):
        return Rejection(400, invalid, "generateContentRequest.model: must name the model, models/NAME")
    return None


def credentials_refusal(provider: ModuleType, headers: Mapping[str, str], require_api_key: bool
                        ) -> Rejection | None:
    """The provider's refusal of the credentials (its request check, which looks at them
    first: a 401 or 403), for an endpoint answered outside the scenario."""
    if not require_api_key:
        return None
    at = getattr(provider, "check_request_at", None)
    r: Rejection | None = at("/", headers, None, True) if at else provider.check_request(headers, None, True)
    return r if r is not None and r.status in (401, 403) else None


def tokens(value: Any) -> int:
    """The made-up count (see the module's docstring)."""
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, list):
        return sum(tokens(v) for v in value)
    if isinstance(value, dict):
        return 1 + sum(tokens(v) for k, v in value.items() if k not in ("model", "role", "type"))
    return 0


def answer(e: Endpoint, body: dict[str, Any]) -> dict[str, Any]:
    return e.answer(tokens(e.prompt(body)))
