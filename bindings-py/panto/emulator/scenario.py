"""The scenario format: checking a scenario and filling in its defaults.

A scenario is checked completely when it is loaded, so that a typo in a test script is
reported at once (as a ScenarioError, or a 400 from the control API) instead of turning into
a confusing failure in the middle of a stream. Unknown keys are refused for the same reason.
The format is documented in README.md, next to this file.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .pieces import split_words
from .prompt_cache import DEFAULT_UNIT_TOKENS

FRAMINGS = ("chunked", "content-length", "close")
FAULT_KINDS = ("reset", "close", "stall")
USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "web_search_requests",
    "web_fetch_requests",
)

# The names OpenAI-compatible servers give a delta's reasoning text.
REASONING_KEYS = ("reasoning_content", "reasoning", "reasoning_text")

# The status a scripted `error` gets when the scenario gives none: the one each provider
# uses for that error type.
ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "insufficient_quota": 429,
    "api_error": 500,
    "server_error": 500,
    "overloaded_error": 529,
}


class ScenarioError(ValueError):
    """A scenario was refused; the message says where and why."""


@dataclass(frozen=True)
class Fault:
    after_bytes: int
    kind: str  # one of FAULT_KINDS


@dataclass(frozen=True)
class Response:
    """One scripted answer to one provider call, with every default filled in."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_ms: float = 0
    framing: str = "chunked"
    chunk_size: int = 0
    chunk_delay_ms: float = 0
    # Exactly one of the next four is set.
    message: dict[str, Any] | None = None  # normalized, see _message()
    error: dict[str, Any] | None = None  # {"type", "message", "code"}
    body: bytes | None = None  # from `body` or `replay`
    stream_error: dict[str, Any] | None = None  # {"type", "message", "code", "after_events"}
    fault: Fault | None = None
    # Wait this long before reading the request's body (a large body then blocks its writer).
    read_delay_ms: float = 0
    # After the response, close the connection as a server closes an idle keep-alive one
    # (the response said nothing about closing).
    idle_close: bool = False
    # The message starts with a text block listing the media the request added (see
    # media.describe): a transcript then shows what arrived.
    describe_media: bool = False


@dataclass(frozen=True)
class Scenario:
    responses: tuple[Response, ...] = ()
    repeat_last: bool = False
    require_api_key: bool = True
    # Tokens per prompt unit when a reply's usage is derived from a prompt cache
    # (prompt_cache.py), or None: usage as scripted.
    prompt_cache_unit_tokens: int | None = None


def parse(obj: Any, base_dir: str | os.PathLike[str] | None = None) -> Scenario:
    """Checks a scenario (already parsed from JSON) and returns it with defaults filled in.

    `base_dir` is where relative `replay` paths resolve (default: the current directory).
    Raises ScenarioError.
    """
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    _object(obj, "scenario", allowed=("responses", "repeat_last", "require_api_key",
                                      "prompt_cache"))
    responses = obj.get("responses", [])
    _check(isinstance(responses, list), "responses", "must be a list")
    unit_tokens = None
    if "prompt_cache" in obj:
        _object(obj["prompt_cache"], "prompt_cache", allowed=("unit_tokens",))
        unit_tokens = _count(obj["prompt_cache"], "unit_tokens", "prompt_cache",
                             DEFAULT_UNIT_TOKENS)
    return Scenario(
        responses=tuple(_response(r, f"responses[{i}]", base) for i, r in enumerate(responses)),
        repeat_last=_bool(obj, "repeat_last", "scenario", False),
        require_api_key=_bool(obj, "require_api_key", "scenario", True),
        prompt_cache_unit_tokens=unit_tokens,
    )


def load_file(path: str | os.PathLike[str]) -> Scenario:
    """Reads a scenario file; its relative `replay` paths resolve against its folder."""
    path = Path(path)
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ScenarioError(f"{path}: cannot read: {e.strerror}") from e
    except json.JSONDecodeError as e:
        raise ScenarioError(f"{path}: not JSON: {e}") from e
    return parse(obj, path.resolve().parent)


def replay_scenario(path: str | os.PathLike[str], chunk_size: int = 0,
                    framing: str = "chunked") -> Scenario:
    """The scenario of replay mode: serve one raw body to every request."""
    return parse(
        {"responses": [{"replay": os.fspath(path), "chunk_size": chunk_size,
                        "framing": framing}],
         "repeat_last": True}
    )


