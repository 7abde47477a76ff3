"""The OpenAI Chat Completions API (POST /v1/chat/completions) in its streaming wire format.

Chunk shapes follow the recorded streams in tests/fixtures/recorded/openai: a role chunk,
content deltas, tool_calls deltas (the first one of a call carries id, type and name with
empty arguments), a chunk with the finish_reason, a usage chunk with `choices: []` when the
request asked for stream_options.include_usage (every chunk then carries `"usage": null`),
and `data: [DONE]`. Thinking blocks become `reasoning_content` deltas, as OpenAI-compatible
servers (DeepSeek, vLLM, ...) send them, or deltas under the block's `openai_keys`, with
OpenRouter's `reasoning_details` when it has `openai_details`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from .call import Call, Rejection, bearer_key
from .pieces import dump_json, split_fixed

NAME = "openai"
PATH = "/v1/chat/completions"
REQUEST_ID_HEADER = "x-request-id"
DEFAULT_MODEL = "gpt-emulator"
END = [b"data: [DONE]\n\n"]

# Anthropic's stop_reason vocabulary (the scenario's) mapped to finish_reason.
FINISH_REASON = {"end_turn": "stop", "max_tokens": "length", "tool_use": "tool_calls"}


def check_request(headers: Mapping[str, str], body: Any, require_api_key: bool
                  ) -> Rejection | None:
    """Refuses what the real API refuses, in the same order: credentials, then the body."""
    if require_api_key and not bearer_key(headers):
        # The real API says invalid_request_error here; panto's contract names the class
        # of failure, so the emulator uses the same type as Anthropic's.
        return Rejection(401, "authentication_error",
                         "You didn't provide an API key. You need to provide your API key in "
                         "an Authorization header using Bearer auth (i.e. Authorization: "
                         "Bearer YOUR_KEY).")
    if not isinstance(body, dict):
        return Rejection(400, "invalid_request_error",
                         "We could not parse the JSON body of your request. (HINT: This likely "
                         "means you aren't using your HTTP library correctly.)")
    if not isinstance(body.get("model"), str):
        return Rejection(400, "invalid_request_error", "you must provide a model parameter",
                         param="model")
    if not isinstance(body.get("messages"), list):
        return Rejection(400, "invalid_request_error",
                         "Missing required parameter: 'messages'.",
                         code="missing_required_parameter", param="messages")
    if body.get("stream") is not True:
        return Rejection(400, "invalid_request_error",
                         'emulator: only streaming is emulated; send "stream": true',
                         param="stream")
    problem = _response_format_problem(body.get("response_format"))
    if problem:
        return Rejection(400, "invalid_request_error", problem, param="response_format")
    if body.get("prompt_cache_retention", "in_memory") not in ("in_memory", "24h"):
        return Rejection(400, "invalid_request_error",
                         "prompt_cache_retention: must be 'in_memory' or '24h'",
                         param="prompt_cache_retention")
    return None


def _response_format_problem(fmt: Any) -> str | None:
    """response_format, when present: text, json_object, or json_schema with a name and an
    object schema (as the API refuses others)."""
    if fmt is None:
        return None
    kind = fmt.get("type") if isinstance(fmt, dict) else None
    if kind in ("text", "json_object"):
        return None if set(fmt) == {"type"} else f"response_format: unexpected keys for {kind}"
    if kind != "json_schema":
        return "response_format.type: must be 'text', 'json_object' or 'json_schema'"
    spec = fmt.get("json_schema")
    if (not isinstance(spec, dict) or not isinstance(spec.get("name"), str)
            or not isinstance(spec.get("schema", {}), dict)
            or not isinstance(spec.get("strict", False), bool)):
        return ("response_format.json_schema: must be {\"name\": string, \"schema\"?: object, "
                "\"strict\"?: bool}")
    if spec.get("strict") is True:
        broken = _strict_schema_problem(spec.get("schema", {}), ())
        if broken:
            return f"Invalid schema for response_format '{spec['name']}': {broken}"
    return None


# The keywords strict mode refuses (https://platform.openai.com/docs/guides/structured-outputs,
# "Supported schemas"), and oneOf, which it takes as anyOf; Pydantic's discriminator.
_STRICT_REFUSED = ("allOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas",
                   "patternProperties", "propertyNames", "unevaluatedProperties", "unevaluatedItems",
                   "contains", "prefixItems", "uniqueItems", "minProperties", "maxProperties",
                   "minContains", "maxContains", "oneOf", "discriminator")


def _strict_schema_problem(schema: Any, path: tuple[str, ...]) -> str | None:
    """What OpenAI says of a schema strict mode cannot take (the rules the library's
    strict_schema.zig checks before it sends strict: true; a subset of the API's): every
    object closed and requiring all its properties, no empty schema, no keyword beside a
    "$ref", none of the keywords it refuses (provider_schema.zig and strict_schema.zig)."""
    where = f"In context=({', '.join(repr(p) for p in path)})"
    if not isinstance(schema, dict) or not schema:
        return f"{where}, schema must be a non-empty JSON Schema object."
    if "$ref" in schema and len(schema) > 1:
        return f"{where}, '$ref' cannot have keywords beside it: {sorted(set(schema) - {'$ref'})}."
    for keyword in _STRICT_REFUSED:
        if keyword in schema:
            return f"{where}, '{keyword}' is not permitted."
    props = schema.get("properties", {})
    if schema.get("type") == "object" or props:
        if schema.get("additionalProperties") is not False:
            return f"{where}, 'additionalProperties' is required to be supplied and to be false."
        missing = [k for k in props if k not in schema.get("required", [])]
        if missing:
            return (f"{where}, 'required' is required to be supplied and to be an array including "
                    f"every key in properties. Missing '{missing[0]}'.")
    subs: list[tuple[tuple[str, ...], Any]] = [(("properties", k), v) for k, v in props.items()]
    subs += [(("items",), schema["items"])] if "items" in schema else []
    subs += [(("anyOf", str(i)), v) for i, v in enumerate(schema.get("anyOf", []))]
    for key in ("$defs", "definitions"):
        subs += [((key, k), v) for k, v in schema.get(key, {}).items()]
    for rel, sub in subs:
        problem = _strict_schema_problem(sub, path + rel)
        if problem:
            return problem
    return None


def error_type_for(status: int) -> str:
    """The error type this API uses for an HTTP status the emulator answers by itself."""
    if status == 401:
        return "authentication_error"
    return "invalid_request_error" if 400 <= status < 500 else "server_error"


def error_body(type_: str, message: str, request_id: str, code: str | None = None,
               param: str | None = None) -> bytes:
    """The JSON body of a non-2xx answer. (The request id travels in x-request-id only.)"""
    return _json({"error": {"message": message, "type": type_, "param": param,
                            "code": code}})


def stream_error(type_: str, message: str, code: str | None = None) -> list[bytes]:
    """The mid-stream error chunk, followed by [DONE] as the live API does."""
    error = {"error": {"message": message, "type": type_, "param": None, "code": code}}
    return [_data(error)] + END


def render(message: dict[str, Any], call: Call) -> list[bytes]:
    """The SSE events of a scripted message, one bytes object per chunk, without [DONE]."""
    include_usage = _include_usage(call.request)
    base: dict[str, Any] = {
        "id": message["id"] or f"chatcmpl-emu{call.number:04d}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": message["model"] or call.request.get("model") or DEFAULT_MODEL,
        "system_fingerprint": "fp_emulator",
    }

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        c = dict(base, choices=[{"index": 0, "delta": delta, "logprobs": None,
                                 "finish_reason": finish_reason}])
        if include_usage:
            c["usage"] = None
        return _data(c)

    blocks = message["content"]
    starts_with_words = bool(blocks) and blocks[0]["type"] != "tool_use"
    events = [chunk({"role": "assistant", "content": "" if starts_with_words else None,
                     "refusal": None})]
    tool_index = 0
    for position, block in enumerate(blocks):
        if block["type"] == "text":
            events.extend(chunk({"content": t}) for t in block["deltas"])
        elif block["type"] == "thinking":
            events.extend(chunk(_thinking_delta(block, i))
                          for i in range(max(len(block["deltas"]), len(block["openai_details"]))))
        elif block["type"] == "server":
            continue  # Anthropic's alone: Chat Completions has no such block
        else:
            events.extend(chunk({"tool_calls": [call_delta]})
                          for call_delta in _tool_call_deltas(block, call, tool_index,
                                                              position))
            # Ollama gives every call index 0 (each its own id).
            tool_index += 0 if message.get("tool_index_reused") else 1
    stop = message["stop_reason"]
    events.append(chunk({}, FINISH_REASON.get(stop, stop)))
    if include_usage:
        events.append(_data(dict(base, choices=[], usage=_usage(
            message["usage"], bool(message.get("reasoning_apart"))))))
    return events


def _thinking_delta(block: dict[str, Any], i: int) -> dict[str, Any]:
    """Piece i of a thinking block under each of its names, with OpenRouter's reasoning_details
    of the same place when the block has them."""
    delta: dict[str, Any] = {}
    if i < len(block["deltas"]):
        delta = {key: block["deltas"][i] for key in block["openai_keys"]}
    if i < len(block["openai_details"]):
        delta["reasoning_details"] = block["openai_details"][i]
    return delta


def _tool_call_deltas(block: dict[str, Any], call: Call, tool_index: int,
                      position: int) -> list[dict[str, Any]]:
    """The first delta names the call; the others carry slices of its arguments."""
    fragments = block["deltas"]
    whole = ""
    if fragments is None:
        fragments = split_fixed(dump_json(block["input"], compact=True))
    elif fragments == [] and block["input"]:
        whole = dump_json(block["input"], compact=True)  # the arguments whole, with the name
    first = {"index": tool_index,
             "id": block["id"] or f"call_emu_{call.number:04d}_{position}",
             "type": "function", "function": {"name": block["name"], "arguments": whole}}
    return [first] + [{"index": tool_index, "function": {"arguments": f}}
                      for f in fragments if f]


def _usage(u: dict[str, int], reasoning_apart: bool = False) -> dict[str, Any]:
    """Chat Completions counts cached tokens inside prompt_tokens (and has no field for
    cache writes). `reasoning_apart`: completion_tokens leaves the reasoning tokens out, and
    total_tokens counts them apart, as xAI reports."""
    prompt = u["input_tokens"] + u["cache_read_tokens"]
    completion = u["output_tokens"] - (u["reasoning_tokens"] if reasoning_apart else 0)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + u["output_tokens"],
        "prompt_tokens_details": {"cached_tokens": u["cache_read_tokens"], "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": u["reasoning_tokens"],
                                      "audio_tokens": 0, "accepted_prediction_tokens": 0,
                                      "rejected_prediction_tokens": 0},
    }


def _include_usage(request: dict[str, Any]) -> bool:
    options = request.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


def _data(data: Any) -> bytes:
    return b"data: " + _json(data) + b"\n\n"


def _json(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
