#!/usr/bin/env python3
"""Generates the media_* conformance cases: images and PDFs in tool results and user turns.

    .venv/bin/python tests/conformance/make_media_cases.py          # (re)write the cases
    .venv/bin/python tests/conformance/make_media_cases.py --check  # fail if out of date

Each entry of CASES becomes two case folders, cases/media_<NAME>_anthropic/ and
cases/media_<NAME>_openai/, whose case.json and expected.jsonl are written from what must
happen (issue 15's rules, README.md "Media in a case"), never from a driver's output:

- the media are test files of media.py; what each must become is written in the entry: passed
  through byte for byte (the request holds exactly the file: `$media_sha256`; the part's
  byte_size and data_len are the file's: `$media_size`, `$media_base64_len`), fitted (the
  request holds an image of that format and size within 2000x2000, of the original's aspect
  ratio, with alpha when the original has it: `$image`; byte_size and data_len depend on the
  codec: `$range` up to the limits), or dropped (a text note `[attachment NAME dropped: ...]`:
  `$prefix`);
- the model's answer is the emulator's `describe_media` text, which lists the media the
  request carried with their pixel sizes (read from their headers by the emulator), so every
  language's transcript shows what arrived;
- a tool-result case: the model calls a tool (`fetch_media`, returning the entry's parts, or
  the native `read` tool on the generated media folder), then answers; a user-turn case: the
  turn is the entry's parts.

Python 3.11 standard library only.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from case_files import sync

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CASES_DIR = HERE / "cases"

MAX_RAW = 3_538_944  # 4.5 MiB of base64 (4,718,592 characters), in raw bytes
MAX_BASE64 = 4_718_592
MODEL = {"anthropic": "claude-test", "openai": "gpt-test"}
USAGE_CALL = {"input_tokens": 40, "output_tokens": 10}
USAGE_ANSWER = {"input_tokens": 60, "output_tokens": 8}
ZERO_USAGE = {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0,
              "cache_write_tokens": 0, "reasoning_tokens": 0}


# ---- What a part must become ----------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Passed:
    """Media sent byte for byte."""
    file: str
    kind: str  # "image" | "document"
    media_type: str
    width: int = 0
    height: int = 0
    name: str = ""
    hint: str = ""  # a media type given with the bytes (which decide)


@dataclass(frozen=True)
class Fitted:
    """An image decoded, resized to fit 2000x2000 (aspect kept) and encoded again."""
    file: str
    media_type: str
    width: int
    height: int
    alpha: bool = False
    name: str = ""


@dataclass(frozen=True)
class Dropped:
    """Media that cannot be sent: a text note naming it."""
    file: str
    name: str


Outcome = Text | Passed | Fitted | Dropped


@dataclass(frozen=True)
class Case:
    name: str
    description: str
    parts: list[Outcome]  # what the tool returns, or the user turn
    where: str = "tool"  # "tool" (fetch_media), "read" (the native read tool), "user"
    print_conversation: bool = False
    names: dict[str, str] = field(default_factory=dict)  # file -> name given with it


def given(o: Outcome) -> Any:
    """The part as a case writes it (README: a string, or {"media", "name"})."""
    if isinstance(o, Text):
        return o.text
    part: dict[str, Any] = {"media": o.file}
    if isinstance(o, Passed) and o.hint:
        part["hint"] = o.hint
    if o.name:
        part["name"] = o.name
    return part


def note_prefix(o: Dropped) -> str:
    return f"[attachment {o.name} dropped: "


def is_media(o: Outcome) -> bool:
    return isinstance(o, (Passed, Fitted))


def data_matcher(o: Passed | Fitted) -> dict[str, Any]:
    if isinstance(o, Passed):
        return {"$media_sha256": o.file}
    want: dict[str, Any] = {"format": o.media_type.split("/")[1], "fits": 2000, "aspect_of": o.file,
                            "size": [o.width, o.height]}
    if o.alpha:
        want["alpha"] = True
    return {"$image": want}


def part_line(o: Outcome) -> dict[str, Any]:
    """A part as the tool_result line shows it."""
    if isinstance(o, (Text, Dropped)):
        text: Any = o.text if isinstance(o, Text) else {"$prefix": note_prefix(o)}
        return {"kind": "text", "text": text, "media_type": "", "name": "", "byte_size": 0,
                "width": 0, "height": 0, "data_len": 0}
    if isinstance(o, Passed):
        size: Any = {"$media_size": o.file}
        length: Any = {"$media_base64_len": o.file}
        kind = o.kind
    else:
        size, length, kind = {"$range": [1, MAX_RAW]}, {"$range": [4, MAX_BASE64]}, "image"
    return {"kind": kind, "text": "", "media_type": o.media_type, "name": o.name, "byte_size": size,
            "width": o.width, "height": o.height, "data_len": length}


def joined_text(parts: list[Outcome]) -> Any:
    """The text parts joined with "\\n": a string, or a $prefix matcher up to the first note."""
    out = ""
    for o in parts:
        if isinstance(o, Text):
            out += ("\n" if out else "") + o.text
        elif isinstance(o, Dropped):
            return {"$prefix": out + ("\n" if out else "") + note_prefix(o)}
    return out


def description(parts: list[Outcome]) -> str:
    """The emulator's describe_media answer for the media the request carries."""
    items = []
    for o in parts:
        if isinstance(o, (Passed, Fitted)):
            kind = o.kind if isinstance(o, Passed) else "image"
            items.append(o.media_type + (f" {o.width}x{o.height}" if kind == "image" else ""))
    if not items:
        return "Received no attachments."
    return f"Received {len(items)} {'attachment' if len(items) == 1 else 'attachments'}: {', '.join(items)}."