# ---- one response ------------------------------------------------------------------------

_RESPONSE_KEYS = (
    "status", "headers", "delay_ms", "framing", "chunk_size", "chunk_delay_ms",
    "message", "error", "stream_error", "body", "replay", "fault", "read_delay_ms",
    "idle_close", "describe_media",
)
_PAYLOADS = ("message", "error", "body", "replay")


def _response(r: Any, where: str, base: Path) -> Response:
    _object(r, where, allowed=_RESPONSE_KEYS)
    describe_media = _bool(r, "describe_media", where, False)
    payloads = [k for k in _PAYLOADS if k in r]
    if describe_media and not payloads:
        r = dict(r, message={})  # a message holding only the description
        payloads = ["message"]
    _check(len(payloads) == 1, where,
           "needs exactly one of message, error, body, replay"
           + (f" (has {', '.join(payloads)})" if payloads else ""))
    kind = payloads[0]
    _check(not describe_media or kind == "message", f"{where}.describe_media",
           "goes with a message only")

    status = r.get("status")
    if status is not None:
        _check(_is_int(status) and 100 <= status <= 599, f"{where}.status",
               "must be an integer from 100 to 599")
    headers = r.get("headers", {})
    _check(isinstance(headers, dict)
           and all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items()),
           f"{where}.headers", "must be an object of strings")
    framing = r.get("framing", "chunked")
    _check(framing in FRAMINGS, f"{where}.framing", f"must be one of {', '.join(FRAMINGS)}")

    message = error = body = stream_error = None
    if kind == "message":
        message = _message(r["message"], f"{where}.message")
    elif kind == "error":
        error = _error(r["error"], f"{where}.error", extra=())
        if status is None:
            status = ERROR_STATUS.get(error["type"])
            _check(status is not None, f"{where}.status",
                   f"is needed: no default status for error type {error['type']!r}")
        _check(status >= 300, f"{where}.status", "must not be 1xx/2xx for an error")
    elif kind == "body":
        _check(isinstance(r["body"], str), f"{where}.body", "must be a string")
        body = r["body"].encode("utf-8")
    else:
        body = _read_replay(r["replay"], f"{where}.replay", base)

    if "stream_error" in r:
        _check(kind == "message", f"{where}.stream_error", "goes with a message only")
        stream_error = _error(r["stream_error"], f"{where}.stream_error",
                              extra=("after_events",))
        stream_error["after_events"] = _count(r["stream_error"], "after_events",
                                              f"{where}.stream_error", 0)

    fault = None
    if "fault" in r:
        f = r["fault"]
        _object(f, f"{where}.fault", allowed=("after_bytes", "kind"),
                required=("after_bytes", "kind"))
        fault = Fault(after_bytes=_count(f, "after_bytes", f"{where}.fault", 0),
                      kind=f["kind"])
        _check(fault.kind in FAULT_KINDS, f"{where}.fault.kind",
               f"must be one of {', '.join(FAULT_KINDS)}")

    return Response(
        status=200 if status is None else status,
        headers=dict(headers),
        delay_ms=_number(r, "delay_ms", where),
        framing=framing,
        chunk_size=_count(r, "chunk_size", where, 0),
        chunk_delay_ms=_number(r, "chunk_delay_ms", where),
        message=message,
        error=error,
        body=body,
        stream_error=stream_error,
        fault=fault,
        read_delay_ms=_number(r, "read_delay_ms", where),
        idle_close=_bool(r, "idle_close", where, False),
        describe_media=describe_media,
    )


def _read_replay(value: Any, where: str, base: Path) -> bytes:
    _check(isinstance(value, str) and value, where, "must be a file path")
    path = Path(value)
    if not path.is_absolute():
        path = base / path
    try:
        return path.read_bytes()
    except OSError as e:
        raise ScenarioError(f"{where}: cannot read {path}: {e.strerror}") from e


