#!/usr/bin/env python3
"""The Python crash driver: `crash_driver.py BASE_URL SESSION_DIR SESSION_ID START`.

One agent kept in the session SESSION_ID of SESSION_DIR; runs the turns "turn START",
"turn START+1", ... until it is killed, printing `user N` once run() returned (the user
message is on disk), `assistant N` once it saw the message's MESSAGE_END (the assistant
message is on disk) and `done N` after the turn (tests/crash/README.md).
"""

from __future__ import annotations

import sys

import panto


def main() -> None:
    base_url, session_dir, session_id, start = sys.argv[1:5]
    agent = panto.Agent.from_config({
        "provider": "anthropic", "model": "claude-test", "api_key": "k", "base_url": base_url,
        "session": {"dir": session_dir, "id": session_id},
    })
    n = int(start)
    while True:
        stream = agent.run(f"turn {n}")
        print(f"user {n}", flush=True)
        for event in stream:
            if event.kind == "message_end":
                print(f"assistant {n}", flush=True)
        print(f"done {n}", flush=True)
        n += 1


if __name__ == "__main__":
    main()
