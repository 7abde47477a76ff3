"""A prompt cache, so that a scenario can show caching work: the usage of a reply is derived
from what the request asked to cache and what earlier requests (since the scenario was
loaded) wrote, instead of being scripted.

The prompt is cut into units, each worth `unit_tokens` tokens (the scenario's
`"prompt_cache": {"unit_tokens": N}`, default 10), in the order the providers cache them:

- Anthropic: each tool, the system prompt (a string is one unit, a block array one unit per
  block), then each content block of each message (a string content is one block). A unit
  is compared without its cache_control. A block with `cache_control` is a breakpoint: the
  prefix up to and including it is written to the cache, and a request reads the longest
  prefix in the cache that ends at a breakpoint or at most 20 units before one (the API's
  lookback). Usage: cache_read = the units read; cache_write = the units from there to the
  last breakpoint; input = the units after the last breakpoint (all of them when there is
  none and nothing is read).
- Bedrock: each tool, each system block, then each content block of each message; a
  `{"cachePoint": ...}` element is not a unit but marks the prefix before it, and reads and
  writes are counted as for Anthropic.
- OpenAI: each tool, then each message. Caching is automatic: every request writes all its
  prefixes, under its `prompt_cache_key` (none: one shared space), and reads the longest one
  already there. Usage: cached (cache_read) = the units read; input = the rest; no writes.

The API's minimum cacheable length (about 1024 tokens) is not emulated: every prefix counts.
"""

from __future__ import annotations

import hashlib
import json
import threading
from typing import Any

DEFAULT_UNIT_TOKENS = 10
LOOKBACK_UNITS = 20  # Anthropic checks this many blocks before a breakpoint for a hit


class PromptCache:
    """The entries written since the scenario was loaded (thread-safe)."""

    def __init__(self, unit_tokens: int) -> None:
        self.unit_tokens = unit_tokens
        self._entries: set[tuple[str, str]] = set()  # (space, prefix digest)
        self._lock = threading.Lock()

    def usage(self, provider: str, request: dict[str, Any]) -> dict[str, int]:
        """The input, cache_read and cache_write tokens of `request`; records what it writes."""
        if provider in ("anthropic", "bedrock"):
            units, breakpoints = (_anthropic_units if provider == "anthropic" else _bedrock_units)(request)
            space = ""
        else:
            units, breakpoints = _openai_units(request), []
            key = request.get("prompt_cache_key")
            space = key if isinstance(key, str) else ""
        prefixes = _prefix_digests(units)
        with self._lock:
            if provider in ("anthropic", "bedrock"):
                read = max((_hit(prefixes, b, space, self._entries) for b in breakpoints),
                           default=0)
                last = max(breakpoints, default=0)
                written = max(0, last - read)
                self._entries.update((space, prefixes[b - 1]) for b in breakpoints)
                uncached = len(units) - max(last, read)
            else:
                read = next((k for k in range(len(units), 0, -1)
                             if (space, prefixes[k - 1]) in self._entries), 0)
                written = 0
                self._entries.update((space, p) for p in prefixes)
                uncached = len(units) - read
        n = self.unit_tokens
        return {"input_tokens": uncached * n, "cache_read_tokens": read * n,
                "cache_write_tokens": written * n}


def _hit(prefixes: list[str], breakpoint: int, space: str,
         entries: set[tuple[str, str]]) -> int:
    """The longest cached prefix (in units) ending at `breakpoint` or up to the lookback
    before it; 0 for none."""
    for k in range(breakpoint, max(0, breakpoint - LOOKBACK_UNITS - 1), -1):
        if k > 0 and (space, prefixes[k - 1]) in entries:
            return k
    return 0


def _prefix_digests(units: list[str]) -> list[str]:
    """The digest of each prefix: units[0:1], units[0:2], ..."""
    h = hashlib.sha256()
    out = []
    for u in units:
        h.update(u.encode("utf-8") + b"\x00")
        out.append(h.copy().hexdigest())
    return out


def _anthropic_units(request: dict[str, Any]) -> tuple[list[str], list[int]]:
    """The request's units and its breakpoints (each the number of units up to and including
    the marked one)."""
    units: list[str] = []
    breakpoints: list[int] = []

    def add(kind: str, value: Any) -> None:
        marked = isinstance(value, dict) and "cache_control" in value
        if marked:
            value = {k: v for k, v in value.items() if k != "cache_control"}
        units.append(kind + ":" + json.dumps(value, sort_keys=True, ensure_ascii=False))
        if marked:
            breakpoints.append(len(units))

    for tool in _list(request.get("tools")):
        add("tool", tool)
    system = request.get("system")
    if isinstance(system, str):
        add("system", {"type": "text", "text": system})
    for block in _list(system):
        add("system", block)
    for i, message in enumerate(_list(request.get("messages"))):
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else _list(content)
        for j, block in enumerate(blocks):
            # (the role and the message boundary are part of the prefix)
            add(f"{message.get('role')}:{i}:{j}", block)
    return units, breakpoints


def _bedrock_units(request: dict[str, Any]) -> tuple[list[str], list[int]]:
    """The request's units and its breakpoints: each cachePoint marks the units before it."""
    units: list[str] = []
    breakpoints: list[int] = []

    def add_all(kind: str, items: list[Any]) -> None:
        for item in items:
            if isinstance(item, dict) and "cachePoint" in item:
                if units:
                    breakpoints.append(len(units))
            else:
                units.append(kind + ":" + json.dumps(item, sort_keys=True, ensure_ascii=False))

    tool_config = request.get("toolConfig")
    add_all("tool", _list(tool_config.get("tools")) if isinstance(tool_config, dict) else [])
    add_all("system", _list(request.get("system")))
    for i, message in enumerate(_list(request.get("messages"))):
        if isinstance(message, dict):
            add_all(f"{message.get('role')}:{i}", _list(message.get("content")))
    return units, breakpoints


def _openai_units(request: dict[str, Any]) -> list[str]:
    return ([("tool:" + json.dumps(t, sort_keys=True)) for t in _list(request.get("tools"))]
            + [("message:" + json.dumps(m, sort_keys=True))
               for m in _list(request.get("messages"))]
            # (the Responses API's instructions and input items)
            + [("instructions:" + i) for i in [request.get("instructions")] if isinstance(i, str)]
            + [("item:" + json.dumps(m, sort_keys=True)) for m in _list(request.get("input"))])


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
