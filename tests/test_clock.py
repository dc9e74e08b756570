"""The manual clock (docs/clock.md): `Server(clock="manual")` stands still until the test
advances it, and after each advance exactly the timers due by then have fired, in order, their
work done. The official `mcp` client sees the consequences in both of its modes: the simulated
logs (a handshake-era session's timer), the research task's stages and a task's TTL (both eras),
a fault's delay, an idle session's expiry, and a `requestState` that runs out. No test sleeps:
each waits for an event, with a timeout."""

from __future__ import annotations

import json
import math
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters, types

from everything_mcp import ConfigError, Server

from conftest import STATELESS, WAIT, StdioServer, envelope, texts

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]

ACCEPT_BOTH = "application/json, text/event-stream"


def stdio(srv: Server) -> StdioServerParameters:
    return StdioServerParameters(**srv.stdio_params)


def sent(srv: Server, method: str) -> int:
    """How many `method` notifications the server has sent so far (its traffic)."""
    return len([r for r in srv.traffic if r.dir == "out" and r.method == method])


async def until(check: Any, what: str) -> Any:
    """Waits (yielding to the event loop) until `check()` is truthy; an event, not a pause."""
    with anyio.fail_after(WAIT):
        while not (value := check()):
            await anyio.sleep(0.005)
    return value


def test_the_real_clock_is_the_default_and_cannot_be_advanced() -> None:
    with Server(catalogs=["none"]) as srv:
        assert (srv.clock.kind, srv.clock.manual, srv.clock.elapsed) == ("real", False, None)
        with pytest.raises(ConfigError, match='clock="manual"'):
            srv.clock.advance(1)
    with Server(catalogs=["none"], clock="manual") as srv:
        assert repr(srv.clock) == "Clock('manual', elapsed=0)"
        assert srv.clock.advance(2.5) == 2.5
        assert srv.clock.advance(0) == srv.clock.elapsed == 2.5
        for bad in (-1, math.nan, math.inf):
            with pytest.raises(ValueError, match="finite number of seconds"):
                srv.clock.advance(bad)
    with pytest.raises(ConfigError, match='unknown clock "sundial"'):
        Server(clock="sundial")


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_simulated_logging_sends_exactly_the_messages_due(transport: str) -> None:
    """A handshake-era session's timer: one message at once, then one every 5 s of the test's
    clock, and none in between."""
    logs: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    with Server(catalogs=["everything"], clock="manual") as srv:
        target: Any = srv.start_http() if transport == "http" else stdio(srv)
        with anyio.fail_after(WAIT):
            async with Client(target, mode="legacy", logging_callback=on_log) as client:
                started = await client.call_tool("toggle-simulated-logging", {})
                assert texts(started)[0].startswith("Started simulated, random-leveled logging")
                assert sent(srv, "notifications/message") == 1
                for step, expected in [(4.999, 1), (0.001, 2), (9.999, 3), (0.001, 4), (20, 8)]:
                    await srv.clock.aadvance(step)
                    assert sent(srv, "notifications/message") == expected
                await until(lambda: len(logs) == 8, "the client to read the eight messages")
                stopped = await client.call_tool("toggle-simulated-logging", {})
                assert texts(stopped)[0].startswith("Stopped simulated logging")
                await srv.clock.aadvance(60)
                assert sent(srv, "notifications/message") == 8
        assert srv.clock.elapsed == pytest.approx(95)


async def test_in_the_stateless_era_the_toggle_starts_nothing_the_clock_could_fire() -> None:
    with Server(catalogs=["everything"], clock="manual") as srv:
        with anyio.fail_after(WAIT):
            async with Client(stdio(srv)) as client:
                assert client.protocol_version == STATELESS
                refused = await client.call_tool("toggle-simulated-logging", {})
                assert refused.is_error
                await srv.clock.aadvance(3600)
        assert sent(srv, "notifications/message") == 0


STAGES = ["Gathering sources...", "Analyzing content...", "Synthesizing findings...", "Generating report..."]


def research_status(srv: Server) -> tuple[str, str | None]:
    (task,) = srv.tasks
    return task.status, task.status_message


async def test_the_research_task_moves_a_stage_per_second_of_the_clock_stateless() -> None:
    """2026-07-28: the official client runs the task through a tasks extension that polls
    `tasks/get`; the stages move only when the test advances the clock."""
    from test_tasks_official_client import Tasks

    with Server(catalogs=["everything"], clock="manual") as srv:
        with anyio.fail_after(WAIT):
            async with Client(stdio(srv), extensions=[Tasks()]) as client:
                async with anyio.create_task_group() as tg:
                    results: list[types.CallToolResult] = []

                    async def call() -> None:
                        results.append(await client.call_tool("simulate-research-query", {"topic": "clocks"}))

                    tg.start_soon(call)
                    await until(lambda: srv.tasks, "the task")
                    assert research_status(srv) == ("working", STAGES[0])
                    await srv.clock.aadvance(0.999)
                    assert research_status(srv) == ("working", STAGES[0])
                    for stage in STAGES[1:]:
                        await srv.clock.aadvance(1)
                        assert research_status(srv) == ("working", stage)
                    await srv.clock.aadvance(1)
                    assert research_status(srv)[0] == "completed"
                (result,) = results
                assert texts(result)[0].startswith("# Research Report: clocks")


