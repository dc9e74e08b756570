"""Choosing the era, and the official `mcp` 2.x client in both: `mode="auto"` negotiates
2026-07-28 (server/discover, then enveloped requests) over stdio and Streamable HTTP, and
`mode="legacy"` keeps the handshake; every record says which era and revision it belongs to;
one server serves both eras side by side; `--era` pins one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import LoggingMessageNotificationParams, PromptReference, TextContent

from everything_mcp import ConfigError, Context, Server
from everything_mcp.traffic import TrafficRecord, load_records

from conftest import SERVER_CMD, WAIT

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]

STATELESS = "2026-07-28"
HANDSHAKE = "2025-11-25"
DOC = "demo://resource/static/document/instructions.md"


def with_shout(srv: Server) -> Server:
    """Adds `shout`: logs at info and debug and reports two progress steps, then answers."""

    @srv.tool()
    def shout(message: str, ctx: Context) -> str:
        """Logs and reports progress."""
        ctx.log("info", f"shouting {message}")
        ctx.log("debug", "quietly")
        ctx.progress(1, 2, "half")
        ctx.progress(2, 2, "done")
        return message.upper()

    return srv


def target(srv: Server, transport: str) -> Any:
    if transport == "http":
        srv.start_http()
        return srv.http_url
    return StdioServerParameters(**srv.stdio_params)


class LogCollector:
    """A client's `logging_callback` that keeps each message's data as text."""

    def __init__(self) -> None:
        self.logs: list[str] = []

    async def __call__(self, params: LoggingMessageNotificationParams) -> None:
        self.logs.append(str(params.data))


def log_collector() -> tuple[list[str], LogCollector]:
    """The messages a client will have logged, and the callback that collects them."""
    collector = LogCollector()
    return collector.logs, collector


def client_requests(srv: Server) -> list[TrafficRecord]:
    """The client's requests, in order (the relay's and the server's own frames left out)."""
    return [r for r in srv.traffic.requests() if r.method is not None]


async def exercise(client: Client) -> tuple[list[str], list[tuple[float, float | None]]]:
    """Tools, a logging and progress tool, resources, prompts, completion: the texts seen."""
    logs: list[str] = []
    steps: list[tuple[float, float | None]] = []
    names = [t.name for t in (await client.list_tools()).tools]
    assert "echo" in names and "shout" in names
    r = await client.call_tool("echo", {"message": "hello"})
    assert r.content == [TextContent(type="text", text="Echo: hello")]

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        steps.append((progress, total))

    r = await client.call_tool("shout", {"message": "hey"}, progress_callback=on_progress)
    assert r.content == [TextContent(type="text", text="HEY")]
    (doc,) = (await client.read_resource(DOC)).contents
    assert "Server instructions are working" in getattr(doc, "text", "")
    p = await client.get_prompt("args-prompt", {"city": "Austin", "state": "TX"})
    assert p.messages[0].content == TextContent(type="text", text="What's weather in Austin, TX?")
    ref = PromptReference(type="ref/prompt", name="completable-prompt")
    c = await client.complete(ref, {"name": "department", "value": "E"})
    assert c.completion.values == ["Engineering"]
    return logs, steps


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_auto_client_speaks_the_stateless_era(transport: str) -> None:
    srv = with_shout(Server())
    logs, on_log = log_collector()
    try:
        with anyio.fail_after(30):
            url = target(srv, transport)
            async with Client(
                url, mode="auto", log_level="info", logging_callback=on_log, read_timeout_seconds=WAIT
            ) as client:
                assert client.protocol_version == STATELESS
                _, steps = await exercise(client)
        # The level is per request: info came, debug did not.
        assert logs == ['"shouting hey"'] or logs == ["shouting hey"]
        assert steps == [(1, 2), (2, 2)]
        requests = client_requests(srv)
        methods = [r.method for r in requests]
        assert methods[0] == "server/discover"
        assert "initialize" not in methods
        for method in ["tools/list", "tools/call", "resources/read", "prompts/get", "completion/complete"]:
            assert method in methods
        for r in requests:
            assert (r.era, r.revision) == ("stateless", STATELESS), r
            assert r.params["_meta"]["io.modelcontextprotocol/protocolVersion"] == STATELESS
        # Every answer and notification of the exchange is tagged as well.
        out = srv.traffic.filter(dir="out")
        assert out and all((r.era, r.revision) == ("stateless", STATELESS) for r in out)
        assert srv.traffic.filter(era="handshake") == []
        # One client, one connection in the records, even over HTTP without sessions.
        conns = {r.conn for r in requests}
        if transport == "http":
            # Named after the client's TCP connections (its pool may open more than one).
            assert all(c.startswith("http-") for c in conns), conns
            assert len(conns) < len(requests) / 2, conns
        else:
            assert len(conns) == 1, conns
        if transport == "http":
            notes = srv.traffic.notifications("notifications/progress", dir="out")
            assert [n.params["progress"] for n in notes] == [1, 2]
    finally:
        srv.stop()


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_legacy_client_keeps_the_handshake_era(transport: str) -> None:
    srv = with_shout(Server())
    logs, on_log = log_collector()
    try:
        with anyio.fail_after(30):
            async with Client(
                target(srv, transport), mode="legacy", logging_callback=on_log, read_timeout_seconds=WAIT
            ) as client:
                assert client.protocol_version == HANDSHAKE
                await client.set_logging_level("info")
                _, steps = await exercise(client)
        assert "shouting hey" in logs[-1]
        assert not any("quietly" in line for line in logs)
        assert steps == [(1, 2), (2, 2)]
        requests = client_requests(srv)
        assert requests[0].method == "initialize"
        assert "server/discover" not in [r.method for r in requests]
        assert all((r.era, r.revision) == ("handshake", HANDSHAKE) for r in requests)
        assert srv.traffic.filter(era="stateless") == []
        assert srv.traffic.responses("initialize")[0].revision == HANDSHAKE
    finally:
        srv.stop()


