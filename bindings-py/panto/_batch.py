"""The native side of a stream's batches: the array of events that `panto_next_events` fills,
and the ContentDelta events made from it in bulk.

One ctypes call reads a whole batch (what arrived: up to 16 events in the stream's own array,
512 in a large one it is lent while its body comes fast, see NativeBatch.prepare). Reading it
back field by field through ctypes would cost about as much per event as that call (each field
access is a call of its own), so the columns a ContentDelta needs (kind, index, block_kind,
text) are read through strided memoryviews: a batch of deltas of one block, the usual one, is
recognized by comparing each column with itself shifted by one event, in C; the texts are
decoded at once, straight from the library's memory, and cut by one `split` (the library puts a
NUL after each string of a batch, in order); the events are made empty at once, as objects of a
subclass without the frozen dataclass's `__setattr__`, filled with plain attribute stores, then
turned into ContentDelta objects (see _frozen.maker). Other events, a few per message, go
through ctypes.
"""

from __future__ import annotations

import ctypes
from itertools import repeat, starmap

from . import _native
from ._frozen import maker
from .events import ContentDelta

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Tuple

__all__ = ["NativeBatch", "CAPACITY", "SMALL", "MAX_LARGE"]

#: The most events one call reads. A batch is what has arrived (a 64 KiB read holds about 550
#: Anthropic deltas, 200 OpenAI ones): beyond 512, fewer calls save little, and a stream's
#: events alive at once, its memory, grow with the batch (100 streams in one process: 8 MB more
#: at 1024).
CAPACITY = 512

#: The events a stream's own array holds: a stream from a remote API gets a few events a call,
#: and one that waits costs little (16 events: a 2.7 KB array and at most 16 events alive; 512:
#: 86 KB, zero-filled so resident, and up to 512 events alive).
SMALL = 16

#: How many arrays of CAPACITY events the process makes at most, lent to the streams whose
#: batches fill their own array (see NativeBatch.prepare).
MAX_LARGE = 16

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
# index and block_kind side by side make one 8-byte value per event, whose column tells at
# once whether a run of deltas is of one block.
_BLOCK = _EVENT.index.offset // 8
if _EVENT.index.offset % 8 or _EVENT.block_kind.offset != _EVENT.index.offset + 4 or _SIZE % 8:
    raise ImportError("panto: PantoEvent's layout is not the one include/panto.h gives")  # pragma: no cover
_TEXT_PTR = (_EVENT.text.offset + _native.PantoString.ptr.offset) // _PTR
_TEXT_LEN = (_EVENT.text.offset + _native.PantoString.len.offset) // _PTR

_ContentDeltaMaker = maker(ContentDelta)
_CONTENT_DELTA = _native.EVENT_CONTENT_DELTA


def _utf8_copying(ptr: int, n: int, errors: bytes) -> str:
    return ctypes.string_at(ptr, n).decode("utf-8", errors.decode())


try:  # CPython: str straight from the library's memory, without a bytes copy first
    _decode_utf8 = ctypes.pythonapi["PyUnicode_DecodeUTF8"]  # a FuncPtr of our own
    _decode_utf8.restype = ctypes.py_object
    _decode_utf8.argtypes = (ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_char_p)
    #: The UTF-8 string of n bytes at ptr: _utf8(ptr, n, b"strict") (UnicodeDecodeError if it
    #: is not UTF-8). Called as it is: a Python function around it would cost a call more.
    _utf8: Callable[[int, int, bytes], str] = _decode_utf8
except (AttributeError, ValueError):  # pragma: no cover - not CPython
    _utf8 = _utf8_copying


