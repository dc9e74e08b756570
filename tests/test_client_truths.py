"""Six truths real clients and CLI agents found (issue 19), each pinned on the wire: real loopback
sockets (httpx, the official `mcp` client) to an in-process `Server` or a `python -m
everything_mcp http` subprocess, with exact statuses, bodies and traffic records."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from everything_mcp import Server

from conftest import WAIT, init_params

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
def server() -> Iterator[Server]:
    with Server() as srv:
        srv.start_http()
        yield srv


@pytest.fixture
def http(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url or "", timeout=WAIT) as client:
        yield client


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