async def test_one_server_two_clients_two_eras() -> None:
    srv = Server()
    srv.start_http()
    url = srv.http_url
    assert url is not None
    try:
        with anyio.fail_after(30):
            async with (
                Client(url, mode="legacy", read_timeout_seconds=WAIT) as old,
                Client(url, mode="auto", read_timeout_seconds=WAIT) as new,
            ):
                assert (old.protocol_version, new.protocol_version) == (HANDSHAKE, STATELESS)
                a, b = await old.call_tool("echo", {"message": "a"}), await new.call_tool("echo", {"message": "b"})
                assert a.content == [TextContent(type="text", text="Echo: a")]
                assert b.content == [TextContent(type="text", text="Echo: b")]
        handshake = srv.traffic.filter(era="handshake")
        stateless = srv.traffic.filter(era="stateless")
        # Each client's connection holds only its own era's wire.
        assert {r.conn for r in handshake}.isdisjoint({r.conn for r in stateless})
        assert [r.method for r in handshake if r.kind == "request"][:1] == ["initialize"]
        assert [r.method for r in stateless if r.kind == "request"][:1] == ["server/discover"]
        assert all(r.revision == HANDSHAKE for r in handshake)
        assert all(r.revision == STATELESS for r in stateless)
        for r in stateless:
            if r.dir == "in":
                assert r.http is not None and "mcp-session-id" not in (r.http.get("headers") or {})
                assert "_meta" in r.params
        for r in handshake:
            if r.dir == "in" and r.kind == "request":
                assert "io.modelcontextprotocol/protocolVersion" not in (r.params or {}).get("_meta", {})
        assert srv.traffic.filter(revision=STATELESS) == stateless
    finally:
        srv.stop()


def post(url: str, body: dict[str, Any], version: str) -> httpx.Response:
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": version,
        "Mcp-Method": body["method"],
    }
    return httpx.post(url, json=body, headers=headers, timeout=WAIT)


