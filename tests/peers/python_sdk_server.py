"""A server written with the official Python SDK (`mcp.server.mcpserver.MCPServer`), shaped like
the SDK's own quickstart: a tool, a templated resource, a prompt, and a tool that reports progress
and logs. The replay and dialect tests record it (`python tests/peers/python_sdk_server.py`
serves stdio; with `--http PORT`, Streamable HTTP at `/mcp`)."""

from __future__ import annotations

import sys
import warnings

from mcp.server.mcpserver import Context, MCPServer

warnings.simplefilter("ignore")

mcp = MCPServer("Demo")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@mcp.tool()
async def count(steps: int, ctx: Context) -> str:
    """Count to `steps`, reporting progress and logging each step."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i}")
        await ctx.info(f"counted {i}")
    return f"counted {steps}"


@mcp.resource("greeting://{name}")
def greeting(name: str) -> str:
    """A personalized greeting."""
    return f"Hello, {name}!"


@mcp.prompt()
def greet_user(name: str, style: str = "friendly") -> str:
    """A greeting prompt."""
    return f"Write a {style} greeting for someone named {name}."


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        mcp.run("stdio")
