"""Dialects: `dialect=` makes the server speak like a peer on each point where peers differ. Each
point is asserted here against the peer's own behaviour, captured live from the real peer: a
server written with the official Python SDK (tests/peers/python_sdk_server.py), one written with
the official TypeScript SDK (tests/peers/typescript_sdk_server.mjs, on the SDK the reference's
install brings) and the reference server itself; the official Python client then sees the same."""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import queue
import re
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, MCPError

from everything_mcp import ConfigError, Server

from conftest import WAIT, texts

ROOT = pathlib.Path(__file__).resolve().parent.parent
PEERS = pathlib.Path(__file__).parent / "peers"
NODE_MODULES = ROOT / ".cache" / "reference" / "node_modules"
REFERENCE = NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
HAVE_NODE_PEERS = shutil.which("node") is not None and REFERENCE.exists()
needs_node = pytest.mark.skipif(
    not HAVE_NODE_PEERS,
    reason="the reference's install (.cache/reference: `python -m bench.side_by_side --install`) or node is missing",
)

HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def peer(command: list[str], ready: str, env: dict[str, str] | None = None) -> Iterator[None]:
    """A peer server process, once its stderr says `ready`."""
    proc = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stderr or []], daemon=True).start()
    try:
        while ready not in lines.get(timeout=WAIT):
            pass
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=WAIT)


@contextlib.contextmanager
def python_sdk() -> Iterator[str]:
    port = free_port()
    with peer([sys.executable, str(PEERS / "python_sdk_server.py"), "--http", str(port)], "Uvicorn running on"):
        yield f"http://127.0.0.1:{port}/mcp"


@contextlib.contextmanager
def typescript_sdk() -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "PEER_NODE_MODULES": str(NODE_MODULES)}
    with peer(["node", str(PEERS / "typescript_sdk_server.mjs"), "--http", str(port)], "listening on", env):
        yield f"http://127.0.0.1:{port}/mcp"


@contextlib.contextmanager
def reference() -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "PORT": str(port)}
    with peer(["node", str(REFERENCE), "streamableHttp"], str(port), env):
        yield f"http://127.0.0.1:{port}/mcp"


@contextlib.contextmanager
def ours(dialect: str) -> Iterator[str]:
    with Server(dialect=dialect) as srv:
        yield srv.start_http()


class Session:
    """A handshake-era Streamable HTTP session, frame by frame: each answer's raw body and its
    JSON-RPC message (from a JSON body or the SSE stream's `data:` line)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.http = httpx.Client(timeout=WAIT)
        first = self.http.post(url, json=INIT, headers=HEADERS)
        self.init = first
        self.headers = {**HEADERS, "mcp-protocol-version": "2025-11-25"}
        if "mcp-session-id" in first.headers:
            self.headers["mcp-session-id"] = first.headers["mcp-session-id"]
        self.http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=self.headers)

    def call(self, method: str, params: dict[str, Any]) -> tuple[httpx.Response, dict[str, Any]]:
        r = self.http.post(
            self.url, json={"jsonrpc": "2.0", "id": 7, "method": method, "params": params}, headers=self.headers
        )
        return r, message(r)


def message(r: httpx.Response) -> dict[str, Any]:
    if r.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in r.text.splitlines() if line.startswith("data:") and line[5:].strip()]
        return dict(json.loads(data[-1]))
    return dict(r.json())


def frames(r: httpx.Response) -> list[dict[str, Any]]:
    """Every JSON-RPC message of an SSE answer, in order (member order kept)."""
    return [json.loads(line[5:]) for line in r.text.splitlines() if line.startswith("data:") and line[5:].strip()]


def framing(body: bytes) -> bytes:
    """An SSE body with each `data:` line's JSON replaced by `{}`: the bytes around the frames."""
    out = []
    for line in body.split(b"\n"):
        out.append(b"data: {}\r" if line.startswith(b"data: {") and line.endswith(b"\r") else line)
        if line.startswith(b"data: {") and not line.endswith(b"\r"):
            out[-1] = b"data: {}"
    return b"\n".join(out)


