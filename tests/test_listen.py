"""`subscriptions/listen` (2026-07-28): raw frames over stdio, in-memory connections and HTTP
(the acknowledgement first, every event tagged with the subscription id, exact filtering,
keep-alive comments, closing ends the stream), Python triggers reaching listeners, and the
official `mcp` client's `listen()` in `mode="auto"`."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.subscriptions import PromptsListChanged, ResourceUpdated, ToolsListChanged

from everything_mcp import Server

from conftest import STATELESS, WAIT, StdioServer, envelope

VERSION = STATELESS
ENV = envelope()
SUB = "io.modelcontextprotocol/subscriptionId"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def listen(id: int | str, **notifications: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id,
        "method": "subscriptions/listen",
        "params": {"notifications": notifications, "_meta": ENV},
    }


def call(id: int | str, tool: str) -> dict[str, Any]:
    params = {"name": tool, "arguments": {}, "_meta": ENV}
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}


def ack(id: int | str, honoured: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"_meta": {SUB: id}, "notifications": honoured},
    }


def event(id: int | str, method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": {"_meta": {SUB: id}, **params}}


def text_of(response: dict[str, Any]) -> str:
    text: str = response["result"]["content"][0]["text"]
    return text


def test_stdio_ack_first_then_exactly_the_filtered_events(stdio: StdioServer) -> None:
    stdio.send(listen("listen-1", toolsListChanged=True, promptsListChanged=False, resourceSubscriptions=[]))
    assert stdio.recv() == ack("listen-1", {"toolsListChanged": True})
    # A prompt change is outside the filter: only the trigger's result comes back.
    stdio.send(call(2, "test_trigger_prompt_change"))
    assert text_of(stdio.recv()) == "Prompt list change published."
    stdio.send(call(3, "test_trigger_tool_change"))
    assert stdio.recv() == event("listen-1", "notifications/tools/list_changed")
    answer = stdio.recv()
    assert answer["id"] == 3 and text_of(answer) == "Tool list change published."
    assert answer["result"]["resultType"] == "complete"


def test_stdio_cancelled_listen_sends_nothing_more(stdio: StdioServer) -> None:
    stdio.send(listen(7, toolsListChanged=True))
    assert stdio.recv() == ack(7, {"toolsListChanged": True})  # a number id stays a number
    stdio.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}})
    stdio.send(call(8, "test_trigger_tool_change"))
    answer = stdio.recv()  # no result, no error, no event for 7: the trigger's answer is next
    assert answer["id"] == 8 and text_of(answer) == "Tool list change published."
    # Both streams of one connection are independent; the ended one hears nothing.
    stdio.send(listen("b", promptsListChanged=True))
    assert stdio.recv() == ack("b", {"promptsListChanged": True})
    stdio.send(call(9, "test_trigger_prompt_change"))
    assert stdio.recv() == event("b", "notifications/prompts/list_changed")
    assert stdio.recv()["id"] == 9


def test_stdio_end_of_input_ends_the_stream_with_the_listen_result(stdio: StdioServer) -> None:
    stdio.send(listen("listen-1", toolsListChanged=True))
    assert stdio.recv()["method"] == "notifications/subscriptions/acknowledged"
    stdio.close_stdin()
    result = stdio.recv()
    assert result["id"] == "listen-1"
    assert result["result"]["resultType"] == "complete"
    assert result["result"]["_meta"][SUB] == "listen-1"
    assert result["result"]["_meta"][SERVER_INFO]["name"] == "everything-mcp"
    assert set(result["result"]) == {"_meta", "resultType"}


def test_a_malformed_filter_is_invalid_params(stdio: StdioServer) -> None:
    stdio.send(listen(1, toolsListChanged="yes"))
    answer = stdio.recv()
    assert answer["id"] == 1 and answer["error"]["code"] == -32602
    assert "toolsListChanged" in answer["error"]["message"]


HANDSHAKE_INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
LISTEN_1 = {"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {"notifications": {}}}


def test_listen_is_unknown_in_the_handshake_era_in_process() -> None:
    with Server() as srv:
        conn = srv.connect()
        conn.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": HANDSHAKE_INIT}))
        assert json.loads(conn.recv(WAIT) or "")["id"] == 0
        conn.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        conn.send(json.dumps(LISTEN_1))
        # The catalog announces simulate-research-query after `initialized`, as the reference.
        assert json.loads(conn.recv(WAIT) or "")["method"] == "notifications/tools/list_changed"
        assert json.loads(conn.recv(WAIT) or "")["error"]["code"] == -32601


def test_listen_is_unknown_in_the_handshake_era_over_stdio(stdio: StdioServer) -> None:
    stdio.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": HANDSHAKE_INIT})
    assert stdio.recv()["id"] == 0
    stdio.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    stdio.send(LISTEN_1)
    answer = stdio.recv()
    assert (answer["id"], answer["error"]["code"]) == (1, -32601)


def test_listen_is_unknown_in_a_handshake_http_session() -> None:
    with Server() as srv:
        srv.start_http()
        both = {"accept": BOTH, "content-type": "application/json"}
        with httpx.Client(base_url=srv.base_url or "", timeout=WAIT) as http:
            init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": HANDSHAKE_INIT}
            r = http.post("/mcp", json=init, headers=both)
            session = {**both, "mcp-session-id": r.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
            http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
            r = http.post("/mcp", json=LISTEN_1, headers=session)
            frames = [
                json.loads(line[5:]) for line in r.text.splitlines() if line.startswith("data:") and line[5:].strip()
            ]
            assert [(f["id"], f["error"]["code"]) for f in frames] == [(1, -32601)]


def test_python_triggers_reach_listeners_as_they_reach_sessions() -> None:
    with Server(catalogs=["conformance"]) as srv:
        conn = srv.connect()

        def recv() -> Any:
            return json.loads(conn.recv(WAIT) or "null")

        conn.send(json.dumps(listen("l", toolsListChanged=True, resourceSubscriptions=["test://static-text"])))
        assert recv() == ack("l", {"toolsListChanged": True, "resourceSubscriptions": ["test://static-text"]})
        assert srv.listener_count == 1
        # Outside the filter: nothing (a resource not subscribed, other lists, logs, notify).
        assert srv.notify_resource_updated("test://other") == 0
        srv.notify_list_changed("prompts")
        srv.notify_list_changed("resources")
        assert srv.log("error", "not for listeners") == 0
        assert srv.notify("notifications/custom", {"x": 1}) == 0
        assert srv.notify_resource_updated("test://static-text") == 1
        assert recv() == event("l", "notifications/resources/updated", uri="test://static-text")

        @srv.tool()
        def added() -> str:
            return "added"

        assert recv() == event("l", "notifications/tools/list_changed")
        srv.notify_list_changed("tools")
        assert recv() == event("l", "notifications/tools/list_changed")
        assert srv.remove("added")
        assert recv() == event("l", "notifications/tools/list_changed")
        assert conn.recv(0.2) is None  # nothing else was sent
        conn.close()


@pytest.fixture
def http_server() -> Iterator[Server]:
    with Server(catalogs=["conformance"]) as srv:
        srv.start_http(keepalive=0.2)
        yield srv


BOTH = "application/json, text/event-stream"


def headers(method: str, name: str | None = None, accept: str = BOTH) -> dict[str, str]:
    h = {
        "accept": accept,
        "content-type": "application/json",
        "mcp-protocol-version": VERSION,
        "mcp-method": method,
    }
    if name is not None:
        h["mcp-name"] = name
    return h


def sse_events(lines: Iterator[str]) -> Iterator[tuple[str, Any]]:
    """`("comment", text)` or `("message", json)` per SSE block."""
    block: list[str] = []
    for line in lines:
        if line:
            block.append(line)
            continue
        if not block:
            continue
        if all(b.startswith(":") for b in block):
            yield "comment", "\n".join(block)
        else:
            fields = dict(b.split(": ", 1) for b in block)
            assert fields["event"] == "message" and "id" not in fields
            yield "message", json.loads(fields["data"])
        block = []


def test_http_listen_streams_ack_events_keepalive_and_ends_when_closed(http_server: Server) -> None:
    with httpx.Client(base_url=http_server.base_url or "", timeout=WAIT) as http:
        body = json.dumps(listen("listen-1", promptsListChanged=True))
        with http.stream("POST", "/mcp", content=body, headers=headers("subscriptions/listen")) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"] == "text/event-stream"
            events = sse_events(stream.iter_lines())
            assert next(events) == ("message", ack("listen-1", {"promptsListChanged": True}))
            assert next(events) == ("comment", ": keepalive")  # 0.2 s of silence
            for tool in ("test_trigger_tool_change", "test_trigger_prompt_change"):
                r = http.post("/mcp", content=json.dumps(call(1, tool)), headers=headers("tools/call", tool))
                assert r.status_code == 200 and r.headers["content-type"] == "application/json"
            _, frame = next(e for e in events if e[0] == "message")
            assert frame == event("listen-1", "notifications/prompts/list_changed")  # not the tools one
            assert http_server.listener_count == 1
        with anyio.from_thread.start_blocking_portal() as portal:
            portal.call(wait_until, lambda: http_server.listener_count == 0)
    sent = [r.msg for r in http_server.traffic if r.dir == "out" and r.kind == "notification"]
    assert [m["method"] for m in sent] == [
        "notifications/subscriptions/acknowledged",
        "notifications/prompts/list_changed",
    ]


def test_http_listen_without_event_stream_in_accept_is_406(http_server: Server) -> None:
    with httpx.Client(base_url=http_server.base_url or "", timeout=WAIT) as http:
        body = json.dumps(listen(1, toolsListChanged=True))
        r = http.post("/mcp", content=body, headers=headers("subscriptions/listen", accept="application/json"))
        assert r.status_code == 406
    assert http_server.listener_count == 0


async def wait_until(condition: Any) -> None:
    with anyio.fail_after(WAIT):
        while not condition():
            await anyio.sleep(0.01)


STDIO = StdioServerParameters(
    command=sys.executable, args=["-m", "everything_mcp", "stdio", "--catalog", "conformance"]
)


@pytest.mark.anyio
async def test_official_client_listens_over_stdio() -> None:
    with anyio.fail_after(20):
        async with Client(STDIO, read_timeout_seconds=10) as client:
            assert client.protocol_version == VERSION
            async with client.listen(tools_list_changed=True) as sub:
                assert sub.honored.tools_list_changed is True
                assert sub.honored.prompts_list_changed is None
                await client.call_tool("test_trigger_prompt_change", {})
                await client.call_tool("test_trigger_tool_change", {})
                assert await anext(sub) == ToolsListChanged()


@pytest.mark.anyio
async def test_official_client_listens_over_http(http_server: Server) -> None:
    with anyio.fail_after(20):
        async with Client(http_server.http_url or "", read_timeout_seconds=10) as client:
            assert client.protocol_version == VERSION
            listening = client.listen(
                tools_list_changed=True, prompts_list_changed=True, resource_subscriptions=["test://static-text"]
            )
            async with listening as sub:
                assert sub.honored.resource_subscriptions == ["test://static-text"]
                assert await anyio.to_thread.run_sync(http_server.notify_resource_updated, "test://static-text") == 1
                assert await anext(sub) == ResourceUpdated(uri="test://static-text")
                await client.call_tool("test_trigger_prompt_change", {})
                assert await anext(sub) == PromptsListChanged()
                http_server.notify_list_changed("tools")
                assert await anext(sub) == ToolsListChanged()
            await wait_until(lambda: http_server.listener_count == 0)


def test_http_server_stop_ends_a_listen_with_its_result() -> None:
    import threading

    srv = Server(catalogs=["conformance"])
    try:
        srv.start_http()
        with httpx.Client(base_url=srv.base_url or "", timeout=WAIT) as http:
            body = json.dumps(listen(4, toolsListChanged=True))
            with http.stream("POST", "/mcp", content=body, headers=headers("subscriptions/listen")) as stream:
                events = sse_events(stream.iter_lines())
                assert next(events) == ("message", ack(4, {"toolsListChanged": True}))
                stopping = threading.Thread(target=srv.stop)
                stopping.start()
                rest = list(events)  # the stream ends after the result
                stopping.join(WAIT)
        assert len(rest) == 1
        _, result = rest[0]
        assert result["id"] == 4
        assert result["result"]["resultType"] == "complete"
        assert result["result"]["_meta"][SUB] == 4
        assert SERVER_INFO in result["result"]["_meta"]
    finally:
        srv.stop()


@pytest.mark.anyio
async def test_official_client_sees_a_graceful_end_when_the_server_stops() -> None:
    srv = Server(catalogs=["conformance"])
    try:
        srv.start_http()
        with anyio.fail_after(20):
            async with Client(srv.http_url or "", read_timeout_seconds=10) as client:
                async with client.listen(tools_list_changed=True) as sub:
                    await anyio.to_thread.run_sync(srv.stop)
                    assert [e async for e in sub] == []  # ended, not SubscriptionLost
    finally:
        srv.stop()
