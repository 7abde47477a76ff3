#!/usr/bin/env python3
"""Generates the recorded_* conformance cases from the recorded provider streams.

    .venv/bin/python tests/conformance/make_recorded_cases.py          # (re)write the cases
    .venv/bin/python tests/conformance/make_recorded_cases.py --check  # fail if out of date

For each transcript in RECORDED and each chunk size in CHUNK_SIZES it writes the case folder
cases/recorded_<NAME>_chunk<N>/: a case.json that replays tests/fixtures/recorded/<provider>/
<NAME>.sse byte for byte, in network chunks of N bytes, and the expected.jsonl every driver
must print.

Where the expected transcript comes from:
  - message id, model, stop reason, usage and each block's full text: from
    tests/fixtures/recorded/expected/<NAME>.expected.json, the independently derived result;
  - the content deltas, one per text fragment: from the .sse, parsed here with a small
    reference SSE parser (WHATWG rules);
  - the two are cross-checked: the fragments must join to exactly the expected.json text, and
    the id and model in the stream must match it.

The script supports only what these transcripts contain (one text block, no tools, no
thinking); it raises on anything else rather than guess. Python 3.11 standard library only.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Iterator

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
RECORDED_DIR = REPO / "tests" / "fixtures" / "recorded"
CASES_DIR = HERE / "cases"

RECORDED = [
    ("anthropic", "text_basic"),
    ("anthropic", "text_ping_between_deltas"),
    ("openai", "text_with_usage"),
    ("openai", "text_with_usage_2024"),
]
CHUNK_SIZES = [1, 7, 37]

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


def usage_line(input_tokens: int, output_tokens: int, cache_read: int, cache_write: int,
               reasoning: int) -> dict[str, int]:
    return {"input_tokens": input_tokens, "output_tokens": output_tokens,
            "cache_read_tokens": cache_read, "cache_write_tokens": cache_write,
            "reasoning_tokens": reasoning}


def anthropic_transcript(raw: bytes, expected: dict[str, Any]) -> list[dict[str, Any]]:
    msg = expected["message"]
    if expected.get("error") is not None or not expected.get("stream_complete"):
        raise CaseError("only complete streams without an error are supported")
    want_blocks = msg["content"]
    if any(b["type"] != "text" for b in want_blocks):
        raise CaseError("only text blocks are supported")

    # The fragments of each text block, in stream order, from the SSE.
    fragments: dict[int, list[str]] = {}
    order: list[int] = []
    stream_id = stream_model = None
    for event, data in sse_events(raw):
        obj = json.loads(data)
        if obj.get("type") != event:
            raise CaseError(f"event {event!r} carries type {obj.get('type')!r}")
        if event == "message_start":
            stream_id, stream_model = obj["message"]["id"], obj["message"]["model"]
        elif event == "content_block_start":
            block = obj["content_block"]
            if block["type"] != "text" or block.get("text"):
                raise CaseError("only text blocks that start empty are supported")
            fragments[obj["index"]] = []
            order.append(obj["index"])
        elif event == "content_block_delta":
            delta = obj["delta"]
            if delta["type"] != "text_delta" or delta["text"] == "":
                raise CaseError(f"unsupported delta {delta!r}")
            fragments[obj["index"]].append(delta["text"])
        elif event not in ("ping", "content_block_stop", "message_delta", "message_stop"):
            raise CaseError(f"unsupported event {event!r}")
    if (stream_id, stream_model) != (msg["id"], msg["model"]):
        raise CaseError("the stream's id/model differ from expected.json")
    if len(order) != len(want_blocks):
        raise CaseError("block count differs from expected.json")

    lines: list[dict[str, Any]] = [{"event": "message_start", "id": msg["id"], "model": msg["model"]}]
    for i, index in enumerate(order):
        text = want_blocks[i]["text"]
        if "".join(fragments[index]) != text:
            raise CaseError(f"block {index}: the deltas do not join to expected.json's text")
        lines.append({"event": "block_start", "index": index, "kind": "text"})
        lines += [{"event": "content_delta", "index": index, "kind": "text", "text": f}
                  for f in fragments[index]]
        lines.append({"event": "block_complete", "index": index, "kind": "text", "text": text})
    u = expected["usage"]
    lines.append({
        "event": "message_complete",
        "stop_reason": ANTHROPIC_STOP.get(msg["stop_reason"], "other"),
        "provider_stop_reason": msg["stop_reason"],
        # Anthropic's input_tokens already excludes the cache.
        "usage": usage_line(u["input_tokens"], u["output_tokens"],
                            u.get("cache_read_input_tokens") or 0,
                            u.get("cache_creation_input_tokens") or 0, 0),
    })
    return lines


def openai_transcript(raw: bytes, expected: dict[str, Any]) -> list[dict[str, Any]]:
    if expected.get("error") is not None or not expected.get("done_sentinel_seen"):
        raise CaseError("only complete streams without an error are supported")
    if len(expected["choices"]) != 1:
        raise CaseError("only one choice is supported")
    choice = expected["choices"][0]
    if choice.get("tool_calls") or choice.get("refusal"):
        raise CaseError("only text answers are supported")

    fragments: list[str] = []
    first_chunk = None
    done = False
    for _event, data in sse_events(raw):
        if done:
            raise CaseError("data after [DONE]")
        if data == "[DONE]":
            done = True
            continue
        obj = json.loads(data)
        if first_chunk is None:
            first_chunk = obj
        for c in obj.get("choices", []):
            content = c.get("delta", {}).get("content")
            if content:  # "" and null produce no delta
                fragments.append(content)
    if first_chunk is None or not done:
        raise CaseError("no chunk or no [DONE]")
    if (first_chunk["id"], first_chunk["model"]) != (expected["id"], expected["model"]):
        raise CaseError("the stream's id/model differ from expected.json")
    text = choice["content"]
    if "".join(fragments) != text:
        raise CaseError("the deltas do not join to expected.json's text")

    lines: list[dict[str, Any]] = [
        {"event": "message_start", "id": expected["id"], "model": expected["model"]}]
    if fragments:
        lines.append({"event": "block_start", "index": 0, "kind": "text"})
        lines += [{"event": "content_delta", "index": 0, "kind": "text", "text": f}
                  for f in fragments]
        lines.append({"event": "block_complete", "index": 0, "kind": "text", "text": text})
    u = expected["usage"]
    cached = (u.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
    reasoning = (u.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0
    finish = choice["finish_reason"]
    lines.append({
        "event": "message_complete",
        "stop_reason": OPENAI_STOP.get(finish, "other"),
        "provider_stop_reason": finish,
        # OpenAI's prompt_tokens includes the cached tokens; panto's input_tokens does not.
        "usage": usage_line(u["prompt_tokens"] - cached, u["completion_tokens"], cached, 0,
                            reasoning),
    })
    return lines


# ---- Writing the cases -------------------------------------------------------------------


def build_case(provider: str, name: str, chunk_size: int, case_dir: Path) -> tuple[str, str]:
    sse = RECORDED_DIR / provider / f"{name}.sse"
    expected = json.loads((RECORDED_DIR / "expected" / f"{name}.expected.json").read_text())
    if expected["transcript"] != f"{provider}/{name}.sse" or expected["provider"] != provider:
        raise CaseError(f"{name}.expected.json belongs to {expected['transcript']}")
    raw = sse.read_bytes()
    if provider == "anthropic":
        lines = anthropic_transcript(raw, expected)
        model = expected["message"]["model"]
    else:
        lines = openai_transcript(raw, expected)
        model = expected["model"]
    lines.append({"event": "done"})
    lines.append({"event": "done"})  # extra_next 1

    case = {
        "description": f"Replays the recorded {provider} stream {provider}/{name}.sse in "
                       f"{chunk_size}-byte network chunks. Generated by "
                       "make_recorded_cases.py from expected/" + name + ".expected.json; "
                       "do not edit.",
        "config": {"provider": provider, "model": model, "api_key": "test-key"},
        "turns": ["Hello"],
        "extra_next": 1,
        "script": {"responses": [{
            "status": 200,
            "framing": "chunked",
            "chunk_size": chunk_size,
            "replay": os.path.relpath(sse, case_dir),
        }]},
        "expect_requests": [{
            "method": "POST",
            "path": ENDPOINT[provider],
            "body_contains": {"model": model, "stream": True,
                              "messages": [{"role": "user", "content": {"$text": "Hello"}}]},
        }],
    }
    case_text = json.dumps(case, indent=2, ensure_ascii=False) + "\n"
    expected_text = "".join(json.dumps(l, ensure_ascii=False) + "\n" for l in lines)
    return case_text, expected_text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="do not write; exit 1 if a generated case differs from the files")
    args = ap.parse_args()
    stale = []
    for provider, name in RECORDED:
        for size in CHUNK_SIZES:
            case_dir = CASES_DIR / f"recorded_{name}_chunk{size}"
            try:
                files = dict(zip(("case.json", "expected.jsonl"),
                                 build_case(provider, name, size, case_dir)))
            except (CaseError, KeyError, ValueError) as e:
                print(f"{provider}/{name}: {e}", file=sys.stderr)
                return 2
            for fname, text in files.items():
                path = case_dir / fname
                if path.exists() and path.read_text(encoding="utf-8") == text:
                    continue
                if args.check:
                    stale.append(str(path.relative_to(REPO)))
                else:
                    case_dir.mkdir(parents=True, exist_ok=True)
                    path.write_text(text, encoding="utf-8")
                    print(f"wrote {path.relative_to(REPO)}")
    if stale:
        print("out of date (run make_recorded_cases.py):\n  " + "\n  ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
