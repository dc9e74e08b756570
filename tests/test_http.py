"""Streamable HTTP and legacy HTTP+SSE over real loopback sockets: the official `mcp` client,
and raw HTTP (httpx) for every status code, the SSE framing, resumption, the DNS-rebinding
guard, limits, and many concurrent sessions."""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp.types import TextContent

from everything_mcp import Server

from conftest import WAIT, init_params

ACCEPT_BOTH = "application/json, text/event-stream"
JSON = "application/json"


@pytest.fixture
def server(http_server: Server) -> Server:
    return http_server


def rpc(id: int | str, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def parse_sse(text: str) -> list[dict[str, str]]:
    """SSE text → events (`{"id":…, "event":…, "data":…, "retry":…}`), comments dropped."""
    events = []
    for block in text.split("\n\n"):
        event: dict[str, str] = {}
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            event[field] = event[field] + "\n" + value if field == "data" and field in event else value
        if event:
            events.append(event)
    return events


def post(http: httpx.Client, body: Any, session: str | None = None, **headers: str) -> httpx.Response:
    h = {"accept": ACCEPT_BOTH, "content-type": JSON}
    if session:
        h["mcp-session-id"] = session
    h.update({k.replace("_", "-"): v for k, v in headers.items()})
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return http.post("/mcp", content=content, headers=h)


def initialize(http: httpx.Client, version: str = "2025-11-25", capabilities: dict[str, Any] | None = None) -> str:
    params = init_params(version)
    if capabilities is not None:
        params["capabilities"] = capabilities
    r = post(http, rpc(0, "initialize", params))
    assert r.status_code == 200, r.text
    session = r.headers["mcp-session-id"]
    assert post(http, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session).status_code == 202
    return session


def messages(r: httpx.Response) -> list[Any]:
    return [json.loads(e["data"]) for e in parse_sse(r.text) if e.get("data")]


def sse_events(r: httpx.Response) -> Iterator[dict[str, str]]:
    """The events of a streamed SSE response as they arrive (`parse_sse`'s shape)."""
    lines: list[str] = []
    for line in r.iter_lines():
        if line:
            lines.append(line)
        elif lines:
            yield from parse_sse("\n".join(lines))
            lines = []


# --- the official client -------------------------------------------------------------------


@pytest.mark.anyio
async def test_sdk_client_over_streamable_http(server: Server) -> None:
    logs: list[Any] = []
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_log(params: Any) -> None:
        logs.append(params)

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        progress.append((p, total, message))

    with anyio.fail_after(20):
        async with Client(
            server.http_url or "", mode="legacy", read_timeout_seconds=10, logging_callback=on_log
        ) as client:
            assert client.protocol_version == "2025-11-25"
            names = [t.name for t in (await client.list_tools()).tools]
            assert names[0] == "echo" and "get-sum" in names
            r = await client.call_tool("echo", {"message": "over http"})
            assert r.content == [TextContent(type="text", text="Echo: over http")]
            r = await client.call_tool(
                "trigger-long-running-operation", {"duration": 0.1, "steps": 2}, progress_callback=on_progress
            )
            assert r.content == [
                TextContent(type="text", text="Long running operation completed. Duration: 0.1 seconds, Steps: 2.")
            ]
            assert progress == [(1.0, 2.0, None), (2.0, 2.0, None)]
            r = await client.call_tool("toggle-simulated-logging", {})
            assert isinstance(r.content[0], TextContent)
            assert r.content[0].text.startswith("Started simulated, random-leveled logging for session ")
            while not logs:  # the first message is sent during the call, on the standalone stream
                await anyio.sleep(0.01)
            assert logs[0].data.endswith("-level message - SessionId " + r.content[0].text.split()[7]) or (
                "SessionId" in logs[0].data
            )
    records = server.traffic
    posts = [r for r in records if r.dir == "in" and r.http and r.http["method"] == "POST"]
    assert all(r.transport == "http" for r in posts)
    progress_frames = [r for r in records if r.method == "notifications/progress"]
    assert len(progress_frames) == 2
    assert all(r.stream is not None and r.event_id and r.event_id.startswith(r.stream + "-") for r in progress_frames)


@pytest.mark.anyio
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
async def test_sdk_client_over_legacy_sse(server: Server) -> None:
    progress: list[float] = []
    logs: list[Any] = []

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        progress.append(p)

    async def on_log(params: Any) -> None:
        logs.append(params)

    with anyio.fail_after(20):
        transport = sse_client(server.sse_url or "")
        async with Client(transport, mode="legacy", read_timeout_seconds=10, logging_callback=on_log) as client:
            tools = await client.list_tools()
            assert "echo" in [t.name for t in tools.tools]
            r = await client.call_tool("echo", {"message": "legacy"})
            assert r.content == [TextContent(type="text", text="Echo: legacy")]
            await client.call_tool(
                "trigger-long-running-operation", {"duration": 0.05, "steps": 2}, progress_callback=on_progress
            )
            assert progress == [1.0, 2.0]
            await client.call_tool("toggle-simulated-logging", {})
            while not logs:
                await anyio.sleep(0.01)
            assert "-level message - SessionId " in logs[0].data or "level-message - SessionId " in logs[0].data
    assert {r.transport for r in server.traffic} == {"sse"}


# --- raw HTTP: the status-code table -------------------------------------------------------


def test_initialize_streams_a_priming_event_then_the_result(http: httpx.Client) -> None:
    r = post(http, rpc(1, "initialize", init_params()))
    assert r.status_code == 200
    assert r.headers["content-type"] == "text/event-stream"
    session = r.headers["mcp-session-id"]
    assert len(session) == 32 and all(0x21 <= ord(c) <= 0x7E for c in session)
    assert r.text.startswith("id: ")
    priming, result = parse_sse(r.text)
    assert priming["data"] == "" and priming["retry"] == "1000" and "event" not in priming
    assert result["event"] == "message" and result["id"] != priming["id"]
    assert json.loads(result["data"])["result"]["protocolVersion"] == "2025-11-25"
    # Older revisions get no priming event.
    r = post(http, rpc(1, "initialize", init_params("2025-06-18")))
    assert [json.loads(e["data"])["id"] for e in parse_sse(r.text)] == [1]


def test_requests_notifications_and_sessions(http: httpx.Client) -> None:
    session = initialize(http)
    r = post(http, rpc(2, "tools/call", {"name": "echo", "arguments": {"message": "x"}}), session)
    assert r.status_code == 200
    assert messages(r) == [{"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "Echo: x"}]}}]
    # Notifications and client responses: 202, no body.
    r = post(http, {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}, session)
    assert (r.status_code, r.content) == (202, b"")
    r = post(http, {"jsonrpc": "2.0", "id": 99, "result": {}}, session)
    assert (r.status_code, r.content) == (202, b"")
    # A second initialize on the session is a JSON-RPC error on the stream.
    r = post(http, rpc(3, "initialize", init_params()), session)
    assert messages(r)[-1]["error"]["code"] == -32600


@pytest.mark.parametrize(
    ("headers", "body", "status", "message"),
    [
        ({"accept": JSON}, rpc(1, "initialize", init_params()), 406,
         "Not Acceptable: Client must accept both application/json and text/event-stream"),
        ({"content-type": "text/plain"}, rpc(1, "initialize", init_params()), 415,
         "Unsupported Media Type: Content-Type must be application/json"),
        ({}, rpc(1, "tools/list"), 400,
         "Bad Request: Mcp-Session-Id header is required (only initialize may be sent without one)"),
        ({}, rpc(1, "server/discover"), 400, "Method not found: server/discover"),
        ({}, b"{oops", 400, "Parse error: key must be a string at line 1 column 2"),
        ({"mcp-session-id": "nope"}, rpc(1, "tools/list"), 404, "Session not found: nope"),
    ],
)  # fmt: skip
def test_refusals_before_a_session(
    http: httpx.Client, headers: dict[str, str], body: Any, status: int, message: str
) -> None:
    h = {"accept": ACCEPT_BOTH, "content-type": JSON, **headers}
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    r = http.post("/mcp", content=content, headers=h)
    assert r.status_code == status
    assert r.headers["content-type"] == JSON
    assert r.json()["error"]["message"] == message
    # An unknown method keeps its id, as stdio answers it; a transport refusal has none.
    assert r.json()["id"] == (1 if message.startswith("Method not found") else None)


def test_refusals_within_a_session(server: Server, http: httpx.Client) -> None:
    session = initialize(http)
    r = post(http, b"{bad json", session)
    assert r.status_code == 400
    assert r.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error: key must be a string at line 1 column 2"},
    }
    r = post(http, rpc(1, "ping"), session, mcp_protocol_version="1999-01-01")
    assert r.status_code == 400
    assert r.json()["error"]["message"] == (
        "Bad Request: Unsupported protocol version: 1999-01-01 "
        "(supported versions: 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)"
    )
    r = post(http, rpc(1, "ping"), session, mcp_protocol_version="2025-11-25")
    assert messages(r) == [{"jsonrpc": "2.0", "id": 1, "result": {}}]
    ping = [r for r in server.traffic if r.method == "ping" and r.dir == "in"][-1]
    assert ping.http == {
        "method": "POST",
        "path": "/mcp",
        "status": 200,
        "headers": {
            "mcp-session-id": session,
            "mcp-protocol-version": "2025-11-25",
            "accept": ACCEPT_BOTH,
            "content-type": JSON,
        },
    }
    refused = [r for r in server.traffic if r.http and r.http.get("status") == 400 and r.dir == "in"]
    assert refused[-1].kind == "http" and refused[-1].error and "1999-01-01" in refused[-1].error
    r = post(http, [rpc(1, "ping")], session)  # a batch under 2025-11-25
    assert r.status_code == 400 and r.json()["error"]["code"] == -32600
    r = http.put("/mcp")
    assert r.status_code == 405


def test_get_stream_is_exclusive_and_delete_ends_the_session(server: Server, http: httpx.Client) -> None:
    session = initialize(http)
    h = {"accept": "text/event-stream", "mcp-session-id": session}
    assert http.get("/mcp", headers={"accept": JSON, "mcp-session-id": session}).status_code == 406
    assert http.get("/mcp", headers={"accept": "text/event-stream"}).status_code == 400
    with http.stream("GET", "/mcp", headers=h) as first:
        assert first.status_code == 200
        assert first.headers["content-type"] == "text/event-stream"
        second = http.get("/mcp", headers=h)
        assert second.status_code == 409
        assert second.json()["error"]["message"] == "Conflict: Only one SSE stream is allowed per session"
        # Unrelated messages go to the standalone stream: the catalog's announcement after
        # `initialized` (simulate-research-query, kept for the stream until it opened), then ours.
        server.notify_list_changed("tools")
        lines = first.iter_lines()
        for _ in range(2):
            assert next(lines) == "event: message"
            assert next(lines).startswith("id: 0-")
            assert next(lines) == 'data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'
            assert next(lines) == ""
        assert server.session_count == 1
        r = http.delete("/mcp", headers={"mcp-session-id": session})
        assert (r.status_code, r.content) == (200, b"")
        assert list(lines) == []  # the stream ends with the session
    assert server.session_count == 0  # its memory is released
    exchanges = [(r.http["method"], r.http["status"]) for r in server.traffic if r.kind == "http"]
    assert exchanges == [("GET", 406), ("GET", 400), ("GET", 200), ("GET", 409), ("DELETE", 200)]
    get = next(r for r in server.traffic if r.kind == "http" and r.http["status"] == 200)
    assert get.http["headers"] == {"mcp-session-id": session, "accept": "text/event-stream"}
    assert get.conn == session
    assert post(http, rpc(5, "tools/list"), session).status_code == 404
    assert http.delete("/mcp", headers={"mcp-session-id": session}).status_code == 404
    assert http.get("/mcp", headers=h).status_code == 404


def test_resumption_replays_only_that_streams_missed_events(server: Server, http: httpx.Client) -> None:
    session = initialize(http)
    call = rpc(7, "tools/call", {"name": "trigger-long-running-operation", "arguments": {"duration": 0.3, "steps": 3}})
    call["params"]["_meta"] = {"progressToken": "p"}
    h = {"accept": ACCEPT_BOTH, "content-type": JSON, "mcp-session-id": session}
    with http.stream("POST", "/mcp", content=json.dumps(call).encode(), headers=h) as r:
        lines = r.iter_lines()
        assert next(lines).startswith("id: ")  # the priming event
        next(lines), next(lines), next(lines)  # retry, data, blank
        assert next(lines) == "event: message"
        first_id = next(lines)[len("id: ") :]
        assert json.loads(next(lines)[len("data: ") :])["params"]["progress"] == 1
    # The client dropped the stream after the first progress event. Meanwhile another stream
    # (the standalone one) gets a message: it must not show up in the replay.
    server.notify_list_changed("prompts")
    stream = first_id.split("-")[0]
    events: list[dict[str, str]] = []
    with http.stream(
        "GET", "/mcp", headers={"accept": "text/event-stream", "mcp-session-id": session, "last-event-id": first_id}
    ) as resumed:
        assert resumed.status_code == 200
        text = ""
        for chunk in resumed.iter_text():
            text += chunk
            events = parse_sse(text)
            if any(json.loads(e["data"]).get("id") == 7 for e in events if e.get("data")):
                break
    assert all(e["id"].startswith(stream + "-") for e in events)
    payloads = [json.loads(e["data"]) for e in events]
    assert [p.get("params", {}).get("progress") for p in payloads[:-1]] == [2, 3]
    assert payloads[-1]["result"]["content"][0]["text"].startswith("Long running operation completed.")
    assert all("list_changed" not in p.get("method", "") for p in payloads)
    bad = http.get("/mcp", headers={"accept": "text/event-stream", "mcp-session-id": session, "last-event-id": "x"})
    assert bad.status_code == 400


def test_dns_rebinding_guard_and_cors(server: Server, http: httpx.Client) -> None:
    body = rpc(1, "initialize", init_params())
    r = post(http, body, host="evil.example.com")
    assert r.status_code == 403
    assert r.json()["error"]["message"].startswith('Forbidden: Host "evil.example.com" is not allowed')
    r = post(http, body, origin="http://evil.example.com")
    assert r.status_code == 403
    assert r.json()["error"]["message"].startswith('Forbidden: Origin "http://evil.example.com" is not allowed')
    assert post(http, body, origin="http://localhost:5173").status_code == 200
    assert http.get("/health", headers={"host": "evil.example.com"}).status_code == 403
    # A browser's preflight from an allowed origin.
    r = http.options(
        "/mcp",
        headers={
            "origin": "http://localhost:5173",
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type,mcp-session-id",
        },
    )
    assert r.status_code == 200
    assert r.headers["access-control-allow-origin"] == "http://localhost:5173"
    assert "POST" in r.headers["access-control-allow-methods"]
    r = post(http, body, origin="http://localhost:5173")
    assert "mcp-session-id" in r.headers["access-control-expose-headers"]
    with Server() as wide:
        wide.start_http(allow_hosts=["evil.example.com"], allow_origins=["http://evil.example.com"])
        with httpx.Client(base_url=wide.base_url or "", timeout=WAIT) as client:
            assert post(client, body, host="evil.example.com", origin="http://evil.example.com").status_code == 200


def test_health(http: httpx.Client) -> None:
    r = http.get("/health")
    assert (r.status_code, r.json()) == (200, {"status": "ok"})


def test_limits() -> None:
    with Server(max_message_bytes=1000) as srv:
        srv.start_http(max_sessions=1)
        with httpx.Client(base_url=srv.base_url or "", timeout=WAIT) as http:
            r = post(http, rpc(1, "initialize", {**init_params(), "pad": "x" * 2000}))
            assert r.status_code == 413
            assert r.json()["error"]["message"] == "Payload Too Large: request body exceeds the 1000-byte limit"
            session = initialize(http)
            r = post(http, rpc(1, "initialize", init_params()))
            assert r.status_code == 503
            assert r.json()["error"]["message"].startswith("Service Unavailable: too many sessions (limit 1)")
            http.delete("/mcp", headers={"mcp-session-id": session})
            assert post(http, rpc(1, "initialize", init_params())).status_code == 200


def test_idle_sessions_expire() -> None:
    with Server() as srv:
        srv.start_http(session_idle_timeout=0.05)
        with httpx.Client(base_url=srv.base_url or "", timeout=WAIT) as http:
            session = initialize(http)
            with anyio.from_thread.start_blocking_portal() as portal:
                portal.call(wait_until, lambda: srv.session_count == 0)
            assert post(http, rpc(1, "ping"), session).status_code == 404


async def wait_until(condition: Any) -> None:
    with anyio.fail_after(WAIT):
        while not condition():
            await anyio.sleep(0.01)


def test_json_response_mode() -> None:
    with Server() as srv:
        srv.start_http(json_response=True)
        with httpx.Client(base_url=srv.base_url or "", timeout=WAIT) as http:
            r = post(http, rpc(1, "initialize", init_params()))
            assert r.status_code == 200 and r.headers["content-type"] == JSON
            assert r.json()["result"]["protocolVersion"] == "2025-11-25"
            session = r.headers["mcp-session-id"]
            r = post(http, rpc(2, "tools/call", {"name": "get-sum", "arguments": {"a": 1, "b": 2}}), session)
            assert r.json()["result"]["content"][0]["text"] == "The sum of 1 and 2 is 3."


def test_standalone_stream_can_be_disabled() -> None:
    with Server() as srv:
        srv.start_http(standalone_stream=False)
        with httpx.Client(base_url=srv.base_url or "", timeout=WAIT) as http:
            session = initialize(http)
            r = http.get("/mcp", headers={"accept": "text/event-stream", "mcp-session-id": session})
            assert r.status_code == 405


# --- server → client requests travel on the stream of the request they serve ---------------

ASKING = {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {}}
"""Capabilities that make the `everything` catalog list its tools that ask the client."""

ROOTS = [{"uri": "file:///work", "name": "work"}, {"uri": "file:///tmp"}]
ROOTS_TEXT = (
    "Current MCP Roots (2 total):\n\n1. work\n   URI: file:///work\n\n2. Unnamed Root\n   URI: file:///tmp\n\n"
    "Note: This server demonstrates the roots protocol capability but doesn't actually access files. "
    "The roots are provided by the MCP client and can be used by servers that need file system access."
)
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "sampled"}, "model": "m", "stopReason": "endTurn"}
SAMPLED_TEXT = (
    "LLM sampling result: \n"
    + '{\n  "model": "m",\n  "stopReason": "endTurn",\n  "role": "assistant",\n'
    + '  "content": {\n    "type": "text",\n    "text": "sampled"\n  }\n}'
)
ELICITED = {"action": "accept", "content": {"name": "Ada", "check": True, "integer": 7}}


