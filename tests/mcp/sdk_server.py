"""An MCP server built with the official Python SDK (PyPI `mcp`, 2.x), for panto's MCP client
tests: a server no one here wrote the protocol of. Run with the SDK on PYTHONPATH."""
from typing import TypedDict

from mcp.server.mcpserver import MCPServer


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
if __name__ == "__main__":
    app.run()