def probe(session: Session) -> tuple[dict[str, Any], ...]:
    """A peer's answers on the points: an unknown tool, prompt and resource, a successful call."""
    return (
        session.call("tools/call", {"name": "nope", "arguments": {}})[1],
        session.call("prompts/get", {"name": "nope"})[1],
        session.call("resources/read", {"uri": "nope://x"})[1],
        session.call("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})[1],
    )


def test_python_sdk_sse_bytes_and_answers() -> None:
    with python_sdk() as url:
        theirs = Session(url)
        their_tool, their_prompt, their_resource, their_ok = probe(theirs)
    with ours("python-sdk") as url:
        mine = Session(url)
        # SSE: CRLF line ends, `event: message` and one `data:` line, no event id, no priming event.
        assert framing(mine.init.content) == framing(theirs.init.content) == b"event: message\r\ndata: {}\r\n\r\n"
        assert mine.call("tools/call", {"name": "nope", "arguments": {}})[1]["result"] == their_tool["result"]
        assert their_tool["result"] == {"content": [{"text": "Unknown tool: nope", "type": "text"}], "isError": True}
        assert mine.call("prompts/get", {"name": "nope"})[1]["error"] == their_prompt["error"]
        assert their_prompt["error"] == {"code": 0, "message": "Unknown prompt: nope"}
        assert mine.call("resources/read", {"uri": "nope://x"})[1]["error"] == their_resource["error"]
        # A successful result says isError: false, as every Python SDK result does.
        assert their_ok["result"]["isError"] is False
        ok = mine.call("tools/call", {"name": "echo", "arguments": {"message": "hi"}})[1]
        assert ok["result"]["isError"] is False


def test_python_sdk_reads_the_era_from_the_header_alone() -> None:
    envelope = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": envelope}}
    with python_sdk() as url:
        theirs = httpx.post(url, json=body, headers=HEADERS, timeout=WAIT)
    with ours("python-sdk") as url:
        mine = httpx.post(url, json=body, headers=HEADERS, timeout=WAIT)
    with ours("typescript-sdk") as url:
        by_body = httpx.post(url, json=body, headers=HEADERS, timeout=WAIT)
    assert theirs.status_code == mine.status_code == 400
    assert (
        mine.content
        == theirs.content
        == (b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Bad Request: Missing session ID"}}')
    )
    assert re.fullmatch("[0-9a-f]{32}", mine.headers["mcp-session-id"])
    assert re.fullmatch("[0-9a-f]{32}", theirs.headers["mcp-session-id"])
    # Elsewhere the envelope decides, and the missing header is the spec's -32020.
    assert by_body.status_code == 400 and by_body.json()["error"]["code"] == -32020


@needs_node
def test_typescript_sdk_answers() -> None:
    with typescript_sdk() as url:
        theirs = Session(url)
        their_tool, their_prompt, their_resource, their_ok = probe(theirs)
        counted = theirs.call("tools/call", {"name": "count", "arguments": {"steps": 1}, "_meta": {"progressToken": 5}})
    with ours("typescript-sdk") as url:
        mine = Session(url)
        # SSE: LF line ends, no event id, no priming event.
        assert framing(mine.init.content) == framing(theirs.init.content) == b"event: message\ndata: {}\n\n"
        assert mine.call("tools/call", {"name": "nope", "arguments": {}})[1]["result"] == their_tool["result"]
        assert their_tool["result"]["content"][0]["text"] == "MCP error -32602: Tool nope not found"
        assert mine.call("prompts/get", {"name": "nope"})[1]["error"] == their_prompt["error"]
        assert mine.call("resources/read", {"uri": "nope://x"})[1]["error"] == their_resource["error"]
        assert "isError" not in their_ok["result"]
        assert "isError" not in mine.call("tools/call", {"name": "echo", "arguments": {"message": "hi"}})[1]["result"]
        # Member order: the SDK spreads the message, then adds jsonrpc and id.
        progress = {"name": "trigger-long-running-operation", "arguments": {"duration": 0.01, "steps": 1}}
        ran = mine.call("tools/call", {**progress, "_meta": {"progressToken": 5}})
        their_order = [list(m) for m in frames(counted[0])]
        assert their_order == [["method", "params", "jsonrpc"], ["result", "jsonrpc", "id"]]
        assert [list(m) for m in frames(ran[0])] == their_order
        assert list(their_prompt) == list(mine.call("prompts/get", {"name": "nope"})[1]) == ["jsonrpc", "id", "error"]


def ids_named(body: bytes) -> bytes:
    """An SSE body's framing with every event id written `X`."""
    return re.sub(rb"(?m)^id: .*$", b"id: X", framing(body))


@needs_node
def test_reference_sse_and_unknown_session_status() -> None:
    ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
    unknown = {**HEADERS, "mcp-session-id": "no-such-session", "mcp-protocol-version": "2025-11-25"}
    echo = {"name": "echo", "arguments": {"message": "x"}}
    with reference() as url:
        theirs = httpx.post(url, json=ping, headers=unknown, timeout=WAIT)
        their_session = Session(url)
        their_echo = their_session.call("tools/call", echo)[0]
    with ours("reference") as url:
        mine = httpx.post(url, json=ping, headers=unknown, timeout=WAIT)
        my_session = Session(url)
        my_echo = my_session.call("tools/call", echo)[0]
    # A priming event with an id and no retry, then the answer with its id; the TypeScript SDK's
    # member order; the same bytes but for the ids.
    assert ids_named(their_echo.content) == b"id: X\ndata: \n\nevent: message\nid: X\ndata: {}\n\n"
    assert ids_named(my_echo.content) == ids_named(their_echo.content)
    assert my_echo.content.split(b"data: ")[-1] == their_echo.content.split(b"data: ")[-1]
    assert ids_named(my_session.init.content) == ids_named(their_session.init.content)
    with ours("python-sdk") as url:
        spec = httpx.post(url, json=ping, headers=unknown, timeout=WAIT)
    assert theirs.status_code == mine.status_code == 400
    assert spec.status_code == 404


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("dialect", "text"),
    [("python-sdk", "Unknown tool: nope"), ("typescript-sdk", "MCP error -32602: Tool nope not found")],
)
async def test_the_official_client_sees_the_dialect(dialect: str, text: str) -> None:
    with Server(dialect=dialect) as srv:
        url = srv.start_http()
        with anyio.fail_after(WAIT):
            async with Client(url, mode="legacy") as client:
                r = await client.call_tool("nope", {})
                assert r.is_error is True and texts(r) == [text]
                with pytest.raises(MCPError):
                    await client.get_prompt("nope")
            # The stateless era: the Python SDK answers so there too; the TypeScript SDK installed
            # here predates the era, so this server's own answer stands.
            async with Client(url) as client:
                if dialect == "python-sdk":
                    r = await client.call_tool("nope", {})
                    assert r.is_error is True and texts(r) == [text]
                else:
                    with pytest.raises(MCPError, match="nope"):
                        await client.call_tool("nope", {})


def test_an_unknown_dialect_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match='unknown dialect "go-sdk"; known: python-sdk, typescript-sdk, reference'):
        Server(dialect="go-sdk")