@pytest.fixture
def no_get_server() -> Iterator[Server]:
    """A server whose clients cannot open the standalone stream (GET → 405): the spec makes it
    optional, and some clients never open it."""
    with Server() as srv:
        srv.start_http(standalone_stream=False)
        yield srv


def call_answering(
    http: httpx.Client, session: str, call: dict[str, Any], answer: dict[str, Any]
) -> tuple[str, dict[str, str], list[Any]]:
    """POSTs `call`, reads its SSE stream up to the server's request, answers that with a POST
    (202) while the stream stays open, and reads the rest of the stream. Returns the stream's
    number, the request's event, and the messages after it."""
    h = {"accept": ACCEPT_BOTH, "content-type": JSON, "mcp-session-id": session}
    with http.stream("POST", "/mcp", content=json.dumps(call).encode(), headers=h) as r:
        assert r.status_code == 200
        events = sse_events(r)
        priming = next(events)
        assert priming["data"] == ""
        stream = priming["id"].split("-")[0]
        asked = next(events)
        ask = json.loads(asked["data"])
        reply = post(http, {"jsonrpc": "2.0", "id": ask["id"], "result": answer}, session)
        assert (reply.status_code, reply.content) == (202, b"")
        rest = [json.loads(e["data"]) for e in events]  # the stream ends after the response
    return stream, asked, rest


