"""Writes the issue 30 cases of MCP servers' tools in turns (config `mcp_servers`, docs/mcp.md):
`mcp_*`, with tests/mcp/server.py as the server (run from the repository, as the drivers
are), and servers no one here wrote: the official Python SDK's over Streamable HTTP
(tests/mcp/sdk_server.py --http, started per cell by the runner: `mcp_http_server`) and the
reference server from npm, server-everything (scripts/setup.sh installs it), over stdio and
HTTP. Each transcript is derived here from the scenario and the rules (docs/design/mcp.md:
names `SERVER__TOOL`, results as content, a failing server an error result naming it), never
from a driver's output.

    .venv/bin/python tests/conformance/make_mcp_cases.py           # write them
    .venv/bin/python tests/conformance/make_mcp_cases.py --check   # fail if stale

Python 3.11 standard library only."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from case_files import case_texts, generate
from make_tool_cases import CASES, DONE, Message, add, complete, progress, result, results_request

SERVER = "tests/mcp/server.py"
EVERYTHING = "tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
HTTP_URL = "http://127.0.0.1:$MCP_PORT/mcp"


def config(servers: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"provider": "anthropic", "model": "claude-test", "api_key": "test-key", "mcp_servers": servers}


def server(*flags: str, **more: Any) -> dict[str, Any]:
    return dict({"command": "python3", "args": [SERVER, *flags]}, **more)


def mcp_case(description: str, servers: dict[str, dict[str, Any]], calls: list[tuple[str, str, dict]],
             contents: list[tuple[str, bool]], offered: list[str],
             progressed: list[dict[str, Any]] = ()) -> tuple[dict[str, Any], list[Any]]:
    """One turn: a message asking for `calls` (run by the servers: not awaiting a result), the
    `progressed` events while they run, their results in call order, then an answer. `offered`:
    the tools the first request sends."""
    ask = Message("msg_tools", calls=calls, i=30, o=9)
    answer = Message("msg_answer", text="All done.", i=50, o=4)
    first = {"method": "POST", "path": "/v1/messages",
             "body_contains": {"tools": [{"name": name} for name in offered]}}
    data = {"description": description, "config": config(servers), "turns": ["go"],
            "script": {"responses": [ask.response, answer.response]},
            "expect_requests": [first, results_request(calls, contents)]}
    starts = [dict(s, awaiting_result=False) for s in ask.starts()]
    lines = (ask.lines() + starts + list(progressed)
             + [result(cid, name, c, e) for (cid, name, _), (c, e) in zip(calls, contents)]
             + answer.lines() + [complete("end_turn", add(ask.usage, answer.usage)), DONE, DONE])
    return data, lines


ALL_TOOLS = ["t__echo", "t__add", "t__fail", "t__pixel", "t__env", "t__docs"]


def list_changed_case(late: bool = False) -> tuple[dict[str, Any], list[Any]]:
    """A call after which the server's tools change: the turn's next request offers the new list.
    `late`: the server says so after the call's result, while no request waits (its pending
    output is read, without blocking, before the next request)."""
    when = ("after a call's result, while no request waits (its first call adds a tool `extra`): its "
            "pending output is read before the turn's next request," if late else
            "during a call (its first call adds a tool `extra`) is listed again before the turn's next request,")
    data, lines = mcp_case(
        f"A server that announces notifications/tools/list_changed {when} which offers the new tool.",
        {"t": server("--late-grow" if late else "--grow")},
        [("toolu_1", "t__echo", {"text": "grow"})],
        [("grow", False)], ALL_TOOLS)
    data["expect_requests"][1]["body_contains"]["tools"] = [{"name": name} for name in ALL_TOOLS + ["t__extra"]]
    return data, lines


def http_case(description: str, command: list[str], servers: dict[str, dict[str, Any]],
              calls: list[tuple[str, str, dict]], contents: list[tuple[str, bool]], offered: list[str],
              progressed: list[dict[str, Any]] = ()) -> tuple[dict[str, Any], list[Any]]:
    """mcp_case with an MCP server over Streamable HTTP that the runner starts for each cell."""
    data, lines = mcp_case(description, servers, calls, contents, offered, progressed)
    data["mcp_http_server"] = command
    return data, lines


def everything_case(description: str, servers: dict[str, dict[str, Any]],
                    command: list[str] | None = None) -> tuple[dict[str, Any], list[Any]]:
    """server-everything's echo and its long-running operation (no wait: duration 0), whose
    progress notifications carry no message: `progress/total` is the text."""
    calls = [("toolu_1", "e__echo", {"message": "hello"}),
             ("toolu_2", "e__trigger-long-running-operation", {"duration": 0, "steps": 2})]
    contents = [("Echo: hello", False),
                ("Long running operation completed. Duration: 0 seconds, Steps: 2.", False)]
    offered = ["e__echo", "e__trigger-long-running-operation"]
    progressed = [progress("toolu_2", "e__trigger-long-running-operation", "1/2", 0.5),
                  progress("toolu_2", "e__trigger-long-running-operation", "2/2", 1.0)]
    if command is None:
        return mcp_case(description, servers, calls, contents, offered, progressed)
    return http_case(description, command, servers, calls, contents, offered, progressed)


EVERYTHING_TOOLS = ["echo", "trigger-long-running-operation"]

STATUS = {"event": "mcp_status", "code": "ok"}


def status(name: str, state: str, tool_count: int = 0, error: str = "", stderr_tail: str = "",
           started: bool = True) -> dict[str, Any]:
    """A stdio server.py's entry of the mcp_status step: its initialize answer once started."""
    return {"name": name, "transport": "stdio", "state": state,
            "protocol_version": "2025-11-25" if started else "", "server_name": "panto-test-server" if started else "",
            "server_version": "1.0.0" if started else "", "tool_count": tool_count, "error": error,
            "stderr_tail": stderr_tail}