def test_universal_mcp_sdk_over_http() -> None:
    """The kit as its README describes it (it is not published, so it cannot run here)."""
    with Server(dialect="universal-mcp-sdk") as srv:
        url = srv.start_http()
        http = httpx.Client(timeout=WAIT)
        json_only = {"content-type": "application/json"}

        def post(body: dict[str, Any]) -> httpx.Response:
            return http.post(url, json={"jsonrpc": "2.0", **body}, headers=json_only)

        init = post({"id": 1, "method": "initialize", "params": {}})
        assert init.status_code == 200 and init.headers["content-type"] == "application/json"
        assert "mcp-session-id" not in init.headers
        assert init.json()["result"]["protocolVersion"] == "2024-11-05"
        assert init.headers["access-control-allow-origin"] == "*"
        # No session: each POST stands alone; a notification is 204 with no body.
        initialized = post({"method": "initialized"})
        assert (initialized.status_code, initialized.content) == (204, b"")
        assert "echo" in [t["name"] for t in post({"id": 2, "method": "tools/list"}).json()["result"]["tools"]]

        def failure(arguments: dict[str, Any], name: str = "echo") -> dict[str, Any]:
            return dict(
                post({"id": 3, "method": "tools/call", "params": {"name": name, "arguments": arguments}}).json()
            )

        assert failure({})["result"] == {
            "content": [{"type": "text", "text": "[Error] [echo] Error: Missing required argument: message"}],
            "isError": True,
        }
        assert failure({}, "nope")["result"]["content"][0]["text"] == "[Error] [nope] Error: Unknown tool: nope"
        # Only the top-level `required` is checked: a number where a string is declared passes.
        assert failure({"message": 5})["result"] == {"content": [{"type": "text", "text": "Echo: "}]}
        assert post({"id": 4, "method": "prompts/list"}).json()["error"]["code"] == -32601
        described = http.get(url)
        assert described.status_code == 200 and described.json()["protocolVersion"] == "2024-11-05"
        assert http.get(f"{srv.base_url}/").json() == {"status": "ok"}
        preflight = http.options(url, headers={"origin": "http://app.test", "access-control-request-method": "POST"})
        assert preflight.status_code == 204 and preflight.headers["access-control-allow-origin"] == "*"
        # Only 2024-11-05: a 2026 request has no era to be served in.
        with pytest.raises(ConfigError, match="speaks 2024-11-05 only"):
            Server(dialect="universal-mcp-sdk", revisions=["2025-11-25"])
        with pytest.raises(ConfigError, match=r"era stateless serves none of the allowed revisions \(2024-11-05\)"):
            Server(dialect="universal-mcp-sdk", era="stateless")


