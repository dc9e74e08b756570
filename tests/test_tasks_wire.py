"""Tasks on the wire in both eras, with raw frames (the official `mcp` 2.x client removed its
tasks API): the handshake era's task-augmented calls (2025-11-25, SEP-1686) over stdio and
Streamable HTTP, and the tasks extension (2026-07-28, SEP-2663) over stdio. The `conformance`
catalog's fixtures: `slow_compute` (optional), `confirm_delete` (asks mid-task), `greet`
(forbidden), `failing_job` (required), `protocol_error_job`, `test_tool_with_task`."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from everything_mcp import Server

from conftest import WAIT, StdioServer, envelope

TASKS = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
ACCEPT_BOTH = "application/json, text/event-stream"


def until(check: Callable[[], Any], what: str) -> Any:
    """Polls `check` (as a client polls a task) until it returns something truthy."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


# --- handshake era over stdio ----------------------------------------------------------------


class Stdio:
    """A handshake-era session over a real stdio subprocess: requests answered by id, every
    other frame kept in order."""

    def __init__(self, server: StdioServer) -> None:
        self.server = server
        self.seen: list[Any] = []
        self.next_id = 100

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        self.next_id += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.server.send(msg)
        return self.wait_for(lambda m: m.get("id") == self.next_id and "method" not in m)

    def wait_for(self, match: Callable[[Any], bool]) -> Any:
        for i, m in enumerate(self.seen):
            if match(m):
                return self.seen.pop(i)
        while True:
            m = self.server.recv()
            if match(m):
                return m
            self.seen.append(m)

    def statuses(self, task_id: str) -> list[str]:
        return [
            m["params"]["status"]
            for m in self.seen
            if m.get("method") == "notifications/tasks/status" and m["params"]["taskId"] == task_id
        ]


@pytest.fixture
def stdio() -> Iterator[Stdio]:
    server = StdioServer("stdio", "--catalog", "conformance")
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "pytest", "version": "1"},
    }
    init = server.request(0, "initialize", params)
    assert init["result"]["capabilities"]["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    yield Stdio(server)
    server.stop()


def test_a_task_augmented_call_is_answered_with_a_handle_then_polled(stdio: Stdio) -> None:
    listed = {t["name"]: t for t in stdio.call("tools/list")["result"]["tools"]}
    assert listed["slow_compute"]["execution"] == {"taskSupport": "optional"}
    assert listed["failing_job"]["execution"] == {"taskSupport": "required"}
    created = stdio.call("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0.2}, "task": {"ttl": 60000}})
    task = created["result"]["task"]
    assert list(task) == ["taskId", "status", "ttl", "createdAt", "lastUpdatedAt", "pollInterval"]
    assert (task["status"], task["ttl"], task["pollInterval"]) == ("working", 300000, 1000)
    assert len(task["taskId"]) == 32 and int(task["taskId"], 16) >= 0
    # The first status notification went out before the handle.
    assert stdio.statuses(task["taskId"]) == ["working"]
    got = stdio.call("tasks/get", {"taskId": task["taskId"]})["result"]
    assert got["taskId"] == task["taskId"] and got["status"] in ("working", "completed")
    result = stdio.call("tasks/result", {"taskId": task["taskId"]})["result"]
    assert result["content"] == [{"type": "text", "text": "Computed  after 0.2 s"}]
    assert result["_meta"] == {RELATED: {"taskId": task["taskId"]}}
    assert stdio.wait_for(lambda m: m.get("params", {}).get("status") == "completed")
    assert stdio.call("tasks/get", {"taskId": task["taskId"]})["result"]["status"] == "completed"
    refused = stdio.call("tasks/cancel", {"taskId": task["taskId"]})["error"]
    assert refused == {"code": -32602, "message": "MCP error -32602: Cannot cancel task in terminal status: completed"}
    unknown = stdio.call("tasks/get", {"taskId": "nope"})["error"]
    assert unknown == {"code": -32602, "message": "MCP error -32602: Failed to retrieve task: Task not found"}
    assert (
        stdio.call("tasks/result", {"taskId": "nope"})["error"]["message"] == "MCP error -32602: Task not found: nope"
    )


def test_cancelling_a_task_stops_it_and_tasks_result_reports_it(stdio: Stdio) -> None:
    created = stdio.call("tools/call", {"name": "slow_compute", "arguments": {"seconds": 60}, "task": {}})
    task_id = created["result"]["task"]["taskId"]
    cancelled = stdio.call("tasks/cancel", {"taskId": task_id})["result"]
    assert (cancelled["status"], cancelled["statusMessage"]) == ("cancelled", "Client cancelled task execution.")
    assert stdio.call("tasks/get", {"taskId": task_id})["result"]["status"] == "cancelled"
    assert stdio.call("tasks/result", {"taskId": task_id})["error"]["code"] == -32603


def test_a_task_asks_the_client_inline_with_the_related_task_meta(stdio: Stdio) -> None:
    created = stdio.call("tools/call", {"name": "confirm_delete", "arguments": {"filename": "a.txt"}, "task": {}})
    task_id = created["result"]["task"]["taskId"]
    ask = stdio.wait_for(lambda m: m.get("method") == "elicitation/create")
    assert ask["params"]["_meta"] == {RELATED: {"taskId": task_id}}
    assert ask["params"]["message"] == "Delete a.txt?"
    assert stdio.wait_for(lambda m: m.get("params", {}).get("status") == "input_required")
    stdio.server.send({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"confirm": True}}})
    result = stdio.call("tasks/result", {"taskId": task_id})["result"]
    assert result["content"][0]["text"] == "Deleted a.txt"
    # The last status notification (sent as the task settles, beside the result).
    assert stdio.wait_for(lambda m: m.get("params", {}).get("status") == "completed")


