"""How many events a stream's batch holds (panto/_batch.py): a small array of its own, and one
of the process's few large arrays while its body comes faster than it is read, given back when
the stream catches up or waits, so that 1,000 waiting streams cost little each.

    PYTHONPATH=bindings-py PANTO_LIBRARY=zig-out/lib/libpanto.so \
        .venv/bin/python -m pytest -q tests/python/test_batch_size.py
"""

from __future__ import annotations

import gc
from typing import List

import pytest

import panto
from panto import _batch, _native
from panto._batch import CAPACITY, MAX_LARGE, SMALL, NativeBatch
from panto.emulator import Emulator
from waiting_stream import STALLED, blocked_in_next


def capacity(batch: NativeBatch) -> int:
    """What the next panto_next_events call is told it may fill."""
    return int(batch.args[1].value)


def after_call(batch: NativeBatch, events: int) -> None:
    """As a call that filled `events` events leaves the batch, once they are made."""
    batch.prepare()
    batch._count.value = events
    batch.settle()


def free_large() -> int:
    return len(_batch._large_idle) + len(_batch._large_unmade)


def test_a_batch_that_fills_its_small_array_reads_the_next_one_in_a_large_one(library: _native.Library) -> None:
    batch = NativeBatch(library)
    assert capacity(batch) == SMALL
    after_call(batch, SMALL - 1)
    batch.prepare()
    assert capacity(batch) == SMALL  # it had not filled: all that had arrived was read
    batch._count.value = SMALL
    batch.settle()
    batch.prepare()
    assert capacity(batch) == CAPACITY
    batch._count.value = CAPACITY  # full again: the body is still fast
    batch.settle()
    batch.prepare()
    assert capacity(batch) == CAPACITY
    batch._count.value = SMALL  # where one of the library's reads ended
    batch.settle()
    batch.prepare()
    assert capacity(batch) == CAPACITY
    batch._count.value = SMALL - 1  # caught up: the next call may wait
    batch.settle()
    assert capacity(batch) == SMALL
    batch.prepare()
    assert capacity(batch) == SMALL
    batch.give_back()


def test_the_process_lends_at_most_MAX_LARGE_large_arrays_and_gets_back_those_of_batches_let_go(library: _native.Library) -> None:
    gc.collect()  # batches of streams other tests let go
    assert free_large() == MAX_LARGE
    fast = [NativeBatch(library) for _ in range(MAX_LARGE + 1)]
    for batch in fast:
        after_call(batch, SMALL)
        batch.prepare()
    assert [capacity(b) for b in fast] == [CAPACITY] * MAX_LARGE + [SMALL]
    assert free_large() == 0
    after_call(fast[-1], SMALL)
    fast[-1].prepare()
    assert capacity(fast[-1]) == SMALL  # none free: it reads on in its own
    del fast[0]  # a stream let go in the middle of a fast body
    after_call(fast[-1], SMALL)
    fast[-1].prepare()
    assert capacity(fast[-1]) == CAPACITY
    for batch in fast:
        batch.give_back()
    assert free_large() == MAX_LARGE


def test_a_stream_that_read_a_fast_body_waits_with_a_small_array(library: _native.Library) -> None:
    # 2,000 deltas sent at once (they come faster than they are read, so batches fill), then a
    # tool round, then an answer that stalls: the stream waits in panto_next_events.
    deltas = [f"w{i} " for i in range(2000)]
    fast = {"message": {"content": [{"type": "text", "text": "".join(deltas), "deltas": deltas},
                                    {"type": "tool_use", "id": "toolu_1", "name": "ping", "input": {}}]}}
    ping = panto.Tool(name="ping", input_schema={"type": "object"}, handler=lambda: "pong")
    with Emulator(scenario={"responses": [fast, STALLED]}) as emu, \
            panto.Agent(provider="anthropic", model="m", base_url=emu.url, api_key="k", tools=[ping],
                        retry=panto.RetryPolicy(max_retries=0)) as agent:
        stream = agent.run("Hi")
        texts: List[str] = []
        for event in stream:
            if type(event) is panto.ContentDelta:
                texts.append(event.text)
                if event.text == "Hello ":
                    break
        assert texts == deltas + ["Hello "]
        got = blocked_in_next(stream)
        native = stream._native
        assert native is not None and capacity(native) == SMALL
        stream.cancel()
        got["thread"].join(5)
        assert not got["thread"].is_alive() and isinstance(got.get("error"), panto.CanceledError)
        stream.close()
        assert stream._native is None  # a closed stream holds no array