@pytest.mark.anyio
async def test_universal_mcp_sdk_with_the_official_client() -> None:
    with Server(dialect="universal-mcp-sdk") as srv:
        url = srv.start_http()
        with anyio.fail_after(WAIT):
            async with Client(url, mode="legacy") as client:
                assert client.protocol_version == "2024-11-05"
                assert texts(await client.call_tool("echo", {"message": "hi"})) == ["Echo: hi"]
                r = await client.call_tool("nope", {})
                assert r.is_error is True and texts(r) == ["[Error] [nope] Error: Unknown tool: nope"]
        # stdio: the same bodies, `initialize` with `{}` taken.
        conn = srv.connect()
        conn.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}))
        assert json.loads(conn.recv(timeout=WAIT) or "{}")["result"]["protocolVersion"] == "2024-11-05"


@needs_node
@pytest.mark.parametrize("toggled", [True, False], ids=["a timer runs", "no timer"])
def test_the_reference_outlives_its_stdin_while_a_timer_runs(toggled: bool) -> None:
    init = {**INIT, "params": {**INIT["params"], "protocolVersion": "2025-06-18"}}
    frames = [init, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    if toggled:
        frames.append(
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "toggle-simulated-logging"}}
        )
    ours_cmd = [sys.executable, "-m", "everything_mcp", "stdio", "--dialect", "reference"]
    for command in (["node", str(REFERENCE), "stdio"], ours_cmd):
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdin is not None and proc.stdout is not None
        try:
            for frame in frames:
                proc.stdin.write(json.dumps(frame).encode() + b"\n")
                proc.stdin.flush()
            answered: set[Any] = set()
            while answered != ({1, 2} if toggled else {1}):
                answered.add(json.loads(proc.stdout.readline()).get("id"))
                answered.discard(None)
            proc.stdin.close()
            if toggled:
                # Still running after its stdin ended: no exit within a second.
                with pytest.raises(subprocess.TimeoutExpired):
                    proc.wait(timeout=1.0)
            else:
                assert proc.wait(timeout=WAIT) == 0, command
        finally:
            proc.kill()
            proc.wait(timeout=WAIT)
            proc.stdout.close()


def test_python_sdk_stateless_answers_and_http_refusals() -> None:
    envelope = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    modern = {**HEADERS, "mcp-protocol-version": "2026-07-28"}

    def stateless(url: str, method: str, params: dict[str, Any]) -> httpx.Response:
        named = params.get("name") or params.get("uri")
        headers = {**modern, "mcp-method": method, **({"mcp-name": named} if named else {})}
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": envelope}}
        return httpx.post(url, json=body, headers=headers, timeout=WAIT)

    def answers(url: str) -> list[Any]:
        got: list[Any] = []
        for method, params in [
            ("tools/call", {"name": "nope", "arguments": {}}),
            ("prompts/get", {"name": "nope"}),
            ("resources/read", {"uri": "nope://x"}),
            ("foo/bar", {}),
        ]:
            r = stateless(url, method, params)
            message = r.json()
            result = message.get("result")
            if result is not None:
                result = {k: v for k, v in result.items() if k not in ("_meta", "resultType")}
            got.append((r.status_code, result, message.get("error")))
        got.append(Session(url).call("foo/bar", {})[1]["error"])
        accept = httpx.post(url, content=b"{}", headers={**HEADERS, "accept": "application/json"}, timeout=WAIT)
        got.append((accept.status_code, accept.json()))
        plain = httpx.post(url, content=b"{}", headers={**HEADERS, "content-type": "text/plain"}, timeout=WAIT)
        got.append(
            (plain.status_code, plain.text, plain.headers.get("content-type", "").startswith("application/json"))
        )
        deleted = httpx.delete(url, headers={"mcp-protocol-version": "2026-07-28"}, timeout=WAIT)
        got.append((deleted.status_code, deleted.headers.get("allow"), deleted.content))
        return got

    with python_sdk() as url:
        theirs = answers(url)
    with ours("python-sdk") as url:
        mine = answers(url)
    assert mine == theirs
    assert theirs[1] == (200, None, {"code": -32603, "message": "Internal server error"})
    assert theirs[3] == (404, None, {"code": -32601, "message": "Method not found", "data": "foo/bar"})
    assert theirs[-2] == (400, "Invalid Content-Type header", False)
    assert theirs[-1] == (405, "POST", b"")
