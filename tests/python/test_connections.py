"""An agent's connections, against the provider emulator (which numbers the TCP connections its
requests came on): `Agent.connections`, `keep_alive=panto.KeepAlive(idle_ms=...)` and the
PANTO_LOG=debug connection log."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import time
from typing import Any, Dict, List

import pytest

import panto
from panto.emulator import Emulator



# Every test here needs the library (conftest.py fails them clearly when it is missing).
pytestmark = pytest.mark.usefixtures("library")


def hello_scenario() -> Dict[str, Any]:
    return {"responses": [{"message": {"content": [{"type": "text", "text": "Hello"}]}}], "repeat_last": True}


def new_agent(emu: Emulator, **kw: Any) -> panto.Agent:
    return panto.Agent(provider="anthropic", model="test-model", base_url=emu.url, api_key="test-key", **kw)


def turn(agent: panto.Agent, text: str) -> None:
    with agent.run(text) as stream:
        assert list(stream)[-1].kind == "message_complete"


def connection_numbers(emu: Emulator) -> List[int]:
    return [r["connection"] for r in emu.requests()]


def test_turns_share_one_connection_and_the_counters_say_so() -> None:
    with Emulator(scenario=hello_scenario()) as emu, new_agent(emu) as agent:
        assert agent.connections == panto.Connections(opened=0, reused=0)
        for text in ("one", "two", "three"):
            turn(agent, text)
        assert agent.connections == panto.Connections(opened=1, reused=2)
        assert connection_numbers(emu) == [1, 1, 1]
        with pytest.raises(AttributeError):
            agent.connections.opened = 5  # type: ignore[misc]


def test_idle_ms_0_opens_one_connection_per_request() -> None:
    with Emulator(scenario=hello_scenario()) as emu, new_agent(emu, keep_alive=panto.KeepAlive(idle_ms=0)) as agent:
        turn(agent, "one")
        turn(agent, "two")
        assert agent.connections == panto.Connections(opened=2, reused=0)
        assert connection_numbers(emu) == [1, 2]
        assert [r["headers"].get("connection") for r in emu.requests()] == ["close", "close"]
        # set_config, with a dict: kept alive from the next request on.
        agent.set_config(keep_alive={"idle_ms": 60_000})
        turn(agent, "three")
        turn(agent, "four")
        assert agent.connections == panto.Connections(opened=3, reused=1)
        assert connection_numbers(emu) == [1, 2, 3, 3]


def test_a_connection_idle_longer_than_idle_ms_is_not_reused() -> None:
    with Emulator(scenario=hello_scenario()) as emu, new_agent(emu, keep_alive={"idle_ms": 10}) as agent:
        turn(agent, "one")
        time.sleep(0.1)  # longer than idle_ms
        turn(agent, "two")
        assert agent.connections == panto.Connections(opened=2, reused=0)
        assert connection_numbers(emu) == [1, 2]


@pytest.mark.parametrize(
    "keep_alive, message",
    [
        (panto.KeepAlive(idle_ms=-1), "keep_alive.idle_ms must be an integer from 0 to 86400000"),
        ({"idle_ms": 86_400_001}, "keep_alive.idle_ms must be an integer from 0 to 86400000"),
        ({"idle_ms": "soon"}, "keep_alive.idle_ms must be an integer"),
        ({"max": 1}, 'unknown keep_alive key "max"'),
    ],
)
def test_bad_keep_alive_values_are_refused(keep_alive: Any, message: str) -> None:
    with pytest.raises(panto.ConfigError, match=message):
        panto.Agent(provider="anthropic", model="m", api_key="k", keep_alive=keep_alive)


def test_keep_alive_of_a_wrong_type_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="keep_alive must be a panto.KeepAlive or a dict"):
        panto.Agent(provider="anthropic", model="m", api_key="k", keep_alive=60_000)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="KeepAlive.idle_ms must be an int"):
        panto.Agent(provider="anthropic", model="m", api_key="k", keep_alive=panto.KeepAlive(idle_ms=1.5))  # type: ignore[arg-type]


LOGGING_PROGRAM = textwrap.dedent(
    """
    import sys, time, panto
    url = sys.argv[1]
    with panto.Agent(provider="anthropic", model="m", base_url=url, api_key="k") as agent:
        for text in ("one", "two"):
            list(agent.run(text))
        agent.set_config(keep_alive={"idle_ms": 10})
        time.sleep(0.1)  # longer than idle_ms
        list(agent.run("three"))
    """
)


def run_logging_program(url: str, env: Dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-c", LOGGING_PROGRAM, url], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_panto_log_debug_writes_a_line_per_request_and_per_closed_connection() -> None:
    with Emulator(scenario=hello_scenario()) as emu:
        peer = emu.url.removeprefix("http://")
        env = {k: v for k, v in os.environ.items() if k != "PANTO_LOG"}
        assert run_logging_program(emu.url, env) == ""  # off by default
        log = run_logging_program(emu.url, dict(env, PANTO_LOG="debug"))
    # Each request: its method and URL, its connection, then its status and time to the head.
    url = f"{emu.url}/v1/messages"
    timed = [re.sub(r"after \d+ ms$", "after N ms", line) for line in log.splitlines()]
    assert timed == [
        f"panto: POST {url}",
        f"panto: request on connection 1 to {peer} (new)",
        f"panto: POST {url}: HTTP 200 after N ms",
        f"panto: POST {url}",
        f"panto: request on connection 1 to {peer} (reused)",
        f"panto: POST {url}: HTTP 200 after N ms",
        f"panto: POST {url}",
        f"panto: connection 1 to {peer} closed: idle longer than keep_alive.idle_ms",
        f"panto: request on connection 2 to {peer} (new)",
        f"panto: POST {url}: HTTP 200 after N ms",
        f"panto: connection 2 to {peer} closed: the agent was freed",
    ]