def test_task_support_is_honoured_both_ways(stdio: Stdio) -> None:
    forbidden = stdio.call("tools/call", {"name": "greet", "arguments": {"name": "x"}, "task": {}})["error"]
    assert forbidden["code"] == -32601
    required = stdio.call("tools/call", {"name": "failing_job", "arguments": {}})["result"]
    assert required == {
        "content": [
            {
                "type": "text",
                "text": "MCP error -32601: Tool failing_job requires task augmentation (taskSupport: 'required')",
            }
        ],
        "isError": True,
    }
    # Optional without a task: an ordinary call.
    plain = stdio.call("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}})["result"]
    assert "task" not in plain and plain["content"][0]["type"] == "text"


def test_a_failed_task_answers_tasks_result_with_its_error(stdio: Stdio) -> None:
    task_id = stdio.call("tools/call", {"name": "protocol_error_job", "arguments": {}, "task": {}})["result"]["task"][
        "taskId"
    ]
    error = stdio.call("tasks/result", {"taskId": task_id})["error"]
    assert error["code"] == -32603
    assert stdio.call("tasks/get", {"taskId": task_id})["result"]["status"] == "failed"


def test_tasks_list_pages_ten_with_the_last_id_as_cursor(stdio: Stdio) -> None:
    ids = [
        stdio.call("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}, "task": {}})["result"]["task"][
            "taskId"
        ]
        for _ in range(12)
    ]
    first = stdio.call("tasks/list")["result"]
    assert [t["taskId"] for t in first["tasks"]] == ids[:10]
    assert first["nextCursor"] == ids[9]
    second = stdio.call("tasks/list", {"cursor": first["nextCursor"]})["result"]
    assert [t["taskId"] for t in second["tasks"]] == ids[10:] and "nextCursor" not in second
    bad = stdio.call("tasks/list", {"cursor": "bogus"})["error"]
    assert bad == {"code": -32602, "message": "MCP error -32602: Failed to list tasks: Invalid cursor: bogus"}


def test_older_revisions_have_no_tasks() -> None:
    server = StdioServer("stdio", "--catalog", "conformance")
    try:
        init = server.initialize("2025-06-18")
        assert "tasks" not in init["result"]["capabilities"]
        assert server.request(1, "tasks/list")["error"]["code"] == -32601
        # A `task` param means nothing before 2025-11-25: an ordinary call.
        call = server.request(2, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}, "task": {}})
        assert "content" in call["result"]
        # A tool that runs only as a task is refused (as the reference refuses it).
        required = server.request(3, "tools/call", {"name": "failing_job", "arguments": {}, "task": {}})
        assert required["result"]["isError"] is True
        assert "requires task augmentation" in required["result"]["content"][0]["text"]
    finally:
        server.stop()


# --- handshake era over Streamable HTTP ------------------------------------------------------


@pytest.fixture
def http_server() -> Iterator[Server]:
    srv = Server(catalogs=["conformance"], task_ttl=0.5)
    srv.start_http()
    yield srv
    srv.stop()