def text_result(id: int, *texts: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": t} for t in texts]}}


def test_roots_are_asked_on_the_calls_stream_without_a_get_stream(no_get_server: Server) -> None:
    with httpx.Client(base_url=no_get_server.base_url or "", timeout=WAIT) as http:
        session = initialize(http, capabilities=ASKING)
        assert http.get("/mcp", headers={"accept": "text/event-stream", "mcp-session-id": session}).status_code == 405
        # The sync after `initialized` belongs to no request: it goes on the standalone stream,
        # where this client never reads it. It must not hold up (or stand in for) the tool's own ask.
        background = no_get_server.traffic.wait_for("roots/list", timeout=WAIT)
        assert (background.dir, background.stream) == ("out", "0")
        assert background.event_id is not None and background.event_id.startswith("0-")
        call = rpc(1, "tools/call", {"name": "get-roots-list", "arguments": {}})
        stream, asked, rest = call_answering(http, session, call, {"roots": ROOTS})
        # Known now: the next call answers at once.
        again = post(http, rpc(2, "tools/call", {"name": "get-roots-list", "arguments": {}}), session)
        assert messages(again) == [text_result(2, ROOTS_TEXT)]
        # The client says its roots changed: the sync that follows is never answered either, and
        # the stale roots are not served meanwhile; the tool asks again on its own stream.
        changed = post(http, {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}, session)
        assert changed.status_code == 202
        call = rpc(3, "tools/call", {"name": "get-roots-list", "arguments": {}})
        third_stream, third_asked, third_rest = call_answering(http, session, call, {"roots": ROOTS[1:]})
    assert stream not in ("0", "")
    assert asked["id"].startswith(stream + "-")
    ask = json.loads(asked["data"])
    assert ask == {"jsonrpc": "2.0", "id": ask["id"], "method": "roots/list"}
    assert ask["id"] != background.id
    log = {"level": "info", "logger": "everything-server", "data": "Roots updated: 2 root(s) received from client"}
    assert rest == [{"jsonrpc": "2.0", "method": "notifications/message", "params": log}, text_result(1, ROOTS_TEXT)]
    assert third_stream not in ("0", stream) and third_asked["id"].startswith(third_stream + "-")
    third_ask = json.loads(third_asked["data"])
    assert third_ask["method"] == "roots/list"
    one = (
        "Current MCP Roots (1 total):\n\n1. Unnamed Root\n   URI: file:///tmp\n\n"
        "Note: This server demonstrates the roots protocol capability but doesn't actually access files. "
        "The roots are provided by the MCP client and can be used by servers that need file system access."
    )
    log["data"] = "Roots updated: 1 root(s) received from client"
    assert third_rest == [{"jsonrpc": "2.0", "method": "notifications/message", "params": log}, text_result(3, one)]
    asks = [(r.id, r.stream) for r in no_get_server.traffic if r.method == "roots/list" and r.kind == "request"]
    assert [a for a in asks if a[1] != "0"] == [(ask["id"], stream), (third_ask["id"], third_stream)]
    assert asks[0] == (background.id, "0")


@pytest.mark.parametrize(
    ("tool", "arguments", "method", "params", "answer", "texts"),
    [
        (
            "trigger-sampling-request",
            {"prompt": "hello"},
            "sampling/createMessage",
            {
                "messages": [
                    {
                        "role": "user",
                        "content": {"type": "text", "text": "Resource trigger-sampling-request context: hello"},
                    }
                ],
                "systemPrompt": "You are a helpful test server.",
                "maxTokens": 100,
                "temperature": 0.7,
            },
            SAMPLED,
            [SAMPLED_TEXT],
        ),
        (
            "trigger-elicitation-request",
            {},
            "elicitation/create",
            None,
            ELICITED,
            [
                "✅ User provided the requested information!",
                "User inputs:\n- Name: Ada\n- Agreed to terms: true\n- Favorite Integer: 7",
                "\nRaw result: " + json.dumps(ELICITED, indent=2),
            ],
        ),
    ],
)
def test_sampling_and_elicitation_are_asked_on_the_calls_stream_without_a_get_stream(
    no_get_server: Server,
    tool: str,
    arguments: dict[str, Any],
    method: str,
    params: dict[str, Any] | None,
    answer: dict[str, Any],
    texts: list[str],
) -> None:
    with httpx.Client(base_url=no_get_server.base_url or "", timeout=WAIT) as http:
        session = initialize(http, capabilities=ASKING)
        stream, asked, rest = call_answering(
            http, session, rpc(1, "tools/call", {"name": tool, "arguments": arguments}), answer
        )
    assert stream not in ("0", "") and asked["id"].startswith(stream + "-")
    ask = json.loads(asked["data"])
    assert ask["method"] == method
    if params is not None:
        assert ask["params"] == params
    else:
        assert ask["params"]["message"] == "Please provide inputs for the following fields:"
    assert rest == [text_result(1, *texts)]


@pytest.mark.anyio
async def test_sdk_client_without_a_get_stream_answers_the_tools_requests(no_get_server: Server) -> None:
    from mcp.types import CreateMessageResult, ElicitResult, ListRootsResult, Root

    async def roots(context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri="file:///work", name="work"), Root(uri="file:///tmp")])

    async def sample(context: Any, params: Any) -> CreateMessageResult:
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text="sampled"), model="m", stop_reason="endTurn"
        )

    async def elicit(context: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"name": "Ada", "check": True, "integer": 7})

    url = no_get_server.http_url or ""
    with anyio.fail_after(30):
        async with Client(
            url,
            mode="legacy",
            read_timeout_seconds=10,
            list_roots_callback=roots,
            sampling_callback=sample,
            elicitation_callback=elicit,
        ) as client:
            r = await client.call_tool("get-roots-list", {})
            assert r.content == [TextContent(type="text", text=ROOTS_TEXT)]
            r = await client.call_tool("trigger-sampling-request", {"prompt": "hello"})
            assert r.content == [TextContent(type="text", text=SAMPLED_TEXT)]
            r = await client.call_tool("trigger-elicitation-request", {})
            assert [c.text for c in r.content if isinstance(c, TextContent)][:2] == [
                "✅ User provided the requested information!",
                "User inputs:\n- Name: Ada\n- Agreed to terms: true\n- Favorite Integer: 7",
            ]
    asked = [r for r in no_get_server.traffic if r.dir == "out" and r.kind == "request"]
    on_posts = [r.method for r in asked if r.stream != "0"]
    assert on_posts == ["roots/list", "sampling/createMessage", "elicitation/create"]