def status_case() -> tuple[dict[str, Any], list[Any]]:
    """mcp_server_dies with the mcp_status step before and after its turn."""
    data, lines = cases_dies()
    data["description"] = (
        "The mcp_status step: before the first turn no server has started; after a turn in which "
        "\"bad\" died mid-call it is failed, with the call's error and its stderr, and \"t\" is ready "
        "with its initialize answer (version, serverInfo) and the one tool its allow-list offers.")
    data["turns"] = [{"mcp_status": True}, "go", {"mcp_status": True}]
    before = dict(STATUS, servers=[status("bad", "not_started", started=False), status("t", "not_started", started=False)])
    after = dict(STATUS, servers=[
        status("bad", "failed", len(ALL_TOOLS), 'MCP server "bad" exited during the call: dying on purpose', "test server started\ndying on purpose\n"),
        status("t", "ready", 1)])
    return data, [before] + lines + [after]


def status_start_failed_case() -> tuple[dict[str, Any], list[Any]]:
    """A server that exits at start fails the turn; the status says why, and the servers after
    it (in name order) were not started."""
    why = 'MCP server "db" could not start: it exited: cannot open the database, as asked'
    data = {"description": "A server that exits at start fails the turn (config, mcp_server_error); the "
                           "mcp_status step then shows it failed with that message and its stderr, and the server "
                           "after it in name order not started.",
            "config": config({"db": server("--die-at-start"), "t": server()}),
            "turns": ["go", {"mcp_status": True}], "script": {"responses": []}, "expect_requests": []}
    error = {"event": "error", "code": "config", "http_status": 0, "type": "mcp_server_error", "message": why}
    after = dict(STATUS, servers=[
        status("db", "failed", 0, why, "test server started\ncannot open the database, as asked\n", started=False),
        status("t", "not_started", started=False)])
    return data, [error, error, after]


def cases_dies() -> tuple[dict[str, Any], list[Any]]:
    return mcp_case(
        "A server that dies mid-call fails that call with an error result naming it; a call to another "
        "server in the same round is answered, and the turn goes on.",
        {"bad": server("--on-call", "die"), "t": server(tools=["echo"])},
        [("toolu_1", "bad__echo", {"text": "x"}), ("toolu_2", "t__echo", {"text": "still here"})],
        [('MCP server "bad" exited during the call: dying on purpose', True), ("still here", False)],
        [n.replace("t__", "bad__") for n in ALL_TOOLS] + ["t__echo"])