class _Array:
    """An array of `capacity` events, zero-filled, and the views a batch is read through."""

    __slots__ = ("capacity", "size", "buffer", "events", "first", "words", "kinds", "indexes", "block_kinds", "blocks")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.size = ctypes.c_size_t(capacity)
        self.buffer = ctypes.create_string_buffer(capacity * _SIZE)
        #: The array as ctypes structs (for the events read one by one).
        self.events = (_EVENT * capacity).from_buffer(self.buffer)
        self.events[0].size = _SIZE  # PANTO_EVENT_INIT: the size of every element
        self.first = ctypes.cast(self.buffer, ctypes.POINTER(_EVENT))
        raw = memoryview(self.buffer).cast("B")
        ints = raw.cast("i")
        self.words = raw.cast("P")  # text.ptr, text.len
        # One value per event: kind, index, block_kind, and (index, block_kind) as one.
        self.kinds = ints[_KIND::_INTS]
        self.indexes = raw.cast("I")[_INDEX::_INTS]
        self.block_kinds = ints[_BLOCK_KIND::_INTS]
        self.blocks = raw.cast("Q")[_BLOCK :: _SIZE // 8]


# The large arrays, lent to one stream at a time: `_large_idle` holds those no stream holds,
# `_large_unmade` one token for each one not made yet. list.pop and list.append are atomic, so
# the streams of every thread share them without a lock (a finalizer may give one back
# anywhere). Speed trick (memory for fewer calls), as the core's large body buffers
# (libpanto/src/body.zig): a fast body (a local server, a replay) fills every batch, and a
# large array reads it in 8x fewer calls; few streams at once can use one, as they share the
# interpreter's lock and a few cores. Kept once made: making them for each fast stream
# (malloc, zero-fill, free, from 1,000 threads; arrays doubling from 64 to 512, at most 2 or
# 16 streams at once) took 120 or 180 KB more peak RSS a stream than never using them
# (bench/ streams1000, see NativeBatch.prepare).
_large_idle: List[_Array] = []
_large_unmade = [None] * MAX_LARGE


def _take_large() -> Optional[_Array]:
    try:
        return _large_idle.pop()
    except IndexError:
        pass
    try:
        _large_unmade.pop()
    except IndexError:
        return None
    return _Array(CAPACITY)


class NativeBatch:
    """The event array of one stream, and the last batch read into it."""

    __slots__ = ("events", "call", "args", "_small", "_large", "_words", "_count", "_count_ref", "_kinds", "_indexes", "_block_kinds", "_blocks")

    def __init__(self, lib: _native.Library) -> None:
        self._count = ctypes.c_size_t()
        self._count_ref = ctypes.byref(self._count)
        #: panto_next_events (its arguments after the stream are in `args`).
        self.call = lib.next_events_unchecked
        self._small = _Array(SMALL)
        self._large: Optional[_Array] = None  # lent by _take_large
        self._use(self._small)

    def __del__(self) -> None:
        large = self._large
        if large is not None:  # a stream let go in the middle of a fast body
            _large_idle.append(large)

    def _use(self, array: _Array) -> None:
        self.events = array.events
        self._words, self._kinds, self._indexes = array.words, array.kinds, array.indexes
        self._block_kinds, self._blocks = array.block_kinds, array.blocks
        #: panto_next_events' arguments after the stream (out_strings: not needed, the
        #: strings are decoded where the events point). Its ctypes objects of the declared
        #: types go through as they are: nothing to convert at each call.
        self.args: Tuple[Any, ...] = (array.first, array.size, self._count_ref, None)

    @property
    def capacity(self) -> int:
        """The most events the next call reads."""
        return SMALL if self._large is None else CAPACITY

    def prepare(self) -> None:
        """Before a call: no events yet, in the large array if the last call filled the
        stream's own (a fast body: more had arrived) and one is free.

        With `settle`, per call, never per event. Measured (bench/ streams1000,
        panto-py/anthropic, 1,000 threads reading fast bodies at once, KB of peak RSS a
        stream): every stream with an array of 512 events, 231; own arrays of 64 events and
        the large ones lent, 109; of 32, 97; of 16, 90. CPU of 100 concurrent streams of
        1,000 deltas (bench/clients/panto_py.py, 4 runs on 2 shared cores): 0.95-1.12 µs an
        event with 512 each, 0.82-1.01 with 64, 0.92-1.15 with 16 (the streams beyond the 16
        large arrays read 16 events a call).
        """
        if self._count.value == SMALL and self._large is None:
            large = _take_large()
            if large is not None:
                self._large = large
                self._use(large)
        self._count.value = 0

    def settle(self) -> None:
        """After a call's events are made: a call whose events would have fit in the stream's
        own array read all that had arrived, so the next one may wait (the stream reads at the
        network's pace, or its turn goes on later): the large array goes back before. (Not at
        every call that does not fill it: a fast body's batches end where the library's reads
        end, about 550 Anthropic deltas a 64 KiB read, 200 OpenAI ones.)"""
        if self._large is not None and self._count.value < SMALL:
            self.give_back()
            self._count.value = 0  # not a full small batch: no large array at the next call

    def give_back(self) -> None:
        """Gives back the large array, if it holds one (a stream that waits or ended)."""
        large = self._large
        if large is not None:
            self._large = None
            self._use(self._small)
            _large_idle.append(large)

    @property
    def count(self) -> int:
        """How many events the last call filled (0 before a call returns)."""
        return int(self._count.value)

    def load(self) -> List[int]:
        """After a call that filled events: the kind of each event."""
        return self._kinds[: self._count.value].tolist()

    def all_deltas(self, names: Dict[int, str], name_of: Callable[[int], str]) -> Optional[List[ContentDelta]]:
        """After a call that filled events: when they are all ContentDelta, as nearly every
        batch of a long answer is, those events (see `deltas`); else None."""
        n = self._count.value
        kinds = self._kinds
        if kinds[0] != _CONTENT_DELTA or kinds[1:n] != kinds[: n - 1]:  # compared in C
            return None
        return self.deltas(0, n, names, name_of)

    def string(self, s: _native.PantoString) -> str:
        """A string of the last batch (decoded from the library's memory, where it lives until
        the next call on the stream)."""
        n = s.len
        return _utf8(s.ptr or 0, n, b"strict") if n else ""

    def deltas(self, start: int, end: int, names: Dict[int, str], name_of: Callable[[int], str]) -> List[ContentDelta]:
        """The events start..end of the last batch, all ContentDelta, made at once. `names`:
        the block kinds' names known in advance; `name_of` for any other."""
        count = end - start
        # Their texts follow each other in the block, each ended by a NUL.
        words = self._words
        a = words[start * _WORDS + _TEXT_PTR]
        last = (end - 1) * _WORDS
        b = words[last + _TEXT_PTR] + words[last + _TEXT_LEN]
        texts = _utf8(a, b - a, b"strict").split("\0") if a and b >= a else []
        if len(texts) != count:  # a text holds a NUL of its own (or an empty one points nowhere)
            texts = [self.string(self.events[i].text) for i in range(start, end)]
        cls = ContentDelta
        indexes, kinds, blocks = self._indexes, self._block_kinds, self._blocks
        if blocks[start + 1 : end] == blocks[start : end - 1]:  # compared in C
            # One block, as usual: one index and block kind for all. The objects are made
            # empty at once, then filled (see _frozen.maker).
            index, kind = indexes[start], kinds[start]
            name = names[kind] if kind in names else name_of(kind)
            made: List[Any] = list(starmap(_ContentDeltaMaker, repeat((), count)))
            for event, text in zip(made, texts):
                event.index = index
                event.block_kind = name
                event.text = text
                event.__class__ = cls
            return made
        block_kinds = kinds[start:end].tolist()
        kind_names = map(names.__getitem__ if names.keys() >= set(block_kinds) else name_of, block_kinds)
        made = []
        append = made.append
        new = _ContentDeltaMaker
        for index, kind_name, text in zip(indexes[start:end].tolist(), kind_names, texts):
            event = new()
            event.index = index
            event.block_kind = kind_name
            event.text = text
            event.__class__ = cls
            append(event)
        return made
