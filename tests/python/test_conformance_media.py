"""The conformance runner's media support: the generated test media (tests/conformance/media.py),
turns and `return_parts` rewritten for the drivers, and the media matchers ($media_sha256,
$media_size, $media_base64_len, $image) accepting only what they say.

    .venv/bin/python -m pytest -q tests/python/test_conformance_media.py
"""

from __future__ import annotations

import base64
import importlib.util
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

PIL = pytest.importorskip("PIL")
from PIL import Image  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("conformance_run", ROOT / "tests" / "conformance" / "run.py")
assert _spec is not None and _spec.loader is not None
runner: Any = importlib.util.module_from_spec(_spec)
sys.modules["conformance_run"] = runner
_spec.loader.exec_module(runner)
media: Any = runner.test_media


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def encoded(image: Any, fmt: str) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt)
    return out.getvalue()


def error(want: Any, got: Any) -> Any:
    kind = runner.matcher(want)
    assert kind is not None
    return runner.matcher_error(kind, want[kind], got)


def test_media_are_generated_the_same_each_time(tmp_path: Path) -> None:
    media.ensure(tmp_path / "a")
    media.ensure(tmp_path / "b")
    for name in media.MEDIA:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_media_are_what_their_names_say() -> None:
    def opened(name: str) -> Any:
        return Image.open(media.path(name))

    assert (opened("large.png").format, opened("large.png").size) == ("PNG", (3000, 2000))
    assert (opened("large.jpg").format, opened("large.jpg").size) == ("JPEG", (4000, 3000))
    webp = opened("large.webp")
    assert (webp.format, webp.size, webp.mode) == ("WEBP", (2400, 3100), "RGBA")
    assert opened("small.webp").mode == "RGBA"
    assert (opened("large.gif").format, opened("large.gif").n_frames) == ("GIF", 2)
    assert opened("small.bmp").format == "BMP"
    assert media.path("doc.pdf").read_bytes().startswith(b"%PDF-1.4\n")
    assert media.path("doc.pdf").read_bytes().rstrip().endswith(b"%%EOF")
    with pytest.raises(Exception):
        opened("truncated.png").load()
    with pytest.raises(Image.DecompressionBombError):
        opened("bomb.png")
    # Large images compress well, so the requests that carry them stay small.
    assert all(media.path(n).stat().st_size < 1_000_000 for n in media.MEDIA if n != "large.pdf")
    # Over the 20 MiB a PDF may have.
    assert media.path("large.pdf").stat().st_size > 20 * 1024 * 1024


