"""The config file's `mcp_servers` key (docs/mcp.md), passed to the agent as it is: an MCP
server's tools offered and run in print mode, and a server that cannot start reported as a
config error; `--mcp NAME=COMMAND` and `/mcp`. tests/mcp/server.py is the server."""
from __future__ import annotations

import json
import shlex
import sys

import pytest

from conftest import ROOT, text_reply, tool_reply
from test_interactive import pane  # noqa: F401  (the fixture)

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


# ---- --mcp NAME=COMMAND and /mcp ----

MCP_FLAG = "t=" + " ".join(shlex.quote(w) for w in [SERVER["command"], *SERVER["args"]])


def test_the_mcp_flag_adds_a_stdio_server_whose_tools_are_offered(emulator, run_panto):
    emu = emulator({"responses": [tool_reply("t__add", {"a": 2, "b": 3}), text_reply("ok")]})
    r = run_panto("-p", "go", "--json", "--mcp", MCP_FLAG)
    assert r.returncode == 0, r.stderr
    events = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    [res] = [e for e in events if e["event"] == "tool_result"]
    assert (res["name"], res["is_error"]) == ("t__add", False)
    offered = [t["name"] for t in emu.requests()[0]["body"]["tools"]]
    assert {"t__echo", "t__add", "t__fail"} <= set(offered)


def test_the_mcp_flag_wins_over_the_config_files_server_of_its_name(emulator, run_panto, write_config):
    write_config({"mcp_servers": {"t": {"command": "/nonexistent/mcp-server"}}})
    emulator({"responses": [text_reply("ok")]})
    r = run_panto("-p", "go", "--mcp", MCP_FLAG)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("value, message", [
    ("t=python3 'open", "panto: --mcp t=python3 'open: a quote is not closed\n"),
    ("python3 server.py", "panto: --mcp takes NAME=COMMAND (a server's name, then the command that starts it), not \"python3 server.py\"\n"),
])
def test_a_bad_mcp_flag_is_a_usage_error(emulator, run_panto, value, message):
    emu = emulator({"responses": [text_reply("never")]})
    r = run_panto("-p", "go", "--mcp", value)
    assert r.returncode == 2
    assert r.stderr.startswith(message)
    assert emu.requests() == []


def test_slash_mcp_lists_the_servers_and_their_tools_once_started(emulator, pane):
    emulator({"responses": [text_reply("Started.")]})
    p = pane("--mcp", MCP_FLAG)
    p.type("/mcp")
    p.wait_for("(not started yet: it starts at the next turn")
    p.type("Hello")
    p.wait_for("Started.")
    mark = p.mark()
    p.type("/mcp")
    screen = p.wait_for("t__echo", after=mark)
    assert "t__add" in screen and "server.py" in screen
