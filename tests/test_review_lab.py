"""The `review-lab` catalog end to end: `test://review/status` is version 1 until a session
subscribes, then (after the update delay) version 2 for that session, announced with
`notifications/resources/updated` (and `resources/list_changed` when asked). Driven in-process,
with the official `mcp` client over stdio, and as a CLI subprocess whose stderr is read."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import ResourceListChangedNotification, ResourceUpdatedNotification, TextContent

from everything_mcp import Server

from conftest import WAIT, StdioServer, envelope, init_params

URI = "test://review/status"
PENDING = "status: pending\nversion: 1\nmessage: Waiting for simulated review result."
REVIEWED = "status: reviewed\nversion: 2\nmessage: Simulated review result is now available."
UPDATED = "notifications/resources/updated"
LIST_CHANGED = "notifications/resources/list_changed"
QUIET = 0.3
"""How long to listen when checking that nothing arrives (several times the update delay)."""


class Session:
    """An in-process connection: requests return their response, notifications are kept."""

    def __init__(self, server: Server) -> None:
        self.conn = server.connect()
        self.notes: list[dict[str, Any]] = []
        self._next_id = 0
        self.request("initialize", init_params())
        self.conn.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def _recv(self, timeout: float) -> dict[str, Any] | None:
        frame = self.conn.recv(timeout=timeout)
        return None if frame is None else json.loads(frame)

    def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        self._next_id += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.conn.send(json.dumps(msg))
        while True:
            reply = self._recv(WAIT)
            assert reply is not None, f"no response to {method}"
            if "method" in reply:
                self.notes.append(reply)
                continue
            assert reply["id"] == self._next_id
            assert "error" not in reply, reply
            return reply["result"]

    def notification(self, timeout: float = WAIT) -> dict[str, Any]:
        """The next notification (one that arrived during a request first)."""
        if self.notes:
            return self.notes.pop(0)
        note = self._recv(timeout)
        assert note is not None, "no notification arrived"
        assert "method" in note and "id" not in note, note
        return note

    def assert_quiet(self, timeout: float = QUIET) -> None:
        assert self.notes == []
        assert self._recv(timeout) is None

    def read(self) -> str:
        (contents,) = self.request("resources/read", {"uri": URI})["contents"]
        assert contents["uri"] == URI and contents["mimeType"] == "text/plain"
        return str(contents["text"])

    def tool(self) -> str:
        result = self.request("tools/call", {"name": "get_review_status", "arguments": {}})
        assert result.get("isError") is not True
        (block,) = result["content"]
        assert block["type"] == "text"
        return str(block["text"])


def exit_lines(server: StdioServer) -> list[str]:
    """Waits for the CLI to exit cleanly (its stdin closed) and returns what it wrote to stderr."""
    assert server.proc.wait(timeout=WAIT) == 0
    assert server.proc.stderr is not None
    return server.proc.stderr.read().decode().splitlines()


def assert_steps(lines: list[str], expected: list[str]) -> None:
    """The trace's step lines (``[...] ...`` on stderr) are ``expected``, each by its prefix."""
    steps = [line for line in lines if line.startswith("[")]
    assert len(steps) == len(expected), steps
    for line, prefix in zip(steps, expected, strict=True):
        assert line.startswith(prefix), (line, prefix)


def test_listing_shows_the_resource_and_the_tool() -> None:
    with Server(catalogs=["review-lab"], update_delay=0.05) as server:
        s = Session(server)
        (resource,) = s.request("resources/list")["resources"]
        assert resource["uri"] == URI
        assert resource["name"] == "review-status"
        assert resource["mimeType"] == "text/plain"
        assert resource["description"]
        (tool,) = s.request("tools/list")["tools"]
        assert tool["name"] == "get_review_status"
        assert tool["description"]
        assert tool["inputSchema"] == {"type": "object", "properties": {}}


def test_subscribe_then_update_then_version_2() -> None:
    with Server(catalogs=["review-lab"], update_delay=0.05) as server:
        s = Session(server)
        assert s.read() == PENDING
        assert s.tool() == PENDING
        assert s.request("resources/subscribe", {"uri": URI}) == {}
        assert s.notification() == {"jsonrpc": "2.0", "method": UPDATED, "params": {"uri": URI}}
        assert s.read() == REVIEWED
        assert s.tool() == REVIEWED
        # list_changed is off by default, and the update happens once.
        s.assert_quiet()
        assert s.request("resources/subscribe", {"uri": URI}) == {}
        s.assert_quiet()
        assert s.read() == REVIEWED


def test_unsubscribe_before_the_delay_cancels_the_update() -> None:
    delay = 0.5  # long enough that unsubscribe always comes first
    with Server(catalogs=["review-lab"], update_delay=delay) as server:
        s = Session(server)
        assert s.request("resources/subscribe", {"uri": URI}) == {}
        assert s.request("resources/unsubscribe", {"uri": URI}) == {}
        s.assert_quiet(delay * 2)
        assert s.read() == PENDING
        assert s.tool() == PENDING
        # Subscribing again schedules a fresh update.
        assert s.request("resources/subscribe", {"uri": URI}) == {}
        assert s.notification()["method"] == UPDATED
        assert s.read() == REVIEWED


