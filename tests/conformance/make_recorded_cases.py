#!/usr/bin/env python3
"""Generates the recorded_* conformance cases from the recorded provider streams.

    .venv/bin/python tests/conformance/make_recorded_cases.py          # (re)write the cases
    .venv/bin/python tests/conformance/make_recorded_cases.py --check  # fail if out of date

For each transcript in RECORDED and each chunk size in CHUNK_SIZES it writes the case folder
cases/recorded_<NAME>_chunk<N>/: a case.json that replays tests/fixtures/recorded/<provider>/
<NAME>.sse byte for byte, in network chunks of N bytes, and the expected.jsonl every driver
must print.

Where the expected transcript comes from:
  - message id, model, stop reason, usage, each block's full text (text, thinking and its
    signature) and each tool call's id, name and input: from
    tests/fixtures/recorded/expected/<NAME>.expected.json, the independently derived result;
  - the content deltas, one per non-empty fragment (text, thinking, or the raw tool-input
    JSON fragments): from the .sse, parsed here with a small reference SSE parser (WHATWG
    rules);
  - the two are cross-checked: the fragments must join to exactly the expected.json text or
    raw arguments, and the id, model, block order and tool ids / names in the stream must
    match it.

A transcript whose message asks for tools is followed by a second, scripted response (a short
text answer), so the case shows the whole loop: the case declares a host tool per tool name of
the recording (behavior `return_input`), and the expected transcript continues with a
tool_call_start and a tool_result per call, then the second message. `expect_requests` checks
that the first request offers those tools and that the second one carries the assistant
message (its blocks, tool ids and inputs) and the results, in each provider's shape.

A transcript that ends in an error event (Anthropic `event: error`, an OpenAI `{"error": ...}`
chunk) gives the transcript up to the last delta before it (the open block gets no
block_complete, there is no message_end), then the error line: http_status 0, the event's type
and message, and the code that type means (panto.h: overloaded_error is `overloaded`, any other
error event `server`). Deltas were delivered, so panto does not retry it (retries are on by
default); a VARIANTS entry runs the same recording again with other config (retries off).

OpenAI specifics: only choice 0 is read — the chunks of other choices (a request with n > 1)
are ignored, and the usage is the usage chunk's, which covers all the choices; a refusal
(`delta.refusal`) streams as the text block and the stop reason is `refusal` (the provider
stop reason stays the raw finish_reason, e.g. `stop`). Anthropic `redacted_thinking` blocks
arrive whole in content_block_start: block_start, then block_complete with the `data`.

The script supports only what these transcripts contain (text, thinking, redacted thinking and
tool-use blocks, blocks that do not interleave); it raises on anything else rather than guess.
Python 3.11 standard library only.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from dataclasses import dataclass, field
from typing import Any, Iterator

from case_files import sync

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
RECORDED_DIR = REPO / "tests" / "fixtures" / "recorded"
CASES_DIR = HERE / "cases"

RECORDED = [
    ("anthropic", "text_basic"),
    ("anthropic", "text_ping_between_deltas"),
    ("openai", "text_with_usage"),
    ("openai", "text_with_usage_2024"),
    ("anthropic", "tool_use_text_then_tool"),
    ("anthropic", "parallel_tool_use"),
    ("anthropic", "thinking_then_tool_no_args"),
    ("openai", "tool_call"),
    ("openai", "parallel_tool_calls"),
    ("openai", "parallel_tool_calls_empty_args"),
    ("anthropic", "thinking"),
    ("anthropic", "redacted_thinking"),
    ("anthropic", "error_overloaded_midstream"),
    ("openai", "refusal"),
    ("openai", "finish_length"),
    ("openai", "multiple_choices_n3"),
    ("openai", "error_midstream"),
]
CHUNK_SIZES = [1, 7, 37]

# More cases of one recording: (case-name suffix, config keys added, what the variant shows).
VARIANTS: dict[str, list[tuple[str, dict[str, Any], str]]] = {
    "error_overloaded_midstream": [
        ("", {}, "retries on (the default): deltas were delivered, so the error is not retried"),
        ("_no_retry", {"retry": {"max_retries": 0}}, "retries off: the same error"),
    ],
}

# The status code a mid-stream error event of a type means (include/panto.h).
EVENT_ERROR_CODE = {"overloaded_error": "overloaded", "api_error": "server",
                    "server_error": "server"}

ANTHROPIC_STOP = {
    "end_turn": "end_turn", "max_tokens": "max_tokens", "stop_sequence": "stop_sequence",
    "tool_use": "tool_use", "refusal": "refusal", "pause_turn": "pause_turn",
}
OPENAI_STOP = {
    "stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use",
    "function_call": "tool_use", "content_filter": "content_filter",
}
ENDPOINT = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions"}


class CaseError(Exception):
    pass


# ---- A reference SSE parser (https://html.spec.whatwg.org/multipage/server-sent-events.html) --


def sse_events(raw: bytes) -> Iterator[tuple[str, str]]:
    """Yields (event type, data) for each dispatched event of an SSE body."""
    text = raw.decode("utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    event, data = "", []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line == "":
            if data:
                yield (event or "message", "\n".join(data))
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
        # id, retry and unknown fields do not matter here.
    # An event not followed by a blank line is not dispatched (end of stream).


# ---- Deriving the transcript -------------------------------------------------------------


@dataclass
class Block:
    kind: str  # "text", "thinking", "redacted_thinking" or "tool_call", as panto names them
    fragments: list[str] = field(default_factory=list)  # every fragment, "" included
    signature: str = ""  # thinking
    id: str = ""  # tool_call
    name: str = ""  # tool_call
    data: str = ""  # redacted_thinking: the opaque data (no fragments)
    complete: bool = True  # False: the stream failed before the block's end

    @property
    def raw(self) -> str:
        return "".join(self.fragments)

    @property
    def complete_text(self) -> str:
        """The text of block_complete: the whole text, or the input JSON text ({} if none)."""
        if self.kind == "tool_call":
            return self.raw or "{}"
        if self.kind == "redacted_thinking":
            return self.data
        return self.raw

    @property
    def input(self) -> Any:
        return json.loads(self.complete_text)


@dataclass
class Message:
    id: str
    model: str
    blocks: list[Block]
    stop_reason: str  # panto's name
    provider_stop_reason: str
    usage: dict[str, int]
    error: dict[str, Any] | None = None  # the error event that ended the stream, if any

    @property
    def calls(self) -> list[Block]:
        return [b for b in self.blocks if b.kind == "tool_call"]


def usage_line(input_tokens: int, output_tokens: int, cache_read: int, cache_write: int,
               reasoning: int) -> dict[str, int]:
    return {"input_tokens": input_tokens, "output_tokens": output_tokens,
            "cache_read_tokens": cache_read, "cache_write_tokens": cache_write,
            "reasoning_tokens": reasoning}


def anthropic_message(raw: bytes, expected: dict[str, Any]) -> Message:
    msg = expected["message"]
    want_error = expected.get("error")
    if (want_error is None) != bool(expected.get("stream_complete")):
        raise CaseError("only complete streams, or streams ended by an error event, are supported")
    error = None

    blocks: dict[int, Block] = {}
    order: list[int] = []
    open_index = None
    stream_id = stream_model = None
    for event, data in sse_events(raw):
        if error is not None:
            raise CaseError("an event after the error event")
        obj = json.loads(data)
        if obj.get("type") != event:
            raise CaseError(f"event {event!r} carries type {obj.get('type')!r}")
        if event == "error":
            error = obj["error"]
            if open_index is not None:
                blocks[open_index].complete = False
        elif event == "message_start":
            stream_id, stream_model = obj["message"]["id"], obj["message"]["model"]
        elif event == "content_block_start":
            if open_index is not None:
                raise CaseError("blocks interleave")
            cb = obj["content_block"]
            if cb["type"] == "text" and cb["text"] == "":
                block = Block("text")
            elif cb["type"] == "thinking" and cb["thinking"] == "" and cb.get("signature", "") == "":
                block = Block("thinking")
            elif cb["type"] == "tool_use" and cb.get("input") == {}:
                block = Block("tool_call", id=cb["id"], name=cb["name"])
            elif cb["type"] == "redacted_thinking" and isinstance(cb.get("data"), str):
                block = Block("redacted_thinking", data=cb["data"])
            else:
                raise CaseError(f"unsupported content_block_start {cb!r}")
            open_index = obj["index"]
            blocks[open_index] = block
            order.append(open_index)
        elif event == "content_block_delta":
            if obj["index"] != open_index:
                raise CaseError("a delta for a block that is not open")
            block, delta = blocks[open_index], obj["delta"]
            kind = {"text": "text_delta", "thinking": "thinking_delta",
                    "tool_call": "input_json_delta"}.get(block.kind)
            key = {"text_delta": "text", "thinking_delta": "thinking",
                   "input_json_delta": "partial_json"}.get(delta["type"])
            if block.kind == "thinking" and delta["type"] == "signature_delta":
                block.signature += delta["signature"]
            elif delta["type"] == kind:
                block.fragments.append(delta[key])
            else:
                raise CaseError(f"unsupported delta {delta!r} in a {block.kind} block")
        elif event == "content_block_stop":
            if obj["index"] != open_index:
                raise CaseError("content_block_stop for a block that is not open")
            open_index = None
        elif event not in ("ping", "message_delta", "message_stop"):
            raise CaseError(f"unsupported event {event!r}")
    if (stream_id, stream_model) != (msg["id"], msg["model"]):
        raise CaseError("the stream's id/model differ from expected.json")
    if order != list(range(len(order))):
        raise CaseError(f"block indexes {order} are not 0, 1, ...")

    want = msg["content"]
    if len(order) != len(want):
        raise CaseError("block count differs from expected.json")
    for i, w in enumerate(want):
        b = blocks[i]
        if w["type"] == "text" and b.kind == "text":
            ok = b.raw == w["text"]
        elif w["type"] == "thinking" and b.kind == "thinking":
            ok = b.raw == w["thinking"] and b.signature == w["signature"]
        elif w["type"] == "tool_use" and b.kind == "tool_call":
            ok = ((b.id, b.name, b.raw) == (w["id"], w["name"], w["raw_arguments_json"])
                  and b.input == w["input"])
        elif w["type"] == "redacted_thinking" and b.kind == "redacted_thinking":
            ok = b.data == w["data"] and not b.fragments
        else:
            ok = False
        if not ok:
            raise CaseError(f"block {i}: the stream differs from expected.json")
    if want_error is not None:
        if error is None or (error["type"], error["message"]) != (want_error["type"],
                                                                  want_error["message"]):
            raise CaseError("the stream's error event differs from expected.json")
        if msg["stop_reason"] is not None:
            raise CaseError("a stream ended by an error has no stop reason")
        return Message(msg["id"], msg["model"], [blocks[i] for i in order], "", "",
                       usage_line(0, 0, 0, 0, 0), error)

    u = expected["usage"]
    details = ((expected.get("raw_usage") or {}).get("message_delta") or {}).get(
        "output_tokens_details") or {}
    return Message(
        msg["id"], msg["model"], [blocks[i] for i in order],
        ANTHROPIC_STOP.get(msg["stop_reason"], "other"), msg["stop_reason"],
        # Anthropic's input_tokens already excludes the cache; thinking tokens (part of
        # output_tokens) are reported in output_tokens_details.thinking_tokens.
        usage_line(u["input_tokens"], u["output_tokens"], u.get("cache_read_input_tokens") or 0,
                   u.get("cache_creation_input_tokens") or 0,
                   details.get("thinking_tokens") or 0))


def openai_message(raw: bytes, expected: dict[str, Any]) -> Message:
    if not expected.get("done_sentinel_seen"):
        raise CaseError("only streams that end with [DONE] are supported")
    want_error = expected.get("error")
    error = None
    # Only choice 0 counts: panto ignores the other choices of a request with n > 1.
    choice = next(c for c in expected["choices"] if c["index"] == 0)
    refusal = choice.get("refusal")

    # Blocks in order of appearance: the text block at the first non-empty content, a
    # tool_call block at the first delta of each tool_calls index.
    blocks: list[Block] = []
    by_call_index: dict[int, Block] = {}
    first_chunk = None
    done = False
    for _event, data in sse_events(raw):
        if done:
            raise CaseError("data after [DONE]")
        if data == "[DONE]":
            done = True
            continue
        if error is not None:
            raise CaseError("a chunk after the error")
        obj = json.loads(data)
        if "error" in obj:
            error = obj["error"]
            if blocks:
                blocks[-1].complete = False
            continue
        if first_chunk is None:
            first_chunk = obj
        for c in obj.get("choices", []):
            if c["index"] != 0:
                continue
            delta = c.get("delta", {})
            if delta.get("reasoning_content"):
                raise CaseError("reasoning_content is not supported")
            content = delta.get("content")
            if delta.get("refusal"):  # a refusal streams as the text block
                if content:
                    raise CaseError("content and refusal in one delta")
                content = delta["refusal"]
            if content:  # "" and null produce no delta
                if not blocks:
                    blocks.append(Block("text"))
                elif blocks[-1].kind != "text":
                    raise CaseError("text after a tool call")
                blocks[-1].fragments.append(content)
            for tc in delta.get("tool_calls") or []:
                block = by_call_index.get(tc["index"])
                if block is None:
                    block = Block("tool_call", id=tc["id"], name=tc["function"]["name"])
                    by_call_index[tc["index"]] = block
                    blocks.append(block)
                elif block is not blocks[-1]:
                    raise CaseError("tool calls interleave")
                args = (tc.get("function") or {}).get("arguments")
                if args is not None:
                    block.fragments.append(args)
    if first_chunk is None or not done:
        raise CaseError("no chunk or no [DONE]")
    if (first_chunk["id"], first_chunk["model"]) != (expected["id"], expected["model"]):
        raise CaseError("the stream's id/model differ from expected.json")

    text_blocks = [b for b in blocks if b.kind == "text"]
    if refusal and choice["content"]:
        raise CaseError("both content and refusal")
    if (text_blocks[0].raw if text_blocks else None) != (refusal or choice["content"] or None):
        raise CaseError("the content deltas do not join to expected.json's content")
    calls = [b for b in blocks if b.kind == "tool_call"]
    want_calls = sorted(choice.get("tool_calls") or [], key=lambda t: t["index"])
    if len(calls) != len(want_calls) or sorted(by_call_index) != [t["index"] for t in want_calls]:
        raise CaseError("the tool calls differ from expected.json")
    for b, w in zip(calls, want_calls):
        if ((b.id, b.name, b.raw) != (w["id"], w["function"]["name"], w["function"]["arguments"])
                or b.input != w["parsed_arguments"]):
            raise CaseError(f"tool call {w['index']}: the stream differs from expected.json")

    if want_error is not None:
        if error != want_error or choice["finish_reason"] is not None:
            raise CaseError("the stream's error chunk differs from expected.json")
        return Message(expected["id"], expected["model"], blocks, "", "",
                       usage_line(0, 0, 0, 0, 0), error)
    if error is not None:
        raise CaseError("an error chunk that expected.json does not hold")

    u = expected["usage"]
    cached = (u.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
    reasoning = (u.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0
    finish = choice["finish_reason"]
    return Message(
        expected["id"], expected["model"], blocks,
        "refusal" if refusal else OPENAI_STOP.get(finish, "other"), finish,
        # OpenAI's prompt_tokens includes the cached tokens; panto's input_tokens does not.
        usage_line(u["prompt_tokens"] - cached, u["completion_tokens"], cached, 0, reasoning))


def message_lines(m: Message) -> list[dict[str, Any]]:
    """The transcript of one assistant message, message_start to message_end."""
    lines: list[dict[str, Any]] = [{"event": "message_start", "id": m.id, "model": m.model}]
    for index, b in enumerate(m.blocks):
        lines.append({"event": "block_start", "index": index, "kind": b.kind})
        if b.kind == "tool_call":
            lines.append({"event": "tool_details", "index": index, "id": b.id, "name": b.name})
        lines += [{"event": "content_delta", "index": index, "kind": b.kind, "text": f}
                  for f in b.fragments if f != ""]
        if b.complete:
            lines.append({"event": "block_complete", "index": index, "kind": b.kind,
                          "text": b.complete_text})
    if m.error is None:
        lines.append({"event": "message_end", "stop_reason": m.stop_reason,
                      "provider_stop_reason": m.provider_stop_reason, "usage": m.usage})
    return lines


def error_line(error: dict[str, Any]) -> dict[str, Any]:
    """The line of a turn ended by a mid-stream error event."""
    if error["type"] not in EVENT_ERROR_CODE:
        raise CaseError(f"no status code known for an error event of type {error['type']!r}")
    return {"event": "error", "code": EVENT_ERROR_CODE[error["type"]], "http_status": 0,
            "type": error["type"], "message": error["message"]}


def return_input(value: Any) -> str:
    """What a `return_input` tool returns: the input as compact JSON with sorted keys."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {str: "string", float: "number", list: "array", dict: "object",
            type(None): "null"}[type(value)]


