#!/usr/bin/env python3
"""Generates cases/stop_{gemini,bedrock}_*: each way a Gemini or Bedrock answer ends besides
its end of turn and a tool call, as the typed stop reason of panto.h with the API's own word
beside it (issue 29's "finish reasons including safety ones as typed stop reasons").

    .venv/bin/python tests/conformance/make_stop_cases.py          # (re)write them
    .venv/bin/python tests/conformance/make_stop_cases.py --check  # fail if stale

Gemini's finishReason MAX_TOKENS is max_tokens and SAFETY content_filter; Bedrock's
stopReason max_tokens, stop_sequence, content_filtered and guardrail_intervened are
max_tokens, stop_sequence, content_filter and content_filter (libpanto/src/providers/*/
decode.zig's tables, docs/requests.md). The answer's text so far is kept. Edit this script,
not the folders.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from case_files import case_texts, generate

HERE = Path(__file__).resolve().parent
TEXT = "The answer so"
USAGE = {"input_tokens": 12, "output_tokens": 3, "cache_read_tokens": 0, "cache_write_tokens": 0,
         "reasoning_tokens": 0}

# (provider, model, the scenario's stop_reason, the API's word for it, panto's stop reason)
STOPS = [
    ("gemini", "gemini-test", "max_tokens", "MAX_TOKENS", "max_tokens"),
    ("gemini", "gemini-test", "content_filter", "SAFETY", "content_filter"),
    ("bedrock", "anthropic.claude-test-v1:0", "max_tokens", "max_tokens", "max_tokens"),
    ("bedrock", "anthropic.claude-test-v1:0", "stop_sequence", "stop_sequence", "stop_sequence"),
    ("bedrock", "anthropic.claude-test-v1:0", "content_filter", "content_filtered", "content_filter"),
    ("bedrock", "anthropic.claude-test-v1:0", "refusal", "guardrail_intervened", "content_filter"),
]


def case(provider: str, model: str, scripted: str, word: str, stop: str) -> tuple[Path, dict[str, str]]:
    message: dict[str, Any] = {"content": [{"type": "text", "text": TEXT, "deltas": [TEXT]}],
                               "stop_reason": scripted, "usage": {"input_tokens": 12, "output_tokens": 3}}
    start = {"event": "message_start", "id": "", "model": ""}
    if provider == "gemini":
        message.update(id="resp-stop", model=model)
        start = {"event": "message_start", "id": "resp-stop", "model": model}
    data = {
        "description": f"{provider} ends its answer with {word}: stop reason {stop}, the API's word beside it, "
                       "the text so far kept.",
        "config": {"provider": provider, "model": model, "api_key": "test-key"},
        "turns": ["Hello"],
        "script": {"responses": [{"message": message}]},
    }
    lines = [start,
             {"event": "block_start", "index": 0, "kind": "text"},
             {"event": "content_delta", "index": 0, "kind": "text", "text": TEXT},
             {"event": "block_complete", "index": 0, "kind": "text", "text": TEXT},
             {"event": "message_end", "stop_reason": stop, "provider_stop_reason": word, "usage": USAGE},
             {"event": "message_complete", "stop_reason": stop, "provider_stop_reason": word, "usage": USAGE},
             {"event": "done"}, {"event": "done"}]
    return HERE / "cases" / f"stop_{provider}_{word.lower()}", case_texts(data, lines)


def folders() -> dict[Path, dict[str, str]]:
    return dict(case(*s) for s in STOPS)


if __name__ == "__main__":
    sys.exit(generate(__doc__.splitlines()[0], "tests/conformance/make_stop_cases.py", folders))
