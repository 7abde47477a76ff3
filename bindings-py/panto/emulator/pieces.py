"""How a scripted answer is cut into the fragments a provider would stream.

Real providers stream text a few tokens at a time and tool arguments as arbitrary slices of
a JSON document. The emulator imitates both with simple, deterministic rules so that the
same scenario always produces the same bytes.
"""

from __future__ import annotations

import json
import re

# A word with the whitespace before it (only at the very start) and after it.
_WORD = re.compile(r"\s*\S+\s*")

# Tool arguments are cut into slices this long: short enough that keys and string values
# straddle fragments, as they do in real streams.
JSON_FRAGMENT_CHARS = 8


def split_words(text: str) -> list[str]:
    """Splits text at word boundaries, each piece keeping its trailing whitespace.

    The concatenation of the pieces is always `text`: "Hello big world" becomes
    ["Hello ", "big ", "world"]; whitespace-only text stays one piece; "" gives [].
    """
    pieces = _WORD.findall(text)
    if not pieces and text:
        return [text]
    return pieces


def split_fixed(text: str, size: int = JSON_FRAGMENT_CHARS) -> list[str]:
    """Cuts text into slices of `size` characters (the last may be shorter)."""
    return [text[i : i + size] for i in range(0, len(text), size)]


def dump_json(value: object, compact: bool) -> str:
    """Serializes tool input the way each provider does.

    Anthropic's partial_json uses ", " and ": " separators; current OpenAI models write
    compact arguments. Non-ASCII text is kept as UTF-8 rather than \\u escapes.
    """
    if compact:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return json.dumps(value, ensure_ascii=False)


def split_events(body: bytes) -> list[bytes]:
    """Splits a raw SSE body after each blank line, keeping every byte.

    Used to send a replayed or raw body one event per network write; the concatenation
    of the result is always `body`.
    """
    parts = re.split(rb"(?<=\n\n)|(?<=\r\n\r\n)|(?<=\r\r)", body)
    return [p for p in parts if p]
