"""`RpcError` raised from every kind of Python handler answers the request with exactly that
JSON-RPC error, as the official `mcp` client sees it and as the traffic recorded it; any other
exception stays an `isError` result (tools) or a `-32603` error (everything else)."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.types import PromptReference, Request, RequestParams, TextContent

from everything_mcp import RpcError, Server

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]


class RefuseParams(RequestParams):
    amount: int


class RefuseRequest(Request[RefuseParams, Literal["vendor/refuse"]]):
    """A custom method the `mcp` client has no helper for."""

    method: Literal["vendor/refuse"] = "vendor/refuse"


def error(code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error object as it must be on the wire: no `data` member when there is none."""
    return {"code": code, "message": message} | ({} if data is None else {"data": data})


@pytest.mark.parametrize("transport", ["http", "stdio"])
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_rpc_error_from_every_handler_kind_is_the_answer_on_the_wire(mode: str, transport: str) -> None:
    """In both eras (the client's default `auto` speaks 2026-07-28, `legacy` the handshake) and on
    both transports."""
    with Server(catalogs=["none"]) as srv:

        @srv.tool()
        def withdraw(amount: int) -> str:
            raise RpcError(-32042, "limit exceeded", {"limit": 100, "asked": amount})

        @srv.tool()
        async def lookup(key: str) -> str:
            await asyncio.sleep(0)  # raised after a real suspension, from the task
            raise RpcError(-32602, f"unknown key {key!r}")

        @srv.tool()
        def parse(text: str) -> int:
            return int(text)  # ValueError: an isError result, not a JSON-RPC error

        @srv.resource("demo://vault")
        def vault() -> str:
            raise RpcError(-32002, "Resource not found", {"uri": "demo://vault"})

        @srv.resource_template("demo://items/{item}")
        async def item(item: str) -> str:
            raise RpcError(-32602, f"no item {item}", None)

        @srv.resource("demo://broken")
        def broken() -> str:
            raise KeyError("shelf")

        @srv.prompt()
        def secret(level: str) -> str:
            raise RpcError(-32042, "not allowed", [1, "two", None])

        @srv.completion("secret", "level")
        async def levels(value: str, arguments: dict[str, str]) -> list[str]:
            raise RpcError(-32602, "no completions today", {"argument": "level", "value": value})

        @srv.method("vendor/refuse")
        def refuse(amount: int) -> dict[str, int]:
            raise RpcError(-32000, "vendor says no", {"amount": amount})

        target: Any = srv.start_http() if transport == "http" else StdioServerParameters(**srv.stdio_params)
        seen: list[tuple[str, dict[str, Any]]] = []

        async def expect(method: str, want: dict[str, Any], call: Any) -> None:
            with pytest.raises(MCPError) as raised:
                await call
            got = raised.value.error
            assert (got.code, got.message, got.data) == (want["code"], want["message"], want.get("data"))
            seen.append((method, want))

        with anyio.fail_after(20):
            async with Client(target, mode=mode) as client:  # type: ignore[arg-type]
                assert client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
                limit = error(-32042, "limit exceeded", {"limit": 100, "asked": 500})
                await expect("tools/call", limit, client.call_tool("withdraw", {"amount": 500}))
                await expect("tools/call", error(-32602, "unknown key 'k'"), client.call_tool("lookup", {"key": "k"}))
                not_found = error(-32002, "Resource not found", {"uri": "demo://vault"})
                await expect("resources/read", not_found, client.read_resource("demo://vault"))
                await expect("resources/read", error(-32602, "no item 7"), client.read_resource("demo://items/7"))
                internal = error(-32603, "Internal error: KeyError: 'shelf'")
                await expect("resources/read", internal, client.read_resource("demo://broken"))
                prompt = error(-32042, "not allowed", [1, "two", None])
                await expect("prompts/get", prompt, client.get_prompt("secret", {"level": "top"}))
                ref = PromptReference(type="ref/prompt", name="secret")
                completion = error(-32602, "no completions today", {"argument": "level", "value": "t"})
                await expect("completion/complete", completion, client.complete(ref, {"name": "level", "value": "t"}))
                refused = error(-32000, "vendor says no", {"amount": 3})
                request = RefuseRequest(params=RefuseParams(amount=3))
                await expect("vendor/refuse", refused, client.session.send_request(request, dict))

                r = await client.call_tool("parse", {"text": "x"})
                assert r.is_error is True
                text = "ValueError: invalid literal for int() with base 10: 'x'"
                assert r.content == [TextContent(type="text", text=text)]

        # The recording holds exactly these error frames, in this order, each answering its request.
        frames = srv.traffic.filter(kind="error", dir="out")
        assert len(frames) == len(seen) == 8
        for r, (method, want) in zip(frames, seen, strict=True):
            assert (r.method, r.msg) == (method, {"jsonrpc": "2.0", "id": r.id, "error": want})
        requests = {r.id: r.method for r in srv.traffic.requests()}
        assert all(requests[r.id] == r.method for r in frames)
        # The handles recorded what the functions raised, async ones included.
        assert isinstance(withdraw.calls[0].error, RpcError) and withdraw.calls[0].error.data["asked"] == 500
        assert isinstance(lookup.calls[0].error, RpcError) and lookup.calls[0].ended >= lookup.calls[0].started
        assert isinstance(levels.calls[0].error, RpcError)
        assert levels.calls[0].arguments == {"value": "t", "arguments": {}}


def test_rpc_error_checks_its_code_and_data() -> None:
    with pytest.raises(TypeError, match="64-bit integer"):
        RpcError(True, "a bool is no code")
    with pytest.raises(TypeError, match="64-bit integer"):
        RpcError(2**63, "too large")
    e = RpcError(-32602, "bad", {"field": "x"})
    assert (e.code, e.message, e.data, str(e)) == (-32602, "bad", {"field": "x"}, "-32602: bad")

    with Server(catalogs=["none"]) as srv:

        @srv.method("vendor/odd")
        def odd() -> None:
            raise RpcError(-32000, "odd", {1, 2})  # a set is no JSON: the request still gets an answer

        conn = srv.connect()
        conn.send('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
                  '"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}')  # fmt: skip
        conn.recv(timeout=5)
        conn.send('{"jsonrpc":"2.0","id":1,"method":"vendor/odd"}')
        assert conn.recv(timeout=5) is not None
        (frame,) = srv.traffic.filter(kind="error", dir="out")
        assert frame.msg["error"]["code"] == -32603
        assert frame.msg["error"]["message"].startswith("Internal error: the data of RpcError(-32000) is not JSON")
