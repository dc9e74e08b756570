"""Tasks with the official `mcp` 2.x client, in both of its modes. It has no tasks API of its
own, but its extension interface lets a client claim the `resultType: "task"` shape of
`tools/call` and resolve it (here: poll `tasks/get`, answer `inputRequests` with
`tasks/update`), which is how a client builder adds the tasks extension to it. In
`mode="legacy"` (2025-11-25) it validates every `tools/call` answer as a `CallToolResult`, so it
can only call task-supporting tools the ordinary way; task-augmented calls are covered with raw
frames in `test_tasks_wire.py`."""

from __future__ import annotations

from typing import Any, Literal

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters, types
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp_types import CallToolResult, Result
from pydantic import TypeAdapter

from everything_mcp import Server

from conftest import STATELESS

pytestmark = pytest.mark.anyio

ANY = TypeAdapter(dict[str, Any])
ACCEPT = {"action": "accept", "content": {"confirm": True}}


class CreateTask(Result):
    """The tasks extension's `CreateTaskResult`, as far as a resolver needs it."""

    result_type: Literal["task"]
    task_id: str
    status: str


async def request(ctx: ClaimContext, method: str, params: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = await ctx.session.send_request(types.Request[Any, Any](method=method, params=params), ANY)
    return result


async def resolve(created: CreateTask, ctx: ClaimContext) -> CallToolResult:
    """Polls the task to its end, accepting every question it asks."""
    with anyio.fail_after(10):
        while True:
            task = await request(ctx, "tasks/get", {"taskId": created.task_id})
            if task["status"] == "completed":
                return CallToolResult.model_validate(task["result"])
            if task["status"] in ("failed", "cancelled"):
                raise AssertionError(f"the task ended {task['status']}: {task}")
            if task["status"] == "input_required":
                answers = dict.fromkeys(task["inputRequests"], ACCEPT)
                await request(ctx, "tasks/update", {"taskId": created.task_id, "inputResponses": answers})
            await anyio.sleep(0.01)


class Tasks(ClientExtension):
    """A minimal tasks extension for the official client."""

    identifier = "io.modelcontextprotocol/tasks"

    def claims(self) -> tuple[ResultClaim[CreateTask], ...]:
        return (ResultClaim(result_type="task", model=CreateTask, resolve=resolve),)


async def elicit(_context: Any, _params: Any) -> types.ElicitResult:
    """Declares `elicitation` (a task's question is answered by the resolver, not here)."""
    return types.ElicitResult(action="accept", content={"confirm": True})


def over_stdio(srv: Server) -> StdioServerParameters:
    command = srv.stdio_command
    return StdioServerParameters(command=command[0], args=command[1:])


async def test_the_default_mode_runs_tools_as_tasks_through_an_extension() -> None:
    with Server(catalogs=["conformance"]) as srv:
        with anyio.fail_after(20):
            async with Client(
                over_stdio(srv), extensions=[Tasks()], elicitation_callback=elicit, read_timeout_seconds=10
            ) as client:
                assert client.protocol_version == STATELESS
                assert client.server_capabilities is not None
                assert client.server_capabilities.extensions == {"io.modelcontextprotocol/tasks": {}}
                done = await client.call_tool("slow_compute", {"seconds": 0.05})
                assert done.content == [types.TextContent(type="text", text="Computed  after 0.05 s")]
                deleted = await client.call_tool("confirm_delete", {"filename": "x.txt"})
                assert deleted.content == [types.TextContent(type="text", text="Deleted x.txt")]
        assert [(t.tool, t.status) for t in srv.tasks] == [
            ("slow_compute", "completed"),
            ("confirm_delete", "completed"),
        ]
        methods = {r.method for r in srv.traffic.filter(era="stateless") if r.task}
        assert {"tasks/get", "tasks/update"} <= methods


async def test_over_http_the_sdk_omits_the_routing_header_tasks_need() -> None:
    # SEP-2663: a client MUST send `Mcp-Name: <taskId>` on tasks/get, tasks/update and
    # tasks/cancel over Streamable HTTP, and a server MUST refuse a request without it
    # (-32020). mcp 2.3 sends it for tools/call, prompts/get and resources/read only.
    with Server(catalogs=["conformance"]) as srv:
        url = srv.start_http()
        with anyio.fail_after(20):
            async with Client(url, extensions=[Tasks()], read_timeout_seconds=10) as client:
                with pytest.raises(MCPError) as refused:
                    await client.call_tool("slow_compute", {"seconds": 0})
        assert refused.value.code == -32020
        assert "Mcp-Name" in refused.value.message


async def test_legacy_mode_calls_task_supporting_tools_the_ordinary_way() -> None:
    with Server(catalogs=["conformance"]) as srv:
        with anyio.fail_after(20):
            async with Client(over_stdio(srv), mode="legacy", read_timeout_seconds=10) as client:
                assert client.protocol_version == "2025-11-25"
                tools = {t.name: t for t in (await client.list_tools()).tools}
                assert tools["slow_compute"].execution == types.ToolExecution(task_support="optional")
                plain = await client.call_tool("slow_compute", {"seconds": 0})
                assert plain.content == [types.TextContent(type="text", text="Computed  after 0 s")]
                refused = await client.call_tool("failing_job", {})
                assert refused.is_error
                assert refused.content == [
                    types.TextContent(
                        type="text",
                        text="MCP error -32601: Tool failing_job requires task augmentation (taskSupport: 'required')",
                    )
                ]
        assert srv.tasks == []