# ---- Wire shapes ----------------------------------------------------------------------------


def anthropic_block(o: Outcome) -> dict[str, Any]:
    if isinstance(o, Text):
        return {"type": "text", "text": o.text}
    if isinstance(o, Dropped):
        return {"type": "text", "text": {"$prefix": note_prefix(o)}}
    kind = o.kind if isinstance(o, Passed) else "image"
    block: dict[str, Any] = {"type": kind, "source": {"type": "base64", "media_type": o.media_type,
                                                      "data": data_matcher(o)}}
    if kind == "document":
        block["title"] = o.name if o.name else {"$absent": True}
    return block


def openai_part(o: Outcome) -> dict[str, Any]:
    if isinstance(o, Text):
        return {"type": "text", "text": o.text}
    if isinstance(o, Dropped):
        return {"type": "text", "text": {"$prefix": note_prefix(o)}}
    if isinstance(o, Passed) and o.kind == "document":
        return {"type": "file", "file": {"file_data": data_matcher(o), "filename": o.name or "document.pdf"}}
    return {"type": "image_url", "image_url": {"url": data_matcher(o)}}


def stored_block(o: Outcome) -> dict[str, Any]:
    """A part as the conversation export keeps it."""
    if isinstance(o, Text):
        return {"type": "text", "text": o.text}
    if isinstance(o, Dropped):
        return {"type": "text", "text": {"$prefix": note_prefix(o)}}
    kind = o.kind if isinstance(o, Passed) else "image"
    block: dict[str, Any] = {"type": kind, "media_type": o.media_type, "data": data_matcher(o)}
    if kind == "document" and o.name:
        block["name"] = o.name
    return block


def tool_result_request(provider: str, call_id: str, parts: list[Outcome]) -> list[dict[str, Any]]:
    """The messages that carry a tool's result in the next request."""
    has_media = any(is_media(o) for o in parts)
    if provider == "anthropic":
        content: Any = [anthropic_block(o) for o in parts] if has_media else message_text(parts)
        return [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id,
                                              "content": content}]}]
    text = joined_text(parts)
    media = [o for o in parts if is_media(o)]
    if isinstance(text, str):
        lines = [text] if text else []
        lines += [f"[attachment {i}: {o.media_type}, in the next user message]"
                  for i, o in enumerate(media, start=1)]
        text = "\n".join(lines)
    messages: list[dict[str, Any]] = [{"role": "tool", "tool_call_id": call_id, "content": text}]
    if media:
        messages.append({"role": "user", "content": [
            {"type": "text", "text": f"Attachments of tool result {call_id}:"}]
            + [openai_part(o) for o in media]})
    return messages


