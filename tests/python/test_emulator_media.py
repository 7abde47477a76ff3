"""The emulator's media: it records the images and PDFs of each request (both wire formats,
user messages and tool results; pixel sizes from the headers) and a `describe_media` response
lists what the request added.

    .venv/bin/python -m pytest -q tests/python/test_emulator_media.py
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import io
import json
from typing import Any

import pytest

from panto.emulator import Emulator, ScenarioError, parse
from panto.emulator.media import describe, pixel_size

Image = pytest.importorskip("PIL.Image")

ANTHROPIC = "/v1/messages"
OPENAI = "/v1/chat/completions"
HEADERS = {
    ANTHROPIC: {"x-api-key": "k", "anthropic-version": "2023-06-01", "content-type": "application/json"},
    OPENAI: {"authorization": "Bearer k", "content-type": "application/json"},
}
PDF = b"%PDF-1.4\n%%EOF\n"


def encoded(fmt: str, size: tuple[int, int], mode: str = "RGB") -> bytes:
    out = io.BytesIO()
    Image.new(mode, size, "red" if mode != "RGBA" else (255, 0, 0, 128)).save(out, fmt)
    return out.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def post(emu: Emulator, path: str, messages: list[Any]) -> str:
    """Sends one streaming request with these messages; returns the SSE body."""
    body = {"model": "m", "max_tokens": 10, "stream": True, "messages": messages}
    conn = http.client.HTTPConnection(emu.host, emu.port, timeout=5)
    try:
        conn.request("POST", path, json.dumps(body), HEADERS[path])
        resp = conn.getresponse()
        assert resp.status == 200, resp.read()
        return resp.read().decode()
    finally:
        conn.close()


def streamed_text(sse: str) -> str:
    """The text deltas of an Anthropic or OpenAI stream, joined."""
    out = []
    for line in sse.split("\n"):
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        data = json.loads(line[len("data: "):])
        if data.get("type") == "content_block_delta" and data["delta"].get("type") == "text_delta":
            out.append(data["delta"]["text"])
        for choice in data.get("choices") or []:
            out.append(choice["delta"].get("content") or "")
    return "".join(out)


@pytest.mark.parametrize("fmt, size, mode", [
    ("PNG", (640, 480), "RGB"), ("JPEG", (301, 17), "RGB"), ("GIF", (5, 4000), "P"),
    ("WEBP", (1234, 567), "RGB"), ("WEBP", (77, 33), "RGBA"), ("BMP", (40, 30), "RGB"),
])
def test_pixel_sizes_come_from_the_headers(fmt: str, size: tuple[int, int], mode: str) -> None:
    assert pixel_size(encoded(fmt, size, mode)) == size


def test_lossless_webp_size() -> None:
    out = io.BytesIO()
    Image.new("RGB", (999, 3), "blue").save(out, "WEBP", lossless=True)
    assert pixel_size(out.getvalue()) == (999, 3)


@pytest.mark.parametrize("data", [b"", b"\x89PNG\r\n\x1a\n", b"GIF89a", b"\xff\xd8\xff\xe0\x00", PDF, b"x" * 40])
def test_unknown_or_short_bytes_have_no_size(data: bytes) -> None:
    assert pixel_size(data) == (0, 0)


def test_anthropic_media_in_user_messages_and_tool_results_are_recorded() -> None:
    png, jpeg = encoded("PNG", (64, 48)), encoded("JPEG", (20, 10))
    messages = [
        {"role": "user", "content": [
            {"type": "text", "text": "Look"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(png)}},
            {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": b64(PDF)},
             "title": "a.pdf"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "shot", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [
            {"type": "text", "text": "here"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": b64(jpeg)}}]}]},
    ]
    with Emulator({"responses": [{"describe_media": True}]}) as emu:
        text = streamed_text(post(emu, ANTHROPIC, messages))
        media = emu.requests()[0]["media"]
    assert media == [
        {"message": 0, "role": "user", "in": "content", "kind": "image", "media_type": "image/png", "name": "",
         "byte_size": len(png), "sha256": hashlib.sha256(png).hexdigest(), "width": 64, "height": 48},
        {"message": 0, "role": "user", "in": "content", "kind": "document", "media_type": "application/pdf",
         "name": "a.pdf", "byte_size": len(PDF), "sha256": hashlib.sha256(PDF).hexdigest(), "width": 0, "height": 0},
        {"message": 2, "role": "user", "in": "tool_result", "kind": "image", "media_type": "image/jpeg", "name": "",
         "byte_size": len(jpeg), "sha256": hashlib.sha256(jpeg).hexdigest(), "width": 20, "height": 10},
    ]
    # Only what the request added after the last assistant message is described.
    assert text == "Received 1 attachment: image/jpeg 20x10."


def test_openai_image_url_and_file_parts_are_recorded_and_described() -> None:
    gif, webp = encoded("GIF", (7, 9), "P"), encoded("WEBP", (30, 20), "RGBA")
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "shot", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "two files\n[attachment 1: image/gif, in the next user message]"},
        {"role": "user", "content": [
            {"type": "text", "text": "Attachments of tool result c1:"},
            {"type": "image_url", "image_url": {"url": "data:image/gif;base64," + b64(gif)}},
            {"type": "image_url", "image_url": {"url": "data:image/webp;base64," + b64(webp)}},
            {"type": "file", "file": {"file_data": "data:application/pdf;base64," + b64(PDF), "filename": "d.pdf"}}]},
    ]
    script = {"responses": [{"describe_media": True,
                             "message": {"content": [{"type": "text", "text": " Done."}]}}]}
    with Emulator(script) as emu:
        text = streamed_text(post(emu, OPENAI, messages))
        media = emu.requests()[0]["media"]
    assert [(m["message"], m["kind"], m["media_type"], m["name"], m["width"], m["height"], m["byte_size"])
            for m in media] == [
        (3, "image", "image/gif", "", 7, 9, len(gif)),
        (3, "image", "image/webp", "", 30, 20, len(webp)),
        (3, "document", "application/pdf", "d.pdf", 0, 0, len(PDF)),
    ]
    assert text == "Received 3 attachments: image/gif 7x9, image/webp 30x20, application/pdf. Done."


def test_a_request_without_media_records_none_and_is_described_so() -> None:
    with Emulator({"responses": [{"describe_media": True}]}) as emu:
        text = streamed_text(post(emu, ANTHROPIC, [{"role": "user", "content": "Hi"}]))
        assert emu.requests()[0]["media"] == []
    assert text == "Received no attachments."


def test_data_that_is_not_base64_is_recorded_without_size() -> None:
    messages = [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "not base64!"}}]}]
    with Emulator({"responses": [{"message": {}}]}) as emu:
        post(emu, ANTHROPIC, messages)
        (media,) = emu.requests()[0]["media"]
    assert (media["byte_size"], media["sha256"], media["width"]) == (-1, "", 0)


def test_describe_names_images_with_their_size() -> None:
    image = {"kind": "image", "media_type": "image/png", "width": 3, "height": 2}
    document = {"kind": "document", "media_type": "application/pdf", "width": 0, "height": 0}
    assert describe([image, document]) == "Received 2 attachments: image/png 3x2, application/pdf."


def test_describe_media_goes_with_a_message_only() -> None:
    with pytest.raises(ScenarioError, match=r"responses\[0\].describe_media: goes with a message only"):
        parse({"responses": [{"describe_media": True, "error": {"type": "api_error", "message": "x"}}]})
    with pytest.raises(ScenarioError, match=r"responses\[0\].describe_media: must be true or false"):
        parse({"responses": [{"describe_media": 1}]})
