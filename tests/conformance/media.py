#!/usr/bin/env python3
"""The conformance cases' test media, generated (nothing binary is committed).

    .venv/bin/python tests/conformance/media.py [OUT_DIR]   # default build/conformance-media

Writes every file of MEDIA into OUT_DIR, deterministically: the same Pillow gives the same
bytes, so a case can say "this image must arrive byte for byte" (`$media_sha256`) and the
runner checks it against the file written here. Large images are smooth gradients, not noise,
so that they compress well and the requests that carry them stay a few megabytes. run.py calls
`ensure()` when a case names a file; it regenerates everything when this script or Pillow's
version changed (a stamp file records both).

The files (NAME: what it is):
"""
from __future__ import annotations

import hashlib
import io
import struct
import sys
import zlib
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[2]
MEDIA_DIR = REPO / "build" / "conformance-media"
STAMP = ".stamp"


def _gradient(width: int, height: int, alpha: bool = False):  # type: ignore[no-untyped-def]
    """A smooth RGB (or RGBA) picture: three linear gradients in different directions, so the
    aspect ratio and orientation of a resized copy are visible, and it compresses well."""
    from PIL import Image

    ramp = Image.linear_gradient("L")  # 256x256, black at the top to white at the bottom
    red = ramp.resize((width, height), Image.Resampling.BILINEAR)
    green = ramp.rotate(90).resize((width, height), Image.Resampling.BILINEAR)
    blue = ramp.rotate(225).resize((width, height), Image.Resampling.BILINEAR)
    bands = [red, green, blue]
    if alpha:
        # Transparent at the left edge, opaque at the right: an alpha channel that matters.
        bands.append(ramp.rotate(-90).resize((width, height), Image.Resampling.BILINEAR))
    return Image.merge("RGBA" if alpha else "RGB", bands)


def _save(image, fmt: str, **options: object) -> bytes:  # type: ignore[no-untyped-def]
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()


def _png(width: int, height: int) -> Callable[[], bytes]:
    return lambda: _save(_gradient(width, height), "PNG", optimize=False)


def _jpeg(width: int, height: int) -> Callable[[], bytes]:
    return lambda: _save(_gradient(width, height), "JPEG", quality=85)


def _webp(width: int, height: int, lossless: bool) -> Callable[[], bytes]:
    return lambda: _save(_gradient(width, height, alpha=True), "WEBP", quality=80,
                         lossless=lossless, method=4, exact=True)


def _gif(width: int, height: int) -> Callable[[], bytes]:
    """A two-frame animated GIF (a large one becomes a PNG of its first frame)."""
    def make() -> bytes:
        from PIL import Image

        first = _gradient(width, height).quantize(64)
        second = _gradient(width, height).transpose(Image.Transpose.FLIP_LEFT_RIGHT).quantize(64)
        return _save(first, "GIF", save_all=True, append_images=[second], duration=100, loop=0)
    return make


def _bmp(width: int, height: int) -> Callable[[], bytes]:
    return lambda: _save(_gradient(width, height), "BMP")


def _pdf() -> bytes:
    """A minimal valid one-page PDF saying "panto test document", written by hand (xref
    offsets computed)."""
    stream = b"BT /F1 24 Tf 72 720 Td (panto test document) Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, xref)
    return bytes(out)