def test_sessions_are_independent() -> None:
    with Server(catalogs=["review-lab"], update_delay=0.05) as server:
        a, b = Session(server), Session(server)
        assert a.read() == PENDING and b.read() == PENDING
        a.request("resources/subscribe", {"uri": URI})
        assert a.notification()["method"] == UPDATED
        assert a.read() == REVIEWED
        b.assert_quiet()
        assert b.read() == PENDING
        assert b.tool() == PENDING
        b.request("resources/subscribe", {"uri": URI})
        assert b.notification()["method"] == UPDATED
        assert b.read() == REVIEWED
        a.assert_quiet()


def test_send_list_changed_adds_a_list_changed_to_that_session_only() -> None:
    with Server(catalogs=["review-lab"], update_delay=0.05, send_list_changed=True) as server:
        a, b = Session(server), Session(server)
        a.request("resources/subscribe", {"uri": URI})
        assert a.notification()["method"] == UPDATED
        assert a.notification() == {"jsonrpc": "2.0", "method": LIST_CHANGED}
        b.assert_quiet()


def test_closing_a_session_with_a_pending_update_frees_it() -> None:
    with Server(catalogs=["review-lab"], update_delay=30) as server:
        s = Session(server)
        s.request("resources/subscribe", {"uri": URI})
        assert server.session_count == 1
        s.conn.close()
        deadline = time.monotonic() + WAIT
        while server.session_count:  # nothing to await: poll the count
            assert time.monotonic() < deadline, "the session outlived its connection"
            time.sleep(0.01)


# --- the official client over stdio ----------------------------------------------------------


def lab_params(*extra: str) -> StdioServerParameters:
    args = ["-m", "everything_mcp", "stdio", "--catalog", "review-lab", "--update-delay", "0.05", *extra]
    return StdioServerParameters(command=sys.executable, args=args)


def text_of(result: Any) -> str:
    (block,) = result.contents if hasattr(result, "contents") else result.content
    return str(block.text)


@pytest.mark.anyio
@pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")
@pytest.mark.parametrize("list_changed", [False, True])
async def test_official_client_over_stdio(list_changed: bool) -> None:
    received: list[str] = []
    updated = anyio.Event()
    listed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            assert str(message.params.uri) == URI
            received.append(UPDATED)
            updated.set()
        elif isinstance(message, ResourceListChangedNotification):
            received.append(LIST_CHANGED)
            listed.set()

    params = lab_params(*(["--send-list-changed"] if list_changed else []))
    with anyio.fail_after(30):
        async with Client(params, mode="legacy", read_timeout_seconds=10, message_handler=on_message) as client:
            resources = (await client.list_resources()).resources
            assert [(str(r.uri), r.name, r.mime_type) for r in resources] == [(URI, "review-status", "text/plain")]
            assert text_of(await client.read_resource(URI)) == PENDING
            r = await client.call_tool("get_review_status", {})
            assert r.content == [TextContent(type="text", text=PENDING)]
            await client.subscribe_resource(URI)
            await updated.wait()
            if list_changed:
                await listed.wait()
            assert text_of(await client.read_resource(URI)) == REVIEWED
            r = await client.call_tool("get_review_status", {})
            assert r.content == [TextContent(type="text", text=REVIEWED)]
            # Both notifications are sent together; a ping round trip flushes anything pending.
            await client.send_ping()
    assert received == ([UPDATED, LIST_CHANGED] if list_changed else [UPDATED])


# --- the CLI's stderr ------------------------------------------------------------------------


def test_cli_writes_a_line_per_step_to_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    # The env vars are the defaults of --update-delay / --send-list-changed.
    monkeypatch.setenv("MCP_TEST_UPDATE_DELAY_SECONDS", "0.05")
    monkeypatch.setenv("MCP_TEST_SEND_LIST_CHANGED", "true")
    server = StdioServer("stdio", "--catalog", "review-lab")
    try:
        server.initialize()
        read = {"uri": URI}
        assert server.request(1, "resources/read", read)["result"]["contents"][0]["text"] == PENDING
        assert server.request(2, "resources/subscribe", read) == {"jsonrpc": "2.0", "id": 2, "result": {}}
        assert server.recv()["method"] == UPDATED
        assert server.recv()["method"] == LIST_CHANGED
        assert server.request(3, "resources/read", read)["result"]["contents"][0]["text"] == REVIEWED
        server.close_stdin()
        lines = exit_lines(server)
    finally:
        server.stop()
    assert_steps(
        lines,
        [
            "[initialize] client connected",
            f"[resources/read] uri={URI} version=1",
            f"[resources/subscribe] uri={URI}",
            f"[resource/update] scheduled uri={URI} version=2",
            f"[resource/update] uri={URI} version=2",
            f"[notification/send] {UPDATED} uri={URI}",
            f"[notification/send] {LIST_CHANGED}",
            f"[resources/read] uri={URI} version=2",
        ],
    )


# --- the stateless era: subscriptions/listen is the subscription -----------------------------

