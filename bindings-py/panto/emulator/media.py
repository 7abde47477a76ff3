"""The media parts of a request: what images and PDFs a client sent, in both wire formats.

Anthropic: `image` and `document` blocks (`source: {"type": "base64", "media_type", "data"}`)
in a message's content, and inside a `tool_result` block's content. OpenAI Chat Completions:
`image_url` parts (`{"url": "data:<type>;base64,<data>"}`) and `file` parts (`{"file_data":
"data:...;base64,...", "filename"}`) in a message's content. Each is described by its kind,
media type, size, sha256 and, for an image, its pixel size read from the format's header
(standard library only: the emulator decodes nothing).

The other three APIs are read into the same description, a "message" being an item or
content of theirs: OpenAI Responses, `input_image` (`image_url` a data URL) and `input_file`
(`file_data`, `filename`) parts in an `input` item's content and in a `function_call_output`'s
output; Gemini, `inlineData` parts (`mimeType`, `data`) of `contents`, those after a
`functionResponse` counted as its result's; Bedrock, `image` and `document` blocks
(`format`, `source.bytes`) of `messages`, and inside a `toolResult`'s content.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import struct
from typing import Any

__all__ = ["request_media", "new_media", "describe", "pixel_size"]


def request_media(path: str, body: Any) -> list[dict[str, Any]]:
    """Every media part of a request body, in order: {"message": index of its message,
    "role", "in": "content" | "tool_result", "kind": "image" | "document", "media_type",
    "byte_size", "sha256", "width", "height", "name"} (a part whose data is not base64 has
    byte_size -1 and no hash)."""
    if isinstance(body, dict) and isinstance(body.get("input"), list):
        return _responses_media(body["input"])
    if isinstance(body, dict) and isinstance(body.get("contents"), list):
        return _gemini_media(body["contents"])
    if isinstance(body, dict) and path.endswith("/converse-stream") and isinstance(body.get("messages"), list):
        return _bedrock_media(body["messages"])
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return []
    found: list[dict[str, Any]] = []
    openai = path.startswith("/v1/chat/completions")
    for i, message in enumerate(body["messages"]):
        if not isinstance(message, dict) or not isinstance(message.get("content"), list):
            continue
        role = message.get("role")
        for block in message["content"]:
            if not isinstance(block, dict):
                continue
            if openai:
                part = _openai_part(block)
                if part is not None:
                    found.append({"message": i, "role": role, "in": "content", **part})
                continue
            part = _anthropic_block(block)
            if part is not None:
                found.append({"message": i, "role": role, "in": "content", **part})
            elif block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                for inner in block["content"]:
                    part = _anthropic_block(inner) if isinstance(inner, dict) else None
                    if part is not None:
                        found.append({"message": i, "role": role, "in": "tool_result", **part})
    return found


def new_media(path: str, body: Any) -> list[dict[str, Any]]:
    """The media parts of the messages after the last assistant message: what this request
    adds to the conversation (the user's turn, or the results of a tool round)."""
    media = request_media(path, body)
    messages = _messages(body)
    last = -1
    for i, message in enumerate(messages):
        if isinstance(message, dict) and (message.get("role") in ("assistant", "model")
                                          or message.get("type") in ("function_call", "reasoning")):
            last = i
    return [m for m in media if m["message"] > last]


def describe(media: list[dict[str, Any]]) -> str:
    """What an assistant says it received: "Received 2 attachments: image/png 64x48,
    application/pdf." ("Received no attachments." for none)."""
    if not media:
        return "Received no attachments."
    items = []
    for m in media:
        item = m["media_type"]
        if m["kind"] == "image" and m["width"]:
            item += f" {m['width']}x{m['height']}"
        items.append(item)
    noun = "attachment" if len(items) == 1 else "attachments"
    return f"Received {len(items)} {noun}: {', '.join(items)}."


def _messages(body: Any) -> list[Any]:
    """The request's list of messages, whichever API's: messages, input items or contents."""
    if not isinstance(body, dict):
        return []
    for key in ("input", "contents", "messages"):
        value = body.get(key)
        if isinstance(value, list):
            return value
    return []


def _responses_media(items: list[Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        output = item.get("type") == "function_call_output"
        parts = item.get("output") if output else item.get("content")
        where = "tool_result" if output else "content"
        role = "user" if output else item.get("role")
        for part in parts if isinstance(parts, list) else []:
            described = _responses_part(part) if isinstance(part, dict) else None
            if described is not None:
                found.append({"message": i, "role": role, "in": where, **described})
    return found


def _responses_part(part: dict[str, Any]) -> dict[str, Any] | None:
    if part.get("type") == "input_image":
        media_type, data = _data_url(part.get("image_url"))
        return _described("image", media_type, data, "")
    if part.get("type") == "input_file":
        media_type, data = _data_url(part.get("file_data"))
        filename = part.get("filename")
        return _described("document", media_type, data, filename if isinstance(filename, str) else "")
    return None


def _gemini_media(contents: list[Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for i, content in enumerate(contents):
        if not isinstance(content, dict) or not isinstance(content.get("parts"), list):
            continue
        where = "content"
        for part in content["parts"]:
            if not isinstance(part, dict):
                continue
            if "functionResponse" in part:
                where = "tool_result"
            elif "text" in part:
                where = "content"
            inline = part.get("inlineData")
            if isinstance(inline, dict):
                media_type = str(inline.get("mimeType", ""))
                kind = "image" if media_type.startswith("image/") else "document"
                found.append({"message": i, "role": content.get("role"), "in": where,
                              **_described(kind, media_type, inline.get("data"), "")})
    return found


def _bedrock_media(messages: list[Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("content"), list):
            continue
        for block in message["content"]:
            if not isinstance(block, dict):
                continue
            inner: list[Any] = []
            if isinstance(block.get("toolResult"), dict):
                inner = block["toolResult"].get("content") or []
            for part, where in [(block, "content")] + [(b, "tool_result") for b in inner]:
                described = _bedrock_block(part) if isinstance(part, dict) else None
                if described is not None:
                    found.append({"message": i, "role": message.get("role"), "in": where,
                                  **described})
    return found


def _bedrock_block(block: dict[str, Any]) -> dict[str, Any] | None:
    for kind in ("image", "document"):
        value = block.get(kind)
        if isinstance(value, dict) and isinstance(value.get("source"), dict):
            fmt = str(value.get("format", ""))
            media_type = f"image/{fmt}" if kind == "image" else f"application/{fmt}"
            name = value.get("name")
            return _described(kind, media_type, value["source"].get("bytes"),
                              name if isinstance(name, str) else "")
    return None


def _anthropic_block(block: dict[str, Any]) -> dict[str, Any] | None:
    kind = block.get("type")
    source = block.get("source")
    if kind not in ("image", "document") or not isinstance(source, dict):
        return None
    title = block.get("title")
    return _described(kind, str(source.get("media_type", "")), source.get("data"),
                      title if isinstance(title, str) else "")


def _openai_part(part: dict[str, Any]) -> dict[str, Any] | None:
    if part.get("type") == "image_url" and isinstance(part.get("image_url"), dict):
        media_type, data = _data_url(part["image_url"].get("url"))
        return _described("image", media_type, data, "")
    if part.get("type") == "file" and isinstance(part.get("file"), dict):
        file = part["file"]
        media_type, data = _data_url(file.get("file_data"))
        name = file.get("filename") if isinstance(file.get("filename"), str) else ""
        return _described("document", media_type, data, name)
    return None


def _data_url(url: Any) -> tuple[str, Any]:
    """(media type, base64 text) of a `data:<type>;base64,<data>` URL; ("", None) otherwise."""
    if not isinstance(url, str) or not url.startswith("data:"):
        return "", None
    head, sep, data = url[len("data:"):].partition(",")
    if not sep or not head.endswith(";base64"):
        return "", None
    return head[: -len(";base64")], data


def _described(kind: str, media_type: str, data: Any, name: str) -> dict[str, Any]:
    raw = None
    if isinstance(data, str):
        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raw = None
    width, height = pixel_size(raw) if raw is not None and kind == "image" else (0, 0)
    return {
        "kind": kind,
        "media_type": media_type,
        "name": name,
        "byte_size": len(raw) if raw is not None else -1,
        "sha256": hashlib.sha256(raw).hexdigest() if raw is not None else "",
        "width": width,
        "height": height,
    }


def pixel_size(data: bytes) -> tuple[int, int]:
    """An image's (width, height) from its header: PNG, JPEG, GIF, WEBP, BMP; (0, 0) when
    the bytes are none of these or too short."""
    try:
        if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR":
            return struct.unpack(">II", data[16:24])
        if data[:6] in (b"GIF87a", b"GIF89a"):
            return struct.unpack("<HH", data[6:10])
        if data[:2] == b"BM":
            width, height = struct.unpack("<ii", data[18:26])
            return width, abs(height)  # a negative height: rows stored top-down
        if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
            return _webp_size(data)
        if data[:3] == b"\xff\xd8\xff":
            return _jpeg_size(data)
    except struct.error:
        pass
    return 0, 0


def _webp_size(data: bytes) -> tuple[int, int]:
    chunk = data[12:16]
    if chunk == b"VP8X":  # extended: 24-bit canvas size minus one
        w = int.from_bytes(data[24:27], "little") + 1
        h = int.from_bytes(data[27:30], "little") + 1
        return w, h
    if chunk == b"VP8L":  # lossless: 14-bit sizes minus one after the 0x2f signature
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 ":  # lossy: after the frame tag and the start code
        w, h = struct.unpack("<HH", data[26:30])
        return w & 0x3FFF, h & 0x3FFF
    return 0, 0


def _jpeg_size(data: bytes) -> tuple[int, int]:
    """The size in the first SOF segment, walking the segments from the start."""
    i = 2
    while i + 4 <= len(data):
        if data[i] != 0xFF:
            return 0, 0
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # no length
            i += 2
            continue
        length = struct.unpack(">H", data[i + 2:i + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h, w = struct.unpack(">HH", data[i + 5:i + 9])
            return w, h
        i += 2 + length
    return 0, 0
