"""The official `mcp` 2.x client drives `python -m everything_mcp stdio` as a real subprocess."""

from __future__ import annotations

import sys
import time

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import TextContent

from conftest import EVERYTHING_TOOLS

pytestmark = pytest.mark.anyio


PARAMS = StdioServerParameters(command=sys.executable, args=["-m", "everything_mcp", "stdio"])


async def test_auto_mode_connects_fast_lists_and_calls() -> None:
    with anyio.fail_after(20):
        t0 = time.monotonic()
        async with Client(PARAMS, read_timeout_seconds=10) as client:
            connected = time.monotonic() - t0
            assert client.protocol_version == "2026-07-28"
            assert client.server_info is not None and client.server_info.name == "everything-mcp"

            tools = await client.list_tools()
            assert [t.name for t in tools.tools] == EVERYTHING_TOOLS
            echo = tools.tools[0]
            assert echo.title == "Echo Tool"
            assert echo.input_schema["required"] == ["message"]

            r = await client.call_tool("echo", {"message": "hello"})
            assert r.is_error is False or r.is_error is None
            assert r.content == [TextContent(type="text", text="Echo: hello")]

            for (a, b), text in [
                ((2, 3.5), "The sum of 2 and 3.5 is 5.5."),
                ((1, 2), "The sum of 1 and 2 is 3."),
                ((0.1, 0.2), "The sum of 0.1 and 0.2 is 0.30000000000000004."),
            ]:
                r = await client.call_tool("get-sum", {"a": a, "b": b})
                assert r.content == [TextContent(type="text", text=text)]

            r = await client.call_tool("echo", {})
            assert r.is_error is True
            assert isinstance(r.content[0], TextContent)
            assert "Input validation error" in r.content[0].text
    # The client's first request is server/discover, answered at once: the typical connect takes
    # well under 1 s.
    assert connected < 5.0, connected


@pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")
async def test_legacy_mode_and_ping() -> None:
    with anyio.fail_after(20):
        async with Client(PARAMS, mode="legacy", read_timeout_seconds=10) as client:
            assert client.protocol_version == "2025-11-25"
            await client.send_ping()
            await client.set_logging_level("warning")
