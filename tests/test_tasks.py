"""Tasks from Python: tools with ``task_support`` run as tasks (``ctx.status``, asking the client
mid-task) and test-controlled tasks (``srv.task_gate``), in both eras, over the stdio relay and
HTTP, driven with raw JSON-RPC (the official ``mcp`` 2.x client has no tasks API); ``srv.tasks``
and the traffic's task marks."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio
import httpx
import pytest

from everything_mcp import ClientError, Context, GatedTask, RpcError, Server, TaskEnded, TaskInfo

from conftest import WAIT, StdioServer, envelope, init_params

TASKS_EXT = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
STATELESS_CAPS = {"extensions": {TASKS_EXT: {}}, "elicitation": {}}
OK_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
ACCEPT = {"action": "accept", "content": {"ok": True}}


def add_asking_tools(srv: Server) -> None:
    """`confirm` (sync) and `aconfirm` (async): a status, a question, another status."""

    @srv.tool(task_support="optional")
    def confirm(ctx: Context, item: str = "x") -> str:
        ctx.status("asking")
        answer = ctx.elicit(f"Delete {item}?", OK_SCHEMA)
        ctx.status("finishing")
        return f"ok={answer['content']['ok']} in task={ctx.task_id is not None}"

    @srv.tool(task_support="optional")
    async def aconfirm(ctx: Context, item: str = "x") -> str:
        ctx.status("asking")
        answer = await ctx.aelicit(f"Delete {item}?", OK_SCHEMA)
        ctx.status("finishing")
        return f"ok={answer['content']['ok']} in task={ctx.task_id is not None}"


class Peer:
    """A raw JSON-RPC client over the stdio relay: what is not the awaited answer is kept in
    ``seen`` (notifications, server → client requests) for later ``expect``."""

    def __init__(self, srv: Server) -> None:
        self.io = StdioServer(command=srv.stdio_command)
        self.seen: list[dict[str, Any]] = []
        self.ids = iter(range(1, 10_000))

    def rpc(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        id = next(self.ids)
        self.io.send({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        while True:
            msg = self.io.recv()
            if msg.get("id") == id and "method" not in msg:
                return msg  # type: ignore[no-any-return]
            self.seen.append(msg)

    def expect(self, match: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first message (kept or next to come) that ``match`` accepts."""
        for msg in self.seen:
            if match(msg):
                self.seen.remove(msg)
                return msg
        while not match(msg := self.io.recv()):
            self.seen.append(msg)
        return msg

    def answer(self, id: Any, result: dict[str, Any]) -> None:
        self.io.send({"jsonrpc": "2.0", "id": id, "result": result})

    def initialize(self) -> None:
        params = init_params()
        params["capabilities"] = {"elicitation": {}}
        assert "result" in self.rpc("initialize", params)
        self.io.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close(self) -> None:
        self.io.stop()


@pytest.fixture
def srv() -> Iterator[Server]:
    with Server(catalogs=["none"]) as server:
        add_asking_tools(server)
        yield server


@pytest.fixture
def peer(srv: Server) -> Iterator[Peer]:
    p = Peer(srv)
    yield p
    p.close()


def is_request(method: str) -> Callable[[dict[str, Any]], bool]:
    return lambda m: m.get("method") == method and "id" in m


def announced(status: str) -> Callable[[dict[str, Any]], bool]:
    return lambda m: m.get("method") == "notifications/tasks/status" and m["params"]["status"] == status


# --- task_support, ctx.status and asking inside a task ------------------------------------


def test_task_support_is_the_definitions_execution(srv: Server, peer: Peer) -> None:
    @srv.tool(task_support="required")
    def only_task() -> str:
        return "never as a call"

    @srv.tool()
    def plain(ctx: Context) -> str:
        ctx.status("ignored outside a task")  # a no-op, not an error
        return f"task={ctx.task_id}"

    with pytest.raises(ValueError, match="task_support"):
        srv.tool(task_support="sometimes")

    peer.initialize()
    tools = {t["name"]: t for t in peer.rpc("tools/list", {})["result"]["tools"]}
    assert tools["confirm"]["execution"] == {"taskSupport": "optional"}
    assert tools["only_task"]["execution"] == {"taskSupport": "required"}
    assert "execution" not in tools["plain"]
    r = peer.rpc("tools/call", {"name": "plain", "arguments": {}})["result"]
    assert r["content"][0]["text"] == "task=None"
    # A required tool called without params.task: the reference's isError answer.
    r = peer.rpc("tools/call", {"name": "only_task", "arguments": {}})["result"]
    assert r["isError"] and "requires task augmentation" in r["content"][0]["text"]
    assert srv.tasks == []