def _large_pdf() -> bytes:
    """doc.pdf followed by 21 MiB of comment lines: over the 20 MiB a PDF may have."""
    line = b"%" + b"panto padding " * 73 + b"\n"  # 1024 bytes
    return _pdf() + line * (21 * 1024)


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(
        ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def _bomb_png() -> bytes:
    """A PNG whose header claims 20000x20000 pixels (400 megapixels, over the 100 MP cap),
    with valid CRCs and a tiny IDAT: what a decompression bomb looks like before decoding."""
    ihdr = struct.pack(">IIBBBBB", 20000, 20000, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" * 1024)
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", ihdr) + _png_chunk(b"IDAT", idat)
            + _png_chunk(b"IEND", b""))


def _truncated_png() -> bytes:
    """small.png cut in the middle of its image data: its header parses, its chunks do not
    walk to the end."""
    whole = MEDIA["small.png"][1]()
    return whole[: len(whole) // 2]


# NAME -> (what it is, how to make it). Sizes: the large images are over 2000 pixels on one
# side at least, with aspect ratios that do not divide evenly, so a fit must round.
MEDIA: dict[str, tuple[str, Callable[[], bytes]]] = {
    "small.png": ("a 64x48 RGB PNG (passes byte for byte)", _png(64, 48)),
    "large.png": ("a 3000x2000 RGB PNG (fits to 2000x1333)", _png(3000, 2000)),
    "small.jpg": ("a 64x48 JPEG (passes byte for byte)", _jpeg(64, 48)),
    "large.jpg": ("a 4000x3000 JPEG (fits to 2000x1500)", _jpeg(4000, 3000)),
    "small.webp": ("a 64x48 lossless WEBP with alpha (passes byte for byte)",
                   _webp(64, 48, lossless=True)),
    "large.webp": ("a 2400x3100 lossy WEBP with alpha (fits to 1548x2000, alpha kept)",
                   _webp(2400, 3100, lossless=False)),
    "small.gif": ("a 64x48 two-frame GIF (passes byte for byte)", _gif(64, 48)),
    "large.gif": ("a 2400x1000 two-frame GIF (becomes a 2000x833 PNG of its first frame)",
                  _gif(2400, 1000)),
    "small.bmp": ("a 40x30 24-bit BMP (becomes a 40x30 PNG)", _bmp(40, 30)),
    "doc.pdf": ("a one-page PDF, 'panto test document' (passes byte for byte)", _pdf),
    "large.pdf": ("doc.pdf padded to 21 MiB (dropped with a note: over the 20 MiB cap)", _large_pdf),
    "truncated.png": ("small.png cut in half (dropped with a note)", _truncated_png),
    "bomb.png": ("a PNG claiming 20000x20000 pixels (dropped with a note, never decoded)",
                 _bomb_png),
    "unknown.bin": ("bytes of no known format (dropped with a note)",
                    lambda: b"panto: these bytes are no image and no PDF.\n" * 4),
}

__doc__ += "".join(f"    {name}: {what}\n" for name, (what, _) in MEDIA.items())


def _stamp_text() -> str:
    import PIL

    source = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    return f"media.py {source}\nPillow {PIL.__version__}\n"


def ensure(out_dir: Path = MEDIA_DIR) -> Path:
    """Writes every file of MEDIA into out_dir unless the stamp says they are current;
    returns out_dir. Raises ImportError without Pillow."""
    stamp = out_dir / STAMP
    text = _stamp_text()
    if stamp.is_file() and stamp.read_text() == text and all(
            (out_dir / name).is_file() for name in MEDIA):
        return out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp.unlink(missing_ok=True)
    for name, (_, make) in MEDIA.items():
        tmp = out_dir / (name + ".tmp")
        tmp.write_bytes(make())
        tmp.replace(out_dir / name)
    stamp.write_text(text)
    return out_dir


def path(name: str, out_dir: Path = MEDIA_DIR) -> Path:
    """The generated file NAME (generating the media first if needed); KeyError for a name
    MEDIA does not hold."""
    if name not in MEDIA:
        raise KeyError(f"no test media named {name!r} (tests/conformance/media.py knows "
                       f"{', '.join(MEDIA)})")
    return ensure(out_dir) / name


def main(argv: list[str]) -> int:
    out_dir = Path(argv[1]) if len(argv) > 1 else MEDIA_DIR
    ensure(out_dir)
    for name in MEDIA:
        print(f"{out_dir / name}: {(out_dir / name).stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
