"""The mcp_servers keyword: the config key as it is, judged by the library (docs/mcp.md). The
servers' tools in turns are the conformance cases mcp_* (tests/conformance)."""
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
