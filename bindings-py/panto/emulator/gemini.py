"""The Google Gemini API (POST /v1beta/models/{model}:streamGenerateContent?alt=sse) in its
streaming wire format.

Each chunk is one `data:` line holding a GenerateContentResponse (`candidates[0].content.parts`,
`responseId`, `modelVersion`). A thinking block is thought parts (`"thought": true`), one per
delta, its signature (or one the emulator makes) on the last; a text block is text parts, one
per delta, and, in a message that thought, a last `{"text": ""}` part holding a made
signature, as the live API often ends a stream; a tool_use block is one `functionCall` part,
whole and without an id (the Gemini API gives none), the message's first call signed as
Gemini 3 signs it. The last chunk has `finishReason` and `usageMetadata` (thoughts counted
apart from candidates). A scripted stream error is a chunk `{"error": {...}}`, then the end.
For a model named `gemini-3*` a request is refused, as the API refuses it, when the first
call of a model content of the current turn comes back without its signature.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from .call import Call, Rejection

NAME = "gemini"
PATH_PATTERN = re.compile(r"^/v1beta/(?:models|tunedModels)/[^/:]+:streamGenerateContent$")
REQUEST_ID_HEADER = "x-emulator-request-id"  # (the API sends no request id)
DEFAULT_MODEL = "gemini-emulator"
END: list[bytes] = []  # the stream ends with its last chunk

# panto's and the other providers' error types as Google's statuses, with their HTTP codes.
_STATUSES = {
    "rate_limit_error": ("RESOURCE_EXHAUSTED", 429),
    "overloaded_error": ("UNAVAILABLE", 503),
    "invalid_request_error": ("INVALID_ARGUMENT", 400),
    "authentication_error": ("UNAUTHENTICATED", 401),
    "permission_error": ("PERMISSION_DENIED", 403),
    "not_found_error": ("NOT_FOUND", 404),
    "api_error": ("INTERNAL", 500),
    "server_error": ("INTERNAL", 500),
}
_CODES = {status: code for status, code in _STATUSES.values()}

_FINISH = {"end_turn": "STOP", "tool_use": "STOP", "stop_sequence": "STOP",
           "max_tokens": "MAX_TOKENS", "content_filter": "SAFETY", "refusal": "SAFETY"}


def matches(path: str) -> bool:
    """Whether `path` is this API's streaming endpoint (the model is in the path)."""
    return PATH_PATTERN.match(path) is not None


def error_type_for(status: int) -> str:
    """The status this API gives for an HTTP status the emulator answers by itself."""
    for name, code in _CODES.items():
        if code == status:
            return name
    return "INVALID_ARGUMENT" if 400 <= status < 500 else "INTERNAL"


def _status(type_: str) -> tuple[str, int]:
    """A scripted error type (Google's own status, or another provider's type name)."""
    if type_ in _CODES:
        return type_, _CODES[type_]
    return _STATUSES.get(type_, (type_, 500))


# A key the API does not take: 400 INVALID_ARGUMENT, the reason in a google.rpc.ErrorInfo.
API_KEY_INVALID = "API_KEY_INVALID"


def _error(type_: str, message: str) -> dict[str, Any]:
    if type_ == API_KEY_INVALID:
        return {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT", "details": [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": API_KEY_INVALID,
             "domain": "googleapis.com", "metadata": {"service": "generativelanguage.googleapis.com"}}]}}
    status, code = _status(type_)
    return {"error": {"code": code, "message": message, "status": status}}


def error_body(type_: str, message: str, request_id: str, code: str | None = None,
               param: str | None = None) -> bytes:
    """The JSON body of a non-2xx answer: `{"error": {"code", "message", "status"}}`."""
    return _json(_error(type_, message))


def stream_error(type_: str, message: str, code: str | None = None) -> list[bytes]:
    """The error object as a chunk of the stream, which then ends."""
    return [_data(_error(type_, message))]


def check_request(headers: Mapping[str, str], body: Any, require_api_key: bool,
                  model: str = "") -> Rejection | None:
    """Refuses what the real API refuses, in the same order: credentials, then the body
    (`model`: the one the path names, whose generation may have rules of its own)."""
    if require_api_key and not headers.get("x-goog-api-key", "").strip():
        return Rejection(403, "PERMISSION_DENIED",
                         "Method doesn't allow unregistered callers (callers without "
                         "established identity). Please use API Key or other form of API "
                         "consumer identity to call this API.")
    if not isinstance(body, dict):
        return Rejection(400, "INVALID_ARGUMENT", "Invalid JSON payload received.")
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        return Rejection(400, "INVALID_ARGUMENT", "* GenerateContentRequest.contents: "
                         "contents is not specified")
    for i, content in enumerate(contents):
        if (not isinstance(content, dict) or content.get("role") not in ("user", "model")
                or not isinstance(content.get("parts"), list) or not content["parts"]):
            return Rejection(400, "INVALID_ARGUMENT",
                             f"* GenerateContentRequest.contents[{i}].parts: contents.parts "
                             "must not be empty.")
    for i, content in enumerate(contents[1:], 1):
        calls = _calls(contents[i - 1])
        responses = [p for p in content["parts"] if isinstance(p, dict) and "functionResponse" in p]
        if responses and len(responses) != len(calls):
            return Rejection(400, "INVALID_ARGUMENT",
                             "Please ensure that the number of function response parts is "
                             "equal to the number of function call parts of the function "
                             "call turn.")
    return _check_signatures(contents) if model.startswith("gemini-3") else None