def message_text(parts: list[Outcome]) -> Any:
    """A plain (all-text) result as a message content: the text, or its note's $prefix."""
    text = joined_text(parts)
    return {"$text": text} if isinstance(text, str) else text


# ---- The case -------------------------------------------------------------------------------


def stored_assistant(provider: str, model: str, content: list[Any], stop_reason: str,
                     u: dict[str, int]) -> dict[str, Any]:
    """An assistant message as the conversation export keeps it: who made it, why it
    stopped, and its usage (every count)."""
    return {"role": "assistant", "content": content, "provider": provider, "model": model,
            "stop_reason": stop_reason, "usage": usage(u)}


def usage(u: dict[str, int]) -> dict[str, int]:
    return dict(ZERO_USAGE, **u)


def summed(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: usage(a)[k] + usage(b)[k] for k in ZERO_USAGE}


def tool_call(provider: str, case: Case) -> tuple[str, str, dict[str, Any]]:
    """(call id, tool name, input) of the model's call."""
    prefix = "toolu" if provider == "anthropic" else "call"
    if case.where == "read":
        return f"{prefix}_{case.name}", "read", {"path": case.parts[0].file}  # type: ignore[union-attr]
    files = [o.file for o in case.parts if not isinstance(o, Text)]
    return f"{prefix}_{case.name}", "fetch_media", {"files": files}