# --- traffic records name the stream -------------------------------------------------------


def test_records_name_the_stream_each_frame_went_on(server: Server, http: httpx.Client) -> None:
    session = initialize(http)
    r = post(http, rpc(1, "tools/call", {"name": "echo", "arguments": {"message": "x"}}), session)
    _, answer = parse_sse(r.text)
    server.notify_list_changed("tools")  # for the standalone stream; kept for the next GET
    with http.stream("GET", "/mcp", headers={"accept": "text/event-stream", "mcp-session-id": session}) as get:
        first = next(sse_events(get))
    out = [r for r in server.traffic if r.dir == "out"]
    response = next(r for r in out if r.kind == "response" and r.id == 1)
    assert (response.stream, response.event_id) == (answer["id"].split("-")[0], answer["id"])
    assert response.stream not in ("0", "")
    # Recorded when the GET took it (after the GET), with the id it went out under.
    changed = next(r for r in out if r.method == "notifications/tools/list_changed")
    assert changed.stream == "0" and changed.event_id is not None and changed.event_id.startswith("0-")
    assert changed.http is None
    assert first["id"] == changed.event_id
    # A JSON response body is no SSE event: it names no stream.
    with Server() as srv:
        srv.start_http(json_response=True)
        with httpx.Client(base_url=srv.base_url or "", timeout=WAIT) as client:
            post(client, rpc(1, "initialize", init_params()))
        (body,) = [r for r in srv.traffic if r.dir == "out"]
        assert (body.stream, body.event_id, body.http) == (None, None, {"status": 200})


