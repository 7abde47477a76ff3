#!/usr/bin/env python3
"""Generates cases/cancel_while_blocked_{responses,gemini,bedrock}: a cancel from another
thread while the server stalls after the first text delta, for the wire APIs the hand-written
cancel_while_blocked (Anthropic) and cancel_while_blocked_openai do not cover (issue 29).

    .venv/bin/python tests/conformance/make_cancel_cases.py          # (re)write them
    .venv/bin/python tests/conformance/make_cancel_cases.py --check  # fail if stale

The stall comes right after the bytes of the event that carries the first text delta, as the
emulator renders the scripted message (its renderers are deterministic for a given message
and call number), so the client has seen the message start and "Partial " and waits: the
cancel 300 ms after run() ends the turn canceled, and the next turn's request carries the
partial answer as the assistant's message (docs/conversations.md, a canceled turn's partial
message is kept). Edit this script, not the folders.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from case_files import case_texts, generate

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "bindings-py"))

from panto.emulator import bedrock, gemini, responses  # noqa: E402
from panto.emulator.call import Call  # noqa: E402
from panto.emulator.scenario import parse  # noqa: E402

PARTIAL = "Partial "
USAGE = {"input_tokens": 20, "output_tokens": 3, "cache_read_tokens": 0, "cache_write_tokens": 0,
         "reasoning_tokens": 0}

# provider -> (emulator module, model, path, the answer's stop reason as the API says it,
#              the partial answer as the second request carries it, where)
PROVIDERS: dict[str, tuple[Any, str, str, str, str, dict[str, Any]]] = {
    "openai-responses": (responses, "gpt-test", "/v1/responses", "completed", "input",
                         {"role": "assistant", "content": PARTIAL}),
    "gemini": (gemini, "gemini-test", "/v1beta/models/gemini-test:streamGenerateContent?alt=sse", "STOP", "contents",
               {"role": "model", "parts": [{"text": PARTIAL}]}),
    "bedrock": (bedrock, "anthropic.claude-test-v1:0", "/model/anthropic.claude-test-v1%3A0/converse-stream",
                "end_turn", "messages", {"role": "assistant", "content": [{"text": PARTIAL}]}),
}
NAMES = {"openai-responses": "responses", "gemini": "gemini", "bedrock": "bedrock"}


def stall_offset(module: Any, message: dict[str, Any], model: str) -> int:
    """The bytes of the rendered message up to and including the first text delta's event."""
    scripted = parse({"responses": [{"message": message}]}).responses[0].message
    pieces = module.render(scripted, Call(1, {"model": model, "stream": True}, "req_cancel"))
    total = 0
    for piece in pieces:
        total += len(piece)
        if PARTIAL.encode() in piece:
            return total
    raise SystemExit(f"{module.NAME}: no piece carries the first text delta")


def user(provider: str, text: str) -> dict[str, Any]:
    if provider == "gemini":
        return {"role": "user", "parts": [{"text": text}]}
    if provider == "bedrock":
        return {"role": "user", "content": [{"text": text}]}
    return {"role": "user", "content": [{"type": "input_text", "text": text}]}


def case(provider: str) -> tuple[Path, dict[str, str]]:
    module, model, path, stop, key, partial = PROVIDERS[provider]
    first: dict[str, Any] = {"content": [{"type": "text", "text": PARTIAL + "more.", "deltas": [PARTIAL, "more."]}],
                             "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 2}}
    second: dict[str, Any] = {"content": [{"type": "text", "text": "Second answer.", "deltas": ["Second ", "answer."]}],
                              "stop_reason": "end_turn", "usage": {"input_tokens": 20, "output_tokens": 3}}
    ids = ("", "") if provider == "bedrock" else ("canceled-1", "second-2")  # Bedrock's stream names none
    if provider != "bedrock":
        first.update(id=ids[0], model=model)
        second.update(id=ids[1], model=model)
    after = stall_offset(module, first, model)
    shown_model = "" if provider == "bedrock" else model
    canceled = {"event": "error", "code": "canceled", "http_status": 0, "type": "canceled_error",
                "message": {"$prefix": ""}}
    lines = [
        {"event": "message_start", "id": ids[0], "model": shown_model},
        {"event": "block_start", "index": 0, "kind": "text"},
        {"event": "content_delta", "index": 0, "kind": "text", "text": PARTIAL},
        canceled, canceled,  # (the failure is sticky: next() again says the same)
        {"event": "message_start", "id": ids[1], "model": shown_model},
        {"event": "block_start", "index": 0, "kind": "text"},
        {"event": "content_delta", "index": 0, "kind": "text", "text": "Second "},
        {"event": "content_delta", "index": 0, "kind": "text", "text": "answer."},
        {"event": "block_complete", "index": 0, "kind": "text", "text": "Second answer."},
        {"event": "message_end", "stop_reason": "end_turn", "provider_stop_reason": stop, "usage": USAGE},
        {"event": "message_complete", "stop_reason": "end_turn", "provider_stop_reason": stop, "usage": USAGE},
        {"event": "done"}, {"event": "done"},
    ]
    data = {
        "description": f"{provider}: the server stalls right after the event of the first text delta; another "
                       "thread cancels 300 ms after run(): a canceled error, sticky; the next turn's request "
                       "carries the partial answer as the assistant's message, between the two questions.",
        "config": {"provider": provider, "model": model, "api_key": "test-key"},
        "turns": ["Hello", "Again"],
        "cancel_after_ms": 300,
        "script": {"responses": [{"message": first, "fault": {"after_bytes": after, "kind": "stall"}},
                                 {"message": second}]},
        "expect_requests": [
            {"method": "POST", "path": path, "body_contains": {key: [user(provider, "Hello")]}},
            {"method": "POST", "path": path, "body_contains": {key: [user(provider, "Hello"), partial,
                                                                      user(provider, "Again")]}},
        ],
    }
    if provider == "bedrock":  # mode auto: a cache point at the end of the last message
        for request in data["expect_requests"]:
            request["body_contains"]["messages"][-1]["content"].append({"cachePoint": {"type": "default"}})
    return HERE / "cases" / f"cancel_while_blocked_{NAMES[provider]}", case_texts(data, lines)


def folders() -> dict[Path, dict[str, str]]:
    return dict(case(p) for p in PROVIDERS)


if __name__ == "__main__":
    sys.exit(generate(__doc__.splitlines()[0], "tests/conformance/make_cancel_cases.py", folders))
