#!/usr/bin/env python3
"""Writes the token-counting cases (`count_tokens_*`, issue 31): for each provider, the
request its counting endpoint must be sent (the turn's prompt, without max_tokens, sampling
or streaming members) and the count line the step `{"count_tokens": INPUT}` prints, the count
being the emulator's made-up one of that request (bindings-py/panto/emulator/count.py: a token
per word of its strings, one per object), or compaction's estimate for OpenAI Chat
Completions (a token per 4 characters of the system prompt and the messages, rounded up).

    .venv/bin/python tests/conformance/make_count_cases.py           # write them
    .venv/bin/python tests/conformance/make_count_cases.py --check   # fail if stale
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "bindings-py"))
from case_files import case_texts, generate  # noqa: E402
from panto.emulator import count  # noqa: E402  (the count rule, standard library only)

CASES = HERE / "cases"
ABSENT = {"$absent": True}
QUESTION = "How many tokens is this?"
SYSTEM = "You are terse."
CONFIG = {"api_key": "test-key", "system": SYSTEM, "max_tokens": 256}
CC = {"cache_control": {"type": "ephemeral"}}  # request.cache "auto": the system prompt, the last block
USAGE = {"input_tokens": 8, "output_tokens": 4}
FULL_USAGE = dict(USAGE, cache_read_tokens=0, cache_write_tokens=0, reasoning_tokens=0)


def counted(provider: str, body: dict[str, Any]) -> int:
    e = next(e for e in count.ENDPOINTS if e.provider.NAME == provider)
    return count.tokens(e.prompt(body))


def line(n: int, estimated: bool = False) -> dict[str, Any]:
    return {"event": "count_tokens", "code": "ok", "input_tokens": n, "estimated": estimated}


def request(path: str, body: dict[str, Any], absent: tuple[str, ...]) -> dict[str, Any]:
    return {"method": "POST", "path": path, "body_contains": {**body, **{k: ABSENT for k in absent}}}


def anthropic() -> dict[str, Any]:
    system = [{"type": "text", "text": SYSTEM, **CC}]
    before = {"model": "claude-test", "system": system,
              "messages": [{"role": "user", "content": [{"type": "text", "text": QUESTION, **CC}]}]}
    after = {"model": "claude-test", "system": system,
             "messages": [{"role": "user", "content": [{"type": "text", "text": "Say hello, please"}]},
                          {"role": "assistant", "content": [{"type": "text", "text": "Hello, world!", **CC}]}]}
    message = {"id": "msg_count_1", "model": "claude-test", "stop_reason": "end_turn", "usage": USAGE,
               "content": [{"type": "text", "text": "Hello, world!", "deltas": ["Hello, world!"]}]}
    end = {"stop_reason": "end_turn", "provider_stop_reason": "end_turn", "usage": FULL_USAGE}
    turn = [{"event": "message_start", "id": "msg_count_1", "model": "claude-test"},
            {"event": "block_start", "index": 0, "kind": "text"},
            {"event": "content_delta", "index": 0, "kind": "text", "text": "Hello, world!"},
            {"event": "block_complete", "index": 0, "kind": "text", "text": "Hello, world!"},
            {"event": "message_end", **end}, {"event": "message_complete", **end},
            {"event": "done"}, {"event": "done"}]
    absent = ("max_tokens", "stream", "metadata")
    return {"case": {
        "description": "count_tokens before a turn (the input as its user message, nothing appended) and after it (the conversation as it is): Anthropic's count_tokens is sent the turn's prompt, without max_tokens or stream",
        "config": {"provider": "anthropic", "model": "claude-test", **CONFIG},
        "turns": [{"count_tokens": QUESTION}, "Say hello, please", {"count_tokens": None}],
        "script": {"responses": [{"message": message}]},
        "expect_requests": [
            request("/v1/messages/count_tokens", before, absent),
            {"path": "/v1/messages", "body_contains": {"stream": True, "max_tokens": 256}},
            request("/v1/messages/count_tokens", after, absent)]},
        "expected": [line(counted("anthropic", before))] + turn + [line(counted("anthropic", after))]}


def single(provider: str, model: str, path: str, body: dict[str, Any], absent: tuple[str, ...],
           description: str, check: dict[str, Any] | None = None) -> dict[str, Any]:
    """A case of one count; `check`: the body the request must hold, when more is checked
    than `body` (a member absent deeper down)."""
    return {"case": {
        "description": description,
        "config": {"provider": provider, "model": model, **CONFIG},
        "turns": [{"count_tokens": QUESTION}],
        "script": {"responses": []},
        "expect_requests": [request(path, check or body, absent)]},
        "expected": [line(counted(provider, body))]}


def cases() -> dict[str, dict[str, Any]]:
    gemini = {"generateContentRequest": {
        "model": "models/gemini-test", "systemInstruction": {"parts": [{"text": SYSTEM}]},
        "contents": [{"role": "user", "parts": [{"text": QUESTION}]}],
        "generationConfig": {"maxOutputTokens": 256}}}
    responses = {"model": "gpt-test", "instructions": SYSTEM,
                 "input": [{"role": "user", "content": [{"type": "input_text", "text": QUESTION}]}]}
    bedrock = {"input": {"converse": {"system": [{"text": SYSTEM}],
                                      "messages": [{"role": "user", "content": [{"text": QUESTION}]}]}}}
    bedrock_check = {"input": {"converse": {**bedrock["input"]["converse"], "inferenceConfig": ABSENT}}}
    return {
        "count_tokens_anthropic": anthropic(),
        "count_tokens_gemini": single(
            "gemini", "gemini-test", "/v1beta/models/gemini-test:countTokens", gemini, ("contents",),
            "count_tokens on Gemini: countTokens is sent the turn's request as its generateContentRequest, which names the model; the answer's totalTokens"),
        "count_tokens_openai_responses": single(
            "openai-responses", "gpt-test", "/v1/responses/input_tokens", responses,
            ("max_output_tokens", "store", "include", "stream"),
            "count_tokens on the Responses API: input_tokens is sent the input items, without max_output_tokens, store, include or stream"),
        "count_tokens_bedrock": single(
            "bedrock", "anthropic.claude-test-v1:0", "/model/anthropic.claude-test-v1%3A0/count-tokens",
            bedrock, (), "count_tokens on Bedrock: CountTokens is sent the Converse request as input.converse, without inferenceConfig",
            bedrock_check),
        "count_tokens_openai_estimated": {"case": {
            "description": "count_tokens on OpenAI Chat Completions, which has no counting endpoint: compaction's estimate (a token per 4 characters of the system prompt and the messages), estimated, no request",
            "config": {"provider": "openai", "model": "gpt-test", **CONFIG},
            "turns": [{"count_tokens": QUESTION}],
            "script": {"responses": []},
            "expect_requests": []},
            "expected": [line((len(QUESTION) + len(SYSTEM) + 3) // 4, True)]},
    }


def folders() -> dict[Path, dict[str, str]]:
    return {CASES / name: case_texts(data["case"], data["expected"]) for name, data in cases().items()}


if __name__ == "__main__":
    sys.exit(generate(__doc__.splitlines()[0], "tests/conformance/make_count_cases.py", folders))