def open_session(client: httpx.Client, url: str, capabilities: dict[str, Any]) -> dict[str, str]:
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": capabilities,
        "clientInfo": {"name": "pytest", "version": "1"},
    }
    h = {"accept": ACCEPT_BOTH, "content-type": "application/json"}
    r = client.post(url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}, headers=h)
    h["mcp-session-id"] = r.headers["mcp-session-id"]
    h["mcp-protocol-version"] = "2025-11-25"
    client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=h)
    return h


def answer(r: httpx.Response) -> Any:
    """The JSON-RPC response in a POST's answer (JSON or SSE)."""
    if r.headers["content-type"].startswith("application/json"):
        return r.json()
    frames = [json.loads(line[5:]) for line in r.text.splitlines() if line.startswith("data:") and line[5:].strip()]
    return next(f for f in frames if "id" in f and "method" not in f)


def test_over_http_the_task_asks_on_the_tasks_result_stream(http_server: Server) -> None:
    url = http_server.http_url
    assert url is not None
    with httpx.Client(timeout=WAIT) as client:
        h = open_session(client, url, {"elicitation": {}})
        call = {"name": "confirm_delete", "arguments": {"filename": "b.txt"}, "task": {}}
        r = client.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}, headers=h)
        task_id = answer(r)["result"]["task"]["taskId"]
        # The elicitation waits in the task's mailbox until a tasks/result stream opens.
        until(
            lambda: (
                answer(
                    client.post(
                        url,
                        json={"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"taskId": task_id}},
                        headers=h,
                    )
                )["result"]["status"]
                == "input_required"
            ),
            "input_required",
        )
        body = {"jsonrpc": "2.0", "id": 3, "method": "tasks/result", "params": {"taskId": task_id}}
        with client.stream("POST", url, json=body, headers=h) as stream:
            assert stream.headers["content-type"] == "text/event-stream"
            frames = (
                json.loads(line[5:]) for line in stream.iter_lines() if line.startswith("data:") and line[5:].strip()
            )
            ask = next(f for f in frames if f.get("method") == "elicitation/create")
            assert ask["params"]["_meta"] == {RELATED: {"taskId": task_id}}
            reply = {"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "decline"}}
            assert client.post(url, json=reply, headers=h).status_code == 202
            result = next(f for f in frames if f.get("id") == 3)
        assert result["result"]["content"][0]["text"] == "Kept b.txt"
        assert result["result"]["_meta"] == {RELATED: {"taskId": task_id}}


def test_tasks_are_scoped_to_their_session_and_expire(http_server: Server) -> None:
    url = http_server.http_url
    assert url is not None
    with httpx.Client(timeout=WAIT) as client:
        a = open_session(client, url, {})
        b = open_session(client, url, {})
        call = {"name": "slow_compute", "arguments": {"seconds": 0}, "task": {}}
        task = answer(
            client.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}, headers=a)
        )["result"]["task"]
        assert task["ttl"] == 500

        def get(h: dict[str, str]) -> Any:
            body = {"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"taskId": task["taskId"]}}
            return answer(client.post(url, json=body, headers=h))

        assert get(b)["error"]["code"] == -32602
        listed = answer(client.post(url, json={"jsonrpc": "2.0", "id": 3, "method": "tasks/list"}, headers=b))
        assert listed["result"]["tasks"] == []
        assert get(a)["result"]["taskId"] == task["taskId"]
        # Settled, it is kept for one more TTL (0.5 s here), then gone.
        until(lambda: "error" in get(a), "the task to expire")


# --- stateless era (the tasks extension) over stdio ------------------------------------------


@pytest.fixture
def stateless() -> Iterator[Callable[..., Any]]:
    server = StdioServer("stdio", "--catalog", "conformance")
    ids = iter(range(1, 10_000))

    def call(method: str, params: dict[str, Any] | None = None, capabilities: dict[str, Any] | None = None) -> Any:
        caps = {"elicitation": {}, "extensions": {TASKS: {}}} if capabilities is None else capabilities
        p = dict(params or {})
        p["_meta"] = envelope(caps)
        return server.request(next(ids), method, p)

    yield call
    server.stop()


def test_stateless_a_task_is_created_polled_and_inlines_its_result(stateless: Callable[..., Any]) -> None:
    discover = stateless("server/discover")["result"]
    assert discover["capabilities"]["extensions"][TASKS] == {}
    assert "tasks" not in discover["capabilities"]
    created = stateless("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0.1}})["result"]
    assert created["resultType"] == "task"
    assert {"taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} <= set(created)
    assert "task" not in created and "ttl" not in created and "requestState" not in created
    task_id = created["taskId"]
    done = until(
        lambda: (r := stateless("tasks/get", {"taskId": task_id})["result"])["status"] == "completed" and r,
        "completion",
    )
    assert done["resultType"] == "complete"
    assert done["result"]["content"] == [{"type": "text", "text": "Computed  after 0.1 s"}]
    # Cancelling a settled task is acknowledged all the same (idempotent).
    assert stateless("tasks/cancel", {"taskId": task_id})["result"]["resultType"] == "complete"
    assert stateless("tasks/get", {"taskId": task_id})["result"]["status"] == "completed"
    assert stateless("tasks/get", {"taskId": "nope"})["error"]["code"] == -32602


def test_stateless_input_requests_are_answered_with_tasks_update(stateless: Callable[..., Any]) -> None:
    task_id = stateless("tools/call", {"name": "confirm_delete", "arguments": {"filename": "c.txt"}})["result"][
        "taskId"
    ]
    waiting = until(
        lambda: (r := stateless("tasks/get", {"taskId": task_id})["result"])["status"] == "input_required" and r,
        "input_required",
    )
    assert list(waiting["inputRequests"]) == ["confirm"]
    assert waiting["inputRequests"]["confirm"]["method"] == "elicitation/create"
    ack = stateless(
        "tasks/update",
        {
            "taskId": task_id,
            "inputResponses": {"unknown": {}, "confirm": {"action": "accept", "content": {"confirm": True}}},
        },
    )
    assert set(ack["result"]) == {"resultType", "_meta"}
    done = until(
        lambda: (r := stateless("tasks/get", {"taskId": task_id})["result"])["status"] == "completed" and r,
        "completion",
    )
    assert done["result"]["content"][0]["text"] == "Deleted c.txt"


def test_stateless_without_the_extension(stateless: Callable[..., Any]) -> None:
    plain = {"elicitation": {}}
    sync = stateless("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}}, plain)["result"]
    assert sync["resultType"] == "complete" and "taskId" not in sync
    refused = stateless("tools/call", {"name": "failing_job", "arguments": {}}, plain)["error"]
    assert refused["code"] == -32021
    assert refused["data"]["requiredCapabilities"] == {"extensions": {TASKS: {}}}
    for method in ("tasks/get", "tasks/cancel"):
        assert stateless(method, {"taskId": "x"}, plain)["error"]["code"] == -32021
    assert stateless("tasks/result", {"taskId": "x"})["error"]["code"] == -32601
    assert stateless("tasks/list")["error"]["code"] == -32601


def test_stateless_input_first_then_a_task(stateless: Callable[..., Any]) -> None:
    first = stateless("tools/call", {"name": "test_tool_with_task", "arguments": {}})["result"]
    assert first["resultType"] == "input_required" and "taskId" not in first
    (key,) = first["inputRequests"]
    params = {
        "name": "test_tool_with_task",
        "arguments": {},
        "inputResponses": {key: {"action": "accept", "content": {"name": "Alice"}}},
    }
    if "requestState" in first:
        params["requestState"] = first["requestState"]
    second = stateless("tools/call", params)["result"]
    assert second["resultType"] == "task" and "requestState" not in second
    done = until(
        lambda: (r := stateless("tasks/get", {"taskId": second["taskId"]})["result"])["status"] == "completed" and r,
        "completion",
    )
    assert done["result"]["content"][0]["text"] == "Hello, Alice! (from a task)"


def test_stateless_a_listen_stream_hears_of_the_tasks_it_names() -> None:
    server = StdioServer("stdio", "--catalog", "conformance")
    try:
        caps = {"extensions": {TASKS: {}}}
        call = {"name": "slow_compute", "arguments": {"seconds": 60}, "_meta": envelope(caps)}
        task_id = server.request(1, "tools/call", call)["result"]["taskId"]
        listen = {"notifications": {"taskIds": [task_id]}, "_meta": envelope(caps)}
        ack = server.request("listen", "subscriptions/listen", listen)
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["notifications"] == {"taskIds": [task_id]}
        server.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tasks/cancel",
                "params": {"taskId": task_id, "_meta": envelope(caps)},
            }
        )
        frames = [server.recv(), server.recv()]
        note = next(f for f in frames if f.get("method") == "notifications/tasks")
        assert (note["params"]["taskId"], note["params"]["status"]) == (task_id, "cancelled")
        assert note["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": "listen"}
        # Without the extension a client cannot listen to tasks.
        refused = server.request(
            3, "subscriptions/listen", {"notifications": {"taskIds": [task_id]}, "_meta": envelope({})}
        )
        assert refused["error"]["code"] == -32021
    finally:
        server.stop()
