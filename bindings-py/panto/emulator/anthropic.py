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

from .call import Call, Rejection, bearer_key
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
    # The API takes the key as `x-api-key` or as `Authorization: Bearer` (which the official
    # SDK sends since 2.x).
    if require_api_key and not (headers.get("x-api-key") or bearer_key(headers)):
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
    problem = _cache_control_problem(body) or _output_config_problem(body.get("output_config"))
    if problem:
        return Rejection(400, "invalid_request_error", problem)
    return None


def _cache_control_problem(body: dict[str, Any]) -> str | None:
    """What the API says of the request's cache_control breakpoints: their form, at most 4,
    and no 1-hour one after a 5-minute one (in the order tools, system, messages)."""
    marks = [c["cache_control"] for c in _cacheable(body)
             if isinstance(c, dict) and "cache_control" in c]
    for mark in marks:
        if (not isinstance(mark, dict) or mark.get("type") != "ephemeral"
                or set(mark) - {"type", "ttl"} or mark.get("ttl", "5m") not in ("5m", "1h")):
            return f"cache_control: must be {{\"type\": \"ephemeral\", \"ttl\"?: \"5m\" | \"1h\"}}, not {json.dumps(mark)}"
    if len(marks) > 4:
        return f"A maximum of 4 blocks with cache_control may be provided. Found {len(marks)}."
    ttls = [m.get("ttl", "5m") for m in marks]
    if "5m" in ttls and "1h" in ttls[ttls.index("5m"):]:
        return ("a ttl='1h' cache_control block must not come after a ttl='5m' cache_control "
                "block. Note that blocks are processed in the following order: `tools`, "
                "`system`, `messages`.")
    return None


def _cacheable(body: dict[str, Any]) -> list[Any]:
    """Everything that may carry cache_control, in the order the API reads it."""
    out = list(_list(body.get("tools"))) + list(_list(body.get("system")))
    for message in _list(body.get("messages")):
        for block in _list(message.get("content") if isinstance(message, dict) else None):
            out.append(block)
            if isinstance(block, dict):
                out.extend(_list(block.get("content")))  # a tool_result's blocks
    return out


def _output_config_problem(config: Any) -> str | None:
    """output_config.format, when present, is {"type": "json_schema", "schema": object}."""
    if config is None:
        return None
    fmt = config.get("format") if isinstance(config, dict) else None
    if (not isinstance(fmt, dict) or fmt.get("type") != "json_schema"
            or not isinstance(fmt.get("schema"), dict) or set(fmt) - {"type", "schema"}):
        return ('output_config.format: must be {"type": "json_schema", "schema": {...}}, not '
                + json.dumps(fmt))
    return None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


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
    if message.get("in_message_start"):
        return _whole(message, call, msg_id, model)
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
    _add_server_tool_use(final_usage, usage)
    events.append(_event("message_delta", {
        "type": "message_delta",
        "delta": _final_delta(message),
        "usage": final_usage}))
    events.append(_event("message_stop", {"type": "message_stop"}))
    return events


def _whole(message: dict[str, Any], call: Call, msg_id: str, model: str) -> list[bytes]:
    """The message whole in message_start (its content, stop reason and usage), then
    message_stop, as some servers send it."""
    usage = message["usage"]
    final_usage: dict[str, Any] = {
        "input_tokens": usage["input_tokens"],
        "cache_creation_input_tokens": usage["cache_write_tokens"],
        "cache_read_input_tokens": usage["cache_read_tokens"],
        "output_tokens": usage["output_tokens"],
    }
    _add_server_tool_use(final_usage, usage)
    content = [_whole_block(block, call, index)
               for index, block in enumerate(message["content"])]
    return [_event("message_start", {
        "type": "message_start",
        "message": {
            "id": msg_id, "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": message["stop_reason"],
            "stop_sequence": message["stop_sequence"], "usage": final_usage,
            **({"container": message["container"]} if message.get("container") else {}),
        },
    }), _event("message_stop", {"type": "message_stop"})]


def _final_delta(message: dict[str, Any]) -> dict[str, Any]:
    """message_delta's delta: the stop reason, and the container code execution ran in."""
    delta: dict[str, Any] = {"stop_reason": message["stop_reason"],
                             "stop_sequence": message["stop_sequence"]}
    if message.get("container") is not None:
        delta["container"] = message["container"]
    return delta


def _add_server_tool_use(final_usage: dict[str, Any], usage: dict[str, Any]) -> None:
    """The server tools' requests, as the API reports them, when the scenario gives some."""
    if usage["web_search_requests"] or usage["web_fetch_requests"]:
        final_usage["server_tool_use"] = {"web_search_requests": usage["web_search_requests"],
                                          "web_fetch_requests": usage["web_fetch_requests"]}


def _whole_block(block: dict[str, Any], call: Call, index: int) -> dict[str, Any]:
    """The block as a finished message holds it."""
    if block["type"] == "text":
        if block.get("citations"):
            return {"type": "text", "text": block["text"], "citations": block["citations"]}
        return {"type": "text", "text": block["text"]}
    if block["type"] == "thinking":
        return {"type": "thinking", "thinking": block["thinking"],
                "signature": block["signature"]}
    if block["type"] == "server":
        server = dict(block["block"])
        for d in block["deltas"]:
            if isinstance(d, dict):  # a delta of its own type: its members set in the block
                server.update({k: v for k, v in d.items() if k != "type"})
        fragments = [d for d in block["deltas"] if isinstance(d, str)]
        if fragments:
            server["input"] = json.loads("".join(fragments))
        return server
    return {"type": "tool_use", "id": block["id"] or f"toolu_emu_{call.number:04d}_{index}",
            "name": block["name"], "input": block["input"]}


def _empty_block(block: dict[str, Any], call: Call, index: int) -> dict[str, Any]:
    """The block as content_block_start announces it, before any delta."""
    if block["type"] == "text":
        # A cited text starts with its list (empty: citations_delta fill it).
        if block.get("citations"):
            return {"type": "text", "text": "",
                    "citations": block["citations"] if block["citations_at_start"] else []}
        return {"type": "text", "text": ""}
    if block["type"] == "thinking":
        return {"type": "thinking", "thinking": "", "signature": ""}
    if block["type"] == "server":
        server: dict[str, Any] = block["block"]
        return server
    # `deltas: []`: the input given whole here, no input_json_delta following (as the API
    # sends programmatic tool calls); else `{}`, which the deltas fill.
    # `start_input`: an input given here that the deltas then stream anew.
    whole = block["deltas"] == []
    start = block.get("start_input")
    return {"type": "tool_use", "id": block["id"] or f"toolu_emu_{call.number:04d}_{index}",
            "name": block["name"],
            "input": start if start is not None else block["input"] if whole else {}}


def _deltas(block: dict[str, Any]) -> list[dict[str, Any]]:
    if block["type"] == "text":
        cited = [] if block.get("citations_at_start") else [
            {"type": "citations_delta", "citation": c} for c in block.get("citations", [])]
        return cited + [{"type": "text_delta", "text": t} for t in block["deltas"]]
    if block["type"] == "thinking":
        out = [{"type": "thinking_delta", "thinking": t} for t in block["deltas"]]
        if block["signature"]:
            out.append({"type": "signature_delta", "signature": block["signature"]})
        return out
    if block["type"] == "server":
        return [d if isinstance(d, dict) else {"type": "input_json_delta", "partial_json": d}
                for d in block["deltas"]]
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
