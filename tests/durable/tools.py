"""The tools of the durable tests, the same in the workers and in the local turns they are
compared with. Each run appends a line (the process id) to $DURABLE_RUNS/<tool>.runs, so a test
counts runs across processes; `slow` waits while $DURABLE_RUNS/slow.block exists, after writing
slow.started, so a test can kill its worker in the middle."""

import os
import time
from pathlib import Path

import panto


def _record(name: str) -> Path:
    runs = Path(os.environ["DURABLE_RUNS"])
    with open(runs / f"{name}.runs", "a") as f:
        f.write(f"{os.getpid()}\n")
    return runs


@panto.tool
def lookup(key: str) -> str:
    """The value stored under a key."""
    _record("lookup")
    return f"value of {key}"


@panto.tool
def slow(key: str) -> str:
    """The value stored under a key, from slow storage."""
    runs = _record("slow")
    block = runs / "slow.block"
    if block.exists():
        (runs / "slow.started").write_text(str(os.getpid()))
        while block.exists():
            time.sleep(0.05)
    return f"slow value of {key}"


TOOLS = [lookup, slow]
