"""Media given to panto: images and PDFs in a user turn or a tool result.

    agent.run(["What is in this picture?", panto.Image("photo.jpg")])

    @panto.tool
    def screenshot() -> panto.Image:
        return panto.Image(take_screenshot())          # bytes

A part is text (a str) or media (`panto.Media`, or its conveniences `panto.Image` and
`panto.Document`; bytes stand for `Media(bytes)`). panto finds the format from the bytes
(PNG, JPEG, GIF, WEBP, BMP, PDF: a `media_type` hint that contradicts them loses), fits images
to the providers' rules (at most 2000x2000 pixels, aspect kept; BMP becomes PNG), passes PDFs
through, and turns what it cannot send (unknown bytes, a corrupt image, a decompression bomb,
an oversized PDF) into a short text note: bad media never fail a call. See the ToolResult
event's `parts` for what was sent.
"""

from __future__ import annotations

import ctypes
import os

from . import _native

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, List, Optional, Sequence, Tuple, Union

    #: What a part may be: text, or media (bytes stand for Media(bytes)).
    GivenPart = Union[str, "Media", bytes, bytearray, memoryview]

__all__ = ["Media", "Image", "Document", "is_media", "parts_of", "native_parts"]

_BYTES = (bytes, bytearray, memoryview)


class Media:
    """Raw media bytes (an image or a PDF) with an optional media-type hint and name.

    `data` is the bytes, or the path of a file (str or os.PathLike), read at once. A path
    gives the part its file name unless `name` is given. `media_type` ("image/png", ...) is
    only a hint: the bytes decide. `name` is shown to the model for a PDF. Immutable."""

    __slots__ = ("_data", "_media_type", "_name")

    _data: bytes
    _media_type: Optional[str]
    _name: Optional[str]

    def __init__(self, data: Union[bytes, bytearray, memoryview, str, os.PathLike[str]],
                 media_type: Optional[str] = None, name: Optional[str] = None) -> None:
        if isinstance(data, _BYTES):
            raw = bytes(data)
        elif isinstance(data, (str, os.PathLike)):
            path = os.fspath(data)
            with open(path, "rb") as f:
                raw = f.read()
            if name is None:
                name = os.path.basename(path)
        else:
            raise TypeError(f"{type(self).__name__}() needs bytes or a file path, not {type(data).__name__}")
        for what, value in (("media_type", media_type), ("name", name)):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{what} must be a str or None, not {type(value).__name__}")
        object.__setattr__(self, "_data", raw)
        object.__setattr__(self, "_media_type", media_type or None)
        object.__setattr__(self, "_name", name or None)

    @property
    def data(self) -> bytes:
        """The bytes."""
        return self._data

    @property
    def media_type(self) -> Optional[str]:
        """The media-type hint, or None."""
        return self._media_type

    @property
    def name(self) -> Optional[str]:
        """The name (a file's name), or None."""
        return self._name

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({len(self._data)} bytes, media_type={self._media_type!r}, "
                f"name={self._name!r})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Media):
            return NotImplemented
        return (self._data, self._media_type, self._name) == (other._data, other._media_type, other._name)

    def __hash__(self) -> int:
        return hash((self._data, self._media_type, self._name))

    def __reduce__(self) -> Tuple[Any, ...]:
        return (type(self), (self._data, self._media_type, self._name))


class Image(Media):
    """An image (PNG, JPEG, GIF, WEBP or BMP): `Media` by another name; the bytes decide."""

    __slots__ = ()


class Document(Media):
    """A PDF: `Media` by another name; the bytes decide."""

    __slots__ = ()


def is_media(value: Any) -> bool:
    """Whether a value is media as a part: a Media, or bytes."""
    return isinstance(value, (Media,) + _BYTES)


def parts_of(value: Any, what: str) -> List[Union[str, Media]]:
    """A list of parts (str or Media; bytes become Media) from a part or a sequence of parts.
    Raises TypeError naming `what` for anything else."""
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    out: List[Union[str, Media]] = []
    for i, item in enumerate(items):
        if isinstance(item, (str, Media)):
            out.append(item)
        elif isinstance(item, _BYTES):
            out.append(Media(item))
        else:
            raise TypeError(f"{what}[{i}] must be a str or media (panto.Image, panto.Document, "
                            f"panto.Media, bytes), not {type(item).__name__}")
    return out


def native_parts(parts: Sequence[Union[str, Media]]) -> Tuple[Any, List[Any]]:
    """The PantoPart array of parts, and what must stay alive while the library reads it."""
    array = (_native.PantoPart * len(parts))()
    keep: List[Any] = [array]
    for slot, part in zip(array, parts):
        if isinstance(part, str):
            raw = _native.utf8(part)
            keep.append(raw)
            slot.kind = _native.PART_TEXT
            slot.text = _native.string(raw)
            continue
        slot.kind = _native.PART_MEDIA
        for field, value in (("media_type", part.media_type), ("name", part.name)):
            if value:
                raw = _native.utf8(value)
                keep.append(raw)
                setattr(slot, field, _native.string(raw))
        data = part.data
        keep.append(data)
        slot.data = ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p)
        slot.data_len = len(data)
    return array, keep
