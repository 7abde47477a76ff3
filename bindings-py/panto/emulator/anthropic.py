"""The Anthropic Messages API (POST /v1/messages) in its streaming wire format.

Event order and field names follow the recorded streams in tests/fixtures/recorded/anthropic:
message_start, then per block content_block_start / content_block_delta... /
content_block_stop (with one ping after the first block starts), then message_delta
(stop_reason and the final usage) and message_stop. Data lines are compact JSON, except
ping, whose `{"type": "ping"}` comes from a different serializer upstream.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .call import Call, Rejection
from .pieces import dump_json, split_fixed

NAME = "anthropic"
PATH = "/v1/messages"
REQUEST_ID_HEADER = "request-id"
DEFAULT_MODEL = "claude-emulator"
END: list[bytes] = []  # the stream simply ends after message_stop

_PING = b'event: ping\ndata: {"type": "ping"}\n\n'


def check_request(headers: Mapping[str, str], body: Any, require_api_key: bool
                  ) -> Rejection | None:
    """Refuses what the real API refuses, in the same order: credentials, then the body."""
    if require_api_key and not headers.get("x-api-key"):
        return Rejection(401, "authentication_error", "x-api-key header is required")
    if not headers.get("anthropic-version"):
        return Rejection(400, "invalid_request_error", "anthropic-version: header is required")
    if not isinstance(body, dict):
        return Rejection(400, "invalid_request_error",
                         "There was an error parsing the body of your request: not a JSON object")
    for key, ok in (("model", isinstance(body.get("model"), str)),
                    ("max_tokens", isinstance(body.get("max_tokens"), int)),
                    ("messages", isinstance(body.get("messages"), list))):
        if key not in body:
            return Rejection(400, "invalid_request_error", f"{key}: Field required")
        if not ok:
            return Rejection(400, "invalid_request_error", f"{key}: Input has the wrong type")
    if body.get("stream") is not True:
        return Rejection(400, "invalid_request_error",
                         'emulator: only streaming is emulated; send "stream": true')
    return None


def error_type_for(status: int) -> str:
    """The error type this API uses for an HTTP status the emulator answers by itself."""
    return {400: "invalid_request_error", 401: "authentication_error",
            403: "permission_error", 404: "not_found_error",
            405: "invalid_request_error", 529: "overloaded_error"}.get(status, "api_error")


def error_body(type_: str, message: str, request_id: str, code: str | None = None,
               param: str | None = None) -> bytes:
    """The JSON body of a non-2xx answer. (`code` and `param` are OpenAI's; unused here.)"""
    return _json({"type": "error", "error": {"type": type_, "message": message},
                  "request_id": request_id})


def stream_error(type_: str, message: str, code: str | None = None) -> list[bytes]:
    """The mid-stream error event; the stream ends right after it."""
    return [_event("error", {"type": "error", "error": {"type": type_, "message": message}})]


def render(message: dict[str, Any], call: Call) -> list[bytes]:
    """The SSE events of a scripted message, one bytes object per event."""
    usage = message["usage"]
    msg_id = message["id"] or f"msg_emu_{call.number:04d}"
    model = message["model"] or call.request.get("model") or DEFAULT_MODEL
    events = [_event("message_start", {
        "type": "message_start",
        "message": {
            "id": msg_id, "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {
                "input_tokens": usage["input_tokens"],
                "cache_creation_input_tokens": usage["cache_write_tokens"],
                "cache_read_input_tokens": usage["cache_read_tokens"],
                # Real streams report a first token or so here; the total comes later.
                "output_tokens": min(1, usage["output_tokens"]),
            },
        },
    })]
    if not message["content"]:
        events.append(_PING)
    for index, block in enumerate(message["content"]):
        events.append(_event("content_block_start", {
            "type": "content_block_start", "index": index,
            "content_block": _empty_block(block, call, index)}))
        if index == 0:
            events.append(_PING)
        events.extend(_event("content_block_delta", {
            "type": "content_block_delta", "index": index, "delta": delta})
            for delta in _deltas(block))
        events.append(_event("content_block_stop",
                             {"type": "content_block_stop", "index": index}))

    final_usage: dict[str, Any] = {
        "input_tokens": usage["input_tokens"],
        "cache_creation_input_tokens": usage["cache_write_tokens"],
        "cache_read_input_tokens": usage["cache_read_tokens"],
        "output_tokens": usage["output_tokens"],
    }
    if usage["reasoning_tokens"]:
        final_usage["output_tokens_details"] = {"thinking_tokens": usage["reasoning_tokens"]}
    events.append(_event("message_delta", {
        "type": "message_delta",
        "delta": {"stop_reason": message["stop_reason"],
                  "stop_sequence": message["stop_sequence"]},
        "usage": final_usage}))
    events.append(_event("message_stop", {"type": "message_stop"}))
    return events


def _empty_block(block: dict[str, Any], call: Call, index: int) -> dict[str, Any]:
    """The block as content_block_start announces it, before any delta."""
    if block["type"] == "text":
        return {"type": "text", "text": ""}
    if block["type"] == "thinking":
        return {"type": "thinking", "thinking": "", "signature": ""}
    return {"type": "tool_use", "id": block["id"] or f"toolu_emu_{call.number:04d}_{index}",
            "name": block["name"], "input": {}}


def _deltas(block: dict[str, Any]) -> list[dict[str, Any]]:
    if block["type"] == "text":
        return [{"type": "text_delta", "text": t} for t in block["deltas"]]
    if block["type"] == "thinking":
        out = [{"type": "thinking_delta", "thinking": t} for t in block["deltas"]]
        if block["signature"]:
            out.append({"type": "signature_delta", "signature": block["signature"]})
        return out
    fragments = block["deltas"]
    if fragments is None:
        # Like the real API: an empty first fragment, then slices of the JSON; a tool
        # without arguments gets the empty fragment only.
        text = "" if block["input"] == {} else dump_json(block["input"], compact=False)
        fragments = [""] + split_fixed(text)
    return [{"type": "input_json_delta", "partial_json": f} for f in fragments]


def _event(name: str, data: dict[str, Any]) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + _json(data) + b"\n\n"


def _json(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
