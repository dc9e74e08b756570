"""Limits by bytes and by count, with clear errors: each bound on what a client can make the server
hold refuses or drops with an error that names the option raising it, is counted
(`srv.limit_hits`, `GET /_control/limits`), and leaves the server serving. Real subprocesses and
loopback sockets; docs/reliability.md lists the limits and their defaults."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from everything_mcp import Server

from conftest import WAIT, StdioServer, envelope, init_params

TASKS = "io.modelcontextprotocol/tasks"
ACCEPT_BOTH = "application/json, text/event-stream"


def recv_until_id(server: StdioServer, ids: set[Any]) -> list[Any]:
    """Frames up to and including the first answer to one of `ids` (requests to the client and
    notifications before it included)."""
    frames = []
    while True:
        frame = server.recv()
        frames.append(frame)
        if frame.get("id") in ids and "method" not in frame:
            return frames


def test_requests_to_the_client_beyond_max_pending_requests_fail_naming_it() -> None:
    server = StdioServer("stdio", "--max-pending-requests", "1")
    try:
        params = init_params()
        params["capabilities"] = {"elicitation": {}}
        server.request(0, "initialize", params)
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        call = {"name": "trigger-elicitation-request", "arguments": {}}
        server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})
        server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
        # One call asks the client (which does not answer yet); the other cannot ask.
        frames = recv_until_id(server, {1, 2})
        asks = [f for f in frames if f.get("method") == "elicitation/create"]
        refused = frames[-1]
        assert len(asks) == 1
        assert refused["error"]["code"] == -32603
        assert "max_pending_requests" in refused["error"]["message"]
        assert refused["error"]["data"] == {"limit": "max_pending_requests", "value": 1}
        # Answered, the first call completes; the server serves on.
        server.send({"jsonrpc": "2.0", "id": asks[0]["id"], "result": {"action": "decline"}})
        done = recv_until_id(server, {1, 2})[-1]
        assert done["id"] != refused["id"] and "result" in done
        assert server.request(3, "ping") == {"jsonrpc": "2.0", "id": 3, "result": {}}
    finally:
        server.stop()


def stateless_call(server: StdioServer, id: int, method: str, params: dict[str, Any]) -> Any:
    caps = {"extensions": {TASKS: {}}}
    return server.request(id, method, {**params, "_meta": envelope(caps)})


def test_tasks_beyond_max_tasks_are_refused_naming_it() -> None:
    server = StdioServer("stdio", "--catalog", "conformance", "--max-tasks", "1")
    try:
        call = {"name": "slow_compute", "arguments": {"seconds": 60}}
        first = stateless_call(server, 1, "tools/call", call)
        assert first["result"]["resultType"] == "task"
        refused = stateless_call(server, 2, "tools/call", call)
        assert refused["error"]["code"] == -32603
        assert refused["error"]["data"] == {"limit": "max_tasks", "value": 1}
        # The server serves on.
        assert stateless_call(server, 3, "tools/list", {})["result"]["resultType"] == "complete"
    finally:
        server.stop()


def test_listen_streams_beyond_max_listen_streams_are_refused_naming_it() -> None:
    server = StdioServer("stdio", "--max-listen-streams", "1")
    try:
        listen = {"notifications": {"toolsListChanged": True}}
        ack = stateless_call(server, 1, "subscriptions/listen", listen)
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        refused = stateless_call(server, 2, "subscriptions/listen", listen)
        assert refused["id"] == 2
        assert refused["error"]["data"] == {"limit": "max_listen_streams", "value": 1}
    finally:
        server.stop()


def test_an_oversized_stdio_line_is_refused_and_counted() -> None:
    server = StdioServer("stdio", "--max-message-bytes", "1000")
    try:
        server.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "x": "y" * 5000}) + "\n")
        refused = server.recv()
        assert refused["id"] is None and refused["error"]["code"] == -32600
        assert "1000-byte limit" in refused["error"]["message"]
        assert server.request(2, "ping") == {"jsonrpc": "2.0", "id": 2, "result": {}}
    finally:
        server.stop()


@pytest.fixture
def tight() -> Iterator[Server]:
    """An HTTP server with small stream bounds."""
    srv = Server(catalogs=["everything"])
    srv.start_http(
        "127.0.0.1",
        0,
        max_streams_per_session=1,
        max_streams=2,
        stream_buffer_bytes=64 * 1024,
        event_store_capacity=4,
        event_store_bytes=4096,
    )
    yield srv
    srv.stop()


def open_session(client: httpx.Client, url: str) -> dict[str, str]:
    """A 2025-11-25 session; the headers its requests carry."""
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init_params()}
    r = client.post(url, json=init, headers={"Accept": ACCEPT_BOTH})
    assert r.status_code == 200
    headers = {
        "Accept": ACCEPT_BOTH,
        "Mcp-Session-Id": r.headers["mcp-session-id"],
        "MCP-Protocol-Version": "2025-11-25",
    }
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert client.post(url, json=note, headers=headers).status_code == 202
    return headers


def test_sse_streams_beyond_their_bounds_get_503_naming_the_option(tight: Server) -> None:
    url = tight.http_url
    # Its stream lives while it runs (a second), then it answers.
    slow = {"name": "trigger-long-running-operation", "arguments": {"duration": 1, "steps": 1}}
    with httpx.Client(timeout=WAIT) as client:
        one, two, three = (open_session(client, url) for _ in range(3))
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": slow}
        with client.stream("POST", url, json=call, headers=one) as running:
            assert running.status_code == 200
            # A second stream in the same session: over max_streams_per_session.
            second = client.post(url, json={**call, "id": 2}, headers=one)
            assert second.status_code == 503
            body = second.json()
            assert body["id"] == 2 and "max_streams_per_session" in body["error"]["message"]
            with client.stream("POST", url, json=call, headers=two) as other:
                assert other.status_code == 200
                # A third live stream in all: over max_streams.
                third = client.post(url, json={**call, "id": 3}, headers=three)
                assert third.status_code == 503
                assert "max_streams" in third.json()["error"]["message"]
                # The refusals disturbed nothing: both calls end with their answers.
                assert '"id":1,"result"' in other.read().decode()
            assert '"id":1,"result"' in running.read().decode()
        hits = tight.limit_hits
        assert hits["max_streams_per_session"] == 1 and hits["max_streams"] == 1
        limits = client.get(f"{tight.base_url}/_control/limits").json()
        assert limits["max_streams"] == {"value": 2, "hits": 1}
        assert limits["max_streams_per_session"] == {"value": 1, "hits": 1}


def test_a_reader_that_falls_behind_loses_its_stream_not_the_server_its_memory(tight: Server) -> None:
    url = tight.http_url
    with httpx.Client(timeout=WAIT) as client:
        headers = open_session(client, url)
        # A standalone GET stream whose client never reads: a raw socket, request sent.
        host, port = tight.base_url.removeprefix("http://").split(":")
        reader = socket.create_connection((host, int(port)))
        request = (
            f"GET /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n"
            f"Mcp-Session-Id: {headers['Mcp-Session-Id']}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n"
        )
        reader.sendall(request.encode())
        reader.recv(1)  # the response has started: the stream is live
        log = {"log": {"level": "error", "data": "x" * 256 * 1024}}
        # Far more than the socket buffers hold: the server's send buffer passes 64 KiB.
        for _ in range(200):
            if tight.limit_hits["stream_buffer_bytes"]:
                break
            assert client.post(f"{tight.base_url}/_control/notify", json=log).status_code == 200
        assert tight.limit_hits["stream_buffer_bytes"] == 1
        reader.close()
        # The server serves on, and the events the reader missed were let go by the store's
        # byte bound (4 KiB), counted.
        ping = client.post(url, json={"jsonrpc": "2.0", "id": 9, "method": "ping"}, headers=headers)
        assert ping.status_code == 200
        assert tight.limit_hits["event_store_bytes"] >= 1


def test_control_traffic_reads_are_bounded_and_resume_with_since() -> None:
    srv = Server(catalogs=["everything"])
    srv.start_http("127.0.0.1", 0, control_read_bytes=2000)
    try:
        with httpx.Client(timeout=WAIT) as client:
            for i in range(5):
                echo = {"name": "echo", "arguments": {"message": "m" * 500}}
                client.post(
                    srv.http_url,
                    json={"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {**echo, "_meta": envelope()}},
                    headers={"Accept": ACCEPT_BOTH, "MCP-Protocol-Version": "2026-07-28"},
                )
            total = len(srv.traffic)
            seen: list[int] = []
            since = 0
            while len(seen) < total:
                r = client.get(f"{srv.base_url}/_control/traffic", params={"since": since})
                lines = [json.loads(line) for line in r.text.splitlines()]
                assert lines and len(r.content) <= 2000 + 1500  # at most one record past the bound
                seen += [line["seq"] for line in lines]
                since = int(r.headers["everything-mcp-through"])
                assert since == seen[-1]
            assert seen == sorted(set(seen)) and len(seen) == total
    finally:
        srv.stop()
