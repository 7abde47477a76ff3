"""The model lists: Anthropic's and OpenAI's `GET /v1/models` (told apart by the
`anthropic-version` header Anthropic's clients send), Gemini's `GET /v1beta/models` and
Bedrock's ListFoundationModels (`GET /foundation-models`, the control plane's path).

They answer at once, outside the scenario (a list consumes no scripted response), with three
models of each provider: two the model catalog lists and one it does not. The paged APIs
(Anthropic's `limit`/`after_id`, Gemini's `pageSize`/`pageToken`) give at most `PAGE_SIZE`
models a page whatever the client asks, so every list of them shows a second page; OpenAI's
and Bedrock's are one page, as the real ones are.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Mapping, NamedTuple
from urllib.parse import parse_qs

from . import anthropic, bedrock, gemini, openai
from .call import Rejection
from .count import credentials_refusal

PAGE_SIZE = 2

# (id, display name, created: RFC 3339 for Anthropic, Unix seconds for OpenAI)
ANTHROPIC_MODELS = (
    ("claude-sonnet-4-5-20250929", "Claude Sonnet 4.5", "2025-09-29T00:00:00Z"),
    ("claude-haiku-4-5-20251001", "Claude Haiku 4.5", "2025-10-15T00:00:00Z"),
    ("claude-emulator-1", "Emulator Model", "2026-01-01T00:00:00Z"),  # not in the catalog
)
OPENAI_MODELS = (("gpt-4o", 1715367049), ("gpt-4o-mini", 1721172741), ("emulator-model-1", 1767225600))
GEMINI_MODELS = (("gemini-2.5-flash", "Gemini 2.5 Flash"), ("gemini-2.5-pro", "Gemini 2.5 Pro"),
                 ("gemini-emulator-1", "Gemini Emulator"))
BEDROCK_MODELS = (("anthropic.claude-sonnet-4-5-20250929-v1:0", "Claude Sonnet 4.5", "Anthropic"),
                  ("amazon.nova-pro-v1:0", "Nova Pro", "Amazon"),
                  ("emulator.model-v1:0", "Emulator Model", "Emulator"))


class Endpoint(NamedTuple):
    provider: ModuleType
    name: str


def endpoint_for(path: str, headers: Mapping[str, str]) -> Endpoint | None:
    if path == "/v1/models":
        return Endpoint(anthropic, "anthropic") if headers.get("anthropic-version") else Endpoint(openai, "openai")
    if path == "/v1beta/models":
        return Endpoint(gemini, "gemini")
    if path == "/foundation-models":
        return Endpoint(bedrock, "bedrock")
    return None


def check(e: Endpoint, method: str, headers: Mapping[str, str], require_api_key: bool
          ) -> Rejection | None:
    if method != "GET":
        return Rejection(405, e.provider.error_type_for(405), "the model list only accepts GET")
    return credentials_refusal(e.provider, headers, require_api_key)


def answer(e: Endpoint, query: str) -> tuple[int, dict[str, Any]]:
    """The status and body of the list's page that `query` asks for."""
    q = {k: v[-1] for k, v in parse_qs(query).items()}
    if e.name == "anthropic":
        ids = [m[0] for m in ANTHROPIC_MODELS]
        after = q.get("after_id")
        if after is not None and after not in ids:
            return 400, {"type": "error", "error": {"type": "invalid_request_error",
                                                    "message": f"after_id: no model {after}"}}
        start = ids.index(after) + 1 if after is not None else 0
        size = min(int(q.get("limit", "20")), PAGE_SIZE)
        page = ANTHROPIC_MODELS[start:start + size]
        data = [{"type": "model", "id": i, "display_name": n, "created_at": c} for i, n, c in page]
        return 200, {"data": data, "has_more": start + size < len(ANTHROPIC_MODELS),
                     "first_id": data[0]["id"] if data else None,
                     "last_id": data[-1]["id"] if data else None}
    if e.name == "openai":
        return 200, {"object": "list", "data": [{"id": i, "object": "model", "created": c,
                                                 "owned_by": "emulator"} for i, c in OPENAI_MODELS]}
    if e.name == "gemini":
        start = int(q.get("pageToken", "page-0").removeprefix("page-") or 0)
        size = min(int(q.get("pageSize", "50")), PAGE_SIZE)
        body: dict[str, Any] = {"models": [{"name": f"models/{i}", "displayName": n, "version": "001",
                                            "supportedGenerationMethods": ["generateContent", "countTokens"]}
                                           for i, n in GEMINI_MODELS[start:start + size]]}
        if start + size < len(GEMINI_MODELS):
            body["nextPageToken"] = f"page-{start + size}"
        return 200, body
    return 200, {"modelSummaries": [{"modelArn": f"arn:aws:bedrock:us-east-1::foundation-model/{i}",
                                     "modelId": i, "modelName": n, "providerName": p,
                                     "inputModalities": ["TEXT"], "outputModalities": ["TEXT"],
                                     "responseStreamingSupported": True}
                                    for i, n, p in BEDROCK_MODELS]}
