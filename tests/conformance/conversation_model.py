"""What a scripted exchange must give, for make_conversation_cases.py: the emulator's script
of an assistant message, the transcript lines it must produce, the message as the
conversation export keeps it, and the request each provider must be sent for a stored
conversation (the provider-switch rules of docs/conversations.md). Written from the rules
(README.md, include/panto.h), never from a driver's output. Python 3.11 standard library only.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

A, O = "anthropic", "openai"
MODEL = {A: "claude-test", O: "gpt-test"}
USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
              "reasoning_tokens")


def usage(**counts: int) -> dict[str, int]:
    """A usage object with every count (the ones not given are 0)."""
    return {k: counts.get(k, 0) for k in USAGE_KEYS}


def summed(*usages: dict[str, int]) -> dict[str, int]:
    return {k: sum(u[k] for u in usages) for k in USAGE_KEYS}


# ---- Blocks and messages ------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    """Text; `citations` (Anthropic's, e.g. a web search's sources) stream as citations_delta
    before it, or come in its content_block_start with `citations_at_start`."""
    text: str
    citations: tuple[dict[str, Any], ...] = ()
    citations_at_start: bool = False

    @property
    def citations_json(self) -> str:
        """Its citations as stored: the JSON array of the objects as the emulator sends them
        (compact, UTF-8 kept), "" for none."""
        if not self.citations:
            return ""
        return json.dumps(list(self.citations), ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class Thinking:
    text: str
    signature: str = ""  # Anthropic only: OpenAI's reasoning has none
    openai_key: str = "reasoning_content"  # OpenAI: the delta field it streams in


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    input: dict[str, Any]
    result: str  # what the case's tool returns for it
    is_error: bool = False


@dataclass(frozen=True)
class Server:
    """A block panto keeps as it came (Anthropic's server_tool_use, web_search_tool_result,
    ...): `block` as content_block_start gives it, then `deltas`, its input's JSON fragments
    (a server_tool_use's input_json_delta; none: the block is whole as it starts), or delta
    objects of its own type whose members but `type` are set in it (a compaction's
    compaction_delta)."""
    block: dict[str, Any]
    deltas: tuple[Any, ...] = ()

    @property
    def name(self) -> str:
        return self.block["type"]

    @property
    def fragments(self) -> tuple[str, ...]:
        """Its input's content deltas: the streamed fragments, or an input given whole where
        the block starts (not `{}`), as one."""
        if self.deltas or not self.block.get("input"):
            return tuple(d for d in self.deltas if isinstance(d, str) and d)
        return (json.dumps(self.block["input"], ensure_ascii=False, separators=(",", ":")),)

    @property
    def json(self) -> str:
        """Its JSON as stored: the bytes the emulator sends (compact, UTF-8 kept), the
        streamed input in place of the `{}` it starts with."""
        block = dict(self.block)
        for d in self.deltas:
            if isinstance(d, dict):  # (a key set keeps its place, a new one comes last)
                block.update({k: v for k, v in d.items() if k != "type"})
        text = json.dumps(block, ensure_ascii=False, separators=(",", ":"))
        fragments = [d for d in self.deltas if isinstance(d, str)]
        if fragments:
            assert '"input":{}' in text
            text = text.replace('"input":{}', '"input":' + "".join(fragments).strip(), 1)
        return text


@dataclass
class Reply:
    """An assistant message the emulator sends, and the provider and model that made it."""
    provider: str
    id: str
    blocks: list[Any]
    usage: dict[str, int]
    model: str = ""
    # OpenAI only: OpenRouter's reasoning_details, the array each chunk gives (the first with
    # the thinking's text, the others in chunks of their own).
    details: tuple[tuple[dict[str, Any], ...], ...] = ()

    def __post_init__(self) -> None:
        self.model = self.model or MODEL[self.provider]

    @property
    def details_json(self) -> str:
        """Its reasoning_details as stored (docs/conversations.md): the pieces merged by index
        and type (text, summary and signature joined; data the last non-empty; id and format
        the first non-empty), members in the order summary, text, signature, data, id, format,
        index; compact JSON, "" for none."""
        elements: list[dict[str, Any]] = []
        for chunk in self.details:
            for piece in chunk:
                kind, index = piece.get("type"), piece.get("index")
                if not isinstance(kind, str):
                    continue  # no element the server would take back
                e = next((e for e in elements if index is not None
                          and e["index"] == index and e["type"] == kind), None)
                if e is None:
                    e = {"type": kind, "index": index, "members": {}}
                    elements.append(e)
                m = e["members"]
                for k in ("summary", "text", "signature"):
                    if piece.get(k) is not None:
                        m[k] = m.get(k, "") + piece[k]
                if piece.get("data") is not None and (piece["data"] or "data" not in m):
                    m["data"] = piece["data"]
                for k in ("id", "format"):
                    if piece.get(k) is not None and not m.get(k):
                        m[k] = piece[k]
        out = []
        for e in elements:
            obj = {"type": e["type"]}
            obj.update((k, e["members"][k]) for k in ("summary", "text", "signature", "data", "id", "format")
                       if k in e["members"])
            if e["index"] is not None:
                obj["index"] = e["index"]
            out.append(obj)
        return json.dumps(out, ensure_ascii=False, separators=(",", ":")) if out else ""

    @property
    def calls(self) -> list[ToolCall]:
        return [b for b in self.blocks if isinstance(b, ToolCall)]

    @property
    def stop_reason(self) -> str:
        return "tool_use" if self.calls else "end_turn"

    @property
    def provider_stop_reason(self) -> str:
        if self.provider == A:
            return self.stop_reason
        return "tool_calls" if self.calls else "stop"


def arguments(provider: str, call: ToolCall) -> str:
    """The tool call's input as the emulator streams it (one fragment)."""
    return json.dumps(call.input) if provider == A else json.dumps(call.input, separators=(",", ":"))


def script(reply: Reply) -> dict[str, Any]:
    """The emulator's scripted response for the reply."""
    content: list[dict[str, Any]] = []
    for b in reply.blocks:
        if isinstance(b, Text):
            text: dict[str, Any] = {"type": "text", "text": b.text, "deltas": [b.text]}
            if b.citations:
                text["citations"] = list(b.citations)
                text["citations_at_start"] = b.citations_at_start
            content.append(text)
        elif isinstance(b, Thinking):
            block: dict[str, Any] = {"type": "thinking", "thinking": b.text, "deltas": [b.text]}
            if b.signature:
                block["signature"] = b.signature
            if b.openai_key != "reasoning_content":
                block["openai_keys"] = [b.openai_key]
            content.append(block)
        elif isinstance(b, Server):
            content.append({"type": "server", "block": b.block, "deltas": list(b.deltas)})
        else:
            content.append({"type": "tool_use", "id": b.id, "name": b.name, "input": b.input,
                            "deltas": [arguments(reply.provider, b)]})
    if reply.details:
        thinking = next((c for c in content if c["type"] == "thinking"), None)
        if thinking is None:  # details alone (an encrypted reasoning): a thinking of no text
            thinking = {"type": "thinking", "thinking": "", "deltas": [], "openai_keys": ["reasoning"]}
            content.insert(0, thinking)
        thinking["openai_details"] = [list(d) for d in reply.details]
    return {"message": {"id": reply.id, "model": reply.model, "content": content,
                        "stop_reason": reply.stop_reason, "usage": reply.usage}}


def reply_lines(reply: Reply) -> list[dict[str, Any]]:
    """The transcript lines of the reply: message_start to message_end, then its tool calls'
    tool_call_start and tool_result lines (host tools)."""
    lines: list[dict[str, Any]] = [{"event": "message_start", "id": reply.id, "model": reply.model}]
    for i, b in enumerate(reply.blocks):
        if isinstance(b, Server):
            # Its input's fragments as they stream; complete, the block itself and its type.
            lines += ([{"event": "block_start", "index": i, "kind": "server_block"}]
                      + [{"event": "content_delta", "index": i, "kind": "server_block", "text": d}
                         for d in b.fragments]
                      + [{"event": "block_complete", "index": i, "kind": "server_block",
                          "text": b.json, "name": b.name}])
        elif isinstance(b, ToolCall):
            text = arguments(reply.provider, b)
            lines += [{"event": "block_start", "index": i, "kind": "tool_call"},
                      {"event": "tool_details", "index": i, "id": b.id, "name": b.name},
                      {"event": "content_delta", "index": i, "kind": "tool_call", "text": text},
                      {"event": "block_complete", "index": i, "kind": "tool_call", "text": text}]
        else:
            kind = "text" if isinstance(b, Text) else "thinking"
            complete: dict[str, Any] = {"event": "block_complete", "index": i, "kind": kind, "text": b.text}
            if isinstance(b, Text) and b.citations:
                complete["citations"] = b.citations_json
            lines += ([{"event": "block_start", "index": i, "kind": kind}]
                      + ([{"event": "content_delta", "index": i, "kind": kind, "text": b.text}]
                         if b.text else [])
                      + [complete])
    lines.append({"event": "message_end", "stop_reason": reply.stop_reason,
                  "provider_stop_reason": reply.provider_stop_reason, "usage": reply.usage})
    for c in reply.calls:
        lines.append({"event": "tool_call_start", "id": c.id, "name": c.name, "input": c.input,
                      "awaiting_result": True})
    for c in reply.calls:
        lines.append({"event": "tool_result", "id": c.id, "name": c.name, "content": c.result,
                      "is_error": c.is_error, "parts": []})
    return lines


def turn_lines(replies: list[Reply], extra_usage: dict[str, int] | None = None,
               extra_next: int = 1) -> list[dict[str, Any]]:
    """A whole turn's lines: its replies, message_complete (the last reply's stop reason, the
    usage summed over the turn, plus `extra_usage`: a summary request's), done and the
    extra_next lines."""
    lines = [l for r in replies for l in reply_lines(r)]
    total = summed(*[r.usage for r in replies], *([extra_usage] if extra_usage else []))
    last = replies[-1]
    lines.append({"event": "message_complete", "stop_reason": last.stop_reason,
                  "provider_stop_reason": last.provider_stop_reason, "usage": total})
    return lines + [{"event": "done"}] * (1 + extra_next)


# ---- The conversation as the export keeps it ------------------------------------------------


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def stored_block(b: Any, provider: str = "") -> dict[str, Any]:
    if isinstance(b, Text):
        if b.citations:
            return {"type": "text", "text": b.text, "citations": b.citations_json}
        return {"type": "text", "text": b.text}
    if isinstance(b, Thinking):
        out = {"type": "thinking", "text": b.text}
        if b.signature:
            out["signature"] = b.signature
        if provider == O:
            out["name"] = b.openai_key  # the field it came in
        return out
    if isinstance(b, Server):
        return {"type": "server_block", "name": b.name, "json": b.json}
    return {"type": "tool_call", "id": b.id, "name": b.name, "input": b.input}


def stored(reply: Reply) -> list[dict[str, Any]]:
    """The reply as the conversation keeps it, with its round of tool results if any."""
    out = [{"role": "assistant", "content": [stored_block(b, reply.provider) for b in reply.blocks],
            "provider": reply.provider, "model": reply.model, "stop_reason": reply.stop_reason,
            "usage": reply.usage}]
    if reply.details_json:
        out[0]["reasoning_details"] = reply.details_json
    if reply.calls:
        out.append({"role": "user", "content": [
            {"type": "tool_result", "id": c.id, "content": c.result, "is_error": c.is_error}
            for c in reply.calls]})
    return out


def turn(text: str, *replies: Reply) -> list[dict[str, Any]]:
    """The messages a turn adds: the user's, then each reply with its results."""
    return [user(text)] + [m for r in replies for m in stored(r)]


# ---- The request a stored conversation must become ----------------------------------------


ALLOWED_ID = re.compile(r"^[a-zA-Z0-9_-]{1,40}$")


def sent_id(call_id: str) -> str:
    """A tool-call id as sent: as is when the providers take it, else "call_" and the first
    32 hex digits of its SHA-256 (the call and its result alike)."""
    if ALLOWED_ID.match(call_id):
        return call_id
    return "call_" + hashlib.sha256(call_id.encode()).hexdigest()[:32]


def sent_blocks(message: dict[str, Any], provider: str, model: str) -> list[dict[str, Any]]:
    """The message's blocks that go to (provider, model): thinking and server blocks only to
    the one that made them, a text's citations likewise (the text goes without them);
    never an empty text (the API refuses it)."""
    same = message.get("provider") == provider and message.get("model") == model
    return [b if same or "citations" not in b else {**b, "citations": None}  # (None: left out)
            for b in message["content"]
            if (b["type"] not in ("thinking", "redacted_thinking", "server_block") or same)
            and not (b["type"] == "text" and b["text"] == "")]


def anthropic_messages(messages: list[dict[str, Any]], model: str) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        content = []
        for b in sent_blocks(m, A, model):
            t = b["type"]
            if t == "text":
                text: dict[str, Any] = {"type": "text", "text": b["text"]}
                if "citations" in b:  # as received, or left out entirely
                    text["citations"] = (json.loads(b["citations"]) if b["citations"] is not None
                                         else {"$absent": True})
                content.append(text)
            elif t == "thinking":
                if b.get("signature"):
                    content.append({"type": "thinking", "thinking": b["text"],
                                    "signature": b["signature"]})
            elif t == "redacted_thinking":
                content.append({"type": "redacted_thinking", "data": b["text"]})
            elif t == "server_block":
                content.append(json.loads(b["json"]))  # as received (the Zig tests check bytes)
            elif t == "tool_call":
                content.append({"type": "tool_use", "id": sent_id(b["id"]), "name": b["name"],
                                "input": b["input"]})
            elif t == "tool_result":
                r: dict[str, Any] = {"type": "tool_result", "tool_use_id": sent_id(b["id"]),
                                     "content": b["content"]}
                if b["is_error"]:
                    r["is_error"] = True
                content.append(r)
            else:
                raise ValueError(f"no Anthropic rendering here for {t}")
        if not content:
            continue
        if m["role"] == "user" and out and out[-1]["role"] == "user":
            # Consecutive user messages go as one, tool results first (the API takes no two
            # user messages in a row, and wants a message's tool_result blocks before the rest).
            merged = out[-1]["content"] + content
            out[-1]["content"] = ([b for b in merged if b["type"] == "tool_result"]
                                  + [b for b in merged if b["type"] != "tool_result"])
            continue
        out.append({"role": m["role"], "content": content})
    return out


def openai_messages(messages: list[dict[str, Any]], model: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in messages:
        blocks = sent_blocks(m, O, model)
        texts = [b["text"] for b in blocks if b["type"] == "text"]
        calls = [b for b in blocks if b["type"] == "tool_call"]
        if m["role"] == "user":
            for b in blocks:
                if b["type"] == "tool_result":
                    out.append({"role": "tool", "tool_call_id": sent_id(b["id"]),
                                "content": {"$text": b["content"]}})
            if texts:
                out.append({"role": "user", "content": {"$text": "".join(texts)}})
            continue
        if not texts and not calls:
            continue  # an assistant message left empty is left out
        msg: dict[str, Any] = {"role": "assistant",
                               "content": {"$text": "".join(texts)} if texts else None}
        reasoning = [b["text"] for b in blocks
                     if b["type"] == "thinking" and b.get("name") == "reasoning_content"]
        if calls and reasoning:
            msg["reasoning_content"] = "".join(reasoning)  # DeepSeek wants it back with calls
        if calls and m.get("reasoning_details"):
            # OpenRouter's, back with the calls to the model that wrote them; never `reasoning`.
            same = m.get("provider") == O and m.get("model") == model
            msg["reasoning_details"] = json.loads(m["reasoning_details"]) if same else {"$absent": True}
            msg["reasoning"] = {"$absent": True}
        if calls:
            msg["tool_calls"] = [{"id": sent_id(c["id"]), "type": "function",
                                  "function": {"name": c["name"], "arguments": {"$json": c["input"]}}}
                                 for c in calls]
        out.append(msg)
    return out


def request(provider: str, conversation: list[dict[str, Any]], model: str = "",
            **more: Any) -> dict[str, Any]:
    """An expect_requests entry: the path and the stored conversation as the provider must
    get it (and `more` of the body, which may replace the messages)."""
    model = model or MODEL[provider]
    if provider == A:
        body = {"model": model, "messages": anthropic_messages(conversation, model)}
        return {"method": "POST", "path": "/v1/messages", "body_contains": {**body, **more}}
    body = {"model": model, "messages": openai_messages(conversation, model)}
    return {"method": "POST", "path": "/v1/chat/completions", "body_contains": {**body, **more}}


# ---- Compaction ------------------------------------------------------------------------------


SUMMARY_PREFIX = "The conversation before this point was summarized:\n\n<summary>\n"
SUMMARY_SUFFIX = "\n</summary>"


def summary_message(summary: str, message_count: int, tokens_before: int) -> dict[str, Any]:
    """The user message that stands for the summarized messages."""
    return {"role": "user",
            "content": [{"type": "text", "text": SUMMARY_PREFIX + summary + SUMMARY_SUFFIX}],
            "compaction": {"message_count": message_count, "tokens_before": tokens_before}}


def chars(message: dict[str, Any]) -> int:
    """The characters of a message the estimate counts (text, thinking, tool names, inputs
    and results; the cases' messages have no media)."""
    n = 0
    for b in message["content"]:
        t = b["type"]
        if t in ("text", "thinking", "redacted_thinking"):
            n += len(b["text"])
        elif t == "tool_call":
            n += len(b["name"]) + len(json.dumps(b["input"], separators=(",", ":")))
        elif t == "tool_result":
            n += len(b["content"])
    return n + len(message.get("reasoning_details", ""))


def exact_tokens(messages: list[dict[str, Any]]) -> int:
    """The estimate (characters / 4) of messages whose every count divides by 4, so that
    rounding per message or over all gives the same; refuses others."""
    total = 0
    for m in messages:
        n = chars(m)
        if n % 4:
            raise ValueError(f"{n} characters do not divide by 4: {m}")
        total += n // 4
    return total


def usage_tokens(u: dict[str, int]) -> int:
    return u["input_tokens"] + u["cache_read_tokens"] + u["cache_write_tokens"] + u["output_tokens"]