ENV = envelope(client="lab-a")
SUB = "io.modelcontextprotocol/subscriptionId"


def stateless(id: int | str, method: str, params: dict[str, Any], client: str = "lab-a") -> dict[str, Any]:
    meta = {**ENV, "io.modelcontextprotocol/clientInfo": {"name": client, "version": "1"}}
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": {**params, "_meta": meta}}


def test_cli_listen_flow_over_stdio_writes_the_same_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_TEST_UPDATE_DELAY_SECONDS", "0.05")
    monkeypatch.setenv("MCP_TEST_SEND_LIST_CHANGED", "true")
    server = StdioServer("stdio", "--catalog", "review-lab")
    try:
        read = {"uri": URI}
        assert (
            server.request(1, "resources/read", stateless(1, "", read)["params"])["result"]["contents"][0]["text"]
            == PENDING
        )
        # Only what the filter names: the list change is not asked for here.
        server.send(stateless("listen-1", "subscriptions/listen", {"notifications": {"resourceSubscriptions": [URI]}}))
        ack = server.recv()
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"] == {"_meta": {SUB: "listen-1"}, "notifications": {"resourceSubscriptions": [URI]}}
        assert server.recv() == {
            "jsonrpc": "2.0",
            "method": UPDATED,
            "params": {"_meta": {SUB: "listen-1"}, "uri": URI},
        }
        # Every request of the connection is the same client: it sees version 2 now.
        answer = server.request(2, "resources/read", stateless(2, "", read)["params"])
        assert answer["result"]["contents"][0]["text"] == REVIEWED
        tool = server.request(
            3, "tools/call", stateless(3, "", {"name": "get_review_status", "arguments": {}})["params"]
        )
        assert tool["result"]["content"][0]["text"] == REVIEWED
        server.close_stdin()
        assert server.recv()["id"] == "listen-1"  # the stream ends gracefully with the input
        lines = exit_lines(server)
    finally:
        server.stop()
    assert_steps(
        lines,
        [
            f"[resources/read] uri={URI} version=1",
            f"[resources/subscribe] uri={URI}",
            f"[resource/update] scheduled uri={URI} version=2",
            f"[resource/update] uri={URI} version=2",
            f"[notification/send] {UPDATED} uri={URI}",
            f"[resources/read] uri={URI} version=2",
            "[tools/call] name=get_review_status version=2",
        ],
    )


def test_closing_the_listen_stream_before_the_delay_cancels_the_update() -> None:
    with Server(catalogs=["review-lab"], update_delay=0.5) as server:
        conn = server.connect()
        conn.send(json.dumps(stateless(1, "subscriptions/listen", {"notifications": {"resourceSubscriptions": [URI]}})))
        assert json.loads(conn.recv(WAIT) or "")["method"] == "notifications/subscriptions/acknowledged"
        conn.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}))
        assert conn.recv(1.0) is None  # past the delay: no update, no answer
        conn.send(json.dumps(stateless(2, "resources/read", {"uri": URI})))
        assert json.loads(conn.recv(WAIT) or "")["result"]["contents"][0]["text"] == PENDING


def test_over_http_the_version_belongs_to_the_client_name() -> None:
    import httpx

    with Server(catalogs=["review-lab"], update_delay=0.05) as server:
        server.start_http()
        h = {
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
            "mcp-protocol-version": "2026-07-28",
        }
        with httpx.Client(base_url=server.base_url or "", timeout=WAIT) as http:

            def read(client: str) -> str:
                body = stateless(9, "resources/read", {"uri": URI}, client)
                r = http.post("/mcp", json=body, headers={**h, "mcp-method": "resources/read", "mcp-name": URI})
                return str(r.json()["result"]["contents"][0]["text"])

            body = stateless("l", "subscriptions/listen", {"notifications": {"resourceSubscriptions": [URI]}})
            with http.stream("POST", "/mcp", json=body, headers={**h, "mcp-method": "subscriptions/listen"}) as s:
                # Lazy: take the ack and the update, then leave (the stream never ends by itself).
                frames = (line[len("data: ") :] for line in s.iter_lines() if line.startswith("data: "))
                assert json.loads(next(frames))["method"] == "notifications/subscriptions/acknowledged"
                assert json.loads(next(frames))["params"] == {"_meta": {SUB: "l"}, "uri": URI}
            assert read("lab-a") == REVIEWED
            assert read("lab-b") == PENDING


@pytest.mark.anyio
async def test_official_client_listens_in_auto_mode() -> None:
    from mcp.client.subscriptions import ResourceUpdated

    with anyio.fail_after(30):
        async with Client(lab_params(), read_timeout_seconds=10) as client:
            assert client.protocol_version == "2026-07-28"
            assert text_of(await client.read_resource(URI)) == PENDING
            async with client.listen(resource_subscriptions=[URI]) as sub:
                assert await anext(sub) == ResourceUpdated(uri=URI)
                assert text_of(await client.read_resource(URI)) == REVIEWED
                r = await client.call_tool("get_review_status", {})
                assert r.content == [TextContent(type="text", text=REVIEWED)]
