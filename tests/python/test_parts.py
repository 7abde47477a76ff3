"""Images and PDFs through the Python binding: a user turn of parts (`agent.run([...])`), tools
returning media, the ToolResult event's parts, and the errors (a part of the wrong type is a
TypeError before anything is sent, and leaves the agent as it was).

    PYTHONPATH=bindings-py PANTO_LIBRARY=zig-out/lib/libpanto.so \
        .venv/bin/python -m pytest -q tests/python/test_parts.py
"""

from __future__ import annotations

import base64
import dataclasses
import io
import pickle
from pathlib import Path
from typing import Any, Dict, List

import pytest

import panto
from panto.emulator import Emulator

Image = pytest.importorskip("PIL.Image")

PATHS = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions"}
PDF = b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n"
DESCRIBE = {"describe_media": True}
TOOL_CALL = {"message": {"content": [{"type": "tool_use", "id": "call_1", "name": "shot", "input": {}}]}}


def png(width: int = 8, height: int = 6) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (10, 200, 30)).save(out, "PNG")
    return out.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# Every test here needs the library (conftest.py fails them clearly when it is missing).
pytestmark = pytest.mark.usefixtures("library")


def new_agent(emu: Emulator, provider: str = "anthropic", **kw: Any) -> panto.Agent:
    return panto.Agent(provider=provider, model="test-model", base_url=emu.url, api_key="test-key", **kw)


def answer(stream: panto.Stream) -> str:
    """The text of the turn's last text block (describe_media says what arrived)."""
    last = ""
    for ev in stream:
        if isinstance(ev, panto.BlockComplete) and ev.block_kind == "text":
            last = ev.text
    return last


def shot_tool(result: Any) -> panto.Tool:
    return panto.Tool("shot", "Takes a screenshot.", {"type": "object", "properties": {}}, handler=lambda: result)


# ---- panto.Media ---------------------------------------------------------------------------


def test_media_from_bytes_and_from_a_path(tmp_path: Path) -> None:
    data = png()
    path = tmp_path / "shot.png"
    path.write_bytes(data)
    from_path = panto.Image(path)
    assert (from_path.data, from_path.media_type, from_path.name) == (data, None, "shot.png")
    assert panto.Image(str(path), name="other.png").name == "other.png"
    given = bytearray(data)
    media = panto.Media(given, media_type="image/png")
    given[0] = 0  # a copy was taken: the part does not change
    assert media.data == data and media.media_type == "image/png" and media.name is None
    assert isinstance(panto.Document(PDF), panto.Media)
    with pytest.raises(FileNotFoundError):
        panto.Image(tmp_path / "missing.png")
    with pytest.raises(TypeError, match="needs bytes or a file path, not int"):
        panto.Media(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="media_type must be a str or None"):
        panto.Media(data, media_type=3)  # type: ignore[arg-type]


def test_media_is_immutable_comparable_and_shown_by_size() -> None:
    media = panto.Image(b"abc", media_type="image/png", name="a.png")
    assert repr(media) == "Image(3 bytes, media_type='image/png', name='a.png')"
    with pytest.raises(AttributeError):
        media.name = "b.png"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        media._data = b""  # type: ignore[misc]
    assert media == panto.Image(b"abc", media_type="image/png", name="a.png") != panto.Image(b"abd")
    assert hash(media) == hash(panto.Image(b"abc", media_type="image/png", name="a.png"))
    assert pickle.loads(pickle.dumps(media)) == media


# ---- a user turn of parts -------------------------------------------------------------------


