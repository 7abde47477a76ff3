"""An MCP server built with the official Python SDK (PyPI `mcp`, 2.x), for panto's MCP client
tests: a server no one here wrote the protocol of. Run with the SDK on PYTHONPATH.

Over stdio by default. With --http it serves Streamable HTTP at http://127.0.0.1:PORT/mcp on a
port of its own choosing, and writes "PORT\\n" on stdout once it listens (the test reads it);
--json makes it answer each POST with a JSON body instead of an SSE stream;
--require-header NAME=VALUE refuses (401) a request without that header."""
import argparse
import socket
import sys
from typing import TypedDict

from mcp.server.mcpserver import Context, MCPServer


class Sum(TypedDict):
    sum: float


app = MCPServer("panto-sdk-test")
@app.tool()
def echo(text: str) -> str:
    """Says its text back."""
    return text
@app.tool()
def add(a: float, b: float) -> Sum:
    """Adds two numbers."""
    return {"sum": a + b}
@app.tool(structured_output=False)
async def steps(n: int, ctx: Context) -> str:
    """Reports n steps of progress, then says it is done (text only: no structuredContent)."""
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, f"step {i} of {n}")
    return f"{n} steps done"


def extra(text: str) -> str:
    """Says its text back, too."""
    return text


@app.tool()
async def grow(ctx: Context) -> str:
    """Adds the tool `extra` and says so (notifications/tools/list_changed: outside this call,
    on the GET stream over Streamable HTTP)."""
    app.add_tool(extra)
    await ctx.session.send_tool_list_changed()
    return "grown"


def serve_http(json_response: bool, required: tuple[str, str] | None) -> None:
    import anyio
    import uvicorn

    starlette_app = app.streamable_http_app(json_response=json_response)

    async def guarded(scope, receive, send):
        if required and scope["type"] == "http":
            name, value = required[0].lower().encode(), required[1].encode()
            if (name, value) not in scope["headers"]:
                await send({"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]})
                await send({"type": "http.response.body", "body": b"missing the required header"})
                return
        await starlette_app(scope, receive, send)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    sys.stdout.write(f"{sock.getsockname()[1]}\n")
    sys.stdout.flush()
    server = uvicorn.Server(uvicorn.Config(guarded, log_level="warning", lifespan="on"))
    anyio.run(lambda: server.serve(sockets=[sock]))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--require-header")
    args = parser.parse_args()
    if args.http:
        required = tuple(args.require_header.split("=", 1)) if args.require_header else None
        serve_http(args.json, required)
    else:
        app.run()
