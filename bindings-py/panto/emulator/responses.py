"""The OpenAI Responses API (POST /v1/responses) in its streaming wire format.

Each scenario block is one output item, numbered by `output_index`: a thinking block a
`reasoning` item (its deltas as `reasoning_summary_text.delta`, its signature, or one the
emulator makes, as the item's `encrypted_content` in `output_item.done` only: `.added`
carries none), a text block a `message` item, a tool_use block a `function_call` item.
Every event is `event: TYPE` and `data: JSON` with a `sequence_number`, after
`response.created` and `response.in_progress`; the stream ends with `response.completed`,
or `response.incomplete` (`max_output_tokens`) for a max_tokens stop. A message whose stop
reason is `refusal` has its text as a `refusal` part (`response.refusal.delta`/`.done`). A
scripted stream error is an `error` event, as the API sends one before `response.failed`.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from typing import Any

from . import openai
from .call import Call, Rejection, bearer_key
from .pieces import dump_json, split_fixed

NAME = "openai-responses"
PATH = "/v1/responses"
REQUEST_ID_HEADER = "x-request-id"
DEFAULT_MODEL = "gpt-emulator"
END: list[bytes] = []  # the stream ends after response.completed

error_type_for = openai.error_type_for
error_body = openai.error_body


def check_request(headers: Mapping[str, str], body: Any, require_api_key: bool
                  ) -> Rejection | None:
    """Refuses what the real API refuses, in the same order: credentials, then the body."""
    if require_api_key and not bearer_key(headers):
        return Rejection(401, "authentication_error",
                         "You didn't provide an API key. You need to provide your API key in "
                         "an Authorization header using Bearer auth (i.e. Authorization: "
                         "Bearer YOUR_KEY).")
    if not isinstance(body, dict):
        return Rejection(400, "invalid_request_error",
                         "We could not parse the JSON body of your request.")
    if not isinstance(body.get("model"), str):
        return Rejection(400, "invalid_request_error", "Missing required parameter: 'model'.",
                         param="model")
    items = body.get("input")
    if not isinstance(items, (list, str)):
        return Rejection(400, "invalid_request_error", "Missing required parameter: 'input'.",
                         param="input")
    if body.get("stream") is not True:
        return Rejection(400, "invalid_request_error",
                         'emulator: only streaming is emulated; send "stream": true',
                         param="stream")
    for i, item in enumerate(items if isinstance(items, list) else []):
        # Without storage a reasoning item means nothing without its encrypted content.
        if (isinstance(item, dict) and item.get("type") == "reasoning"
                and body.get("store") is False and not item.get("encrypted_content")):
            return Rejection(404, "invalid_request_error",
                             f"Item with id '{item.get('id', '')}' not found. Items are not "
                             "persisted when `store` is set to false.",
                             param=f"input[{i}]")
    return None


def stream_error(type_: str, message: str, code: str | None = None) -> list[bytes]:
    """The mid-stream `error` event (its code the scripted code, else the type)."""
    return [_event("error", {"type": "error", "code": code or type_, "message": message,
                             "param": None, "sequence_number": 0})]


def render(message: dict[str, Any], call: Call) -> list[bytes]:
    """The SSE events of a scripted message, one bytes object per event."""
    model = message["model"] or call.request.get("model") or DEFAULT_MODEL
    response: dict[str, Any] = {
        "id": message["id"] or f"resp_emu{call.number:04d}",
        "object": "response", "created_at": int(time.time()), "status": "in_progress",
        "model": model, "output": [], "usage": None, "error": None,
        "incomplete_details": None,
    }
    events = [("response.created", {"response": response}),
              ("response.in_progress", {"response": response})]
    output: list[dict[str, Any]] = []
    for block in message["content"]:
        if block["type"] == "server":
            continue  # Anthropic's alone
        index = len(output)
        if block["type"] == "thinking":
            item, item_events = _reasoning(block, call, index)
        elif block["type"] == "text":
            item, item_events = _message(block, call, index, message["stop_reason"] == "refusal")
        else:
            item, item_events = _function_call(block, call, index)
        events += item_events
        output.append(item)
    stop = message["stop_reason"]
    done = dict(response, output=output, usage=_usage(message["usage"]))
    if stop == "max_tokens":
        events.append(("response.incomplete", {"response": dict(
            done, status="incomplete", incomplete_details={"reason": "max_output_tokens"})}))
    else:
        events.append(("response.completed", {"response": dict(done, status="completed")}))
    return [_event(kind, dict({"type": kind, "sequence_number": n}, **data))
            for n, (kind, data) in enumerate(events)]


Events = list[tuple[str, dict[str, Any]]]


def _reasoning(block: dict[str, Any], call: Call, index: int) -> tuple[dict[str, Any], Events]:
    item_id = f"rs_emu{call.number:04d}_{index}"
    text = block["thinking"]
    encrypted = block["signature"] or "enc_" + hashlib.sha256(
        f"{call.number}:{index}:{text}".encode()).hexdigest()[:32]
    done = {"id": item_id, "type": "reasoning", "encrypted_content": encrypted,
            "summary": [{"type": "summary_text", "text": text}] if text else []}
    events: Events = [("response.output_item.added", {
        "output_index": index, "item": {"id": item_id, "type": "reasoning", "summary": []}})]
    if text:
        at = {"item_id": item_id, "output_index": index, "summary_index": 0}
        events.append(("response.reasoning_summary_part.added",
                       dict(at, part={"type": "summary_text", "text": ""})))
        events += [("response.reasoning_summary_text.delta", dict(at, delta=d))
                   for d in block["deltas"]]
        events.append(("response.reasoning_summary_text.done", dict(at, text=text)))
        events.append(("response.reasoning_summary_part.done",
                       dict(at, part={"type": "summary_text", "text": text})))
    events.append(("response.output_item.done", {"output_index": index, "item": done}))
    return done, events


def _message(block: dict[str, Any], call: Call, index: int, refusal: bool = False
             ) -> tuple[dict[str, Any], Events]:
    item_id = f"msg_emu{call.number:04d}_{index}"
    text = block["text"]
    if refusal:
        part: dict[str, Any] = {"type": "refusal", "refusal": text}
    else:
        part = {"type": "output_text", "text": text, "annotations": []}
    done = {"id": item_id, "type": "message", "status": "completed", "role": "assistant",
            "content": [part]}
    at = {"item_id": item_id, "output_index": index, "content_index": 0}
    events: Events = [
        ("response.output_item.added", {"output_index": index, "item": dict(
            done, status="in_progress", content=[])}),
        ("response.content_part.added", dict(at, part=dict(
            part, **({"refusal": ""} if refusal else {"text": ""})))),
    ]
    if refusal:
        events += [("response.refusal.delta", dict(at, delta=d)) for d in block["deltas"]]
        events.append(("response.refusal.done", dict(at, refusal=text)))
    else:
        events += [("response.output_text.delta", dict(at, delta=d, logprobs=[]))
                   for d in block["deltas"]]
        events.append(("response.output_text.done", dict(at, text=text, logprobs=[])))
    events += [("response.content_part.done", dict(at, part=part)),
               ("response.output_item.done", {"output_index": index, "item": done})]
    return done, events


def _function_call(block: dict[str, Any], call: Call, index: int
                   ) -> tuple[dict[str, Any], Events]:
    item_id = f"fc_emu{call.number:04d}_{index}"
    fragments = block["deltas"]
    if fragments is None:
        fragments = split_fixed(dump_json(block["input"], compact=True))
    arguments = "".join(fragments)
    done = {"id": item_id, "type": "function_call", "status": "completed",
            "arguments": arguments, "name": block["name"],
            "call_id": block["id"] or f"call_emu_{call.number:04d}_{index}"}
    at = {"item_id": item_id, "output_index": index}
    events: Events = [("response.output_item.added", {"output_index": index, "item": dict(
        done, status="in_progress", arguments="")})]
    events += [("response.function_call_arguments.delta", dict(at, delta=f))
               for f in fragments if f]
    events += [("response.function_call_arguments.done", dict(at, arguments=arguments)),
               ("response.output_item.done", {"output_index": index, "item": done})]
    return done, events


def _usage(u: dict[str, int]) -> dict[str, Any]:
    """input_tokens counts the cached tokens too (and there is no field for cache writes)."""
    prompt = u["input_tokens"] + u["cache_read_tokens"]
    return {"input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": u["cache_read_tokens"]},
            "output_tokens": u["output_tokens"],
            "output_tokens_details": {"reasoning_tokens": u["reasoning_tokens"]},
            "total_tokens": prompt + u["output_tokens"]}


def _event(kind: str, data: Any) -> bytes:
    return (b"event: " + kind.encode() + b"\ndata: "
            + json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode() + b"\n\n")
