"""Threads sharing a stream or its agent: never a crash, never an event lost or handed out
twice, and a stream and agent that stay usable. The C API takes one call at a time on an
agent and its streams: the binding makes the threads take turns, as the Go binding does.

The hammering runs in a child process, so that a crash fails the test rather than killing
pytest; every wait has a deadline.

    PYTHONPATH=bindings-py PANTO_LIBRARY=zig-out/lib/libpanto.so \\
        .venv/bin/python -m pytest -q tests/python/test_threads.py
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

import panto
from panto import _native
from panto.emulator import Emulator
from waiting_stream import STALLED, blocked_in_next, next_on_a_thread

ROOT = Path(__file__).resolve().parents[2]

HELLO = {"message": {"content": [{"type": "text", "text": "Hello big world"}]}}


# Every test here needs the library (conftest.py fails them clearly when it is missing).
pytestmark = pytest.mark.usefixtures("library")


def new_agent(emu: Emulator, **kw: Any) -> panto.Agent:
    return panto.Agent(provider="anthropic", model="m", base_url=emu.url, api_key="k",
                       retry=panto.RetryPolicy(max_retries=0), **kw)


def test_a_second_thread_reading_a_stream_waits_for_the_first() -> None:
    # The deltas come 150 ms apart: the first thread waits in the library for "big ", and a
    # second one's next() then waits for it (it was a second native call on the stream beside
    # the first, which crashed), and gets the event after.
    slow = dict(HELLO, chunk_delay_ms=150)
    with Emulator(scenario={"responses": [slow, HELLO]}) as emu, new_agent(emu) as agent:
        stream = agent.run("Hi")
        seen = [next(stream) for _ in range(3)]
        assert [e.kind for e in seen] == ["message_start", "block_start", "content_delta"]
        first = blocked_in_next(stream)
        second = next_on_a_thread(stream)
        first["thread"].join(5)
        second["thread"].join(5)
        texts = {first.get("event", first.get("error")), second.get("event", second.get("error"))}
        assert texts == {panto.ContentDelta(0, "text", "big "), panto.ContentDelta(0, "text", "world")}, texts
        assert [e.kind for e in stream] == ["block_complete", "message_end", "message_complete"]
        assert agent.conversation[-1]["content"] == [{"type": "text", "text": "Hello big world"}]
        stream.close()


def test_calls_on_the_agent_wait_for_a_next_blocked_on_another_thread() -> None:
    # The C API takes one call at a time: conversation, set_config and submit wait for the
    # blocked next() to return (here: canceled by a timer) rather than running beside it.
    with Emulator(scenario={"responses": [STALLED, HELLO]}) as emu, new_agent(emu) as agent:
        stream = agent.run("Hi")
        for _ in range(3):
            next(stream)
        other = blocked_in_next(stream)
        timer = threading.Timer(0.3, stream.cancel)
        timer.start()
        try:
            conversation = agent.conversation
        finally:
            timer.join()
        other["thread"].join(5)
        assert isinstance(other.get("error"), panto.CanceledError), other
        # Read after the canceled call ended the turn, not beside it (the user message alone).
        assert conversation[-1]["stop_reason"] == "aborted", conversation
        with pytest.raises(panto.NoSuchCallError):
            stream.submit_tool_result("toolu_none", "x")
        stream.close()


def test_a_stream_finalized_while_another_thread_reads_is_freed_by_the_next_call() -> None:
    # A finalizer never waits for the lock another thread holds (a next() blocked on the
    # stall would hold it until the provider's next event): it leaves the native stream to
    # the next holder.
    with Emulator(scenario={"responses": [HELLO, STALLED, HELLO]}) as emu, new_agent(emu) as agent:
        old = agent.run("Hi")
        assert "".join(old.text()) == "Hello big world"  # over, not closed
        stream = agent.run("Again")
        for _ in range(3):
            next(stream)
        first = blocked_in_next(stream)
        del old
        gc.collect()  # its finalizer runs here, on this thread, while the other holds the lock
        assert len(agent._orphans) == 1
        stream.cancel()
        first["thread"].join(5)
        assert isinstance(first.get("error"), panto.CanceledError), first
        stream.close()  # the next holder of the lock frees it
        assert agent._orphans == []
        with agent.run("Last") as last:
            assert "".join(last.text()) == "Hello big world"


CHILD = textwrap.dedent(
    """
    import json, random, sys, threading, time, panto
    from panto.emulator import Emulator

    words = ["w%d " % i for i in range(300)]
    # In writes of 97 bytes, so that a reader often waits in the library for the next.
    answer = {"message": {"content": [{"type": "text", "text": "".join(words)}]}, "chunk_size": 97}
    rng = random.Random(12)
    report = {}

    def count(name):
        report[name] = report.get(name, 0) + 1

    def reads_whole(agent):
        with agent.run("Check") as s:
            return "".join(s.text()) == "".join(words)

    def new_agent(emu):
        return panto.Agent(provider="anthropic", model="m", base_url=emu.url, api_key="k",
                           retry=panto.RetryPolicy(max_retries=0))

    def two_readers(emu, rounds):
        # Two threads iterate one stream (a for loop, next(), final_message()): each event
        # goes to exactly one of them, each sees its events in order, the turn completes.
        agent = new_agent(emu)
        order = {w: i for i, w in enumerate(words)}
        for r in range(rounds):
            stream = agent.run("Hi")
            got = {0: [], 1: []}

            def read(k):
                if k == 1 and r % 3 == 1:
                    while True:
                        try:
                            got[k].append(next(stream))
                        except StopIteration:
                            return
                elif k == 1 and r % 3 == 2:
                    assert stream.final_message().text == "".join(words)
                else:
                    for ev in stream:
                        got[k].append(ev)

            threads = [threading.Thread(target=read, args=(k,)) for k in (0, 1)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(30)
                assert not t.is_alive(), "a reader hangs"
            for k in (0, 1):
                mine = [order[e.text] for e in got[k] if isinstance(e, panto.ContentDelta)]
                assert mine == sorted(mine), "events out of order"
                count("reader%d_events" % k) if mine else None
            if r % 3 != 2:
                deltas = sorted(e.text for e in got[0] + got[1] if isinstance(e, panto.ContentDelta))
                assert deltas == sorted(words), "an event lost or handed out twice"
                assert sum(isinstance(e, panto.MessageComplete) for e in got[0] + got[1]) == 1
            assert stream.done
            stream.close()
        assert reads_whole(agent)
        agent.close()

    def misuse(emu, seconds):
        # One thread runs turns; another calls everything else on the agent and its streams,
        # run() included.
        agent = new_agent(emu)
        current = [None]
        stop = threading.Event()
        errors = []

        def hammer():
            calls = [
                lambda s: agent.conversation,
                lambda s: agent.set_config(system="x"),
                lambda s: agent.tools(),
                lambda s: agent.add_tool({"name": "t%d" % rng.randrange(5), "description": "d",
                                          "input_schema": {"type": "object"}}),
                lambda s: agent.run("x").close(),
                lambda s: s and s.submit_tool_result("nope", "x"),
                lambda s: s and s.reopen(),
                lambda s: s and s.cancel(),
                lambda s: s and s.close(),
                lambda s: s and next(s),
            ]
            while not stop.is_set():
                try:
                    rng.choice(calls)(current[0])
                except panto.Error as e:
                    count(type(e).__name__)
                except StopIteration:
                    pass
                except BaseException as e:  # anything else is a bug (garbage error detail, ...)
                    errors.append(repr(e))

        t = threading.Thread(target=hammer)
        t.start()
        deadline = time.monotonic() + seconds
        turns = 0
        while time.monotonic() < deadline:
            try:
                stream = agent.run("Hi")
            except panto.BusyError:
                continue
            current[0] = stream
            try:
                for _ in stream:
                    pass
            except panto.Error as e:
                count("turn_" + type(e).__name__)
            stream.close()
            turns += 1
        stop.set()
        t.join(30)
        assert not t.is_alive(), "the hammering thread hangs"
        assert not errors, errors[:5]
        assert turns > 0
        for m in agent.conversation:
            assert m["role"] in ("user", "assistant"), m
        assert reads_whole(agent)
        # Last, the agent closed by another thread while this one reads a turn: the reader
        # ends (canceled, or at the end of the turn), and the agent is closed for everyone.
        stream = agent.run("Last")
        closer = threading.Timer(rng.uniform(0, 0.005), agent.close)
        closer.start()
        try:
            for _ in stream:
                pass
        except panto.CanceledError:
            count("last_turn_canceled")
        closer.join(30)
        assert not closer.is_alive(), "close() hangs"
        assert agent.closed and stream.closed
        try:
            agent.conversation
            raise AssertionError("the conversation of a closed agent")
        except panto.InvalidArgumentError:
            pass

    with Emulator(scenario={"responses": [answer], "repeat_last": True}) as emu:
        what = sys.argv[1]
        if what == "two_readers":
            two_readers(emu, 25)
        elif what == "misuse":
            misuse(emu, 4)
    print(json.dumps(report))
    """
)


def run_child(what: str) -> Dict[str, int]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "bindings-py"), PANTO_LIBRARY=_native.LIB.path)  # type: ignore[union-attr]
    proc = subprocess.run([sys.executable, "-c", CHILD, what], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"exit status {proc.returncode}\n{proc.stderr[-3000:]}"
    report: Dict[str, int] = json.loads(proc.stdout.splitlines()[-1])
    return report


def test_two_threads_reading_one_stream_share_its_events() -> None:
    report = run_child("two_readers")
    assert report.get("reader0_events", 0) > 0 and report.get("reader1_events", 0) > 0, report


def test_calls_from_another_thread_while_one_reads_never_crash() -> None:
    # conversation, set_config, tools, add_tool, run, submit_tool_result, reopen, cancel,
    # close and next() from a second thread, then the agent's close().
    report = run_child("misuse")
    # Refused as the library refuses them, with their real error detail.
    assert report.get("BusyError", 0) > 0 and report.get("NoSuchCallError", 0) > 0, report
