"""A worker process of the durable tests: `worker.py ADDRESS TASK_QUEUE [workflows|activities]`
runs panto's workflow and activities (or the one named: the Go tests' mixed task queue) with tests/durable/tools.py's tools, the sink "file" (each event a JSON line in
$DURABLE_RUNS/events-<workflow id>.jsonl), and prints "ready" once it polls."""

import asyncio
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from temporalio.client import Client

import panto.temporal
from tools import TOOLS


def file_sink(turn_id: str, event: dict) -> None:
    with open(Path(os.environ["DURABLE_RUNS"]) / f"events-{turn_id}.jsonl", "a") as f:
        f.write(json.dumps(event) + "\n")


async def main(address: str, task_queue: str, only: str = "") -> None:
    client = await Client.connect(address)
    async with panto.temporal.worker(client, task_queue, tools=TOOLS, sinks={"file": file_sink},
                                     workflows=only != "activities", activities=only != "workflows",
                                     max_concurrent_activities=200):
        print("ready", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
