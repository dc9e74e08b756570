"""Fault rules that play with time (docs/faults.md): a delay drawn from a seeded range, on the
test's manual clock, and a request held until the client cancels it, then answered late. The
official `mcp` client in both of its modes, over HTTP and stdio."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters, types

from everything_mcp import ConfigError, Server

from conftest import WAIT, texts

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]

ECHO = {"method": "tools/call", "name": "echo"}


def target(srv: Server, transport: str) -> Any:
    if transport == "http":
        return srv.start_http()
    return StdioServerParameters(**srv.stdio_params)


def answered(srv: Server, text: str) -> bool:
    return any(r.dir == "out" and text in r.raw for r in srv.traffic)


@pytest.mark.parametrize("transport", ["http", "stdio"])
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_delay_drawn_from_a_range_on_the_manual_clock(mode: str, transport: str) -> None:
    """`delay_ms: [200, 400]`: each hit waits a delay drawn from the rule's seed, never less
    than 200 ms of the test's clock and never more than 400."""
    with Server(catalogs=["everything"], clock="manual") as srv:
        rule = srv.faults.add(match=ECHO | {"seed": 3}, action={"delay_ms": [200, 400]})
        with anyio.fail_after(WAIT):
            async with Client(target(srv, transport), mode=mode) as client:
                for n in range(1, 4):
                    results: list[types.CallToolResult] = []
                    async with anyio.create_task_group() as tg:

                        async def call(n: int = n, results: list[types.CallToolResult] = results) -> None:
                            results.append(await client.call_tool("echo", {"message": f"m{n}"}))

                        tg.start_soon(call)
                        while rule.hits < n:
                            await anyio.sleep(0.005)
                        await srv.clock.aadvance(0.199)
                        assert not answered(srv, f"Echo: m{n}")
                        await srv.clock.aadvance(0.201)
                    assert texts(results[0]) == [f"Echo: m{n}"]


def test_a_delay_range_is_checked() -> None:
    with Server(catalogs=["none"]) as srv:
        with pytest.raises(ConfigError, match=r"action\.delay_ms: a range is \[min, max\], got \[5, 1\]"):
            srv.faults.add(action={"delay_ms": [5, 1]})
        with pytest.raises(ConfigError, match=r"^invalid fault rule: action\.after_cancel: holds the request"):
            srv.faults.add(action={"after_cancel": True, "delay_ms": 5})


@pytest.mark.parametrize("transport", ["http", "stdio"])
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_an_answer_only_after_the_client_cancelled(mode: str, transport: str) -> None:
    """`after_cancel`: the call is held; the client gives up (its timeout sends
    `notifications/cancelled`), and only then is the call served and answered, late. A correct
    client drops the late answer and goes on."""
    with Server(catalogs=["everything"]) as srv:
        rule = srv.faults.add(match=ECHO | {"first": 1}, action={"after_cancel": True})
        with anyio.fail_after(WAIT):
            async with Client(target(srv, transport), mode=mode, read_timeout_seconds=0.5) as client:
                with pytest.raises(MCPError, match="timed out"):
                    await client.call_tool("echo", {"message": "late"})
                if (mode, transport) == ("auto", "http"):
                    # 2026-07-28 over HTTP: the client cancels by closing its POST, not with a
                    # notification, so the held call has no wire left to be answered on.
                    assert not [r for r in srv.traffic if r.method == "notifications/cancelled"]
                else:
                    # The client sends its cancellation after the call raised: await it, then
                    # the late answer.
                    while not answered(srv, "Echo: late"):
                        await anyio.sleep(0.005)
                assert texts(await client.call_tool("echo", {"message": "next"})) == ["Echo: next"]
        assert rule.hits == 1
        if (mode, transport) != ("auto", "http"):
            order = [
                (r.dir, r.method)
                for r in srv.traffic
                if r.method == "notifications/cancelled" or (r.dir == "out" and "Echo: late" in r.raw)
            ]
            assert order == [("in", "notifications/cancelled"), ("out", order[1][1])]
            cancel = next(r for r in srv.traffic if r.method == "notifications/cancelled")
            assert cancel.fault == {"rule": rule.id, "action": "after_cancel"}
