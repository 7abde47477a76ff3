#!/usr/bin/env python3
"""The Python cancel-soak driver: `soak_driver.py CONFIG_JSON TOOL_JSON`.

Speaks the line protocol of tests/soak/README.md on stdin/stdout: one agent, turns canceled
from another thread (threading.Timer) after a given delay, the tool's handler sleeping a
given time, one JSON reply a line.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any, Dict, List, Optional

import panto


class Driver:
    def __init__(self, config: Dict[str, Any], tool_spec: Dict[str, Any]) -> None:
        self.config = config
        self.tool_spec = tool_spec
        self.sleep_s = 0.0
        self.agent: Optional[panto.Agent] = None

    def lookup(self, **input: Any) -> str:
        time.sleep(self.sleep_s)  # a handler slow enough for a cancel to land in it
        return "found " + str(input.get("q"))

    def new_agent(self) -> Dict[str, Any]:
        if self.agent is not None:
            self.agent.close()
        tool = panto.Tool.from_spec(self.tool_spec, handler=self.lookup)
        self.agent = panto.Agent.from_config(self.config, tools=[tool])
        return {"ok": True}

    def set_config(self, changes: Dict[str, Any]) -> Dict[str, Any]:
        assert self.agent is not None
        try:
            self.agent.set_config(**changes)
        except panto.Error as err:
            return {"ok": False, "code": err.code, "message": err.message}
        return {"ok": True}

    def connections(self) -> Dict[str, Any]:
        assert self.agent is not None
        counts = self.agent.connections
        return {"opened": counts.opened, "reused": counts.reused}

    def turn(self, cancel_us: int, sleep_us: int, pad: int, text: str) -> Dict[str, Any]:
        assert self.agent is not None
        self.sleep_s = sleep_us / 1e6
        events: List[str] = []
        seen: List[str] = []
        texts: List[str] = []
        end, message = "done", ""
        stream = self.agent.run(text + "x" * pad)
        timer = None
        if cancel_us >= 0:
            timer = threading.Timer(cancel_us / 1e6, stream.cancel)
            timer.start()
        try:
            with stream:
                for ev in stream:
                    events.append(ev.kind)
                    if isinstance(ev, panto.ContentDelta) and ev.block_kind == "text":
                        seen.append(ev.text)
                    elif isinstance(ev, panto.BlockComplete) and ev.block_kind == "text":
                        texts.append(ev.text)
        except panto.Error as err:
            end, message = err.code, err.message
        finally:
            if timer is not None:
                timer.cancel()
                timer.join()
        return {"end": end, "message": message, "events": events, "seen_text": "".join(seen),
                "texts": texts, "conversation": self.agent.conversation}


def main(argv: List[str]) -> int:
    if len(argv) != 3:
        print("usage: soak_driver.py CONFIG_JSON TOOL_JSON", file=sys.stderr)
        return 2
    driver = Driver(json.loads(argv[1]), json.loads(argv[2]))
    for line in sys.stdin:
        op, _, rest = line.rstrip("\n").partition(" ")
        if op == "agent":
            reply = driver.new_agent()
        elif op == "config":
            reply = driver.set_config(json.loads(rest))
        elif op == "connections":
            reply = driver.connections()
        elif op == "turn":
            cancel_us, sleep_us, pad, text = rest.split(" ", 3)
            reply = driver.turn(int(cancel_us), int(sleep_us), int(pad), text)
        else:
            print(f"soak_driver.py: unknown command {op!r}", file=sys.stderr)
            return 2
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
