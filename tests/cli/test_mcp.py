"""The config file's `mcp_servers` key (docs/mcp.md), passed to the agent as it is: an MCP
server's tools offered and run in print mode, and a server that cannot start reported as a
config error. tests/mcp/server.py is the server."""
from __future__ import annotations

import json
import sys

from conftest import ROOT, text_reply, tool_reply

SERVER = {"command": sys.executable, "args": [str(ROOT / "tests" / "mcp" / "server.py")]}


def test_a_config_files_mcp_server_answers_the_models_call(emulator, run_panto, write_config):
    write_config({"mcp_servers": {"t": dict(SERVER, tools=["echo"])}})
    emu = emulator({"responses": [tool_reply("t__echo", {"text": "hello"}), text_reply("ok")]})
    r = run_panto("-p", "go", "--json")
    assert r.returncode == 0, r.stderr
    events = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    [res] = [e for e in events if e["event"] == "tool_result"]
    assert (res["name"], res["content"], res["is_error"]) == ("t__echo", "hello", False)
    assert "t__echo" in [t["name"] for t in emu.requests()[0]["body"]["tools"]]


def test_a_server_that_cannot_start_is_a_config_error(emulator, run_panto, write_config):
    write_config({"mcp_servers": {"gone": {"command": "/nonexistent/mcp-server"}}})
    emu = emulator({"responses": [text_reply("never")]})
    r = run_panto("-p", "go")
    assert r.returncode == 2
    assert r.stderr == 'panto: config: MCP server "gone" could not start: its command could not be run\n'
    assert emu.requests() == []
