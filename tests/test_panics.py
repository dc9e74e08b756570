"""No panic crosses into Python, and none takes the server down: every kind of Python handler
raises PyO3's `PanicException` (which PyO3 turns back into a Rust panic when Rust reads it), the
client gets an error answer, and the server serves the next request. Over a real in-process
connection (docs/reliability.md, "Shutdown and the Python boundary")."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from everything_mcp import Server
from everything_mcp._core import PanicException

from conftest import WAIT


def boom() -> str:
    raise PanicException("boom")


async def aboom() -> str:
    raise PanicException("boom")


def boom_by_id(id: str) -> str:
    raise PanicException("boom")


def register_tool(srv: Server) -> tuple[str, dict[str, Any]]:
    srv.tool("panics")(boom)
    return "tools/call", {"name": "panics", "arguments": {}}


def register_async_tool(srv: Server) -> tuple[str, dict[str, Any]]:
    srv.tool("apanics")(aboom)
    return "tools/call", {"name": "apanics", "arguments": {}}


def register_task_tool(srv: Server) -> tuple[str, dict[str, Any]]:
    srv.tool("tpanics", task_support="optional")(boom)
    return "tools/call", {"name": "tpanics", "arguments": {}, "task": {}}


def register_resource(srv: Server) -> tuple[str, dict[str, Any]]:
    srv.resource("test://panics")(boom)
    return "resources/read", {"uri": "test://panics"}


def register_template(srv: Server) -> tuple[str, dict[str, Any]]:
    srv.resource_template("test://panics/{id}")(boom_by_id)
    return "resources/read", {"uri": "test://panics/1"}


def register_prompt(srv: Server) -> tuple[str, dict[str, Any]]:
    srv.prompt("panics")(boom)
    return "prompts/get", {"name": "panics", "arguments": {}}


def register_completion(srv: Server) -> tuple[str, dict[str, Any]]:
    srv.prompt("city")(lambda city: f"About {city}")

    def complete(value: str, arguments: dict[str, str]) -> list[str]:
        raise PanicException("boom")

    srv.completion("city", "city")(complete)
    params = {"ref": {"type": "ref/prompt", "name": "city"}, "argument": {"name": "city", "value": "P"}}
    return "completion/complete", params


ENTRY_POINTS: dict[str, Callable[[Server], tuple[str, dict[str, Any]]]] = {
    "sync tool": register_tool,
    "async tool": register_async_tool,
    "tool run as a task": register_task_tool,
    "resource": register_resource,
    "resource template": register_template,
    "prompt": register_prompt,
    "completion": register_completion,
}


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_a_handler_that_panics_gets_an_error_answer_and_the_server_serves_on(entry: str) -> None:
    with Server(catalogs=["none"]) as srv:
        method, params = ENTRY_POINTS[entry](srv)
        conn = srv.connect()

        def rpc(id: int, method: str, params: dict[str, Any] | None = None) -> Any:
            conn.send(json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params or {}}))
            while True:
                frame = json.loads(conn.recv(timeout=WAIT) or "null")
                assert frame is not None, "the connection closed"
                if frame.get("id") == id and "method" not in frame:
                    return frame

        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        rpc(0, "initialize", init)
        conn.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        answer = rpc(1, method, params)
        if "task" in params:
            # The task fails; reading its result gives the failure.
            task_id = answer["result"]["task"]["taskId"]
            answer = rpc(2, "tasks/result", {"taskId": task_id})
        failed = "error" in answer or answer["result"].get("isError") is True
        assert failed, answer
        assert "boom" in json.dumps(answer) or "panic" in json.dumps(answer).lower(), answer
        assert rpc(3, "ping") == {"jsonrpc": "2.0", "id": 3, "result": {}}