def test_a_user_turn_with_an_image_and_a_pdf(provider: str) -> None:
    image = png(8, 6)
    with Emulator(scenario={"responses": [DESCRIBE]}) as emu, new_agent(emu, provider, cache={"mode": "off"} if provider == "anthropic" else None) as agent:
        stream = agent.run(["Describe these", panto.Image(image), panto.Document(PDF, name="spec.pdf")])
        assert emu.requests() == []  # nothing is sent before the first next()
        assert answer(stream) == "Received 2 attachments: image/png 8x6, application/pdf."
        request = emu.requests()[0]
        conversation = agent.conversation
    assert [(m["kind"], m["sha256"]) for m in request["media"]] == [
        ("image", __import__("hashlib").sha256(image).hexdigest()),
        ("document", __import__("hashlib").sha256(PDF).hexdigest()),
    ]
    content = request["body"]["messages"][0]["content"]
    if provider == "anthropic":
        assert content == [
            {"type": "text", "text": "Describe these"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(image)}},
            {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": b64(PDF)},
             "title": "spec.pdf"},
        ]
    else:
        assert content == [
            {"type": "text", "text": "Describe these"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64(image)}},
            {"type": "file", "file": {"file_data": "data:application/pdf;base64," + b64(PDF), "filename": "spec.pdf"}},
        ]
    # The conversation keeps the media inline, as base64.
    assert conversation[0] == {"role": "user", "content": [
        {"type": "text", "text": "Describe these"},
        {"type": "image", "media_type": "image/png", "data": b64(image)},
        {"type": "document", "media_type": "application/pdf", "data": b64(PDF), "name": "spec.pdf"},
    ]}


def test_one_medium_alone_and_bytes_in_a_list_are_parts() -> None:
    image = png()
    with Emulator(scenario={"responses": [DESCRIBE, DESCRIBE]}) as emu, new_agent(emu) as agent:
        assert answer(agent.run(panto.Image(image))) == "Received 1 attachment: image/png 8x6."
        assert answer(agent.run([image, "what is it?"])) == "Received 1 attachment: image/png 8x6."
        assert [b["type"] for b in agent.conversation[2]["content"]] == ["image", "text"]


def test_the_bytes_decide_not_the_hint() -> None:
    with Emulator(scenario={"responses": [DESCRIBE]}) as emu, new_agent(emu) as agent:
        assert answer(agent.run([panto.Document(png(), media_type="application/pdf")])) == \
            "Received 1 attachment: image/png 8x6."


def test_unreadable_media_become_a_note_and_the_turn_goes_on(provider: str) -> None:
    with Emulator(scenario={"responses": [DESCRIBE]}) as emu, new_agent(emu, provider) as agent:
        assert answer(agent.run(["look", panto.Media(b"no image here", name="junk.bin")])) == "Received no attachments."
        sent = agent.conversation[0]["content"]
    assert sent[0] == {"type": "text", "text": "look"}
    assert sent[1]["type"] == "text" and sent[1]["text"].startswith("[attachment ")
    assert " dropped: " in sent[1]["text"]


@pytest.mark.parametrize("bad, message", [
    (b"raw bytes", r"run\(\) needs a str, a list of parts or a panto.Media, not bytes"),
    (3, r"run\(\) needs a str, a list of parts or a panto.Media, not int"),
    (["text", 3], r"run\(\) input\[1\] must be a str or media .* not int"),
    ([{"type": "text", "text": "x"}], r"run\(\) input\[0\] must be a str or media .* not dict"),
])
def test_a_part_of_the_wrong_type_is_refused_before_anything_is_sent(bad: Any, message: str) -> None:
    with Emulator(scenario={"responses": [DESCRIBE]}) as emu, new_agent(emu) as agent:
        with pytest.raises(TypeError, match=message):
            agent.run(bad)
        assert emu.requests() == [] and agent.conversation == []
        # Nothing was left half done: the agent runs the next turn.
        assert answer(agent.run(["fine", panto.Image(png())])) == "Received 1 attachment: image/png 8x6."


# ---- tools returning media ------------------------------------------------------------------


def tool_turn(provider: str, result: Any) -> Dict[str, Any]:
    """Runs a turn whose tool returns `result`; returns the ToolResult event, the answer and
    the second request."""
    with Emulator(scenario={"responses": [TOOL_CALL, DESCRIBE]}) as emu, \
            new_agent(emu, provider, tools=[shot_tool(result)]) as agent:
        events = list(agent.run("take one"))
        results = [e for e in events if isinstance(e, panto.ToolResult)]
        texts = [e.text for e in events if isinstance(e, panto.BlockComplete) and e.block_kind == "text"]
        return {"result": results[0], "answer": texts[-1], "request": emu.requests()[1],
                "conversation": agent.conversation}