def host_tools(m: Message) -> list[dict[str, Any]]:
    """A host tool per tool name the message calls, its schema accepting the recorded inputs
    (the keys every call has are required)."""
    tools: dict[str, dict[str, Any]] = {}
    for call in m.calls:
        tool = tools.setdefault(call.name, {
            "name": call.name,
            "description": f"Recorded tool {call.name}; returns its input.",
            "input_schema": {"type": "object", "properties": {}},
            "behavior": {"return_input": True},
        })
        schema = tool["input_schema"]
        for key, value in call.input.items():
            schema["properties"][key] = {"type": json_type(value)}
        keys = sorted(call.input)
        schema["required"] = ([k for k in schema["required"] if k in keys]
                              if "required" in schema else keys)
        if not schema["required"]:
            del schema["required"]
    return list(tools.values())


def exported_tools(provider: str, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if provider == "anthropic":
        return [{"name": t["name"], "description": t["description"],
                 "input_schema": t["input_schema"]} for t in tools]
    return [{"type": "function", "function": {"name": t["name"], "description": t["description"],
                                              "parameters": t["input_schema"]}} for t in tools]


def history(provider: str, m: Message) -> list[dict[str, Any]]:
    """The assistant message and the tool results as the next request must carry them."""
    if provider == "anthropic":
        content = []
        for b in m.blocks:
            if b.kind == "text":
                content.append({"type": "text", "text": b.raw})
            elif b.kind == "thinking":
                # Anthropic requires the thinking block, signature included, before tool_use.
                content.append({"type": "thinking", "thinking": b.raw, "signature": b.signature})
            else:
                content.append({"type": "tool_use", "id": b.id, "name": b.name, "input": b.input})
        return [{"role": "assistant", "content": content},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": c.id,
                     "content": {"$text": return_input(c.input)}} for c in m.calls]}]
    assistant: dict[str, Any] = {"role": "assistant"}
    text = "".join(b.raw for b in m.blocks if b.kind == "text")
    if text:
        assistant["content"] = {"$text": text}
    assistant["tool_calls"] = [
        {"id": c.id, "type": "function",
         "function": {"name": c.name, "arguments": {"$json": c.input}}} for c in m.calls]
    return [assistant] + [{"role": "tool", "tool_call_id": c.id,
                           "content": {"$text": return_input(c.input)}} for c in m.calls]


