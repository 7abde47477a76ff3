"""Seeds of the `media` fuzz target (make_seeds.py writes them): small images of every format
and variant the pipeline meets, made with Pillow, deterministic. Some are larger than the
target's 256-pixel box, so that the decode, resize and encode paths start from a seed."""

from __future__ import annotations

import io
import struct
import zlib
from typing import Iterator

from PIL import Image


def picture(mode: str, size: tuple[int, int]) -> Image.Image:
    """A gradient with a disc, in `mode`, the same on every run."""
    w, h = size
    rgba = Image.new("RGBA", size)
    rgba.putdata([(x * 255 // w, y * 255 // h, 200 if (x - w // 2) ** 2 + (y - h // 2) ** 2 < (min(w, h) // 3) ** 2 else 40, x * 255 // w)
                  for y in range(h) for x in range(w)])
    if mode == "P":
        return rgba.convert("RGB").quantize(16)
    return rgba.convert(mode)


def save(image: Image.Image, fmt: str, **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()


def seeds() -> Iterator[tuple[str, bytes]]:
    small, wide = (24, 16), (300, 40)
    for mode in ("RGB", "RGBA", "L", "LA", "P", "1"):
        yield f"png_{mode}", save(picture(mode, small), "PNG")
    yield "png_interlaced", save(picture("RGB", small), "PNG", interlace=1)
    yield "png_16bit", save(picture("L", small).convert("I"), "PNG")
    yield "png_wide", save(picture("RGBA", wide), "PNG")
    yield "png_transparency", save(picture("P", small), "PNG", transparency=0)
    for mode in ("RGB", "L", "CMYK"):
        yield f"jpeg_{mode}", save(picture(mode, small), "JPEG", quality=50)
    yield "jpeg_progressive", save(picture("RGB", small), "JPEG", progressive=True, quality=50)
    yield "jpeg_wide", save(picture("RGB", wide), "JPEG", quality=30)
    yield "jpeg_restart", save(picture("RGB", small), "JPEG", quality=50, restart_marker_blocks=1)
    frames = [picture("P", small).rotate(90 * i) for i in range(3)]
    yield "gif", save(frames[0], "GIF")
    yield "gif_animated", save(frames[0], "GIF", save_all=True, append_images=frames[1:], duration=100, loop=0)
    yield "gif_transparent", save(frames[0], "GIF", transparency=0, interlace=True)
    yield "gif_wide", save(picture("P", wide), "GIF")
    yield "webp_lossy", save(picture("RGB", small), "WEBP", quality=50)
    yield "webp_alpha", save(picture("RGBA", small), "WEBP", quality=50)
    yield "webp_lossless", save(picture("RGBA", small), "WEBP", lossless=True)
    yield "webp_wide", save(picture("RGBA", wide), "WEBP", quality=30)
    yield "webp_animated", save(picture("RGB", small), "WEBP", save_all=True, append_images=[picture("RGB", small).rotate(90)], duration=100)
    for mode in ("RGB", "P", "1", "RGBA"):
        yield f"bmp_{mode}", save(picture(mode, small), "BMP")
    yield "bmp_wide", save(picture("RGB", wide), "BMP")
    yield "bmp_16bit", bmp_16bit()
    yield "pdf", b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
    yield "png_bomb_header", png_claiming(20000, 20000)


def bmp_16bit() -> bytes:
    """A 4x2 BMP of 16 bits a pixel, 5-6-5 bit fields (Pillow writes none)."""
    w, h = 4, 2
    pixels = b"".join(struct.pack("<H", (x * 8) << 11 | (y * 32) << 5 | 31) for y in range(h) for x in range(w))
    masks = struct.pack("<III", 0xF800, 0x07E0, 0x001F)
    header = struct.pack("<IiiHHIIiiII", 40, w, -h, 1, 16, 3, len(pixels), 0, 0, 0, 0)
    offset = 14 + len(header) + len(masks)
    return b"BM" + struct.pack("<IHHI", offset + len(pixels), 0, 0, offset) + header + masks + pixels


def png_claiming(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b""))