def _error(e: Any, where: str, extra: tuple[str, ...]) -> dict[str, Any]:
    _object(e, where, allowed=("type", "message", "code") + extra,
            required=("type", "message"))
    _check(isinstance(e["type"], str) and e["type"], f"{where}.type", "must be a string")
    _check(isinstance(e["message"], str), f"{where}.message", "must be a string")
    code = e.get("code")
    _check(code is None or isinstance(code, str), f"{where}.code", "must be a string or null")
    return {"type": e["type"], "message": e["message"], "code": code}


# ---- a scripted message -----------------------------------------------------------------


def _message(m: Any, where: str) -> dict[str, Any]:
    """Returns the message with content normalized; id, model and tool ids stay None when
    not given, because their defaults depend on the call (see the provider renderers)."""
    _object(m, where, allowed=("id", "model", "content", "stop_reason", "stop_sequence",
                               "usage", "in_message_start", "reasoning_apart", "container",
                               "tool_index_reused"))
    for key in ("id", "model", "stop_reason"):
        _check(m.get(key) is None or isinstance(m[key], str), f"{where}.{key}",
               "must be a string")
    _check(m.get("stop_sequence") is None or isinstance(m["stop_sequence"], str),
           f"{where}.stop_sequence", "must be a string or null")
    content = m.get("content", [])
    _check(isinstance(content, list), f"{where}.content", "must be a list")
    blocks = [_block(b, f"{where}.content[{i}]") for i, b in enumerate(content)]

    usage = m.get("usage", {})
    _object(usage, f"{where}.usage", allowed=USAGE_KEYS)
    usage = {k: _count(usage, k, f"{where}.usage", 0) for k in USAGE_KEYS}

    _check(not m.get("reasoning_apart") or usage["reasoning_tokens"] <= usage["output_tokens"],
           f"{where}.usage", "reasoning_tokens are part of output_tokens")
    container = m.get("container")
    _check(container is None or (isinstance(container, dict) and isinstance(container.get("id"), str)),
           f"{where}.container", "must be an object with a string id")
    stop_reason = m.get("stop_reason")
    if stop_reason is None:
        has_tool = any(b["type"] == "tool_use" for b in blocks)
        stop_reason = "tool_use" if has_tool else "end_turn"
    return {
        "id": m.get("id"),
        "model": m.get("model"),
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": m.get("stop_sequence"),
        "usage": usage,
        "in_message_start": _bool(m, "in_message_start", where, False),
        "reasoning_apart": _bool(m, "reasoning_apart", where, False),
        "tool_index_reused": _bool(m, "tool_index_reused", where, False),
        "container": container,
    }