def test_a_changed_stamp_regenerates(tmp_path: Path) -> None:
    media.ensure(tmp_path)
    (tmp_path / "small.png").write_bytes(b"stale")
    media.ensure(tmp_path)
    assert (tmp_path / "small.png").read_bytes() == b"stale"  # the stamp says current
    (tmp_path / media.STAMP).write_text("old")
    media.ensure(tmp_path)
    assert (tmp_path / "small.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_turns_and_return_parts_are_rewritten_for_the_drivers(tmp_path: Path) -> None:
    folder = tmp_path / "case_with_media"
    folder.mkdir()
    parts = ["Describe", {"media": "small.png"}, {"media": "doc.pdf", "hint": "application/pdf", "name": "d.pdf"}]
    (folder / "case.json").write_text(json.dumps({
        "config": {"provider": "anthropic", "read_tool": {"root": "$MEDIA_DIR"}},
        "turns": ["Hi", parts, {"$repeat": ["ab", 2]}],
        "tools": [{"name": "shot", "behavior": {"return_parts": [{"media": "small.jpg"}, "done"]}}],
        "script": {"responses": []},
    }))
    (folder / "expected.jsonl").write_text("")
    case = runner.load_case(folder)
    assert case.problem == ""
    resolved = json.loads(case.driver_path.read_text())
    png, pdf, jpg = (str(media.path(n)) for n in ("small.png", "doc.pdf", "small.jpg"))
    assert resolved["turns"] == ["Hi", ["Describe", {"media_path": png, "hint": "", "name": ""},
                                        {"media_path": pdf, "hint": "application/pdf", "name": "d.pdf"}], "abab"]
    assert resolved["tools"][0]["behavior"] == {"return_parts": [{"media_path": jpg, "hint": "", "name": ""}, "done"]}
    assert resolved["config"]["read_tool"]["root"] == str(media.MEDIA_DIR)


@pytest.mark.parametrize("turn, problem", [
    ([{"media": "nope.png"}], "no test media named 'nope.png'"),
    ([{"media": "small.png", "size": 3}], "a part is a string or"),
    ([3], "a part is a string or"),
])
def test_a_malformed_part_is_a_bad_case(tmp_path: Path, turn: Any, problem: str) -> None:
    (tmp_path / "case.json").write_text(json.dumps({"config": {}, "turns": [turn], "script": {}}))
    (tmp_path / "expected.jsonl").write_text("")
    case = runner.load_case(tmp_path)
    assert case.problem.startswith("bad case: turns[0][0]: ")
    assert problem in case.problem


def test_media_sha256_matches_the_exact_bytes_only() -> None:
    data = media.path("small.png").read_bytes()
    assert error({"$media_sha256": "small.png"}, b64(data)) is None
    assert error({"$media_sha256": "small.png"}, "data:image/png;base64," + b64(data)) is None
    assert "other bytes" in error({"$media_sha256": "small.png"}, b64(data + b"\0"))
    assert "other bytes" in error({"$media_sha256": "large.png"}, b64(data))
    assert "base64" in error({"$media_sha256": "small.png"}, "not base64!")
    assert "base64" in error({"$media_sha256": "small.png"}, 3)
    assert "no test media" in error({"$media_sha256": "nope"}, b64(data))


def test_media_size_and_base64_length() -> None:
    size = media.path("small.jpg").stat().st_size
    assert error({"$media_size": "small.jpg"}, size) is None
    assert error({"$media_size": "small.jpg"}, size + 1) is not None
    assert error({"$media_base64_len": "small.jpg"}, len(b64(media.path("small.jpg").read_bytes()))) is None
    assert error({"$media_base64_len": "small.jpg"}, size) is not None


def test_the_image_matcher_checks_each_key_it_is_given() -> None:
    # 2000x1333 is large.png (3000x2000) fitted; 2000x1300 is not its aspect ratio.
    fitted = b64(encoded(Image.new("RGB", (2000, 1333)), "PNG"))
    assert error({"$image": {"format": "png", "fits": 2000, "aspect_of": "large.png", "size": [2000, 1333]}}, fitted) is None
    assert "jpeg" in error({"$image": {"format": "jpeg"}}, fitted)
    assert "within 1999x1999" in error({"$image": {"fits": 1999}}, fitted)
    assert "aspect ratio" in error({"$image": {"aspect_of": "large.png"}}, b64(encoded(Image.new("RGB", (2000, 1300)), "PNG")))
    assert "2000x1334" in error({"$image": {"size": [2000, 1334]}}, fitted)
    assert "alpha channel" in error({"$image": {"alpha": True}}, fitted)
    opaque = b64(encoded(Image.new("RGBA", (4, 4), (1, 2, 3, 255)), "PNG"))
    assert "opaque" in error({"$image": {"alpha": True}}, opaque)
    clear = b64(encoded(Image.new("RGBA", (4, 4), (1, 2, 3, 0)), "WEBP"))
    assert error({"$image": {"format": "webp", "alpha": True}}, "data:image/webp;base64," + clear) is None
    assert "do not decode" in error({"$image": {}}, b64(media.path("truncated.png").read_bytes()))
    assert "takes" in error({"$image": {"colour": "red"}}, fitted)