def post(url: str, body: dict[str, Any], session: str | None = None) -> httpx.Response:
    headers = {"Accept": ACCEPT_BOTH, "MCP-Protocol-Version": "2025-11-25"}
    if session:
        headers["Mcp-Session-Id"] = session
    return httpx.post(url, json=body, headers=headers, timeout=WAIT)


def handshake(url: str) -> str:
    """A handshake-era session over raw HTTP (no capabilities); its id."""
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
    r = post(url, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
    assert r.status_code == 200
    session = r.headers["mcp-session-id"]
    assert post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session).status_code == 202
    return session


def answer(r: httpx.Response) -> Any:
    """A POST's JSON-RPC answer, whether sent as JSON or as an SSE stream."""
    if r.headers["content-type"].startswith("application/json"):
        return r.json()
    frames = [json.loads(line[5:]) for line in r.text.splitlines() if line.startswith("data:") and line[5:].strip()]
    return next(f for f in frames if "id" in f and "method" not in f)


def test_the_research_task_moves_a_stage_per_second_of_the_clock_handshake() -> None:
    """2025-11-25: a task-augmented call (which the official client no longer makes) over raw
    HTTP; `tasks/get` shows each stage only once the clock reached it."""
    with Server(catalogs=["everything"], clock="manual") as srv:
        url = srv.start_http()
        session = handshake(url)
        params = {"name": "simulate-research-query", "arguments": {"topic": "clocks"}, "task": {"ttl": 60000}}
        created = answer(post(url, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}, session))
        task_id = created["result"]["task"]["taskId"]

        def status() -> tuple[str, str]:
            got = answer(
                post(url, {"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"taskId": task_id}}, session)
            )
            return got["result"]["status"], got["result"].get("statusMessage")

        assert status() == ("working", STAGES[0])
        srv.clock.advance(0.5)
        assert status() == ("working", STAGES[0])
        for stage in STAGES[1:]:
            srv.clock.advance(1)
            assert status() == ("working", stage)
        srv.clock.advance(0.499)
        assert status() == ("working", STAGES[-1])
        srv.clock.advance(0.001)
        assert status()[0] == "completed"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_task_expires_when_the_clock_passes_its_ttl(mode: str) -> None:
    """A settled task is kept for its TTL of the test's clock (restarted when it settles), then
    `tasks/get` no longer finds it, in both eras."""
    from test_tasks_official_client import Tasks

    with Server(catalogs=["conformance"], clock="manual", task_ttl=30) as srv:
        with anyio.fail_after(WAIT):
            if mode == "auto":
                async with Client(stdio(srv), extensions=[Tasks()]) as client:
                    done = await client.call_tool("slow_compute", {"seconds": 0})
                    assert texts(done) == ["Computed  after 0 s"]
            else:
                url = srv.start_http()
                session = handshake(url)
                params = {"name": "slow_compute", "arguments": {"seconds": 0}, "task": {"ttl": 30000}}
                created = answer(
                    post(url, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}, session)
                )
                assert created["result"]["task"]["status"] == "working"
                await until(lambda: [t for t in srv.tasks if t.status == "completed"], "the task to settle")
        (task,) = srv.tasks
        assert task.status == "completed"
        srv.clock.advance(29.999)
        assert [t.id for t in srv.tasks] == [task.id]
        srv.clock.advance(0.001)
        assert srv.tasks == []


@pytest.mark.parametrize("transport", ["http", "stdio"])
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_fault_delay_ends_when_the_clock_reaches_it(mode: str, transport: str) -> None:
    with Server(catalogs=["everything"], clock="manual") as srv:
        rule = srv.faults.add(match={"method": "tools/call", "name": "echo"}, action={"delay_ms": 500})
        target: Any = srv.start_http() if transport == "http" else stdio(srv)
        with anyio.fail_after(WAIT):
            async with Client(target, mode=mode) as client:
                results: list[types.CallToolResult] = []
                async with anyio.create_task_group() as tg:

                    async def call() -> None:
                        results.append(await client.call_tool("echo", {"message": "late"}))

                    tg.start_soon(call)
                    await until(lambda: rule.hits == 1, "the call to arrive")
                    await srv.clock.aadvance(0.499)
                    assert not [
                        r
                        for r in srv.traffic
                        if r.dir == "out" and r.kind == "response" and r.msg.get("result", {}).get("content")
                    ]
                    await srv.clock.aadvance(0.001)
                assert texts(results[0]) == ["Echo: late"]


def test_an_idle_session_expires_on_the_clock() -> None:
    with Server(catalogs=["none"], clock="manual") as srv:
        url = srv.start_http(session_idle_timeout=30)
        session = handshake(url)
        ping = {"jsonrpc": "2.0", "id": 5, "method": "ping"}
        srv.clock.advance(29)
        assert post(url, ping, session).status_code == 200  # and used again now
        srv.clock.advance(29)
        assert post(url, ping, session).status_code == 200
        srv.clock.advance(45)
        assert post(url, ping, session).status_code == 404


def test_a_request_state_expires_on_the_clock() -> None:
    """2026-07-28's multi-round requests: a `requestState` the server sealed is refused once the
    clock passes its expiry (`expired_request_state`), and accepted before."""
    with Server(catalogs=["conformance"], clock="manual") as srv:
        url = srv.start_http()
        caps = {"elicitation": {"form": {}}}
        headers = {
            "Accept": ACCEPT_BOTH,
            "MCP-Protocol-Version": STATELESS,
            "Mcp-Method": "tools/call",
            "Mcp-Name": "test_elicitation",
        }
        call = {"name": "test_elicitation", "arguments": {"message": "ok?"}, "_meta": envelope(caps)}
        first = httpx.post(
            url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}, headers=headers, timeout=WAIT
        )
        asked = answer(first)["result"]
        assert asked["resultType"] == "input_required"
        (key,) = asked["inputRequests"]
        retry = {**call, "requestState": asked["requestState"], "inputResponses": {key: {"action": "decline"}}}

        def again() -> Any:
            body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": retry}
            return answer(httpx.post(url, json=body, headers=headers, timeout=WAIT))

        srv.clock.advance(60)
        assert "result" in again()
        srv.clock.advance(3600)
        refused = again()
        assert refused["error"]["code"] == -32602
        assert refused["error"]["data"]["reason"] == "expired_request_state"


