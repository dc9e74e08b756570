"""Six truths real clients and CLI agents found (issue 19), each pinned on the wire: real loopback
sockets (httpx, the official `mcp` client) to an in-process `Server` or a `python -m
everything_mcp http` subprocess, with exact statuses, bodies and traffic records."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp.types import TextContent

from everything_mcp import Server

from conftest import STATELESS, WAIT, cli_http_server, envelope, init_params

ACCEPT_BOTH = "application/json, text/event-stream"
JSON = "application/json"
SSE = "text/event-stream"


def rpc(id: int | str, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def post(http: httpx.Client, body: Any, **headers: str) -> httpx.Response:
    h = {"accept": ACCEPT_BOTH, "content-type": JSON}
    h.update({k.replace("_", "-"): v for k, v in headers.items()})
    return http.post("/mcp", content=json.dumps(body).encode(), headers=h)


def initialize(http: httpx.Client, version: str = "2025-11-25") -> str:
    r = post(http, rpc(0, "initialize", init_params(version)))
    assert r.status_code == 200, r.text
    session = r.headers["mcp-session-id"]
    r = post(http, {"jsonrpc": "2.0", "method": "notifications/initialized"}, mcp_session_id=session)
    assert r.status_code == 202
    return session


def data_of(text: str) -> list[dict[str, Any]]:
    """The JSON data of every event of a finished SSE body."""
    return [json.loads(line.removeprefix("data: ")) for line in text.split("\n") if line.startswith("data: ")]


def sse_data(lines: Iterator[str]) -> tuple[str, dict[str, Any]]:
    """The next `message` event of a streamed SSE body: its id and its JSON data."""
    assert next(lines) == "event: message"
    event_id = next(lines).removeprefix("id: ")
    data = json.loads(next(lines).removeprefix("data: "))
    assert next(lines) == ""
    return event_id, data


@pytest.fixture
def server(http_server: Server) -> Server:
    return http_server


# --- 1. a DELETE is recorded with its session's era and revision ------------------------------


@pytest.mark.parametrize("version", ["2025-11-25", "2025-03-26"])
def test_a_delete_is_recorded_with_its_sessions_era_and_revision(server: Server, version: str) -> None:
    with httpx.Client(base_url=server.base_url or "", timeout=WAIT) as http:
        session = initialize(http, version)
        r = http.delete("/mcp", headers={"mcp-session-id": session})
        assert (r.status_code, r.content) == (200, b"")
        # Once the session is gone its id is unknown: that refusal belongs to no exchange.
        assert http.delete("/mcp", headers={"mcp-session-id": session}).status_code == 404
    *_, ended, refused, answer = server.traffic
    sent = {"mcp-session-id": session, "accept": "*/*"}
    assert [(r.dir, r.kind, r.http, r.conn) for r in (ended, refused, answer)] == [
        ("in", "http", {"method": "DELETE", "path": "/mcp", "status": 200, "headers": sent}, session),
        ("in", "http", {"method": "DELETE", "path": "/mcp", "status": 404, "headers": sent}, session),
        ("out", "error", {"status": 404}, session),
    ]
    assert (ended.era, ended.revision) == ("handshake", version)
    assert (ended.raw, ended.error, ended.method, ended.id) == ("", None, None, None)
    assert (refused.era, refused.revision, answer.era, answer.revision) == (None, None, None, None)
    # The whole session, its end included, is of the revision it negotiated.
    assert {(r.era, r.revision) for r in server.traffic if r.conn == session and r.seq < refused.seq} == {
        ("handshake", version)
    }


# --- 2. a standalone event is recorded when it reaches the wire, after the GET ---------------------


def test_standalone_events_are_recorded_after_the_get_that_carries_them(server: Server, http: httpx.Client) -> None:
    session = initialize(http)  # the catalog announces simulate-research-query on the standalone stream
    server.notify_list_changed("prompts")  # and so do we, still before any GET
    # Nothing reached the wire yet, so nothing is on the tape yet.
    assert [r.method for r in server.traffic if r.dir == "out" and r.stream == "0"] == []
    before_get = len(server.traffic)
    with http.stream("GET", "/mcp", headers={"accept": SSE, "mcp-session-id": session}) as get:
        assert get.status_code == 200
        lines = get.iter_lines()
        wire = [sse_data(lines), sse_data(lines)]
        assert [data["method"] for _, data in wire] == [
            "notifications/tools/list_changed",
            "notifications/prompts/list_changed",
        ]
        server.notify_list_changed("resources")  # live: on the wire at once, after the two above
        wire.append(sse_data(lines))
        assert wire[2][1]["method"] == "notifications/resources/list_changed"
    tape = server.traffic_since(before_get)
    get_record = tape[0]
    assert (get_record.dir, get_record.kind, get_record.http["method"], get_record.http["status"]) == (
        "in",
        "http",
        "GET",
        200,
    )
    events = [r for r in tape if r.dir == "out" and r.stream == "0"]
    # Record order is wire order: the GET, then its events as the stream carried them.
    assert tape[1:4] == events
    assert [(r.event_id, r.msg) for r in events] == wire
    assert [r.seq for r in events] == sorted(r.seq for r in events)
    for r in events:
        assert (r.kind, r.conn, r.transport, r.http, r.error) == ("notification", session, "http", None, None)
        assert (r.era, r.revision) == ("handshake", "2025-11-25")
        assert r.raw == json.dumps(r.msg, separators=(",", ":"))
    assert [r.t_ns for r in tape] == sorted(r.t_ns for r in tape)


def test_standalone_events_in_the_record_file_follow_their_get(tmp_path: Any) -> None:
    from everything_mcp import load_records

    path = tmp_path / "traffic.jsonl"
    with Server(record=str(path)) as srv:
        srv.start_http()
        with httpx.Client(base_url=srv.base_url or "", timeout=WAIT) as http:
            session = initialize(http)
            srv.notify_list_changed("tools")
            with http.stream("GET", "/mcp", headers={"accept": SSE, "mcp-session-id": session}) as get:
                lines = get.iter_lines()
                ids = [sse_data(lines)[0], sse_data(lines)[0]]
    records = load_records(path)
    assert [r.seq for r in records] == list(range(1, len(records) + 1))
    kinds = [(r.dir, r.kind, r.event_id) for r in records if r.kind == "http" or r.stream == "0"]
    assert kinds == [("in", "http", None), ("out", "notification", ids[0]), ("out", "notification", ids[1])]


# --- 3. a session-less GET, DELETE or POST under --era stateless ------------------------------------


STATELESS_405 = (
    "Method not allowed: this server serves only protocol revision 2026-07-28 (the stateless era: no sessions, "
    "no standalone stream), where {method} has no meaning; send requests with POST"
)


@pytest.fixture(scope="module")
def stateless_url() -> Iterator[str]:
    with cli_http_server("--era", "stateless") as url:
        yield url


@pytest.mark.parametrize(
    "method, headers",
    [
        ("GET", {}),
        ("GET", {"accept": SSE}),
        ("GET", {"accept": SSE, "mcp-session-id": "abc"}),
        ("GET", {"accept": SSE, "mcp-session-id": "abc", "last-event-id": "0-1"}),
        ("GET", {"accept": SSE, "mcp-protocol-version": "2025-11-25"}),
        ("DELETE", {}),
        ("DELETE", {"mcp-session-id": "abc"}),
        ("DELETE", {"mcp-session-id": "abc", "mcp-protocol-version": STATELESS}),
    ],
)
def test_stateless_only_get_and_delete_are_405_allow_post(
    stateless_url: str, method: str, headers: dict[str, str]
) -> None:
    r = httpx.request(method, stateless_url, headers=headers, timeout=WAIT)
    assert r.status_code == 405, r.text
    assert r.headers["allow"] == "POST"
    assert r.headers["content-type"] == JSON
    assert "mcp-session-id" not in r.headers
    assert r.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32000, "message": STATELESS_405.format(method=method)},
    }


def test_stateless_only_post_ignores_a_session_id(stateless_url: str) -> None:
    with httpx.Client(timeout=WAIT) as http:
        h = {"accept": ACCEPT_BOTH, "content-type": JSON, "mcp-session-id": "abc"}
        # Without the envelope: the era's own answer (-32602, the id kept), not a session refusal,
        # the same as without the session id.
        r = http.post(stateless_url, json=rpc(1, "tools/list"), headers=h)
        assert r.status_code == 400, r.text
        assert r.json() == {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {
                "code": -32602,
                "message": 'Invalid params: params._meta must be an object carrying "io.modelcontextprotocol/'
                'protocolVersion" and "io.modelcontextprotocol/clientCapabilities"',
            },
        }
        bare = {k: v for k, v in h.items() if k != "mcp-session-id"}
        assert http.post(stateless_url, json=rpc(1, "tools/list"), headers=bare).json() == r.json()
        # With the envelope but no MCP-Protocol-Version: the era's header rule.
        r = http.post(stateless_url, json=rpc(2, "tools/list", {"_meta": envelope()}), headers=h)
        assert r.status_code == 400, r.text
        assert (r.json()["id"], r.json()["error"]["code"]) == (2, -32020)
        # A full 2026 request with a session id is served; no session id comes back.
        h |= {"mcp-protocol-version": STATELESS, "mcp-method": "tools/list"}
        r = http.post(stateless_url, json=rpc(3, "tools/list", {"_meta": envelope()}), headers=h)
        assert r.status_code == 200, r.text
        assert r.json()["id"] == 3 and r.json()["result"]["resultType"] == "complete"
        assert "mcp-session-id" not in r.headers
        # initialize stays refused in this era (-32601, 404, the id kept), session id or not.
        r = http.post(stateless_url, json=rpc(4, "initialize", init_params()), headers=h | {"mcp-method": "initialize"})
        assert r.status_code == 404, r.text
        assert (r.json()["id"], r.json()["error"]["code"]) == (4, -32601)


def test_stateless_only_server_in_process_records_the_405() -> None:
    with Server(era="stateless") as srv:
        srv.start_http()
        r = httpx.get(srv.http_url or "", headers={"accept": SSE, "mcp-session-id": "abc"}, timeout=WAIT)
        assert r.status_code == 405 and r.headers["allow"] == "POST"
        assert r.json()["error"]["message"] == STATELESS_405.format(method="GET")
        refused, answer = srv.traffic
    assert (refused.dir, refused.kind, refused.conn, refused.http["status"]) == ("in", "http", "-", 405)
    assert refused.error == STATELESS_405.format(method="GET")
    assert (answer.dir, answer.kind, answer.http) == ("out", "error", {"status": 405})


def test_both_eras_keep_the_handshake_meaning_of_a_get_without_the_2026_header(server: Server) -> None:
    r = httpx.get(server.http_url or "", headers={"accept": SSE}, timeout=WAIT)
    assert r.status_code == 400
    assert r.json()["error"]["message"] == (
        "Bad Request: Mcp-Session-Id header is required (only initialize may be sent without one)"
    )
    r = httpx.get(server.http_url or "", headers={"accept": SSE, "mcp-protocol-version": STATELESS}, timeout=WAIT)
    assert r.status_code == 405 and r.headers["allow"] == "POST"
    assert r.json()["error"]["message"] == (
        "Method not allowed: GET has no meaning in protocol revision 2026-07-28; send requests with POST"
    )


# --- 4. a refused server/discover keeps its id over HTTP in the handshake era -------------------


@pytest.mark.parametrize("era", ["handshake", "both"])
@pytest.mark.parametrize("id", [7, "probe-1"])
def test_a_refused_discover_keeps_its_id_over_http(era: str, id: int | str) -> None:
    with Server(era=era) as srv:
        srv.start_http()
        with httpx.Client(base_url=srv.base_url or "", timeout=WAIT) as http:
            # No envelope, no 2026 header: the handshake era's path, as a 2025 client would send it.
            r = post(http, rpc(id, "server/discover"))
            assert r.status_code == 400, r.text
            assert r.headers["content-type"] == JSON
            assert "mcp-session-id" not in r.headers
            assert r.json() == {
                "jsonrpc": "2.0",
                "id": id,
                "error": {"code": -32601, "message": "Method not found: server/discover"},
            }
            # An unreadable id stays null; other refusals before a session are unchanged.
            r = post(http, {"jsonrpc": "2.0", "method": "server/discover"})
            assert r.status_code == 400 and r.json()["id"] is None
            r = post(http, rpc(8, "tools/list"))
            assert r.status_code == 400 and r.json()["id"] is None and r.json()["error"]["code"] == -32000
        answer = next(r for r in srv.traffic if r.dir == "out")
    assert (answer.kind, answer.id, answer.http) == ("error", id, {"status": 400})


@pytest.mark.parametrize("era", ["handshake", "both"])
def test_a_refused_discover_keeps_its_id_over_stdio_too(era: str) -> None:
    from conftest import StdioServer

    server = StdioServer("stdio", "--era", era)
    try:
        answer = server.request(7, "server/discover")
        assert (answer["id"], answer["error"]["code"]) == (7, -32601)
    finally:
        server.stop()


# --- 5. toggle-simulated-logging names a tool that logs in its request, stateless ---------------


def test_toggle_simulated_logging_names_a_tool_that_logs_during_its_request() -> None:
    def headers(name: str) -> dict[str, str]:
        return {
            "accept": ACCEPT_BOTH,
            "content-type": JSON,
            "mcp-protocol-version": STATELESS,
            "mcp-method": "tools/call",
            "mcp-name": name,
        }

    meta = {**envelope({"roots": {}}), "io.modelcontextprotocol/logLevel": "debug"}
    with Server(era="stateless") as srv, httpx.Client(timeout=WAIT) as http:
        srv.start_http()
        url = srv.http_url or ""
        call = {"name": "toggle-simulated-logging", "arguments": {}, "_meta": meta}
        r = http.post(url, json=rpc(1, "tools/call", call), headers=headers("toggle-simulated-logging"))
        assert r.status_code == 200 and r.headers["content-type"] == JSON
        (block,) = r.json()["result"]["content"]
        assert block["text"] == (
            "toggle-simulated-logging needs a session, and protocol 2026-07-28 has none (each request stands alone): "
            "nothing was started. Log messages reach a stateless client only on the stream of the request that emits "
            "them, at the level its _meta asks for (io.modelcontextprotocol/logLevel); get-roots-list logs so (at "
            "info) in the round that brings the client's roots, and so does the conformance catalog's "
            "test_tool_with_logging."
        )
        # The tool it names does log during its request: the round that brings the roots.
        ask = {"name": "get-roots-list", "arguments": {}, "_meta": meta}
        r = http.post(url, json=rpc(2, "tools/call", ask), headers=headers("get-roots-list"))
        first = r.json()["result"]
        assert first["resultType"] == "input_required"
        ((key, question),) = first["inputRequests"].items()
        assert question == {"method": "roots/list"}
        roots = {"roots": [{"uri": "file:///tmp/a", "name": "a"}]}
        answered = {**ask, "inputResponses": {key: roots}, "requestState": first["requestState"]}
        r = http.post(url, json=rpc(3, "tools/call", answered), headers=headers("get-roots-list"))
        assert r.status_code == 200 and r.headers["content-type"] == SSE
        data = data_of(r.text)
        log = {"level": "info", "logger": "everything-server", "data": "Roots updated: 1 root(s) received from client"}
        assert data[0] == {"jsonrpc": "2.0", "method": "notifications/message", "params": log}
        assert data[1]["id"] == 3 and "file:///tmp/a" in data[1]["result"]["content"][0]["text"]
        # The tool it used to name sends progress only, never a log message.
        long = {"name": "trigger-long-running-operation", "arguments": {"duration": 0.02, "steps": 2}}
        long["_meta"] = {**meta, "progressToken": "p"}
        r = http.post(url, json=rpc(4, "tools/call", long), headers=headers("trigger-long-running-operation"))
        methods = [m.get("method") for m in data_of(r.text)]
        assert methods == ["notifications/progress", "notifications/progress", None]


# --- 6. the legacy /sse transport serves 2026-07-28 too -------------------------------------------


def test_legacy_sse_serves_the_stateless_era_raw(server: Server, http: httpx.Client) -> None:
    with http.stream("GET", "/sse", headers={"accept": SSE}) as stream:
        lines = stream.iter_lines()
        assert next(lines) == "event: endpoint"
        endpoint = next(lines).removeprefix("data: ")
        assert next(lines) == ""

        def send(body: dict[str, Any]) -> dict[str, Any]:
            r = http.post(endpoint, content=json.dumps(body), headers={"content-type": JSON})
            assert (r.status_code, r.text) == (202, "Accepted")
            assert next(lines) == "event: message"
            data: dict[str, Any] = json.loads(next(lines).removeprefix("data: "))
            assert next(lines) == ""
            return data

        discovered = send(rpc(1, "server/discover", {"_meta": envelope()}))
        assert discovered["id"] == 1
        assert STATELESS in discovered["result"]["supportedVersions"]
        assert discovered["result"]["resultType"] == "complete"
        echoed = send(rpc(2, "tools/call", {"name": "echo", "arguments": {"message": "sse"}, "_meta": envelope()}))
        assert echoed["result"]["content"] == [{"type": "text", "text": "Echo: sse"}]
        assert echoed["result"]["resultType"] == "complete"
        # initialize has no place on a connection that serves the stateless era: -32601, as on stdio.
        refused = send(rpc(3, "initialize", init_params()))
        assert refused == {
            "jsonrpc": "2.0",
            "id": 3,
            "error": {"code": -32601, "message": "Method not found: initialize"},
        }
    frames = [r for r in server.traffic if r.kind in ("request", "response", "error")]
    assert {r.transport for r in frames} == {"sse"}
    assert [(r.dir, r.method, r.id, r.era, r.revision) for r in frames[:4]] == [
        ("in", "server/discover", 1, "stateless", STATELESS),
        ("out", "server/discover", 1, "stateless", STATELESS),
        ("in", "tools/call", 2, "stateless", STATELESS),
        ("out", "tools/call", 2, "stateless", STATELESS),
    ]


@pytest.mark.anyio
async def test_the_official_client_speaks_2026_over_legacy_sse(server: Server) -> None:
    with anyio.fail_after(20):
        async with Client(sse_client(server.sse_url or ""), mode="auto", read_timeout_seconds=10) as client:
            assert client.protocol_version == STATELESS
            r = await client.call_tool("echo", {"message": "auto over sse"})
            assert r.content == [TextContent(type="text", text="Echo: auto over sse")]
    calls = [r for r in server.traffic if r.method == "tools/call"]
    assert [(r.transport, r.dir, r.era, r.revision) for r in calls] == [
        ("sse", "in", "stateless", STATELESS),
        ("sse", "out", "stateless", STATELESS),
    ]
    assert not [r for r in server.traffic if r.method == "initialize"]
