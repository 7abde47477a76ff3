"""`answer.py ADDRESS WORKFLOW_ID approve CALL_ID` or `... deny CALL_ID REASON`: answers a
durable turn's waiting call from a process of its own (panto.temporal.approve / deny), as a
person's answer comes, any time later, from anywhere."""

import asyncio
import os
import sys

from temporalio.client import Client

import panto.temporal


async def main(address: str, workflow_id: str, verb: str, call_id: str, *reason: str) -> None:
    handle = (await Client.connect(address)).get_workflow_handle(workflow_id)
    if verb == "approve":
        await panto.temporal.approve(handle, call_id)
    else:
        await panto.temporal.deny(handle, call_id, reason[0])


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
    # A short-lived client process can abort in the interpreter's finalization, the SDK's Rust
    # threads still running (temporalio/sdk-python#300): the answer is sent, leave at once.
    sys.stdout.flush()
    os._exit(0)