def final_answer(provider: str, name: str, model: str) -> tuple[dict[str, Any], Message]:
    """The scripted second response of a tool case, and the message it must produce."""
    usage = {"input_tokens": 40, "output_tokens": 6}
    script = {"id": f"msg_final_{name}" if provider == "anthropic" else f"chatcmpl-final-{name}",
              "model": model,
              "content": [{"type": "text", "text": "All done.", "deltas": ["All ", "done."]}],
              "stop_reason": "end_turn", "usage": usage}
    block = Block("text", fragments=["All ", "done."])
    return script, Message(script["id"], model, [block], "end_turn",
                           "end_turn" if provider == "anthropic" else "stop",
                           usage_line(40, 6, 0, 0, 0))


def summed(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: a[k] + b[k] for k in a}


# ---- Writing the cases -------------------------------------------------------------------


def build_case(provider: str, name: str, chunk_size: int, case_dir: Path,
               extra_config: dict[str, Any], variant_note: str) -> tuple[str, str]:
    sse = RECORDED_DIR / provider / f"{name}.sse"
    expected = json.loads((RECORDED_DIR / "expected" / f"{name}.expected.json").read_text())
    if expected["transcript"] != f"{provider}/{name}.sse" or expected["provider"] != provider:
        raise CaseError(f"{name}.expected.json belongs to {expected['transcript']}")
    raw = sse.read_bytes()
    m = anthropic_message(raw, expected) if provider == "anthropic" else openai_message(raw, expected)
    hello = {"role": "user", "content": {"$text": "Hello"}}
    first = {"status": 200, "framing": "chunked", "chunk_size": chunk_size,
             "replay": os.path.relpath(sse, case_dir)}

    lines = message_lines(m)
    if m.error is not None:
        if m.calls:
            raise CaseError("a failed stream with tool calls is not supported")
        tools: list[dict[str, Any]] = []
        responses = [first]
        requests = [{"method": "POST", "path": ENDPOINT[provider],
                     "body_contains": {"model": m.model, "stream": True, "messages": [hello]}}]
        lines += [error_line(m.error)] * 2  # extra_next 1: the error is sticky
    elif not m.calls:
        tools: list[dict[str, Any]] = []
        responses = [first]
        requests = [{"method": "POST", "path": ENDPOINT[provider],
                     "body_contains": {"model": m.model, "stream": True, "messages": [hello]}}]
        total = m.usage
        last = m
    else:
        if m.stop_reason != "tool_use":
            raise CaseError("a message with tool calls must stop for tool_use")
        tools = host_tools(m)
        script, last = final_answer(provider, name, m.model)
        responses = [first, {"message": script}]
        for c in m.calls:
            lines.append({"event": "tool_call_start", "id": c.id, "name": c.name,
                          "input": c.input, "awaiting_result": True})
        for c in m.calls:
            lines.append({"event": "tool_result", "id": c.id, "name": c.name,
                          "content": return_input(c.input), "is_error": False,
                          "parts": []})
        lines += message_lines(last)
        exported = exported_tools(provider, tools)
        requests = [
            {"method": "POST", "path": ENDPOINT[provider],
             "body_contains": {"model": m.model, "stream": True, "messages": [hello],
                               "tools": exported}},
            {"method": "POST", "path": ENDPOINT[provider],
             "body_contains": {"model": m.model, "stream": True,
                               "messages": [hello] + history(provider, m), "tools": exported}},
        ]
        total = summed(m.usage, last.usage)
    if m.error is None:
        lines.append({"event": "message_complete", "stop_reason": last.stop_reason,
                      "provider_stop_reason": last.provider_stop_reason, "usage": total})
        lines.append({"event": "done"})
        lines.append({"event": "done"})  # extra_next 1

    what = ("; the model's tool calls run as host tools returning their input, then a scripted "
            "text answer ends the turn" if m.calls else "")
    if m.error is not None:
        what = (f"; it ends with a {m.error['type']} error event after content was delivered"
                f" ({variant_note})")
    case: dict[str, Any] = {
        "description": f"Replays the recorded {provider} stream {provider}/{name}.sse in "
                       f"{chunk_size}-byte network chunks{what}. Generated by "
                       "make_recorded_cases.py from expected/" + name + ".expected.json; "
                       "do not edit.",
        "config": {"provider": provider, "model": m.model, "api_key": "test-key",
                   **extra_config},
        "turns": ["Hello"],
        "extra_next": 1,
    }
    if tools:
        case["tools"] = tools
    case["script"] = {"responses": responses}
    case["expect_requests"] = requests
    case_text = json.dumps(case, indent=2, ensure_ascii=False) + "\n"
    expected_text = "".join(json.dumps(l, ensure_ascii=False) + "\n" for l in lines)
    return case_text, expected_text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="do not write; exit 1 if a generated case differs from the files")
    args = ap.parse_args()
    stale = []
    for provider, name, suffix, extra_config, note in [
        (provider, name, *variant)
        for provider, name in RECORDED
        for variant in VARIANTS.get(name, [("", {}, "")])
    ]:
        for size in CHUNK_SIZES:
            case_dir = CASES_DIR / f"recorded_{name}{suffix}_chunk{size}"
            try:
                files = dict(zip(("case.json", "expected.jsonl"),
                                 build_case(provider, name, size, case_dir, extra_config, note)))
            except (CaseError, KeyError, ValueError) as e:
                print(f"{provider}/{name}: {e}", file=sys.stderr)
                return 2
            sync(case_dir, files, args.check, stale)
    if stale:
        print("out of date (run make_recorded_cases.py):\n  " + "\n  ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
