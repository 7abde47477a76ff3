"""The native side of a stream's batches: the array of events that `panto_next_events` fills,
and the ContentDelta events made from it in bulk.

One ctypes call reads a whole batch. Reading it back field by field through ctypes would cost
about as much per event as that call (each field access is a call of its own), so the columns
a ContentDelta needs (kind, index, block_kind, text) are read at once through strided
memoryviews, the texts by one `split` of the batch's string block (the library puts a NUL
after each string), and the events are made as objects of a twin class without the frozen
dataclass's `__setattr__`, filled with plain attribute stores, then turned into ContentDelta
objects (see _frozen.maker). Other events, a few per message, go through ctypes.
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

_string_at = ctypes.string_at
_ContentDeltaMaker = maker(ContentDelta)


class NativeBatch:
    """The event array of one stream, and the last batch read into it."""

    __slots__ = ("events", "args", "_buffer", "_ints", "_uints", "_words", "_count", "_block", "_raw", "_base")

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
        self._block = _native.PantoString()
        #: The arguments of panto_next_events after the stream.
        self.args: Tuple[Any, ...] = (
            ctypes.cast(self._buffer, ctypes.POINTER(_EVENT)),
            CAPACITY,
            ctypes.byref(self._count),
            ctypes.byref(self._block),
        )
        self._raw = b""
        self._base = 0

    @property
    def count(self) -> int:
        """How many events the last call filled (0 before a call returns)."""
        return int(self._count.value)

    def reset(self) -> None:
        """Before a call: no events yet."""
        self._count.value = 0

    def load(self) -> List[int]:
        """After a call that filled events: copies the string block out of the library, and
        returns the kind of each event."""
        n = self._count.value
        block = self._block
        self._base = block.ptr or 0
        self._raw = _string_at(self._base, block.len) if block.len else b""
        return self._ints[_KIND : n * _INTS : _INTS].tolist()

    def string(self, s: _native.PantoString) -> str:
        """A string of the last batch, from the copy of its block."""
        n = s.len
        if not n:
            return ""
        at = (s.ptr or 0) - self._base
        return self._raw[at : at + n].decode("utf-8")

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
        base = self._base
        a = words[start * _WORDS + _TEXT_PTR] - base
        b = words[(end - 1) * _WORDS + _TEXT_PTR] - base + words[(end - 1) * _WORDS + _TEXT_LEN]
        texts = self._raw[a:b].decode("utf-8").split("\0")
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
