"""The native side of a stream's batches: the array of events that `panto_next_events` fills,
and the ContentDelta events made from it in bulk.

One ctypes call reads a whole batch. Reading it back field by field through ctypes would cost
about as much per event as that call (each field access is a call of its own), so the columns
a ContentDelta needs (kind, index, block_kind, text) are read at once through strided
memoryviews; the texts are decoded at once, straight from the library's memory, and cut by
one `split` (the library puts a NUL after each string of a batch, in order); the events are
made as objects of a twin class without the frozen dataclass's `__setattr__`, filled with
plain attribute stores, then turned into ContentDelta objects (see _frozen.maker). Other
events, a few per message, go through ctypes.
"""

from __future__ import annotations

import ctypes
from itertools import repeat

from . import _native
from ._frozen import maker
from .events import ContentDelta

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterable, List, Tuple

__all__ = ["NativeBatch", "CAPACITY"]

#: The most events one call reads.
CAPACITY = 128

_EVENT = _native.PantoEvent
_SIZE = ctypes.sizeof(_EVENT)
# Where the fields read in bulk are, counted in 4-byte units and in pointer-size units (a
# PantoString is a pointer and a size_t) of the array.
_PTR = ctypes.sizeof(ctypes.c_void_p)
_INTS = _SIZE // 4
_WORDS = _SIZE // _PTR
_KIND = _EVENT.kind.offset // 4
_INDEX = _EVENT.index.offset // 4
_BLOCK_KIND = _EVENT.block_kind.offset // 4
_TEXT_PTR = (_EVENT.text.offset + _native.PantoString.ptr.offset) // _PTR
_TEXT_LEN = (_EVENT.text.offset + _native.PantoString.len.offset) // _PTR

_ContentDeltaMaker = maker(ContentDelta)


def _utf8_copying(ptr: int, n: int) -> str:
    return ctypes.string_at(ptr, n).decode("utf-8")


try:  # CPython: str straight from the library's memory, without a bytes copy first
    _decode_utf8 = ctypes.pythonapi["PyUnicode_DecodeUTF8"]  # a FuncPtr of our own
    _decode_utf8.restype = ctypes.py_object
    _decode_utf8.argtypes = (ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_char_p)

    def _utf8(ptr: int, n: int) -> str:
        """The UTF-8 string of n bytes at ptr (UnicodeDecodeError if it is not UTF-8)."""
        text: str = _decode_utf8(ptr, n, b"strict")
        return text

except (AttributeError, ValueError):  # pragma: no cover - not CPython
    _utf8 = _utf8_copying


class NativeBatch:
    """The event array of one stream, and the last batch read into it."""

    __slots__ = ("events", "args", "_buffer", "_ints", "_uints", "_words", "_count")

    def __init__(self) -> None:
        self._buffer = ctypes.create_string_buffer(CAPACITY * _SIZE)
        #: The array as ctypes structs (for the events read one by one).
        self.events = (_EVENT * CAPACITY).from_buffer(self._buffer)
        self.events[0].size = _SIZE  # PANTO_EVENT_INIT: the size of every element
        raw = memoryview(self._buffer).cast("B")
        self._ints = raw.cast("i")  # kind, block_kind (int32_t)
        self._uints = raw.cast("I")  # index (uint32_t)
        self._words = raw.cast("P")  # text.ptr, text.len
        self._count = ctypes.c_size_t()
        #: The arguments of panto_next_events after the stream (out_strings: not needed, the
        #: strings are decoded where the events point).
        self.args: Tuple[Any, ...] = (ctypes.cast(self._buffer, ctypes.POINTER(_EVENT)), CAPACITY, ctypes.byref(self._count), None)

    @property
    def count(self) -> int:
        """How many events the last call filled (0 before a call returns)."""
        return int(self._count.value)

    def reset(self) -> None:
        """Before a call: no events yet."""
        self._count.value = 0

    def load(self) -> List[int]:
        """After a call that filled events: the kind of each event."""
        n = self._count.value
        return self._ints[_KIND : n * _INTS : _INTS].tolist()

    def string(self, s: _native.PantoString) -> str:
        """A string of the last batch (decoded from the library's memory, where it lives until
        the next call on the stream)."""
        n = s.len
        return _utf8(s.ptr or 0, n) if n else ""

    def deltas(self, start: int, end: int, names: Dict[int, str], name_of: Callable[[int], str]) -> List[ContentDelta]:
        """The events start..end of the last batch, all ContentDelta, made at once. `names`:
        the block kinds' names known in advance; `name_of` for any other."""
        count = end - start
        ints = self._ints
        first, last = start * _INTS, end * _INTS
        indexes = self._uints[first + _INDEX : last : _INTS].tolist()
        block_kinds = ints[first + _BLOCK_KIND : last : _INTS].tolist()
        # Their texts follow each other in the block, each ended by a NUL.
        words = self._words
        a = words[start * _WORDS + _TEXT_PTR]
        b = words[(end - 1) * _WORDS + _TEXT_PTR] + words[(end - 1) * _WORDS + _TEXT_LEN]
        texts = _utf8(a, b - a).split("\0")
        if len(texts) != count:  # a text holds a NUL of its own
            texts = [self.string(self.events[i].text) for i in range(start, end)]
        kind = block_kinds[0]
        if block_kinds.count(kind) == count:  # one block, as usual: one name
            kind_names: Iterable[str] = repeat(names[kind] if kind in names else name_of(kind), count)
        else:
            kind_names = map(names.__getitem__ if names.keys() >= set(block_kinds) else name_of, block_kinds)
        made: List[ContentDelta] = []
        append = made.append
        new, cls = _ContentDeltaMaker, ContentDelta
        for index, kind_name, text in zip(indexes, kind_names, texts):
            event = new()
            event.index = index
            event.block_kind = kind_name
            event.text = text
            event.__class__ = cls
            append(event)
        return made
