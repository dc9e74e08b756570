"""The `everything-v1` catalog (the reference server's legacy surface): exact tool texts,
v1 error shapes, the 100 paginated resources with `btoa` cursors, prompts, completions and the
automatic per-session timers; raw frames over an in-process connection, and the official `mcp`
client over stdio and Streamable HTTP for sampling, elicitation, roots, progress and printEnv."""

from __future__ import annotations

import base64
import json
import os
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CreateMessageResult, ElicitResult, ListRootsResult, Root, TextContent

from everything_mcp import Server

from conftest import WAIT, texts

TOOLS = [
    "echo",
    "add",
    "longRunningOperation",
    "printEnv",
    "sampleLLM",
    "getTinyImage",
    "annotatedMessage",
    "getResourceReference",
    "getResourceLinks",
    "structuredContent",
    "zip",
]
TINY = (
    "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAIklEQVR42mNgaGgAov89DECEwsYuCmRjF4VIYDWNgQ52AADb"
    "+VFhTLusoAAAAABJRU5ErkJggg=="
)
LINKS_INTRO = (
    "Here are {} resource links to resources available in this server"
    " (see full output in tool response if your client does not support resource_link yet):"
)


class Raw:
    """A raw JSON-RPC session over an in-process connection; notifications are kept."""

    def __init__(self, srv: Server, capabilities: dict[str, Any] | None = None) -> None:
        self.conn = srv.connect()
        self.next_id = 0
        self.notes: list[dict[str, Any]] = []
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": capabilities or {},
            "clientInfo": {"name": "pytest", "version": "1"},
        }
        self.result("initialize", init)
        self.conn.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def _recv(self, deadline: float) -> dict[str, Any]:
        frame = self.conn.recv(timeout=max(0.01, deadline - time.monotonic()))
        assert frame is not None, "no frame from the server in time"
        msg: dict[str, Any] = json.loads(frame)
        return msg

    def reply(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.conn.send(json.dumps(msg))
        deadline = time.monotonic() + WAIT
        while True:
            got = self._recv(deadline)
            if got.get("id") == self.next_id and "method" not in got:
                return got
            self.notes.append(got)

    def result(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        got = self.reply(method, params)
        assert "result" in got, got
        result: dict[str, Any] = got["result"]
        return result

    def error(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        got = self.reply(method, params)
        assert "error" in got, got
        error: dict[str, Any] = got["error"]
        return error

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        content: list[dict[str, Any]] = self.result("tools/call", {"name": name, "arguments": arguments or {}})[
            "content"
        ]
        return content

    def wait_note(self, method: str, count: int = 1) -> list[dict[str, Any]]:
        """Waits (bounded) until `count` notifications of `method` arrived; returns them."""
        deadline = time.monotonic() + WAIT
        while len(seen := [n for n in self.notes if n.get("method") == method]) < count:
            self.notes.append(self._recv(deadline))
        return seen


@pytest.fixture
def srv() -> Iterator[Server]:
    with Server(catalogs=["everything-v1"], tick=0.05) as s:
        yield s


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def resource(n: int) -> dict[str, Any]:
    uri = f"test://static/resource/{n}"
    if n % 2:
        return {
            "uri": uri,
            "name": f"Resource {n}",
            "mimeType": "text/plain",
            "text": f"Resource {n}: This is a plaintext resource",
        }
    blob = base64.b64encode(f"Resource {n}: This is a base64 blob".encode()).decode()
    return {"uri": uri, "name": f"Resource {n}", "mimeType": "application/octet-stream", "blob": blob}


def link(n: int) -> dict[str, Any]:
    kind, mime = ("plaintext resource", "text/plain") if n % 2 else ("binary blob resource", "application/octet-stream")
    return {
        "type": "resource_link",
        "uri": f"test://static/resource/{n}",
        "name": f"Resource {n}",
        "description": f"Resource {n}: {kind}",
        "mimeType": mime,
    }


def test_tools_listed_with_v1_schemas(srv: Server) -> None:
    raw = Raw(srv)
    tools = raw.result("tools/list")["tools"]
    assert [t["name"] for t in tools] == TOOLS
    for t in tools:
        assert t["inputSchema"]["additionalProperties"] is False
        assert t["inputSchema"]["$schema"] == "http://json-schema.org/draft-07/schema#"
        assert "title" not in t and "annotations" not in t
    by_name = {t["name"]: t for t in tools}
    assert by_name["echo"]["description"] == "Echoes back the input"
    assert by_name["getResourceReference"]["inputSchema"]["properties"]["resourceId"] == {
        "type": "number",
        "minimum": 1,
        "maximum": 100,
        "description": "ID of the resource to reference (1-100)",
    }
    full = Raw(srv, {"roots": {}, "elicitation": {}, "sampling": {}})
    assert [t["name"] for t in full.result("tools/list")["tools"]] == [*TOOLS, "listRoots", "startElicitation"]


ANNOTATED_ERROR = {
    "type": "text",
    "text": "Error: Operation failed",
    "annotations": {"priority": 1, "audience": ["user", "assistant"]},
}

CASES: list[tuple[str, dict[str, Any], list[dict[str, Any]]]] = [
    ("echo", {"message": "hi"}, [text("Echo: hi")]),
    ("echo", {"message": ""}, [text("Echo: ")]),
    ("add", {"a": 2, "b": 3}, [text("The sum of 2 and 3 is 5.")]),
    ("add", {"a": 0.1, "b": 0.2}, [text("The sum of 0.1 and 0.2 is 0.30000000000000004.")]),
    (
        "longRunningOperation",
        {"duration": 0.1, "steps": 2},
        [text("Long running operation completed. Duration: 0.1 seconds, Steps: 2.")],
    ),
    (
        "getTinyImage",
        {},
        [
            text("This is a tiny image:"),
            {"type": "image", "data": TINY, "mimeType": "image/png"},
            text("The image above is the MCP tiny image."),
        ],
    ),
    ("annotatedMessage", {"messageType": "error"}, [ANNOTATED_ERROR]),
    (
        "annotatedMessage",
        {"messageType": "success", "includeImage": True},
        [
            {
                "type": "text",
                "text": "Operation completed successfully",
                "annotations": {"priority": 0.7, "audience": ["user"]},
            },
            {
                "type": "image",
                "data": TINY,
                "mimeType": "image/png",
                "annotations": {"priority": 0.5, "audience": ["user"]},
            },
        ],
    ),
    (
        "annotatedMessage",
        {"messageType": "debug"},
        [
            {
                "type": "text",
                "text": "Debug: Cache hit ratio 0.95, latency 150ms",
                "annotations": {"priority": 0.3, "audience": ["assistant"]},
            }
        ],
    ),
    (
        "getResourceReference",
        {"resourceId": 2},
        [
            text("Returning resource reference for Resource 2:"),
            {
                "type": "resource",
                "resource": {k: v for k, v in resource(2).items() if k != "name"},
            },
            text("You can access this resource using the URI: test://static/resource/2"),
        ],
    ),
    ("getResourceLinks", {}, [text(LINKS_INTRO.format(3)), link(1), link(2), link(3)]),
    ("getResourceLinks", {"count": 1}, [text(LINKS_INTRO.format(1)), link(1)]),
]


@pytest.mark.parametrize(("name", "args", "content"), CASES)
def test_tool_outputs(srv: Server, name: str, args: dict[str, Any], content: list[dict[str, Any]]) -> None:
    assert Raw(srv).call(name, args) == content


def test_structured_content_is_fixed(srv: Server) -> None:
    raw = Raw(srv)
    weather = {"temperature": 22.5, "conditions": "Partly cloudy", "humidity": 65}
    for location in ["Paris", "  10001 "]:
        r = raw.result("tools/call", {"name": "structuredContent", "arguments": {"location": location}})
        assert r == {
            "content": [text('{"temperature":22.5,"conditions":"Partly cloudy","humidity":65}')],
            "structuredContent": weather,
        }


def test_zip_of_data_urls(srv: Server) -> None:
    import io
    import zipfile

    files = {"a.txt": "data:text/plain;base64,SGVsbG8=", "b.txt": "data:,Hello%20world"}
    (block,) = Raw(srv).call("zip", {"files": files})
    assert block["type"] == "resource_link" and block["mimeType"] == "application/zip"
    prefix = "data:application/zip;base64,"
    assert block["uri"].startswith(prefix)
    archive = zipfile.ZipFile(io.BytesIO(base64.b64decode(block["uri"][len(prefix) :])))
    assert {n: archive.read(n) for n in archive.namelist()} == {"a.txt": b"Hello", "b.txt": b"Hello world"}


def test_v1_error_shapes(srv: Server) -> None:
    raw = Raw(srv)
    e = raw.error("tools/call", {"name": "echo", "arguments": {}})
    assert e["code"] == -32603
    assert json.loads(e["message"]) == [
        {
            "code": "invalid_type",
            "expected": "string",
            "received": "undefined",
            "path": ["message"],
            "message": "Required",
        }
    ]
    assert e["message"].startswith('[\n  {\n    "code": "invalid_type",')  # pretty-printed like zod
    e = raw.error("tools/call", {"name": "getResourceLinks", "arguments": {"count": 11}})
    assert json.loads(e["message"])[0]["message"] == "Number must be less than or equal to 10"
    e = raw.error("tools/call", {"name": "add", "arguments": {"a": "1", "b": 2}})
    assert json.loads(e["message"])[0]["message"] == "Expected number, received string"
    e = raw.error("tools/call", {"name": "structuredContent", "arguments": {"location": "   "}})
    assert json.loads(e["message"])[0]["message"] == "String must contain at least 1 character(s)"
    e = raw.error("tools/call", {"name": "zip", "arguments": {"files": {"p": "file:///etc/passwd"}}})
    assert e == {"code": -32603, "message": "Error fetching file file:///etc/passwd: fetch failed"}
    e = raw.error("resources/read", {"uri": "test://static/resource/101"})
    assert e == {"code": -32603, "message": "Unknown resource: test://static/resource/101"}
    e = raw.error("prompts/get", {"name": "resource_prompt", "arguments": {"resourceId": "0"}})
    assert e == {"code": -32603, "message": "Invalid resourceId: 0. Must be a number between 1 and 100."}
    # sampleLLM without the client's sampling capability: the SDK's error.
    e = raw.error("tools/call", {"name": "sampleLLM", "arguments": {"prompt": "x"}})
    assert e == {"code": -32603, "message": "Client does not support sampling (required for sampling/createMessage)"}


def test_resources_paginate_with_btoa_cursors(srv: Server) -> None:
    raw = Raw(srv)
    listed: list[dict[str, Any]] = []
    cursors: list[str] = []
    params: dict[str, Any] = {}
    for _ in range(10):
        page = raw.result("resources/list", params)
        assert len(page["resources"]) == 10
        listed += page["resources"]
        if "nextCursor" not in page:
            break
        cursors.append(page["nextCursor"])
        params = {"cursor": page["nextCursor"]}
    assert cursors == [base64.b64encode(str(i).encode()).decode() for i in range(10, 100, 10)]
    assert cursors[0] == "MTA="
    assert listed == [resource(n) for n in range(1, 101)]
    assert raw.result("resources/list", {"cursor": "YWJj"})["resources"][0]["uri"] == "test://static/resource/1"
    assert raw.error("resources/list", {"cursor": "!!"})["code"] == -32603
    assert raw.result("resources/templates/list")["resourceTemplates"] == [
        {
            "uriTemplate": "test://static/resource/{id}",
            "name": "Static Resource",
            "description": "A static resource with a numeric ID",
        }
    ]
    assert raw.result("resources/read", {"uri": "test://static/resource/2"})["contents"] == [resource(2)]
    assert raw.result("resources/read", {"uri": "test://static/resource/7"})["contents"] == [resource(7)]
    blob = raw.result("resources/read", {"uri": "test://static/resource/2"})["contents"][0]["blob"]
    assert blob == "UmVzb3VyY2UgMjogVGhpcyBpcyBhIGJhc2U2NCBibG9i"


def test_prompts(srv: Server) -> None:
    raw = Raw(srv)
    assert [p["name"] for p in raw.result("prompts/list")["prompts"]] == [
        "simple_prompt",
        "complex_prompt",
        "resource_prompt",
    ]
    r = raw.result("prompts/get", {"name": "simple_prompt"})
    assert r["messages"] == [{"role": "user", "content": text("This is a simple prompt without arguments.")}]
    r = raw.result("prompts/get", {"name": "complex_prompt", "arguments": {"temperature": "0.7"}})
    assert r["messages"] == [
        {"role": "user", "content": text("This is a complex prompt with arguments: temperature=0.7, style=undefined")},
        {
            "role": "assistant",
            "content": text(
                "I understand. You've provided a complex prompt with temperature and style arguments."
                " How would you like me to proceed?"
            ),
        },
        {"role": "user", "content": {"type": "image", "data": TINY, "mimeType": "image/png"}},
    ]
    r = raw.result("prompts/get", {"name": "complex_prompt", "arguments": {"temperature": "1", "style": "formal"}})
    assert r["messages"][0]["content"]["text"] == "This is a complex prompt with arguments: temperature=1, style=formal"
    r = raw.result("prompts/get", {"name": "resource_prompt", "arguments": {"resourceId": "4"}})
    assert r["messages"] == [
        {"role": "user", "content": text("This prompt includes Resource 4. Please analyze the following resource:")},
        {"role": "user", "content": {"type": "resource", "resource": resource(4)}},
    ]


@pytest.mark.parametrize(
    ("ref", "argument", "value", "values"),
    [
        ({"type": "ref/prompt", "name": "complex_prompt"}, "style", "f", ["formal", "friendly"]),
        ({"type": "ref/prompt", "name": "complex_prompt"}, "temperature", "", ["0", "0.5", "0.7", "1.0"]),
        ({"type": "ref/prompt", "name": "resource_prompt"}, "resourceId", "", ["1", "2", "3", "4", "5"]),
        ({"type": "ref/prompt", "name": "simple_prompt"}, "other", "", []),
        ({"type": "ref/resource", "uri": "test://static/resource/{id}"}, "id", "1", ["1"]),
    ],
)
def test_completions(srv: Server, ref: dict[str, Any], argument: str, value: str, values: list[str]) -> None:
    r = Raw(srv).result("completion/complete", {"ref": ref, "argument": {"name": argument, "value": value}})
    assert r == {"completion": {"values": values, "total": len(values), "hasMore": False}}


LOG_TEXTS = {
    "Debug-level message",
    "Info-level message",
    "Notice-level message",
    "Warning-level message",
    "Error-level message",
    "Critical-level message",
    "Alert level-message",
    "Emergency-level message",
}


def test_timers_updates_and_random_logs(srv: Server) -> None:
    raw = Raw(srv)
    raw.result("resources/subscribe", {"uri": "test://static/resource/1"})
    updates = raw.wait_note("notifications/resources/updated", 2)
    assert updates[0]["params"] == {"uri": "test://static/resource/1"}
    logs = raw.wait_note("notifications/message", 4)
    assert logs[0]["params"] == {
        "level": "info",
        "logger": "everything-server",
        "data": "Client does not support MCP roots protocol",
    }
    assert all(m["params"]["data"] in LOG_TEXTS and "logger" not in m["params"] for m in logs[1:])
    # The client's level filters the random messages.
    raw.result("logging/setLevel", {"level": "emergency"})
    raw.notes.clear()
    raw.wait_note("notifications/resources/updated", 3)
    assert all(m["params"]["level"] == "emergency" for m in raw.notes if m.get("method") == "notifications/message")
    raw.result("resources/unsubscribe", {"uri": "test://static/resource/1"})


# --- the official client over stdio and Streamable HTTP -------------------------------------------


class Seen:
    def __init__(self) -> None:
        self.sampling: list[Any] = []
        self.elicitation: list[Any] = []
        self.logs: list[Any] = []
        self.updates: list[str] = []
        self.got_log = anyio.Event()
        self.got_update = anyio.Event()

    async def sample(self, context: Any, params: Any) -> CreateMessageResult:
        self.sampling.append(params)
        return CreateMessageResult(role="assistant", content=TextContent(type="text", text="sampled reply"), model="m")

    async def elicit(self, context: Any, params: Any) -> ElicitResult:
        self.elicitation.append(params)
        return ElicitResult(action="accept", content={"name": "Ada", "check": True, "integer": 7})

    async def roots(self, context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri="file:///tmp/a", name="A"), Root(uri="file:///tmp/b")])

    async def log(self, params: Any) -> None:
        self.logs.append(params)
        if params.data in LOG_TEXTS or str(params.data).split(" - SessionId ")[0] in LOG_TEXTS:
            self.got_log.set()

    async def message(self, message: Any) -> None:
        if getattr(message, "method", None) == "notifications/resources/updated":
            self.updates.append(str(message.params.uri))
            self.got_update.set()


@asynccontextmanager
async def connect(
    transport: str, seen: Seen, http_url: str, env: dict[str, str] | None = None
) -> AsyncIterator[Client]:
    target: Any = http_url
    if transport == "stdio":
        args = ["-m", "everything_mcp", "stdio", "--catalog", "everything-v1", "--tick-ms", "50"]
        target = StdioServerParameters(command=sys.executable, args=args, env=env)
    client = Client(
        target,
        mode="legacy",
        read_timeout_seconds=10,
        sampling_callback=seen.sample,
        elicitation_callback=seen.elicit,
        list_roots_callback=seen.roots,
        logging_callback=seen.log,
        message_handler=seen.message,
    )
    async with client:
        yield client


@pytest.fixture
def http_server() -> Iterator[Server]:
    with Server(catalogs=["everything-v1"], tick=0.05) as s:
        s.start_http()
        yield s


pytestmark = pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")


@pytest.mark.anyio
async def test_client_features(transport: str, http_server: Server) -> None:
    seen = Seen()
    progress: list[tuple[float, float | None]] = []

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        progress.append((p, total))

    with anyio.fail_after(30):
        async with connect(transport, seen, http_server.http_url or "") as client:
            names = [t.name for t in (await client.list_tools()).tools]
            assert names == [*TOOLS, "listRoots", "startElicitation"]

            r = await client.call_tool("sampleLLM", {"prompt": "hello", "maxTokens": 5})
            assert texts(r) == ["LLM sampling result: sampled reply"]
            (asked,) = seen.sampling
            assert asked.messages[0].content.text == "Resource sampleLLM context: hello"
            assert (asked.system_prompt, asked.max_tokens, asked.temperature, asked.include_context) == (
                "You are a helpful test server.",
                5,
                0.7,
                "thisServer",
            )

            r = await client.call_tool("startElicitation", {})
            (asked,) = seen.elicitation
            assert asked.message == "Please provide inputs for the following fields:"
            assert asked.requested_schema["required"] == ["name"]
            got = texts(r)
            assert got[:2] == [
                "✅ User provided the requested information!",
                "User inputs:\n- Name: Ada\n- Agreed to terms: true\n- Favorite Integer: 7",
            ]
            assert (
                got[2].startswith("\nRaw result: {\n")
                and json.loads(got[2][len("\nRaw result: ") :])["action"] == "accept"
            )

            r = await client.call_tool("listRoots", {})
            assert texts(r) == [
                "Current MCP Roots (2 total):\n\n1. A\n   URI: file:///tmp/a\n\n2. Unnamed Root\n   URI: file:///tmp/b\n\n"
                "Note: This server demonstrates the roots protocol capability but doesn't actually access files."
                " The roots are provided by the MCP client and can be used by servers that need file system access."
            ]

            r = await client.call_tool(
                "longRunningOperation", {"duration": 0.1, "steps": 3}, progress_callback=on_progress
            )
            assert texts(r) == ["Long running operation completed. Duration: 0.1 seconds, Steps: 3."]
            assert progress == [(1.0, 3.0), (2.0, 3.0), (3.0, 3.0)]

            # The automatic timers: random logs and updates of subscribed resources.
            await client.set_logging_level("debug")
            with pytest.warns(Warning):
                await client.subscribe_resource("test://static/resource/3")
            await seen.got_update.wait()
            await seen.got_log.wait()
            assert seen.updates[0] == "test://static/resource/3"
            roots_logs = [m.data for m in seen.logs if m.logger == "everything-server"]
            assert "Initial roots received: 2 root(s) from client" in roots_logs


@pytest.mark.anyio
async def test_print_env_redacts_secrets() -> None:
    seen = Seen()
    env = {**os.environ, "MY_API_TOKEN": "tok-123", "DB_PASSWORD": "pw", "Plain_Var": "visible", "gh_auth_x": "a"}
    with anyio.fail_after(30):
        async with connect("stdio", seen, "", env=env) as client:
            (out,) = texts(await client.call_tool("printEnv", {}))
    printed = json.loads(out)
    assert printed["MY_API_TOKEN"] == "<redacted>"
    assert printed["DB_PASSWORD"] == "<redacted>"
    assert printed["gh_auth_x"] == "<redacted>"
    assert printed["Plain_Var"] == "visible"
    assert out.startswith("{\n  ") and "tok-123" not in out


def test_print_env_honours_expose_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_API_TOKEN", "tok-123")
    with Server(catalogs=["everything-v1"], expose_env=True) as srv:
        conn = srv.connect()
        hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        conn.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}))
        assert "result" in json.loads(conn.recv(timeout=10) or "")
        call = {"name": "printEnv", "arguments": {}}
        conn.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}))
        (block,) = json.loads(conn.recv(timeout=10) or "")["result"]["content"]
    assert json.loads(block["text"])["MY_API_TOKEN"] == "tok-123"


def test_v1_unknown_names_and_instructions() -> None:
    with Server(catalogs=["everything-v1"]) as srv:
        conn = srv.connect()
        hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        conn.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}))
        init = json.loads(conn.recv(timeout=10) or "")
        assert "🎉 Server instructions are working!" in init["result"]["instructions"]
        conn.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "nope"}}))
        assert json.loads(conn.recv(timeout=10) or "")["error"] == {"code": -32603, "message": "Unknown tool: nope"}
        conn.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": {"name": "nope"}}))
        assert json.loads(conn.recv(timeout=10) or "")["error"] == {"code": -32603, "message": "Unknown prompt: nope"}