# --- legacy HTTP+SSE -----------------------------------------------------------------------


def test_legacy_sse_raw(http: httpx.Client) -> None:
    r = http.post("/message?sessionId=unknown", content=b"{}", headers={"content-type": JSON})
    assert r.status_code == 404
    assert r.json()["error"]["message"] == "Session not found: unknown (open one with GET /sse)"
    with http.stream("GET", "/sse", headers={"accept": "text/event-stream"}) as stream:
        assert stream.headers["content-type"] == "text/event-stream"
        lines = stream.iter_lines()
        assert next(lines) == "event: endpoint"
        endpoint = next(lines)[len("data: ") :]
        assert endpoint.startswith("/message?sessionId=")
        r = http.post(
            endpoint,
            content=json.dumps(rpc(1, "initialize", init_params("2024-11-05"))),
            headers={"content-type": JSON},
        )
        assert (r.status_code, r.text) == (202, "Accepted")
        assert next(lines) == ""
        assert next(lines) == "event: message"
        reply = json.loads(next(lines)[len("data: ") :])
        assert reply["result"]["protocolVersion"] == "2024-11-05"
        r = http.post(endpoint, content=b"nope", headers={"content-type": JSON})
        assert r.status_code == 400 and r.json()["error"]["code"] == -32700


# --- many clients --------------------------------------------------------------------------