def build(provider: str, case: Case) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The case.json and the expected transcript of one case on one provider."""
    model = MODEL[provider]
    end_turn = "end_turn" if provider == "anthropic" else "stop"
    answer_text = description(case.parts)
    msg_id = (lambda n: f"msg_{case.name}_{n}") if provider == "anthropic" else (lambda n: f"chatcmpl-{case.name}-{n}")
    answer = {"describe_media": True,
              "message": {"id": msg_id(2 if case.where != "user" else 1), "model": model,
                          "usage": USAGE_ANSWER}}
    config: dict[str, Any] = {"provider": provider, "model": model, "api_key": "test-key"}
    data: dict[str, Any] = {"description": f"{case.description} ({provider})", "config": config}
    lines: list[dict[str, Any]] = []
    answer_lines = [
        {"event": "block_start", "index": 0, "kind": "text"},
        {"event": "content_delta", "index": 0, "kind": "text", "text": answer_text},
        {"event": "block_complete", "index": 0, "kind": "text", "text": answer_text},
        {"event": "message_end", "stop_reason": "end_turn", "provider_stop_reason": end_turn,
         "usage": usage(USAGE_ANSWER)},
    ]
    if case.where == "user":
        data["turns"] = [[given(o) for o in case.parts]]
        data["script"] = {"responses": [answer]}
        content = ([anthropic_block(o) for o in case.parts] if provider == "anthropic"
                   else [openai_part(o) for o in case.parts])
        data["expect_requests"] = [{"method": "POST", "body_contains": {
            "messages": [{"role": "user", "content": content}]}}]
        lines += [{"event": "message_start", "id": msg_id(1), "model": model}] + answer_lines
        lines.append({"event": "message_complete", "stop_reason": "end_turn",
                      "provider_stop_reason": end_turn, "usage": usage(USAGE_ANSWER)})
        conversation = [{"role": "user", "content": [stored_block(o) for o in case.parts]},
                        stored_assistant(provider, model, [{"type": "text", "text": answer_text}],
                                         "end_turn", USAGE_ANSWER)]
    else:
        question = "Show me the file."
        call_id, tool_name, tool_input = tool_call(provider, case)
        data["turns"] = [question]
        if case.where == "read":
            config["capabilities"] = ["fs.read"]
            config["read_tool"] = {"root": "$MEDIA_DIR"}
        else:
            data["tools"] = [{
                "name": "fetch_media", "description": "Returns the files asked for.",
                "input_schema": {"type": "object", "properties": {
                    "files": {"type": "array", "items": {"type": "string"}}}, "required": ["files"]},
                "behavior": {"return_parts": [given(o) for o in case.parts]}}]
        arguments = (json.dumps(tool_input) if provider == "anthropic"
                     else json.dumps(tool_input, separators=(",", ":")))
        call = {"message": {"id": msg_id(1), "model": model, "content": [
            {"type": "tool_use", "id": call_id, "name": tool_name, "input": tool_input,
             "deltas": ["", arguments] if provider == "anthropic" else [arguments]}],
            "stop_reason": "tool_use", "usage": USAGE_CALL}}
        data["script"] = {"responses": [call, answer]}
        has_media = any(is_media(o) for o in case.parts)
        lines += [
            {"event": "message_start", "id": msg_id(1), "model": model},
            {"event": "block_start", "index": 0, "kind": "tool_call"},
            {"event": "tool_details", "index": 0, "id": call_id, "name": tool_name},
            {"event": "content_delta", "index": 0, "kind": "tool_call", "text": arguments},
            {"event": "block_complete", "index": 0, "kind": "tool_call", "text": arguments},
            {"event": "message_end", "stop_reason": "tool_use",
             "provider_stop_reason": "tool_use" if provider == "anthropic" else "tool_calls",
             "usage": usage(USAGE_CALL)},
            {"event": "tool_call_start", "id": call_id, "name": tool_name, "input": tool_input,
             "awaiting_result": case.where != "read"},
            {"event": "tool_result", "id": call_id, "name": tool_name,
             "content": joined_text(case.parts), "is_error": False,
             "parts": [part_line(o) for o in case.parts] if has_media else []},
            {"event": "message_start", "id": msg_id(2), "model": model},
        ] + answer_lines
        lines.append({"event": "message_complete", "stop_reason": "end_turn",
                      "provider_stop_reason": end_turn, "usage": summed(USAGE_CALL, USAGE_ANSWER)})
        if provider == "anthropic":
            assistant = {"role": "assistant", "content": [
                {"type": "tool_use", "id": call_id, "name": tool_name, "input": tool_input}]}
        else:
            assistant = {"role": "assistant", "tool_calls": [
                {"id": call_id, "type": "function",
                 "function": {"name": tool_name, "arguments": {"$json": tool_input}}}]}
        user = {"role": "user", "content": {"$text": question}}
        data["expect_requests"] = [
            {"method": "POST", "body_contains": {"messages": [user]}},
            {"method": "POST", "body_contains": {
                "messages": [user, assistant] + tool_result_request(provider, call_id, case.parts)}},
        ]
        stored_result: Any = ([stored_block(o) for o in case.parts] if has_media
                              else joined_text(case.parts))
        conversation = [
            {"role": "user", "content": [{"type": "text", "text": question}]},
            stored_assistant(provider, model, [{"type": "tool_call", "id": call_id, "name": tool_name,
                                                "input": tool_input}], "tool_use", USAGE_CALL),
            {"role": "user", "content": [{"type": "tool_result", "id": call_id,
                                          "content": stored_result, "is_error": False}]},
            stored_assistant(provider, model, [{"type": "text", "text": answer_text}], "end_turn",
                             USAGE_ANSWER),
        ]
    lines += [{"event": "done"}, {"event": "done"}]
    if case.print_conversation:
        data["print_conversation"] = True
        lines.append({"event": "conversation", "messages": conversation})
    return data, lines


# ---- The cases ------------------------------------------------------------------------------


PNG, JPEG, GIF, WEBP, PDF = "image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf"
HERE_IT_IS = Text("Here it is.")

CASES = [
    Case("small_png", "A tool returns text and a small PNG: it passes byte for byte",
         [HERE_IT_IS, Passed("small.png", "image", PNG, 64, 48)]),
    Case("small_jpeg", "A tool returns text and a small JPEG: it passes byte for byte",
         [HERE_IT_IS, Passed("small.jpg", "image", JPEG, 64, 48)]),
    Case("small_webp", "A tool returns text and a small WEBP with alpha: it passes byte for byte",
         [HERE_IT_IS, Passed("small.webp", "image", WEBP, 64, 48)]),
    Case("small_gif", "A tool returns text and a small animated GIF: it passes byte for byte",
         [HERE_IT_IS, Passed("small.gif", "image", GIF, 64, 48)]),
    Case("large_png", "A tool returns a 3000x2000 PNG: it is fitted to 2000x1333, still a PNG",
         [HERE_IT_IS, Fitted("large.png", PNG, 2000, 1333)]),
    Case("large_jpeg", "A tool returns a 4000x3000 JPEG: it is fitted to 2000x1500, still a JPEG",
         [HERE_IT_IS, Fitted("large.jpg", JPEG, 2000, 1500)]),
    Case("large_webp", "A tool returns a 2400x3100 WEBP with alpha: it is fitted to 1548x2000, "
         "still a WEBP with its alpha channel",
         [HERE_IT_IS, Fitted("large.webp", WEBP, 1548, 2000, alpha=True)]),
    Case("large_gif", "A tool returns a 2400x1000 animated GIF: it becomes a 2000x833 PNG of its "
         "first frame", [HERE_IT_IS, Fitted("large.gif", PNG, 2000, 833)]),
    Case("bmp", "A tool returns a 40x30 BMP, which no provider takes: it becomes a PNG of the same "
         "size", [HERE_IT_IS, Fitted("small.bmp", PNG, 40, 30)]),
    Case("pdf", "A tool returns text and a named PDF: it passes byte for byte as a document",
         [Text("The report."), Passed("doc.pdf", "document", PDF, name="report.pdf")]),
    Case("pdf_too_large", "A tool returns a PDF over 20 MiB: it is dropped with a note, the turn goes on",
         [Text("The report."), Dropped("large.pdf", "huge.pdf")]),
    Case("corrupt", "A tool returns a truncated PNG and a JPEG: the PNG becomes a note saying it was "
         "dropped, the JPEG goes, the turn goes on",
         [Text("Two files."), Dropped("truncated.png", "broken.png"), Passed("small.jpg", "image", JPEG, 64, 48)]),
    Case("bomb", "A user turn with a PNG whose header claims 20000x20000 pixels: it is dropped with "
         "a note before any decoding, the turn goes on",
         [Text("What is this?"), Dropped("bomb.png", "huge.png")], where="user"),
    Case("user_turn_image", "A user turn of text and a JPEG: both go, in order; the conversation "
         "keeps the image as base64",
         [Text("Describe this picture."), Passed("small.jpg", "image", JPEG, 64, 48)], where="user",
         print_conversation=True),
    Case("tool_text_and_two_images", "A tool returns text and two images (one passed, one fitted); "
         "the conversation keeps both as base64",
         [Text("Two screenshots."), Passed("small.png", "image", PNG, 64, 48),
          Fitted("large.jpg", JPEG, 2000, 1500)], print_conversation=True),
    Case("hint_contradicts_bytes", "A tool returns a PNG with the hint image/jpeg: the bytes decide, "
         "it goes as the PNG it is", [HERE_IT_IS, Passed("small.png", "image", PNG, 64, 48, hint="image/jpeg")]),
    Case("read_tool_image", "The native read tool reads a PNG: it returns it as an attachment named "
         "after the file", [Passed("small.png", "image", PNG, 64, 48, name="small.png")], where="read"),
]


def files_of(provider: str, case: Case) -> dict[str, str]:
    data, lines = build(provider, case)
    return {"case.json": json.dumps(data, indent=2, ensure_ascii=False) + "\n",
            "expected.jsonl": "".join(json.dumps(l, ensure_ascii=False) + "\n" for l in lines)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="do not write; exit 1 if a generated case differs from the files")
    args = ap.parse_args()
    stale: list[str] = []
    for case in CASES:
        for provider in MODEL:
            sync(CASES_DIR / f"media_{case.name}_{provider}", files_of(provider, case), args.check, stale)
    if stale:
        print("out of date (run make_media_cases.py):\n  " + "\n  ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