def check_request_at(path: str, headers: Mapping[str, str], body: Any,
                     require_api_key: bool) -> Rejection | None:
    """check_request for a request to `path`, which names the model."""
    return check_request(headers, body, require_api_key, model=path.split("/")[-1].split(":")[0])


def _calls(content: Any) -> list[dict[str, Any]]:
    if not isinstance(content, dict) or content.get("role") != "model":
        return []
    return [p for p in content.get("parts", []) if isinstance(p, dict) and "functionCall" in p]


def _check_signatures(contents: list[Any]) -> Rejection | None:
    """Gemini 3: in the current turn (after the last user text), each model content's first
    function call must carry its thought signature."""
    start = 0
    for i, content in enumerate(contents):
        if content["role"] == "user" and any(isinstance(p, dict) and "text" in p
                                             for p in content["parts"]):
            start = i
    for i in range(start, len(contents)):
        calls = _calls(contents[i])
        if calls and not calls[0].get("thoughtSignature"):
            return Rejection(400, "INVALID_ARGUMENT",
                             f"Function call `{calls[0]['functionCall'].get('name', '')}` in "
                             f"the {i}. content block is missing a `thought_signature`.")
    return None


def render(message: dict[str, Any], call: Call) -> list[bytes]:
    """The SSE chunks of a scripted message, one bytes object per chunk."""
    base = {"modelVersion": message["model"] or DEFAULT_MODEL,
            "responseId": message["id"] or f"emu{call.number:04d}"}
    thought = any(b["type"] == "thinking" for b in message["content"])
    chunks: list[list[dict[str, Any]]] = []
    signed_call = False
    for index, block in enumerate(message["content"]):
        if block["type"] == "thinking":
            deltas = block["deltas"] or [block["thinking"]]
            parts = [{"text": d, "thought": True} for d in deltas]
            parts[-1]["thoughtSignature"] = block["signature"] or _made("thought", call, index)
            chunks += [[p] for p in parts]
        elif block["type"] == "text":
            chunks += [[{"text": d}] for d in block["deltas"]]
            if thought and index == len(message["content"]) - 1:
                chunks.append([{"text": "", "thoughtSignature": _made("text", call, index)}])
        elif block["type"] == "tool_use":
            part: dict[str, Any] = {"functionCall": {"name": block["name"],
                                                     "args": block["input"]}}
            if not signed_call:
                part["thoughtSignature"] = _made("call", call, index)
                signed_call = True
            chunks.append([part])
    stop = message["stop_reason"]
    candidates: list[dict[str, Any]] = [{"content": {"role": "model", "parts": parts}, "index": 0}
                                        for parts in chunks]
    last = {"index": 0, "finishReason": _FINISH.get(stop, "OTHER")}
    if candidates:
        candidates[-1].update(last)
    else:
        candidates.append(last)
    out: list[dict[str, Any]] = [dict(base, candidates=[c]) for c in candidates]
    out[-1]["usageMetadata"] = _usage(message["usage"])
    return [_data(c) for c in out]


def _made(kind: str, call: Call, index: int) -> str:
    """A signature the emulator makes, the same each time the scenario runs: base64, as the
    API's are (google-genai's types decode them)."""
    digest = hashlib.sha256(f"{kind}:{call.number}:{index}".encode()).digest()
    return base64.b64encode(digest[:18]).decode()


def _usage(u: dict[str, int]) -> dict[str, Any]:
    """promptTokenCount counts the cached tokens too; thoughts are apart from candidates."""
    prompt = u["input_tokens"] + u["cache_read_tokens"]
    thoughts = u["reasoning_tokens"]
    candidates = max(0, u["output_tokens"] - thoughts)
    usage = {"promptTokenCount": prompt, "candidatesTokenCount": candidates,
             "totalTokenCount": prompt + candidates + thoughts}
    if thoughts:
        usage["thoughtsTokenCount"] = thoughts
    if u["cache_read_tokens"]:
        usage["cachedContentTokenCount"] = u["cache_read_tokens"]
    return usage


def _data(data: Any) -> bytes:
    return b"data: " + _json(data) + b"\r\n\r\n"


def _json(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