def test_hundred_concurrent_sessions(server: Server) -> None:
    async def one(client: httpx.AsyncClient, i: int) -> str:
        h = {"accept": ACCEPT_BOTH, "content-type": JSON}
        r = await client.post("/mcp", content=json.dumps(rpc(0, "initialize", init_params())), headers=h)
        h["mcp-session-id"] = r.headers["mcp-session-id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await client.post("/mcp", content=json.dumps(note), headers=h)
        call = rpc(1, "tools/call", {"name": "get-sum", "arguments": {"a": i, "b": 0.5}})
        r = await client.post("/mcp", content=json.dumps(call), headers=h)
        (reply,) = messages(r)
        return str(reply["result"]["content"][0]["text"])

    async def all_of_them() -> list[str]:
        limits = httpx.Limits(max_connections=100)
        # One TLS context for the hundred clients (none is used: the URLs are http://): each
        # client would load the CA bundle into a context of its own, 2.8 s of the test's 3.4.
        tls = ssl.create_default_context()
        clients = [
            httpx.AsyncClient(base_url=server.base_url or "", timeout=WAIT, limits=limits, verify=tls)
            for _ in range(100)
        ]
        try:
            return await asyncio.gather(*(one(c, i) for i, c in enumerate(clients)))
        finally:
            await asyncio.gather(*(c.aclose() for c in clients))

    answers = asyncio.run(all_of_them())
    assert answers == [f"The sum of {i} and 0.5 is {i + 0.5}." for i in range(100)]
    assert server.session_count == 100


def test_stop_frees_the_port_at_once() -> None:
    import socket

    srv = Server()
    srv.start_http()
    host, port = (srv.base_url or "").removeprefix("http://").rsplit(":", 1)
    with httpx.Client(timeout=WAIT) as http:
        assert http.get(f"{srv.base_url}/health").status_code == 200
    srv.stop()
    assert srv.http_url is None
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, int(port)))  # nothing listens there any more
    srv.stop()  # idempotent


