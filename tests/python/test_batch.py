"""How a batch of events becomes Python objects (panto/_batch.py), on event arrays laid out
here the way panto_next_events fills them: the usual batch (the deltas of one block), and the
ones the library may send but the streams of the other tests do not (deltas of several blocks
in one run, a block kind this package does not name, a text holding a NUL).

    PYTHONPATH=bindings-py PANTO_LIBRARY=zig-out/lib/libpanto.so \
        .venv/bin/python -m pytest -q tests/python/test_batch.py
"""

from __future__ import annotations

import ctypes
import dataclasses
import pickle
from typing import List, Optional, Tuple

import pytest

import panto
from panto import _native
from panto._batch import CAPACITY, SMALL, NativeBatch, _Array

DELTA = _native.EVENT_CONTENT_DELTA
TEXT, THINKING, TOOL_CALL = _native.BLOCK_TEXT, _native.BLOCK_THINKING, _native.BLOCK_TOOL_CALL
# (kind, index, block_kind, text): one event of a batch.
Row = Tuple[int, int, int, Optional[str]]


class Filled:
    """A NativeBatch holding `rows`, as the library leaves it after a call: the strings in one
    block, in order, each followed by a NUL."""

    def __init__(self, library: _native.Library, rows: List[Row]) -> None:
        self.library = library
        self.batch = NativeBatch(library)
        if len(rows) > SMALL:
            self.batch._use(_Array(CAPACITY))  # as a fast stream's batch, lent a large array
        raw = [(t.encode("utf-8") if t is not None else None) for _, _, _, t in rows]
        self.block = ctypes.create_string_buffer(b"".join(r + b"\0" for r in raw if r is not None))
        base = ctypes.addressof(self.block)
        offset = 0
        for i, ((kind, index, block_kind, _), text) in enumerate(zip(rows, raw)):
            ev = self.batch.events[i]
            ev.size, ev.kind, ev.index, ev.block_kind = ctypes.sizeof(_native.PantoEvent), kind, index, block_kind
            if text is not None:
                ev.text.ptr, ev.text.len = base + offset, len(text)
                offset += len(text) + 1
        self.batch._count.value = len(rows)

    def all_deltas(self) -> Optional[List[panto.ContentDelta]]:
        lib = self.library
        return self.batch.all_deltas(lib.block_kind_names, lib.block_kind_name)

    def deltas(self, start: int, end: int) -> List[panto.ContentDelta]:
        lib = self.library
        return self.batch.deltas(start, end, lib.block_kind_names, lib.block_kind_name)


def expected(rows: List[Row], library: _native.Library) -> List[panto.ContentDelta]:
    return [panto.ContentDelta(index, library.block_kind_name(bk), text or "") for _, index, bk, text in rows]


def check_events(made: List[panto.ContentDelta], rows: List[Row], library: _native.Library) -> None:
    assert made == expected(rows, library)
    assert [repr(e) for e in made] == [repr(e) for e in expected(rows, library)]
    for event in made:
        assert type(event) is panto.ContentDelta  # not the class they are filled as
        with pytest.raises(dataclasses.FrozenInstanceError):
            event.text = "changed"  # type: ignore[misc]
        assert pickle.loads(pickle.dumps(event)) == event and hash(event) == hash(dataclasses.replace(event))


def test_the_deltas_of_one_block(library: _native.Library) -> None:
    rows: List[Row] = [(DELTA, 3, TEXT, t) for t in ("Hel", "lo, ", "wörld", " 🌍", "", "\n\t\"\\")]
    filled = Filled(library, rows)
    made = filled.all_deltas()
    assert made is not None
    check_events(made, rows, library)


def test_a_full_batch(library: _native.Library) -> None:
    rows: List[Row] = [(DELTA, 0, THINKING, f"t{i}") for i in range(CAPACITY)]
    made = Filled(library, rows).all_deltas()
    assert made is not None and len(made) == CAPACITY
    check_events(made, rows, library)


def test_one_delta(library: _native.Library) -> None:
    rows: List[Row] = [(DELTA, 1, TEXT, "only")]
    made = Filled(library, rows).all_deltas()
    assert made is not None
    check_events(made, rows, library)


def test_the_deltas_of_several_blocks_in_one_run(library: _native.Library) -> None:
    # Two tool calls' arguments interleaved, then a text block's: each keeps its own index
    # and block kind.
    rows: List[Row] = [(DELTA, 1, TOOL_CALL, '{"a"'), (DELTA, 2, TOOL_CALL, '{"b"'), (DELTA, 1, TOOL_CALL, ":1}"),
                       (DELTA, 2, TOOL_CALL, ":2}"), (DELTA, 3, TEXT, "done")]
    made = Filled(library, rows).all_deltas()
    assert made is not None
    check_events(made, rows, library)


def test_a_block_kind_this_package_does_not_name(library: _native.Library) -> None:
    # The library's own name for it ("unknown" for a value it does not know either).
    rows: List[Row] = [(DELTA, 0, 99, "x"), (DELTA, 0, 99, "y")]
    made = Filled(library, rows).all_deltas()
    assert made is not None
    assert [e.block_kind for e in made] == [library.block_kind_name(99)] * 2
    check_events(made, rows, library)
    mixed: List[Row] = [(DELTA, 0, TEXT, "x"), (DELTA, 0, 99, "y")]
    made = Filled(library, mixed).all_deltas()
    assert made is not None
    check_events(made, mixed, library)


def test_a_text_holding_a_nul(library: _native.Library) -> None:
    # The NULs between the strings no longer tell where each ends: read one by one.
    rows: List[Row] = [(DELTA, 0, TEXT, "a\0b"), (DELTA, 0, TEXT, "c"), (DELTA, 0, TEXT, "\0")]
    made = Filled(library, rows).all_deltas()
    assert made is not None
    check_events(made, rows, library)


def test_an_empty_text_that_points_nowhere(library: _native.Library) -> None:
    # The block holds the strings, but the C ABI does not promise that an empty one points
    # into it: NULL, first or last, is an empty text too.
    for rows in ([(DELTA, 0, TEXT, None), (DELTA, 0, TEXT, "a")], [(DELTA, 0, TEXT, "a"), (DELTA, 0, TEXT, None)],
                 [(DELTA, 0, TEXT, None)]):
        made = Filled(library, rows).all_deltas()
        assert made is not None
        check_events(made, rows, library)


def test_a_batch_with_other_events_is_not_all_deltas(library: _native.Library) -> None:
    rows: List[Row] = [(_native.EVENT_BLOCK_START, 0, TEXT, None), (DELTA, 0, TEXT, "Hi"), (DELTA, 0, TEXT, "!"),
                       (_native.EVENT_BLOCK_COMPLETE, 0, TEXT, "Hi!")]
    filled = Filled(library, rows)
    assert filled.all_deltas() is None
    assert filled.batch.load() == [kind for kind, _, _, _ in rows]
    check_events(filled.deltas(1, 3), rows[1:3], library)  # the run of deltas inside it
    last: List[Row] = [(DELTA, 0, TEXT, "Hi"), (_native.EVENT_BLOCK_COMPLETE, 0, TEXT, "Hi")]
    assert Filled(library, last).all_deltas() is None