def test_a_tool_returns_text_and_two_images(provider: str) -> None:
    first, second = png(8, 6), png(3, 5)
    got = tool_turn(provider, ["two screenshots", panto.Image(first), second])
    result = got["result"]
    assert (result.content, result.is_error) == ("two screenshots", False)
    assert [(p.kind, p.text, p.media_type, p.byte_size) for p in result.parts] == [
        ("text", "two screenshots", "", 0),
        ("image", "", "image/png", len(first)),
        ("image", "", "image/png", len(second)),
    ]
    assert result.parts[1].data == first and result.parts[1].data_base64 == b64(first)
    assert result.parts[0].data == b"" and result.parts[0].data_base64 == ""
    assert all(dataclasses.is_dataclass(p) for p in result.parts)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.parts[1].kind = "text"  # type: ignore[misc]
    assert got["answer"] == "Received 2 attachments: image/png 8x6, image/png 3x5."
    if provider == "anthropic":
        (block,) = got["request"]["body"]["messages"][2]["content"]
        assert block["content"] == [
            {"type": "text", "text": "two screenshots"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(first)}},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(second)}},
        ]
    else:
        tool, synthetic = got["request"]["body"]["messages"][2:]
        assert tool == {"role": "tool", "tool_call_id": "call_1", "content": "two screenshots\n"
                        "[attachment 1: image/png, in the next user message]\n"
                        "[attachment 2: image/png, in the next user message]"}
        assert synthetic == {"role": "user", "content": [
            {"type": "text", "text": "Attachments of tool result call_1:"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64(first)}},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64(second)}},
        ]}
    (stored,) = got["conversation"][2]["content"]
    assert stored["content"][1] == {"type": "image", "media_type": "image/png", "data": b64(first)}


@pytest.mark.parametrize("returned", [png(), panto.Image(png()), [panto.Image(png())], (png(),)],
                         ids=["bytes", "Image", "list", "tuple"])
def test_a_tool_may_return_one_image_as_bytes_media_or_a_sequence(returned: Any) -> None:
    result = tool_turn("anthropic", returned)["result"]
    assert (result.content, [p.kind for p in result.parts]) == ("", ["image"])


def test_a_pdf_result_and_its_name() -> None:
    result = tool_turn("openai", [panto.Document(PDF, name="report.pdf")])["result"]
    (part,) = result.parts
    assert (part.kind, part.media_type, part.name, part.byte_size, part.width, part.height) == (
        "document", "application/pdf", "report.pdf", len(PDF), 0, 0)
    assert part.data == PDF


@pytest.mark.parametrize("returned, content", [
    ("plain", "plain"),
    (["a", "b"], '["a", "b"]'),  # a list without media stays JSON, as before
    ({"k": 1}, '{"k": 1}'),
])
def test_a_result_without_media_is_one_text_without_parts(returned: Any, content: str) -> None:
    result = tool_turn("anthropic", returned)["result"]
    assert (result.content, result.parts) == (content, ())


def test_a_result_whose_media_are_all_dropped_is_plain_text() -> None:
    result = tool_turn("anthropic", ["found:", b"not an image"])["result"]
    assert result.parts == ()
    assert result.content.startswith("found:\n[attachment ") and " dropped: " in result.content


def test_a_bad_part_in_a_tool_result_is_an_error_result() -> None:
    got = tool_turn("anthropic", ["text", panto.Image(png()), 3.5])
    result = got["result"]
    assert result.is_error and result.parts == ()
    assert "must be a str or media" in result.content and "not float" in result.content


def test_submit_tool_result_takes_parts(provider: str) -> None:
    image = png(4, 4)
    with Emulator(scenario={"responses": [TOOL_CALL, DESCRIBE]}) as emu, \
            new_agent(emu, provider, tools=[shot_tool(None)]) as agent:
        stream = agent.run("take one", run_tools=False)
        seen: List[Any] = []
        for ev in stream:
            seen.append(ev)
            if isinstance(ev, panto.ToolCallStart):
                with pytest.raises(TypeError, match=r"the result\[0\] must be a str or media"):
                    stream.submit_tool_result(ev.id, [object(), image])
                stream.submit_tool_result(ev.id, ["here", panto.Image(image)])
        (result,) = [e for e in seen if isinstance(e, panto.ToolResult)]
    assert [(p.kind, p.data) for p in result.parts] == [("text", b""), ("image", image)]
    texts = [e.text for e in seen if isinstance(e, panto.BlockComplete)]
    assert texts[-1] == "Received 1 attachment: image/png 4x4."
