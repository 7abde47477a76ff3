"""A stream that waits in the library: an Anthropic answer that stalls after its first text
delta "Hello ", and a next() on another thread blocked on it (test_threads.py,
test_batch_size.py)."""

from __future__ import annotations

import json
import threading
import time
from typing import Any, Dict

import panto

# Anthropic events up to a first text delta "Hello "; the emulator then stalls (sends nothing
# more) until the client goes away: a next() after "Hello " blocks.
STALLED_HEAD = "".join(
    f"event: {name}\ndata: {json.dumps(data)}\n\n"
    for name, data in [
        ("message_start", {"type": "message_start", "message": {"id": "msg_stall", "type": "message", "role": "assistant",
                                                                 "model": "m", "content": [], "stop_reason": None,
                                                                 "usage": {"input_tokens": 3, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello "}}),
    ]
)
STALLED = {"body": STALLED_HEAD + "event: message_stop\ndata: {}\n\n", "fault": {"after_bytes": len(STALLED_HEAD), "kind": "stall"}}


def next_on_a_thread(stream: panto.Stream) -> Dict[str, Any]:
    """Starts a thread that calls next() on `stream`; returns what it got ("event" or
    "error"), filled when it returns, and the "thread"."""
    got: Dict[str, Any] = {}

    def read() -> None:
        try:
            got["event"] = next(stream)
        except BaseException as e:  # reported to the test
            got["error"] = e

    got["thread"] = threading.Thread(target=read, daemon=True)
    got["thread"].start()
    return got


def blocked_in_next(stream: panto.Stream) -> Dict[str, Any]:
    """next_on_a_thread, once the thread is inside the native call (where it must block)."""
    got = next_on_a_thread(stream)
    thread = got["thread"]
    deadline = time.monotonic() + 5
    while not stream._handle.busy:  # inside panto_next_events
        assert time.monotonic() < deadline and thread.is_alive(), got
        time.sleep(0.005)
    return got
