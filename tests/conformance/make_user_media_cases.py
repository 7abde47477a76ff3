#!/usr/bin/env python3
"""Generates cases/media_user_turn_image_{responses,gemini,bedrock}: a user turn of text and
a JPEG for the three wire APIs make_media_cases.py does not cover (issue 29's media in).

    .venv/bin/python tests/conformance/make_user_media_cases.py          # (re)write them
    .venv/bin/python tests/conformance/make_user_media_cases.py --check  # fail if stale

As media_user_turn_image_{anthropic,openai}: the text and the image go in order, the image
byte for byte (a small JPEG needs no fitting) in each API's form (Responses `input_image`
with a data URL, Gemini `inlineData`, Bedrock `image` with its bytes), the emulator's
`describe_media` answer names what arrived, and the conversation keeps the image as base64.
Edit this script, not the folders.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from case_files import case_texts, generate

HERE = Path(__file__).resolve().parent
PROMPT = "Describe this picture."
DESCRIBED = "Received 1 attachment: image/jpeg 64x48."
USAGE = {"input_tokens": 60, "output_tokens": 8, "cache_read_tokens": 0, "cache_write_tokens": 0,
         "reasoning_tokens": 0}
IMAGE = {"$media_sha256": "small.jpg"}

# provider -> (short name, model, the API's stop word, the request member, the user message)
PROVIDERS: dict[str, tuple[str, str, str, str, dict[str, Any]]] = {
    "openai-responses": ("responses", "gpt-test", "completed", "input",
                         {"role": "user", "content": [{"type": "input_text", "text": PROMPT},
                                                      {"type": "input_image", "image_url": IMAGE}]}),
    "gemini": ("gemini", "gemini-test", "STOP", "contents",
               {"role": "user", "parts": [{"text": PROMPT}, {"inlineData": {"mimeType": "image/jpeg", "data": IMAGE}}]}),
    "bedrock": ("bedrock", "anthropic.claude-test-v1:0", "end_turn", "messages",
                {"role": "user", "content": [{"text": PROMPT}, {"image": {"format": "jpeg", "source": {"bytes": IMAGE}}},
                                             {"cachePoint": {"type": "default"}}]}),  # (mode auto: the last message)
}


def case(provider: str) -> tuple[Path, dict[str, str]]:
    short, model, stop_word, member, user = PROVIDERS[provider]
    message: dict[str, Any] = {"usage": {"input_tokens": 60, "output_tokens": 8}}
    start = {"event": "message_start", "id": "", "model": ""}
    if provider != "bedrock":  # (Bedrock's stream names neither)
        message.update(id=f"user-image-{short}", model=model)
        start = {"event": "message_start", "id": f"user-image-{short}", "model": model}
    data = {
        "description": f"A user turn of text and a JPEG: both go, in order, the image byte for byte in {provider}'s "
                       "form; the conversation keeps the image as base64.",
        "config": {"provider": provider, "model": model, "api_key": "test-key"},
        "turns": [[PROMPT, {"media": "small.jpg"}]],
        "script": {"responses": [{"describe_media": True, "message": message}]},
        "expect_requests": [{"method": "POST", "body_contains": {member: [user]}}],
        "print_conversation": True,
    }
    lines = [start,
             {"event": "block_start", "index": 0, "kind": "text"},
             {"event": "content_delta", "index": 0, "kind": "text", "text": DESCRIBED},
             {"event": "block_complete", "index": 0, "kind": "text", "text": DESCRIBED},
             {"event": "message_end", "stop_reason": "end_turn", "provider_stop_reason": stop_word, "usage": USAGE},
             {"event": "message_complete", "stop_reason": "end_turn", "provider_stop_reason": stop_word, "usage": USAGE},
             {"event": "done"}, {"event": "done"},
             {"event": "conversation", "messages": [
                 {"role": "user", "content": [{"type": "text", "text": PROMPT},
                                              {"type": "image", "media_type": "image/jpeg", "data": IMAGE}]},
                 {"role": "assistant", "content": [{"type": "text", "text": DESCRIBED}], "provider": provider,
                  "model": model, "stop_reason": "end_turn", "usage": USAGE}]}]
    return HERE / "cases" / f"media_user_turn_image_{short}", case_texts(data, lines)


def folders() -> dict[Path, dict[str, str]]:
    return dict(case(p) for p in PROVIDERS)


if __name__ == "__main__":
    sys.exit(generate(__doc__.splitlines()[0], "tests/conformance/make_user_media_cases.py", folders))
