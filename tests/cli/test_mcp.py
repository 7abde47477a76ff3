"""The config file's `mcp_servers` key (docs/mcp.md), passed to the agent as it is: an MCP
server's tools offered and run in print mode, and a server that cannot start reported as a
config error; `--mcp NAME=COMMAND` and `/mcp`. tests/mcp/server.py is the server."""
from __future__ import annotations

import json
import shlex
import subprocess
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
    ("python3 server.py", "panto: --mcp takes NAME=COMMAND or NAME=URL (a server's name, then the command that starts it or its URL), not \"python3 server.py\"\n"),
    ("h=http://127.0.0.1:9/mcp extra", "panto: --mcp h=http://127.0.0.1:9/mcp extra: a URL holds no space"),
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
    p.wait_for("not started yet: it starts at the next turn")
    p.type("Hello")
    p.wait_for("Started.")
    mark = p.mark()
    p.type("/mcp")
    screen = p.wait_for("t__echo", after=mark)
    assert "t__add" in screen and "server.py" in screen
    assert "ready: panto-test-server 1.0.0, protocol 2025-11-25, 6 tools" in screen


# ---- --mcp NAME=URL ----

@pytest.fixture
def sdk_http_server():
    """The official Python SDK's server over Streamable HTTP (tests/mcp/sdk_server.py), which
    refuses (401) a request without the bearer token "test-token"; yields its URL."""
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "mcp" / "sdk_server.py"), "--http",
                             "--require-header", "Authorization=Bearer test-token"],
                            stdout=subprocess.PIPE, text=True)
    try:
        port = int(proc.stdout.readline())
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait()


def test_the_mcp_flag_with_a_url_reaches_an_http_server_with_the_token_of_its_variable(
        emulator, run_panto, cli_env, sdk_http_server):
    emu = emulator({"responses": [tool_reply("h__echo", {"text": "over http"}), text_reply("ok")]})
    cli_env["PANTO_MCP_TOKEN_H"] = "test-token"
    r = run_panto("-p", "go", "--json", "--mcp", f"h={sdk_http_server}")
    assert r.returncode == 0, r.stderr
    events = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    [res] = [e for e in events if e["event"] == "tool_result"]
    # (The SDK's echo also gives structuredContent, kept as a JSON text part: docs/mcp.md.)
    assert (res["name"], res["content"], res["is_error"]) == ("h__echo", 'over http\n{"result":"over http"}', False)
    assert "h__echo" in [t["name"] for t in emu.requests()[0]["body"]["tools"]]


def test_the_mcp_flag_with_a_url_and_no_token_is_refused_by_a_server_that_wants_one(
        emulator, run_panto, sdk_http_server):
    emu = emulator({"responses": [text_reply("never")]})
    r = run_panto("-p", "go", "--mcp", f"h={sdk_http_server}")
    assert r.returncode == 2
    assert r.stderr.startswith('panto: config: MCP server "h" could not start: its HTTP exchange failed: HTTP 401')
    assert emu.requests() == []