def test_the_control_api_reads_and_advances_the_clock() -> None:
    with Server(catalogs=["none"], clock="manual") as srv:
        srv.start_http()
        base = (srv.base_url or "") + "/_control/"
        assert httpx.get(base, timeout=WAIT).json()["clock"] == "manual"
        assert httpx.get(base + "clock", timeout=WAIT).json() == {"kind": "manual", "elapsed": 0.0}
        moved = httpx.post(base + "clock/advance", json={"seconds": 1.5}, timeout=WAIT)
        assert (moved.status_code, moved.json()) == (200, {"elapsed": 1.5})
        assert srv.clock.elapsed == 1.5
        for body, field in [
            ({"seconds": "1"}, "seconds"),
            ({}, "seconds"),
            ({"seconds": -1}, "seconds"),
            ({"seconds": 1, "x": 2}, "x"),
        ]:
            bad = httpx.post(base + "clock/advance", json=body, timeout=WAIT)
            assert bad.status_code == 400, body
            assert bad.json()["error"]["field"] == field, bad.json()
        assert httpx.post(base + "reset", timeout=WAIT).status_code == 204
        assert httpx.get(base + "clock", timeout=WAIT).json() == {"kind": "manual", "elapsed": 0.0}
    with Server(catalogs=["none"]) as srv:
        srv.start_http()
        base = (srv.base_url or "") + "/_control/"
        assert httpx.get(base + "clock", timeout=WAIT).json() == {"kind": "real", "elapsed": None}
        refused = httpx.post(base + "clock/advance", json={"seconds": 1}, timeout=WAIT)
        assert refused.status_code == 409
        assert 'clock="manual"' in refused.json()["error"]["message"]


def test_the_cli_runs_on_a_manual_clock_advanced_through_the_control_port() -> None:
    """`stdio --clock manual --control-port 0`: a stdio client's test advances the clock over
    the announced control URL, and the session's timer fires exactly then."""
    server = StdioServer("stdio", "--clock", "manual", "--control-port", "0")
    try:
        assert server.proc.stderr is not None
        control = json.loads(server.proc.stderr.readline())["url"]
        server.initialize()
        server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "toggle-simulated-logging"}})
        first, answered = server.recv(), server.recv()
        assert first["method"] == "notifications/message"  # the one sent at once, then the answer
        assert answered["id"] == 1 and "Started simulated" in answered["result"]["content"][0]["text"]
        moved = httpx.post(control + "clock/advance", json={"seconds": 10}, timeout=WAIT).json()
        assert moved == {"elapsed": 10.0}
        logs = [server.recv(), server.recv()]
        assert [m["method"] for m in logs] == ["notifications/message"] * 2
        assert httpx.get(control + "clock", timeout=WAIT).json() == {"kind": "manual", "elapsed": 10.0}
    finally:
        server.stop()