def cases() -> dict[str, tuple[dict[str, Any], list[Any]]]:
    return {
        "mcp_http_tool_call": http_case(
            "An MCP server over Streamable HTTP (the official Python SDK's, `url` and a bearer token in "
            "`headers`, which it requires): its tool offered as SERVER__TOOL, the call's progress "
            "notifications (on the POST's SSE answer) tool_progress events before its result.",
            [".venv/bin/python", "tests/mcp/sdk_server.py", "--http", "--require-header", "Authorization=Bearer test-token"],
            {"h": {"url": HTTP_URL, "headers": {"Authorization": "Bearer test-token"}, "tools": ["steps"]}},
            [("toolu_1", "h__steps", {"n": 2})],
            [("2 steps done", False)], ["h__steps"],
            [progress("toolu_1", "h__steps", "step 1 of 2", 0.5), progress("toolu_1", "h__steps", "step 2 of 2", 1.0)]),
        "mcp_everything_stdio": everything_case(
            "The MCP project's reference server (npm server-everything) over stdio: echo, and a long-running "
            "operation whose progress notifications (progress and total, no message) are tool_progress events.",
            {"e": {"command": "node", "args": [EVERYTHING, "stdio"], "tools": EVERYTHING_TOOLS}}),
        "mcp_everything_http": everything_case(
            "The MCP project's reference server (npm server-everything) over Streamable HTTP: echo, and a "
            "long-running operation whose progress notifications come on the call's SSE answer.",
            {"e": {"url": HTTP_URL, "tools": EVERYTHING_TOOLS}},
            ["node", "tests/mcp/everything_http.mjs"]),
        "mcp_list_changed": list_changed_case(),
        "mcp_list_changed_idle": list_changed_case(late=True),
        "mcp_tool_call": mcp_case(
            "An MCP server's tools are offered as SERVER__TOOL; the model's calls are sent to the server "
            "under the tool's own name, run by panto (awaiting_result false), and its answers are the "
            "results: text, and structuredContent carried by its JSON text part.",
            {"t": server()},
            [("toolu_1", "t__echo", {"text": "hello"}), ("toolu_2", "t__add", {"a": 2, "b": 3})],
            [("hello", False), ('{"sum": 5}', False)], ALL_TOOLS),
        "mcp_is_error": mcp_case(
            "An MCP tool's isError result is an error result of the turn; the turn goes on.",
            {"t": server()},
            [("toolu_1", "t__fail", {})],
            [("it failed, as asked", True)], ALL_TOOLS),
        "mcp_server_dies": cases_dies(),
        "mcp_status": status_case(),
        "mcp_status_start_failed": status_start_failed_case(),
        "mcp_allow_list": mcp_case(
            "A server's `tools` allow-list: only the tools it names are offered; a call to another of the "
            "server's tools is an unknown tool.",
            {"t": server(tools=["echo", "add"])},
            [("toolu_1", "t__env", {}), ("toolu_2", "t__echo", {"text": "ok"})],
            [("Unknown tool: t__env", True), ("ok", False)], ["t__echo", "t__add"]),
        "mcp_progress": mcp_case(
            "A call asks for progress (a progressToken): the server's notifications/progress of it are "
            "tool_progress events of the call, its message as text and progress/total as fraction, before "
            "its result.",
            {"t": server("--progress", "2", tools=["echo"])},
            [("toolu_1", "t__echo", {"text": "done"})],
            [("done", False)], ["t__echo"],
            [progress("toolu_1", "t__echo", "step 1 of 2", 0.5), progress("toolu_1", "t__echo", "step 2 of 2", 1.0)]),
    }


def folders() -> dict[Path, dict[str, str]]:
    return {CASES / name: case_texts(data, lines) for name, (data, lines) in cases().items()}


if __name__ == "__main__":
    sys.exit(generate(__doc__.splitlines()[0], "tests/conformance/make_mcp_cases.py", folders))
