"""The mcp_servers keyword: the config key as it is, judged by the library (docs/mcp.md). The
servers' tools in turns are the conformance cases mcp_* (tests/conformance)."""
import os
import sys
from pathlib import Path

import pytest

import panto


def test_mcp_servers_keyword_reaches_the_library():
    with pytest.raises(panto.ConfigError, match='"a__b" is not a server name'):
        panto.Agent("anthropic", "m", api_key="k", mcp_servers={"a__b": {"command": "x"}})
    with pytest.raises(panto.ConfigError, match="mcp_servers.files needs \"command\""):
        panto.Agent("anthropic", "m", api_key="k", mcp_servers={"files": {}})
    # A good one makes an agent without starting anything: servers start at the first turn.
    agent = panto.Agent("anthropic", "m", api_key="k", mcp_servers={"files": {"command": "/nonexistent"}})
    agent.close()


def test_mcp_servers_keyword_takes_a_streamable_http_server():
    agent = panto.Agent("anthropic", "m", api_key="k", mcp_servers={
        "docs": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer t"}}})
    agent.close()
    with pytest.raises(panto.ConfigError, match='"url" and "command" do not go together'):
        panto.Agent("anthropic", "m", api_key="k", mcp_servers={"docs": {"url": "https://example.com/mcp", "command": "x"}})


SERVER = {"command": sys.executable, "args": [str(Path(__file__).resolve().parents[2] / "tests" / "mcp" / "server.py")]}


def start_servers(agent: panto.Agent) -> None:
    """Runs a turn against a closed port: the servers start (before the request), then the
    request fails to connect. No provider, so no socket of another party outlives the turn."""
    with pytest.raises(panto.APIConnectionError):
        with agent.run("go") as stream:
            for _ in stream:
                pass


def test_mcp_status_before_and_after_the_servers_start():
    agent = panto.Agent("anthropic", "m", api_key="k", base_url="http://127.0.0.1:9", retry=panto.RetryPolicy(max_retries=0), mcp_servers={
        "t": dict(SERVER, tools=["echo", "add"]), "gone": {"command": "/nonexistent/mcp-server"}})
    with agent:
        assert [(s.name, s.transport, s.state) for s in agent.mcp_status()] == [
            ("gone", "stdio", "not_started"), ("t", "stdio", "not_started")]
        with pytest.raises(panto.ConfigError, match='MCP server "gone" could not start'):
            with agent.run("go") as stream:
                for _ in stream:
                    pass
        gone, t = agent.mcp_status()
        assert (gone.state, gone.error) == ("failed", 'MCP server "gone" could not start: its command could not be run')
        assert t.state == "not_started"  # after "gone" in name order: not reached
    agent = panto.Agent("anthropic", "m", api_key="k", base_url="http://127.0.0.1:9", retry=panto.RetryPolicy(max_retries=0), mcp_servers={
        "t": dict(SERVER, tools=["echo", "add"])})
    with agent:
        start_servers(agent)
        [t] = agent.mcp_status()
        assert t == panto.McpServerStatus(name="t", transport="stdio", state="ready", protocol_version="2025-11-25",
                                          server_name="panto-test-server", server_version="1.0.0", tool_count=2,
                                          error="", stderr_tail="")


def children() -> list[int]:
    """The pids of this process's children (zombies too: a child not reaped is a leak)."""
    me = str(os.getpid())
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        if stat[stat.rindex(")") + 2:].split()[1] == me:
            found.append(int(entry))
    return found


def test_agents_with_stdio_servers_made_and_freed_leave_no_descriptor_and_no_process():
    def once() -> None:
        agent = panto.Agent("anthropic", "m", api_key="k", base_url="http://127.0.0.1:9", retry=panto.RetryPolicy(max_retries=0),
                            mcp_servers={"a": SERVER, "b": SERVER})
        start_servers(agent)
        assert [s.state for s in agent.mcp_status()] == ["ready", "ready"]
        assert len(children()) >= 2
        agent.close()

    once()  # the library's own descriptors made once (its watchdog), before counting
    before = len(os.listdir("/proc/self/fd"))
    kids = children()  # (another test's emulator may be one)
    for _ in range(10):
        once()
    assert len(os.listdir("/proc/self/fd")) == before
    assert children() == kids
