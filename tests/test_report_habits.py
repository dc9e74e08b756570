"""The report's checks of what a client did after an injected fault, its Streamable HTTP
habits (the 409 loop, a GET before initialize), the server's latency per method, and the
2026-07-28 ladder through a listen stream (docs/report.md, "Checks"): the official `mcp` client
in both eras and raw clients, each asserted to the status, the detail and the records shown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, MCPError, StdioServerParameters

from everything_mcp import Server
from everything_mcp.report import Check, of_files

from conftest import WAIT, counter_resource, envelope
from report_support import POST, SSE, Raw, seqs_of, status

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]


# faults.reaction


async def test_the_reaction_to_every_fault_rule() -> None:
    """The official client retries a call answered with an error, cancels a call the server
    never answers (its timeout) and goes on after a 503."""
    with Server(catalogs=["everything"]) as srv:
        boom = {"error": {"code": -32000, "message": "boom"}}
        srv.faults.add(id="boom", match={"method": "tools/call", "name": "echo", "nth": 1}, action=boom)
        srv.faults.add(id="lost", match={"method": "tools/call", "name": "get-sum"}, action={"drop": True})
        srv.faults.add(id="busy", match={"method": "resources/list"}, action={"http_status": 503})
        with anyio.fail_after(WAIT):
            async with Client(srv.start_http(), mode="legacy") as client:
                with pytest.raises(MCPError, match="boom"):
                    await client.call_tool("echo", {"message": "one"})
                await client.call_tool("echo", {"message": "two"})
                with pytest.raises(MCPError):
                    await client.call_tool("get-sum", {"a": 1, "b": 2}, read_timeout_seconds=0.2)
                with pytest.raises(MCPError):
                    await client.list_resources()
                await client.list_prompts()
        mine = srv.report().client("mcp")
        assert status(mine, "faults.reaction") == (
            "pass",
            "boom error: retried; lost drop: cancelled; busy http_status: went on",
        )
        echo_again = [r.seq for r in srv.traffic.requests("tools/call") if r.params["name"] == "echo"][1]
        (cancel,) = seqs_of(srv, dir="in", method="notifications/cancelled")
        (prompts,) = seqs_of(srv, dir="in", kind="request", method="prompts/list")
        assert mine.check("faults.reaction").seqs == (echo_again, cancel, prompts)


async def test_a_client_that_stops_after_a_fault_fails() -> None:
    """The official client's call fails with a scripted error, and the client ends its
    session: nothing more was asked (its DELETE is no request)."""
    with Server(catalogs=["everything"]) as srv:
        srv.faults.add(id="boom", match={"method": "tools/call"}, action={"error": {"code": -32000, "message": "boom"}})
        with anyio.fail_after(WAIT):
            async with Client(srv.start_http(), mode="legacy") as client:
                with pytest.raises(MCPError, match="boom"):
                    await client.call_tool("echo", {"message": "one"})
        mine = srv.report().client("mcp")
        assert status(mine, "faults.reaction") == ("fail", "boom error: stopped")
        (call,) = seqs_of(srv, dir="in", kind="request", method="tools/call")
        assert mine.check("faults.reaction").seqs == (call,)
        assert status(mine, "faults.retry_503") == ("not exercised", "")


def test_without_faults_the_reaction_is_not_exercised() -> None:
    with Server(catalogs=["none"]) as srv:
        raw = Raw(srv)
        raw.handshake()
        raw.request(1, "ping")
        assert status(srv.report().client("raw"), "faults.reaction") == ("not exercised", "")


# http.standalone_get_conflict, http.get_before_initialize


def _initialize(http: httpx.Client, url: str, name: str) -> dict[str, str]:
    """The handshake over Streamable HTTP; the headers of the session's later requests."""
    info = {"name": name, "version": "1"}
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": info}
    answer = http.post(url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}, headers=POST)
    assert answer.status_code == 200
    session = {"mcp-session-id": answer.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert http.post(url, json=note, headers=POST | session).status_code == 202
    return session


def test_a_get_before_initialize_and_a_second_get_again_and_again() -> None:
    """A raw HTTP client opens GET /mcp before it has a session (400), then initializes, opens
    the standalone stream, and opens it twice more while it is open (409, 409): the TypeScript
    SDK's habit that disconnects Gemini CLI. The sessionless GET is the client's: the next
    initialize of the recording is its."""
    with Server(catalogs=["none"]) as srv:
        url = srv.start_http()
        with httpx.Client(timeout=WAIT) as http:
            assert http.get(url, headers=SSE).status_code == 400
            session = _initialize(http, url, "gemini-ish")
            with http.stream("GET", url, headers=SSE | session) as stream:
                assert stream.status_code == 200
                assert [http.get(url, headers=SSE | session).status_code for _ in range(2)] == [409, 409]
        gets = [r for r in srv.traffic if r.kind == "http" and r.http["method"] == "GET"]
        assert [(r.conn, r.http["status"]) for r in gets] == [
            ("-", 400),
            (session["mcp-session-id"], 200),
            (session["mcp-session-id"], 409),
            (session["mcp-session-id"], 409),
        ]
        report = srv.report()
        assert [c.name for c in report.clients] == ["gemini-ish"]  # nothing left under conn "-"
        mine = report.client()
        assert status(mine, "http.standalone_get_conflict") == ("fail", "409 \N{MULTIPLICATION SIGN}2")
        assert mine.check("http.standalone_get_conflict").seqs == (gets[2].seq, gets[3].seq)
        assert status(mine, "http.get_before_initialize") == ("fail", "GET without a session \N{MULTIPLICATION SIGN}1")
        assert mine.check("http.get_before_initialize").seqs == (gets[0].seq,)


def test_one_409_is_tolerated() -> None:
    with Server(catalogs=["none"]) as srv:
        url = srv.start_http()
        with httpx.Client(timeout=WAIT) as http:
            session = _initialize(http, url, "once")
            with http.stream("GET", url, headers=SSE | session):
                assert http.get(url, headers=SSE | session).status_code == 409
        gets = [r.seq for r in srv.traffic if r.kind == "http" and r.http["method"] == "GET"]
        mine = srv.report().client("once")
        assert status(mine, "http.standalone_get_conflict") == ("pass", "409 \N{MULTIPLICATION SIGN}1")
        assert mine.check("http.standalone_get_conflict").seqs == tuple(gets)
        assert status(mine, "http.get_before_initialize") == ("pass", "GET with its session \N{MULTIPLICATION SIGN}2")


async def test_the_official_client_opens_one_stream_with_its_session() -> None:
    with Server(catalogs=["none"]) as srv:
        with anyio.fail_after(WAIT):
            async with Client(srv.start_http(), mode="legacy") as client:
                await client.send_ping()
        mine = srv.report().client("mcp")
        (get,) = [r.seq for r in srv.traffic if r.kind == "http" and r.http["method"] == "GET"]
        assert status(mine, "http.standalone_get_conflict") == ("pass", "409 \N{MULTIPLICATION SIGN}0")
        assert status(mine, "http.get_before_initialize") == ("pass", "GET with its session \N{MULTIPLICATION SIGN}1")
        assert mine.check("http.get_before_initialize").seqs == (get,)
    # Over stdio, and in 2026-07-28 over HTTP (no session, no standalone stream), no GET.
    with Server(catalogs=["none"]) as srv:
        with anyio.fail_after(WAIT):
            async with Client(StdioServerParameters(**srv.stdio_params), mode="legacy") as client:
                await client.send_ping()
            async with Client(srv.start_http()) as client:
                await client.list_tools()
        for mine in srv.report().clients:
            assert status(mine, "http.standalone_get_conflict") == ("not exercised", "")
            assert status(mine, "http.get_before_initialize") == ("not exercised", "")
        assert sorted((c.era, c.transport) for c in srv.report().clients) == [
            ("handshake", "stdio"),
            ("stateless", "http"),
        ]


def test_a_sessionless_get_no_initialize_follows_stays_unattributed() -> None:
    """With no initialize after it, the GET names no client: it is reported under the client
    `?` of `conn: "-"`, which fails the check."""
    with Server(catalogs=["none"]) as srv:
        url = srv.start_http()
        with httpx.Client(timeout=WAIT) as http:
            session = _initialize(http, url, "early")
            assert http.get(url, headers=SSE).status_code == 400
        early, nobody = srv.report().clients
        assert (early.name, nobody.name) == ("early", "?")
        assert status(early, "http.get_before_initialize") == ("not exercised", "")
        once = "GET without a session \N{MULTIPLICATION SIGN}1"
        assert status(nobody, "http.get_before_initialize") == ("fail", once)
        assert session


def test_a_get_refused_for_the_2026_revision_is_not_a_handshake_habit() -> None:
    """A GET naming 2026-07-28 is refused 405 outside any session; it is neither given to the
    client that initializes next nor counted as a GET before initialize."""
    with Server(catalogs=["none"]) as srv:
        url = srv.start_http()
        with httpx.Client(timeout=WAIT) as http:
            assert http.get(url, headers=SSE | {"MCP-Protocol-Version": "2026-07-28"}).status_code == 405
            _initialize(http, url, "later")
        later = srv.report().client("later")
        assert status(later, "http.get_before_initialize") == ("not exercised", "")
        assert status(srv.report().client("?"), "http.get_before_initialize") == ("not exercised", "")


def test_several_record_files_attribute_their_own_sessionless_gets(tmp_path: Path) -> None:
    """Read together, each file's connections are `FILE:conn`, its sessionless GETs `FILE:-`:
    each goes to the next initialize of its own file."""
    files = []
    for name, early in [("early", True), ("proper", False)]:
        path = tmp_path / f"{name}.jsonl"
        with Server(catalogs=["none"], record=str(path)) as srv:
            url = srv.start_http()
            with httpx.Client(timeout=WAIT) as http:
                if early:
                    assert http.get(url, headers=SSE).status_code == 400
                session = _initialize(http, url, name)
                with http.stream("GET", url, headers=SSE | session) as stream:
                    assert stream.status_code == 200
        files.append(str(path))
    report = of_files(files)
    assert [c.name for c in report.clients] == ["early", "proper"]
    assert status(report.client("early"), "http.get_before_initialize") == (
        "fail",
        "GET without a session \N{MULTIPLICATION SIGN}1",
    )
    assert status(report.client("proper"), "http.get_before_initialize") == (
        "pass",
        "GET with its session \N{MULTIPLICATION SIGN}1",
    )
    data = report.to_json()
    assert {"detail", "seqs"} <= set(data["clients"][0]["checks"][0])
    assert set(data["clients"][0]["latency"]) == {"initialize"}


# latency


def test_latency_per_method() -> None:
    with Server(catalogs=["everything"]) as srv:
        raw = Raw(srv)
        raw.handshake()
        raw.recv()  # the tools/list_changed the catalog announces
        for id in (1, 2, 3):
            raw.request(id, "tools/call", {"name": "echo", "arguments": {"message": str(id)}})
        raw.request(4, "nope/nope")
        mine = srv.report().client("raw")
        calls = sorted(r.latency_ms for r in srv.traffic if r.dir == "out" and r.method == "tools/call")
        assert len(calls) == 3
        assert list(mine.latency) == ["initialize", "nope/nope", "tools/call"]
        assert mine.latency["tools/call"] == {
            "count": 3,
            "p50_ms": round(calls[1], 3),
            "max_ms": round(calls[2], 3),
        }
        assert mine.latency["nope/nope"]["count"] == 1  # an error is an answer too
        table = srv.report().table()
        p50, top = mine.latency["tools/call"]["p50_ms"], mine.latency["tools/call"]["max_ms"]
        assert f"\n  latency  {'tools/call':<30} n=3      p50 {p50} ms  max {top} ms\n" in table
        data = mine.to_json()
        assert data["latency"] == mine.latency
        assert json.loads(srv.report().dumps())["clients"][0]["latency"] == mine.latency


# detail in --json and in the table


def test_every_check_has_a_detail_in_json() -> None:
    check = Check("asks.elicitation", "answers", "pass", (3, 4), "accept 2, decline 1")
    assert check.to_json() == {
        "id": "asks.elicitation",
        "description": "answers",
        "status": "pass",
        "seqs": [3, 4],
        "detail": "accept 2, decline 1",
    }
    assert Check("cancel.sent", "cancels", "not exercised").to_json()["detail"] == ""
    with Server(catalogs=["none"]) as srv:
        raw = Raw(srv)
        raw.handshake()
        raw.request(1, "nope/nope")
        (client,) = json.loads(srv.report().dumps())["clients"]
        assert all(set(c) == {"id", "description", "status", "seqs", "detail"} for c in client["checks"])
        unknown = next(c for c in client["checks"] if c["id"] == "errors.unknown_method")
        assert (unknown["status"], unknown["detail"]) == ("fail", "-32601 for nope/nope")
        assert "  FAIL errors.unknown_method" in srv.report().table()
        assert " (no -32601; a server/discover probe aside): -32601 for nope/nope\n" in srv.report().table()


def test_a_stateless_client_subscribes_with_a_listen_stream() -> None:
    """2026-07-28 has no resources/subscribe: a listen stream whose
    `notifications.resourceSubscriptions` names the resource is level 4, and the ladder goes on
    to 7 with the update it receives and its re-read."""
    with Server(catalogs=["none"]) as srv:
        state = counter_resource(srv)

        conn = srv.connect()
        meta = {"_meta": envelope()}

        def call(id: int, method: str, **params: Any) -> Any:
            conn.send(json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": {**params, **meta}}))
            return json.loads(conn.recv(WAIT) or "null")

        call(1, "resources/list")
        call(2, "resources/read", uri="demo://counter")
        listen = {"notifications": {"resourceSubscriptions": ["demo://counter"]}, **meta}
        conn.send(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "subscriptions/listen", "params": listen}))
        assert json.loads(conn.recv(WAIT) or "null")["method"] == "notifications/subscriptions/acknowledged"
        state["v"] = 2
        assert srv.notify_resource_updated("demo://counter") == 1
        assert json.loads(conn.recv(WAIT) or "null")["method"] == "notifications/resources/updated"
        assert call(4, "resources/read", uri="demo://counter")["result"]["contents"][0]["text"] == "v2"
        mine = srv.report().client()
        assert (mine.era, mine.level()) == ("stateless", 7)
        assert mine.check("subscription.subscribed").seqs == (seqs_of(srv, method="subscriptions/listen")[0],)
        conn.close()