@pytest.mark.parametrize("tool", ["confirm", "aconfirm"])
def test_a_python_tool_runs_as_a_task_in_the_handshake_era_over_stdio(srv: Server, peer: Peer, tool: str) -> None:
    peer.initialize()
    created = peer.rpc("tools/call", {"name": tool, "arguments": {"item": "a.txt"}, "task": {"ttl": 60000}})
    task = created["result"]["task"]
    tid = task["taskId"]
    assert task["status"] == "working" and task["ttl"] == 300000 and task["pollInterval"] == 1000
    # The ask is a real request tagged with the task, and the task waits for it.
    ask = peer.expect(is_request("elicitation/create"))
    assert ask["params"]["message"] == "Delete a.txt?"
    assert ask["params"]["_meta"][RELATED] == {"taskId": tid}
    got = peer.rpc("tasks/get", {"taskId": tid})["result"]
    assert (got["status"], got["statusMessage"]) == ("input_required", "asking")
    # Changes are announced as they happen (one announcement may cover several quick ones):
    # the wait is announced before the answer ends it, the end after it.
    assert peer.expect(announced("input_required"))["params"]["statusMessage"] == "asking"
    peer.answer(ask["id"], ACCEPT)
    result = peer.rpc("tasks/result", {"taskId": tid})["result"]
    assert result["content"] == [{"type": "text", "text": "ok=True in task=True"}]
    assert result["_meta"][RELATED] == {"taskId": tid}
    got = peer.rpc("tasks/get", {"taskId": tid})["result"]
    assert (got["status"], got["statusMessage"]) == ("completed", "finishing")
    assert peer.expect(announced("completed"))["params"]["statusMessage"] == "finishing"
    (info,) = srv.tasks
    assert isinstance(info, TaskInfo)
    assert (info.id, info.tool, info.arguments, info.status, info.era) == (
        tid,
        tool,
        {"item": "a.txt"},
        "completed",
        "handshake",
    )
    assert info.status_message == "finishing" and info.session is not None and info.terminal
    assert (info.ttl, info.poll_interval) == (300.0, 1.0)


def sse_messages(response: httpx.Response) -> Iterator[dict[str, Any]]:
    """The JSON-RPC messages of an SSE (or JSON) answer, as they arrive."""
    if response.headers["content-type"].startswith("application/json"):
        yield response.json()
        return
    for line in response.iter_lines():
        if line.startswith("data:") and line[5:].strip():
            yield json.loads(line[5:])