def test_era_stateless_refuses_initialize() -> None:
    srv = Server(era="stateless")
    srv.start_http()
    url = srv.http_url
    assert url is not None
    try:
        init = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "initialize",
            "params": {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        }
        r = post(url, init, HANDSHAKE)
        assert r.status_code == 404
        assert r.json() == {
            "jsonrpc": "2.0",
            "id": 7,
            "error": {"code": -32601, "message": "Method not found: initialize"},
        }
        meta = {
            "io.modelcontextprotocol/protocolVersion": STATELESS,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        r = post(url, {"jsonrpc": "2.0", "id": 8, "method": "server/discover", "params": {"_meta": meta}}, STATELESS)
        assert r.status_code == 200
        assert r.json()["result"]["supportedVersions"] == [STATELESS]
    finally:
        srv.stop()


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_era_handshake_makes_the_auto_client_fall_back(transport: str) -> None:
    srv = Server(era="handshake")
    try:
        with anyio.fail_after(30):
            async with Client(target(srv, transport), mode="auto", read_timeout_seconds=WAIT) as client:
                assert client.protocol_version == HANDSHAKE
                r = await client.call_tool("echo", {"message": "old"})
                assert r.content == [TextContent(type="text", text="Echo: old")]
        first = srv.traffic[0]
        if transport == "http":
            # A POST without a session that is not `initialize` is refused before any session
            # exists, as the handshake era refuses it: 400 with -32601.
            assert (first.kind, first.error) == ("http", "Method not found: server/discover")
            assert first.http is not None and first.http["status"] == 400
            assert json.loads(srv.traffic[1].raw)["error"]["code"] == -32601
        else:
            assert (first.kind, first.method) == ("request", "server/discover")
            (refused,) = srv.traffic.filter("server/discover", kind="error")
            assert refused.msg == {
                "jsonrpc": "2.0",
                "id": first.id,
                "error": {"code": -32601, "message": "Method not found: server/discover"},
            }
        methods = [r.method for r in client_requests(srv)]
        assert methods.index("initialize") < methods.index("tools/call")
        assert srv.traffic.filter(era="stateless") == []
    finally:
        srv.stop()


async def test_everything_v1_is_handshake_only() -> None:
    srv = Server(catalogs=["everything-v1"])
    try:
        with anyio.fail_after(30):
            async with Client(target(srv, "http"), mode="auto", read_timeout_seconds=WAIT) as client:
                assert client.protocol_version == HANDSHAKE
        with pytest.raises(ConfigError, match="handshake era"):
            Server(catalogs=["everything-v1"], era="stateless")
    finally:
        srv.stop()


def test_era_narrows_the_revisions() -> None:
    with pytest.raises(ConfigError, match="era stateless serves none of the allowed revisions"):
        Server(era="stateless", revisions=["2025-06-18"])
    with pytest.raises(ConfigError, match="unknown era"):
        Server(era="auto")
    srv = Server(era="handshake", revisions=["2025-06-18", STATELESS])
    conn = srv.connect()
    try:
        init = {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        conn.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}))
        answer = json.loads(conn.recv(WAIT))
        assert answer["result"]["protocolVersion"] == "2025-06-18"
    finally:
        conn.close()
        srv.stop()


def test_cli_era_option() -> None:
    out = subprocess.run([*SERVER_CMD, "stdio", "--help"], capture_output=True, text=True, timeout=WAIT, check=True)
    text = " ".join(out.stdout.split())
    assert "--era <ERA>" in text and "[possible values: handshake, stateless, both]" in text
    assert "(default: both)" in text
    discover = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "server/discover",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": STATELESS,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
    }
    done = subprocess.run(
        [*SERVER_CMD, "stdio", "--era", "handshake"],
        input=json.dumps(discover) + "\n",
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert json.loads(done.stdout) == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32601, "message": "Method not found: server/discover"},
    }
    bad = subprocess.run(
        [*SERVER_CMD, "stdio", "--era", "stateless", "--revision", HANDSHAKE],
        capture_output=True,
        text=True,
        timeout=WAIT,
        stdin=subprocess.DEVNULL,
    )
    assert bad.returncode == 2
    assert "era stateless serves none of the allowed revisions (2025-11-25)" in bad.stderr


async def test_auto_client_over_the_cli_subprocess(tmp_path: Path) -> None:
    record = tmp_path / "traffic.jsonl"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "everything_mcp", "stdio", "--record", str(record)]
    )
    with anyio.fail_after(30):
        async with Client(params, mode="auto", read_timeout_seconds=WAIT) as client:
            assert client.protocol_version == STATELESS
            r = await client.call_tool("echo", {"message": "cli"})
            assert r.content == [TextContent(type="text", text="Echo: cli")]
        records = load_records(record)
        assert [r.method for r in records if r.kind == "request"][:2] == ["server/discover", "tools/call"]
        assert {(r.v, r.era, r.revision, r.conn) for r in records} == {(2, "stateless", STATELESS, "stdio-1")}
        with pytest.raises(Exception) as refused:
            async with Client(
                StdioServerParameters(
                    command=sys.executable, args=["-m", "everything_mcp", "stdio", "--era", "stateless"]
                ),
                mode="legacy",
                read_timeout_seconds=WAIT,
            ):
                pass
        assert "Method not found: initialize" in repr(refused.value)


def discover(url: str) -> httpx.Response:
    meta = {"io.modelcontextprotocol/protocolVersion": STATELESS, "io.modelcontextprotocol/clientCapabilities": {}}
    return post(url, {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}, STATELESS)


@pytest.mark.everything_mcp(era="handshake")
def test_the_marker_and_the_factory_pin_an_era(everything_mcp: Server, everything_mcp_factory: Any) -> None:
    assert everything_mcp.http_url is not None
    assert discover(everything_mcp.http_url).status_code == 400
    stateless = everything_mcp_factory(era="stateless")
    r = discover(stateless.http_url)
    assert r.status_code == 200
    assert r.json()["result"]["supportedVersions"] == [STATELESS]