def test_legacy_session_ends_when_its_stream_closes(server: Server, http: httpx.Client) -> None:
    with http.stream("GET", "/sse", headers={"accept": "text/event-stream"}) as stream:
        lines = stream.iter_lines()  # (a dropped line iterator would close the response)
        assert next(lines) == "event: endpoint"
        assert server.session_count == 1
    with anyio.from_thread.start_blocking_portal() as portal:
        portal.call(wait_until, lambda: server.session_count == 0)


def test_a_finished_stream_resumes_then_ends_even_without_standalone_stream() -> None:
    with Server() as srv:
        srv.start_http(standalone_stream=False)
        with httpx.Client(base_url=srv.base_url or "", timeout=WAIT) as http:
            session = initialize(http)
            r = post(http, rpc(1, "tools/call", {"name": "echo", "arguments": {"message": "m"}}), session)
            priming, answer = parse_sse(r.text)
            h = {"accept": "text/event-stream", "mcp-session-id": session, "last-event-id": priming["id"]}
            resumed = http.get("/mcp", headers=h)  # returns: the stream ends after the replay
            assert resumed.status_code == 200
            (replayed,) = parse_sse(resumed.text)
            assert replayed == answer


def test_notifications_without_a_session_and_refused_connections(http: httpx.Client) -> None:
    r = post(http, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert r.status_code == 400
    assert r.json()["error"]["code"] == -32000
    # A refusal on the headers alone is answered once the body is read: the connection stays
    # usable for the next request (answered with the body unread, it closed, and a request sent
    # on it meanwhile was lost now and then).
    for _ in range(3):
        assert http.post("/mcp", content=b"{}", headers={"accept": JSON, "content-type": JSON}).status_code == 406
        assert post(http, rpc(1, "initialize", init_params())).status_code == 200


def test_shutdown_does_not_wait_for_running_handlers_in_json_mode() -> None:
    import threading
    import time

    srv = Server()
    srv.start_http(json_response=True)
    with httpx.Client(base_url=srv.base_url or "", timeout=WAIT) as http:
        session = post(http, rpc(1, "initialize", init_params())).headers["mcp-session-id"]
        slow = rpc(2, "tools/call", {"name": "trigger-long-running-operation", "arguments": {"duration": 30}})
        errors: list[BaseException] = []

        def call() -> None:
            try:
                post(http, slow, session)
            except httpx.HTTPError as e:
                errors.append(e)

        caller = threading.Thread(target=call)
        caller.start()
        with anyio.from_thread.start_blocking_portal() as portal:
            portal.call(wait_until, lambda: any(r.method == "tools/call" for r in srv.traffic))
        t0 = time.monotonic()
        srv.stop()
        assert time.monotonic() - t0 < 1.0
        caller.join(WAIT)
        assert not caller.is_alive()


def test_wildcard_bind_is_reached_on_loopback() -> None:
    with Server() as srv:
        url = srv.start_http(host="0.0.0.0")
        assert url.startswith("http://127.0.0.1:")
        with httpx.Client(timeout=WAIT) as http:
            r = http.post(url, json=rpc(1, "initialize", init_params()), headers={"accept": ACCEPT_BOTH})
            assert r.status_code == 200