class HttpPeer:
    """A raw Streamable HTTP client of one handshake-era session (or stateless requests)."""

    def __init__(self, srv: Server, stateless: bool = False) -> None:
        self.http = httpx.Client(base_url=srv.base_url or "", timeout=WAIT)
        self.headers = {"Accept": "application/json, text/event-stream"}
        self.stateless = stateless
        self.ids = iter(range(1, 10_000))
        if stateless:
            self.headers["MCP-Protocol-Version"] = "2026-07-28"
            return
        params = init_params()
        params["capabilities"] = {"elicitation": {}}
        r = self.http.post("/mcp", json=self.frame("initialize", params), headers=self.headers)
        self.headers["Mcp-Session-Id"] = r.headers["mcp-session-id"]
        self.headers["MCP-Protocol-Version"] = "2025-11-25"
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert self.http.post("/mcp", json=note, headers=self.headers).status_code == 202

    def frame(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if self.stateless:
            params = {**params, "_meta": envelope(STATELESS_CAPS)}
        return {"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": params}

    def headers_for(self, method: str, params: dict[str, Any]) -> dict[str, str]:
        if not self.stateless:
            return self.headers
        # The extension's methods are routed by the task id, a call by its tool's name.
        name = params.get("name", params.get("taskId"))
        return {**self.headers, "Mcp-Method": method, **({"Mcp-Name": name} if name else {})}

    def rpc(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        frame = self.frame(method, params)
        r = self.http.post("/mcp", json=frame, headers=self.headers_for(method, params))
        (answer,) = [m for m in sse_messages(r) if m.get("id") == frame["id"] and "method" not in m]
        return answer

    def stream(self, method: str, params: dict[str, Any]) -> Any:
        """A streamed POST (``with peer.stream(...) as r: sse_messages(r)``)."""
        frame = self.frame(method, params)
        return self.http.stream("POST", "/mcp", json=frame, headers=self.headers_for(method, params))

    def answer(self, id: Any, result: dict[str, Any]) -> None:
        reply = {"jsonrpc": "2.0", "id": id, "result": result}
        assert self.http.post("/mcp", json=reply, headers=self.headers).status_code == 202

    def close(self) -> None:
        self.http.close()


@pytest.mark.parametrize("tool", ["confirm", "aconfirm"])
def test_a_python_tool_runs_as_a_task_in_the_handshake_era_over_http(srv: Server, tool: str) -> None:
    srv.start_http()
    peer = HttpPeer(srv)
    try:
        created = peer.rpc("tools/call", {"name": tool, "arguments": {}, "task": {}})
        tid = created["result"]["task"]["taskId"]
        srv.wait_task(tid, "input_required")  # the question waits in the task's mailbox
        # The call's stream is gone: tasks/result's stream carries the question, then the result.
        with peer.stream("tasks/result", {"taskId": tid}) as response:
            messages = sse_messages(response)
            ask = next(m for m in messages if m.get("method") == "elicitation/create")
            assert ask["params"]["_meta"][RELATED] == {"taskId": tid}
            peer.answer(ask["id"], ACCEPT)
            final = next(m for m in messages if "result" in m)
        assert final["result"]["content"][0]["text"] == "ok=True in task=True"
        got = peer.rpc("tasks/get", {"taskId": tid})["result"]
        assert (got["status"], got["statusMessage"]) == ("completed", "finishing")
    finally:
        peer.close()


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("tool", ["confirm", "aconfirm"])
def test_a_python_tool_runs_as_a_task_in_the_stateless_era(srv: Server, transport: str, tool: str) -> None:
    if transport == "http":
        srv.start_http()
        http = HttpPeer(srv, stateless=True)
        rpc, close = http.rpc, http.close
    else:
        peer = Peer(srv)
        rpc = lambda method, params: peer.rpc(method, {**params, "_meta": envelope(STATELESS_CAPS)})  # noqa: E731
        close = peer.close
    try:
        created = rpc("tools/call", {"name": tool, "arguments": {"item": "b"}})["result"]
        assert created["resultType"] == "task" and created["ttlMs"] == 300000
        tid = created["taskId"]
        srv.wait_task(tid, "input_required")
        got = rpc("tasks/get", {"taskId": tid})["result"]
        assert (got["status"], got["statusMessage"]) == ("input_required", "asking")
        ((key, request),) = got["inputRequests"].items()
        assert request["method"] == "elicitation/create" and request["params"]["message"] == "Delete b?"
        rpc("tasks/update", {"taskId": tid, "inputResponses": {key: ACCEPT}})
        srv.wait_task(tid)
        got = rpc("tasks/get", {"taskId": tid})["result"]
        assert (got["status"], got["statusMessage"]) == ("completed", "finishing")
        assert got["result"]["content"][0]["text"] == "ok=True in task=True"
        (info,) = srv.tasks
        assert (info.era, info.session, info.input_requests) == ("stateless", None, {})
    finally:
        close()
    # Nothing in this era is a server → client request.
    assert srv.traffic.requests(dir="out") == []


# --- gates --------------------------------------------------------------------------------


def test_a_gate_drives_tasks_in_the_handshake_era_over_stdio(srv: Server, peer: Peer) -> None:
    @srv.tool(task_support="required")
    def deploy(target: str) -> str:
        raise AssertionError("a gated tool's handler does not run")

    gate = srv.task_gate("deploy")
    assert srv.task_gate("deploy").tool == "deploy"  # the same gate
    peer.initialize()
    tid = peer.rpc("tools/call", {"name": "deploy", "arguments": {"target": "prod"}, "task": {}})["result"]["task"][
        "taskId"
    ]
    task = gate.next_task()
    assert task.id == tid and task.info.arguments == {"target": "prod"}
    assert peer.rpc("tasks/get", {"taskId": tid})["result"]["status"] == "working"
    gate.status("building")
    assert peer.rpc("tasks/get", {"taskId": tid})["result"]["statusMessage"] == "building"
    with ThreadPoolExecutor(1) as pool:
        answer = pool.submit(gate.require_input, "Deploy to prod?", OK_SCHEMA)
        ask = peer.expect(is_request("elicitation/create"))
        assert ask["params"]["_meta"][RELATED] == {"taskId": tid}
        assert ask["params"]["requestedSchema"] == OK_SCHEMA
        assert peer.rpc("tasks/get", {"taskId": tid})["result"]["status"] == "input_required"
        peer.answer(ask["id"], ACCEPT)
        assert answer.result(WAIT) == ACCEPT
    assert task.info.status == "working"
    gate.complete("deployed")
    result = peer.rpc("tasks/result", {"taskId": tid})["result"]
    assert result["content"] == [{"type": "text", "text": "deployed"}]

    # A second task fails with a JSON-RPC error; tasks/result answers it.
    tid2 = peer.rpc("tools/call", {"name": "deploy", "arguments": {"target": "b"}, "task": {}})["result"]["task"][
        "taskId"
    ]
    second = gate.next_task()
    assert second.id == tid2
    second.fail(RpcError(-32050, "disk full", {"free": 0}))
    error = peer.rpc("tasks/result", {"taskId": tid2})["error"]
    assert error["code"] == -32050 and error["message"] == "disk full" and error["data"] == {"free": 0}

    # A third one the client cancels: the gate sees it, and a late step is refused.
    tid3 = peer.rpc("tools/call", {"name": "deploy", "arguments": {"target": "c"}, "task": {}})["result"]["task"][
        "taskId"
    ]
    third = gate.next_task()
    assert peer.rpc("tasks/cancel", {"taskId": tid3})["result"]["status"] == "cancelled"
    assert third.wait_for("cancelled").terminal
    with pytest.raises(TaskEnded):
        third.complete("too late")
    assert [t.id for t in gate.held] == [tid, tid2, tid3]
    assert [t.status for t in srv.tasks] == ["completed", "failed", "cancelled"]

    # Closed, the gate lets the handler run again.
    gate.close()
    r = peer.rpc("tools/call", {"name": "deploy", "arguments": {"target": "d"}, "task": {}})["result"]
    srv.wait_task(r["task"]["taskId"])
    result = peer.rpc("tasks/result", {"taskId": r["task"]["taskId"]})["result"]
    assert result["isError"] and "does not run" in result["content"][0]["text"]


def test_a_gate_asks_through_tasks_result_over_http(srv: Server) -> None:
    srv.start_http()
    gate = srv.task_gate("confirm")
    peer = HttpPeer(srv)
    try:
        tid = peer.rpc("tools/call", {"name": "confirm", "arguments": {}, "task": {}})["result"]["task"]["taskId"]
        task = gate.next_task()
        with ThreadPoolExecutor(1) as pool:
            answer = pool.submit(task.require_input, "Sure?", key="sure")
            task.wait_for("input_required")
            with peer.stream("tasks/result", {"taskId": tid}) as response:
                messages = sse_messages(response)
                ask = next(m for m in messages if m.get("method") == "elicitation/create")
                assert ask["params"]["message"] == "Sure?"
                peer.answer(ask["id"], ACCEPT)
                assert answer.result(WAIT) == ACCEPT
                task.complete({"content": [{"type": "text", "text": "partial"}], "isError": True})
                final = next(m for m in messages if "result" in m)
        assert final["result"]["isError"] is True and final["result"]["content"][0]["text"] == "partial"
        assert task.info.status == "completed"  # an isError result completes a task
    finally:
        peer.close()


@pytest.mark.anyio
async def test_a_gate_in_the_stateless_era_with_the_async_twins(srv: Server) -> None:
    @srv.tool(task_support="required")
    def report() -> str:
        return "never"

    srv.start_http()
    gate = srv.task_gate("report")
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28"}

    async with httpx.AsyncClient(base_url=srv.base_url or "", timeout=WAIT) as http:

        async def rpc(method: str, params: dict[str, Any], caps: dict[str, Any] = STATELESS_CAPS) -> Any:
            frame = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": envelope(caps)}}
            name = params.get("name", params.get("taskId"))
            extra = {"Mcp-Method": method, **({"Mcp-Name": name} if name else {})}
            return (await http.post("/mcp", json=frame, headers={**headers, **extra})).json()

        # Without the extension a required-task tool is -32021.
        refused = await rpc("tools/call", {"name": "report", "arguments": {}}, caps={})
        assert refused["error"]["code"] == -32021
        assert TASKS_EXT in refused["error"]["data"]["requiredCapabilities"]["extensions"]

        with anyio.fail_after(WAIT):
            tid = (await rpc("tools/call", {"name": "report", "arguments": {}}))["result"]["taskId"]
            task = await gate.anext_task()
            assert task.id == tid
            answers: list[Any] = []

            async def ask() -> None:
                answers.append(await task.arequire_input("Which format?", key="format"))

            async with anyio.create_task_group() as tg:
                tg.start_soon(ask)
                await task.await_for("input_required")
                got = (await rpc("tasks/get", {"taskId": tid}))["result"]
                assert got["inputRequests"]["format"]["params"]["message"] == "Which format?"
                await rpc("tasks/update", {"taskId": tid, "inputResponses": {"format": ACCEPT}})
            assert answers == [ACCEPT]
            gate.complete({"rows": 3})
            got = (await rpc("tasks/get", {"taskId": tid}))["result"]
            assert got["status"] == "completed" and got["result"]["structuredContent"] == {"rows": 3}

            # A task the client cancels while the test waits for its input: the wait ends.
            tid = (await rpc("tools/call", {"name": "report", "arguments": {}}))["result"]["taskId"]
            task = await gate.anext_task()
            async with anyio.create_task_group() as tg:
                tg.start_soon(cancel_when_asked, task, rpc, tid)
                with pytest.raises(ClientError, match=r"ended|cancelled"):
                    await task.arequire_input("Still there?")
            assert (await task.await_for()).status == "cancelled"


async def cancel_when_asked(task: GatedTask, rpc: Any, tid: str) -> None:
    await task.await_for("input_required")
    assert "result" in await rpc("tasks/cancel", {"taskId": tid})


def test_a_gate_without_a_task_times_out_and_a_timeout_is_bounded(srv: Server) -> None:
    gate = srv.task_gate("confirm")
    with pytest.raises(TimeoutError):
        gate.next_task(timeout=0.05)
    with pytest.raises(TimeoutError):
        gate.complete("nothing to complete", timeout=0.05)
    with pytest.raises(TimeoutError):
        srv.wait_task("0" * 32, timeout=0.05)
    with gate:
        assert gate.held == []


def test_task_frames_are_marked_in_the_traffic(srv: Server, peer: Peer) -> None:
    gate = srv.task_gate("confirm")
    peer.initialize()
    tid = peer.rpc("tools/call", {"name": "confirm", "arguments": {}, "task": {}})["result"]["task"]["taskId"]
    task = gate.next_task()
    with ThreadPoolExecutor(1) as pool:
        answer = pool.submit(task.require_input, "Go?")
        ask = peer.expect(is_request("elicitation/create"))
        peer.answer(ask["id"], ACCEPT)
        answer.result(WAIT)
    task.complete("done")
    peer.rpc("tasks/result", {"taskId": tid})
    peer.rpc("tasks/get", {"taskId": "f" * 32})  # unknown: its error still names what it asked
    marked = [(r.dir, r.kind, r.method) for r in srv.traffic.filter(task=tid)]
    assert ("out", "response", "tools/call") in marked  # the CreateTaskResult
    assert ("out", "notification", "notifications/tasks/status") in marked
    assert ("out", "request", "elicitation/create") in marked
    assert ("in", "response", "elicitation/create") in marked  # the client's answer
    assert ("in", "request", "tasks/result") in marked and ("out", "response", "tasks/result") in marked
    assert [r.kind for r in srv.traffic.filter("tasks/get", task="f" * 32)] == ["request", "error"]
    assert {r.task for r in srv.traffic.filter(task=True)} == {tid, "f" * 32}
    assert all(r.task is None for r in srv.traffic.filter("initialize"))
    assert "[task " in srv.traffic.table()