def _block(b: Any, where: str) -> dict[str, Any]:
    _check(isinstance(b, dict) and isinstance(b.get("type"), str), where,
           "must be an object with a type")
    kind = b["type"]
    if kind == "text":
        # `citations` (Anthropic): citation objects, streamed as citations_delta before the
        # text, or given in content_block_start with `citations_at_start`.
        _object(b, where, allowed=("type", "text", "deltas", "citations", "citations_at_start"),
                required=("text",))
        citations = b.get("citations", [])
        _check(isinstance(citations, list) and all(isinstance(c, dict) for c in citations),
               f"{where}.citations", "must be a list of objects")
        return {"type": "text", "text": b["text"],
                "deltas": _text_deltas(b, "text", where), "citations": list(citations),
                "citations_at_start": _bool(b, "citations_at_start", where, False)}
    if kind == "thinking":
        _object(b, where, allowed=("type", "thinking", "signature", "deltas", "openai_keys",
                                   "openai_details"),
                required=("thinking",))
        signature = b.get("signature", "")
        _check(isinstance(signature, str), f"{where}.signature", "must be a string")
        keys = b.get("openai_keys", ["reasoning_content"])
        _check(_strings(keys) and keys and set(keys) <= set(REASONING_KEYS),
               f"{where}.openai_keys", f"must be a non-empty list of {', '.join(REASONING_KEYS)}")
        # `openai_details` (OpenAI only; OpenRouter's reasoning_details): one list of detail
        # objects per chunk, sent with the piece of the same place (past the pieces: in chunks
        # of their own), as they are.
        details = b.get("openai_details", [])
        _check(isinstance(details, list) and all(
            isinstance(d, list) and all(isinstance(e, dict) for e in d) for d in details),
            f"{where}.openai_details", "must be a list of lists of objects")
        return {"type": "thinking", "thinking": b["thinking"], "signature": signature,
                "deltas": _text_deltas(b, "thinking", where), "openai_keys": list(keys),
                "openai_details": [list(d) for d in details]}
    if kind == "tool_use":
        _object(b, where, allowed=("type", "id", "name", "input", "deltas", "start_input"),
                required=("name",))
        _check(b.get("start_input") is None or isinstance(b["start_input"], dict),
               f"{where}.start_input", "must be an object")
        _check(b.get("id") is None or isinstance(b["id"], str), f"{where}.id",
               "must be a string")
        _check(isinstance(b["name"], str) and b["name"], f"{where}.name",
               "must be a non-empty string")
        tool_input = b.get("input", {})
        _check(isinstance(tool_input, dict), f"{where}.input", "must be an object")
        deltas = b.get("deltas")
        if deltas is not None:
            _check(_strings(deltas), f"{where}.deltas", "must be a list of strings")
            # `[]` with an input: the input comes whole where the block starts.
            _check(deltas == [] or _same_json("".join(deltas), tool_input), f"{where}.deltas",
                   "their concatenation must be the JSON of input ('' for {})")
        return {"type": "tool_use", "id": b.get("id"), "name": b["name"],
                "input": tool_input, "deltas": deltas, "start_input": b.get("start_input")}
    if kind == "server":
        # A block panto keeps as it came (Anthropic's server_tool_use, web_search_tool_result,
        # compaction, ...): `block` as content_block_start gives it, then `deltas` as
        # input_json_delta fragments (none: the block is whole as it starts), or as delta
        # objects sent as they are (a compaction's compaction_delta).
        _object(b, where, allowed=("type", "block", "deltas"), required=("block",))
        block = b["block"]
        _check(isinstance(block, dict) and isinstance(block.get("type"), str), f"{where}.block",
               "must be an object with a type")
        deltas = b.get("deltas", [])
        _check(_strings(deltas) or (isinstance(deltas, list) and all(
            isinstance(d, dict) and isinstance(d.get("type"), str) for d in deltas)),
               f"{where}.deltas", "must be a list of strings, or of delta objects with a type")
        return {"type": "server", "block": block, "deltas": list(deltas)}
    raise ScenarioError(f"{where}.type: must be text, thinking, tool_use or server, not {kind!r}")


def _text_deltas(b: dict[str, Any], key: str, where: str) -> list[str]:
    text = b[key]
    _check(isinstance(text, str), f"{where}.{key}", "must be a string")
    if "deltas" not in b:
        return split_words(text)
    deltas = b["deltas"]
    _check(_strings(deltas), f"{where}.deltas", "must be a list of strings")
    _check("".join(deltas) == text, f"{where}.deltas",
           f"their concatenation must equal {key}")
    return list(deltas)


def _same_json(text: str, value: dict[str, Any]) -> bool:
    if text == "":
        return value == {}  # Anthropic streams a tool without arguments as one "" fragment
    try:
        return bool(json.loads(text) == value)
    except json.JSONDecodeError:
        return False


# ---- small checks ------------------------------------------------------------------------


def _check(ok: object, where: str, what: str) -> None:
    """Raises ScenarioError unless `ok` is truthy."""
    if not ok:
        raise ScenarioError(f"{where}: {what}")


def _object(obj: Any, where: str, allowed: tuple[str, ...],
            required: tuple[str, ...] = ()) -> None:
    _check(isinstance(obj, dict), where, "must be an object")
    for key in obj:
        _check(key in allowed, where, f"unknown key {key!r} (allowed: {', '.join(allowed)})")
    for key in required:
        _check(key in obj, where, f"missing {key!r}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _strings(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(s, str) for s in v)


def _count(obj: dict[str, Any], key: str, where: str, default: int) -> int:
    v = obj.get(key, default)
    if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
        return v
    raise ScenarioError(f"{where}.{key}: must be a non-negative integer")


def _number(obj: dict[str, Any], key: str, where: str) -> float:
    v = obj.get(key, 0)
    if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0:
        return v
    raise ScenarioError(f"{where}.{key}: must be a non-negative number")


def _bool(obj: dict[str, Any], key: str, where: str, default: bool) -> bool:
    v = obj.get(key, default)
    if isinstance(v, bool):
        return v
    raise ScenarioError(f"{where}.{key}: must be true or false")
