"""The `everything` catalog (the reference server's current surface) with the official `mcp`
client over stdio and Streamable HTTP: exact texts of every tool, prompt, resource and template,
capability-gated tools and their `list_changed`, completions, per-session state, redaction."""

from __future__ import annotations

import base64
import http.server
import json
import os
import re
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import (
    CreateMessageResult,
    ElicitResult,
    ListRootsResult,
    PromptReference,
    ResourceTemplateReference,
    Root,
    TextContent,
)

from everything_mcp import Server

from conftest import EVERYTHING_TOOLS, texts

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]

TIME = re.compile(r"\d{1,2}:\d{2}:\d{2} [AP]M")


@pytest.fixture
def http_server() -> Iterator[Server]:
    with Server(tick=0.05) as srv:
        srv.start_http()
        yield srv


class Peer:
    """The client side: callbacks that answer the server, and what arrived."""

    def __init__(self) -> None:
        self.notifications: list[Any] = []
        self.logs: list[Any] = []
        self.elicit_action = "accept"

    async def sample(self, context: Any, params: Any) -> CreateMessageResult:
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text="sampled"), model="m", stop_reason="endTurn"
        )

    async def elicit(self, context: Any, params: Any) -> ElicitResult:
        content = {"name": "Ada", "check": True, "integer": 7} if self.elicit_action == "accept" else None
        return ElicitResult(action=self.elicit_action, content=content)

    async def roots(self, context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri="file:///work", name="work"), Root(uri="file:///tmp")])

    async def log(self, params: Any) -> None:
        self.logs.append(params)

    async def message(self, message: Any) -> None:
        self.notifications.append(message)


@asynccontextmanager
async def connect(
    transport: str, peer: Peer, url: str, capabilities: bool = True, env: dict[str, str] | None = None
) -> AsyncIterator[Client]:
    target: Any = url
    if transport == "stdio":
        args = ["-m", "everything_mcp", "stdio", "--tick-ms", "50"]
        target = StdioServerParameters(command=sys.executable, args=args, env=env)
    extra: dict[str, Any] = {}
    if capabilities:
        extra = {
            "sampling_callback": peer.sample,
            "elicitation_callback": peer.elicit,
            "list_roots_callback": peer.roots,
        }
    client = Client(
        target, mode="legacy", read_timeout_seconds=10, logging_callback=peer.log, message_handler=peer.message, **extra
    )
    async with client:
        yield client


def method_of(notification: Any) -> str | None:
    return getattr(notification, "method", None)


STATIC_TOOLS = EVERYTHING_TOOLS


async def test_tool_lists_depend_on_client_capabilities(transport: str, http_server: Server) -> None:
    with anyio.fail_after(30):
        async with connect(transport, Peer(), http_server.http_url or "", capabilities=False) as client:
            assert [t.name for t in (await client.list_tools()).tools] == STATIC_TOOLS
        peer = Peer()
        async with connect(transport, peer, http_server.http_url or "") as client:
            tools = (await client.list_tools()).tools
            names = [t.name for t in tools]
            gated = [
                "get-roots-list",
                "trigger-elicitation-request",
                "trigger-url-elicitation",
                "trigger-sampling-request",
            ]
            # The gated tools come before the research task, as the reference registers them.
            assert names[: len(STATIC_TOOLS) - 1] == STATIC_TOOLS[:-1]
            assert names[-1] == "simulate-research-query"
            assert [n for n in names if n not in gated] == STATIC_TOOLS
            assert {"get-roots-list", "trigger-elicitation-request", "trigger-sampling-request"} <= set(names)

            # One list_changed per tool the reference registers after `initialized` (the gated ones
            # and the research task; over HTTP they travel on the standalone stream, which may
            # deliver them after the tools/list answer).
            def changed() -> int:
                return len([n for n in peer.notifications if method_of(n) == "notifications/tools/list_changed"])

            late = len(names) - len(STATIC_TOOLS) + 1
            while changed() < late:
                await anyio.sleep(0.01)
            assert changed() == late
            echo = tools[0]
            assert (echo.title, echo.description) == ("Echo Tool", "Echoes back the input string")
            assert echo.annotations is not None and echo.annotations.read_only_hint is True
            structured = next(t for t in tools if t.name == "get-structured-content")
            assert structured.output_schema is not None and structured.output_schema["required"] == [
                "temperature",
                "conditions",
                "humidity",
            ]


async def test_static_tools_exact_results(transport: str, http_server: Server) -> None:
    peer = Peer()
    with anyio.fail_after(30):
        async with connect(transport, peer, http_server.http_url or "") as client:
            assert texts(await client.call_tool("echo", {"message": "hi"})) == ["Echo: hi"]
            assert texts(await client.call_tool("get-sum", {"a": 2, "b": 3.5})) == ["The sum of 2 and 3.5 is 5.5."]
            r = await client.call_tool("get-annotated-message", {"messageType": "error", "includeImage": True})
            assert texts(r) == ["Error: Operation failed"]
            assert r.content[0].annotations is not None and r.content[0].annotations.priority == 1
            assert r.content[1].type == "image"
            r = await client.call_tool("get-annotated-message", {"messageType": "success"})
            assert texts(r) == ["Operation completed successfully"]
            r = await client.call_tool("get-annotated-message", {"messageType": "debug"})
            assert texts(r) == ["Debug: Cache hit ratio 0.95, latency 150ms"]
            r = await client.call_tool("get-resource-links", {"count": 3})
            assert texts(r) == ["Here are 3 resource links to resources available in this server:"]
            links = [(c.name, str(c.uri)) for c in r.content[1:]]
            assert links == [
                ("Blob Resource 1", "demo://resource/dynamic/blob/1"),
                ("Text Resource 2", "demo://resource/dynamic/text/2"),
                ("Blob Resource 3", "demo://resource/dynamic/blob/3"),
            ]
            r = await client.call_tool("get-resource-reference", {"resourceType": "Text", "resourceId": 2})
            first, last = texts(r)
            assert first == "Returning resource reference for Resource 2:"
            assert last == "You can access this resource using the URI: demo://resource/dynamic/text/2"
            text = r.content[1].resource.text
            assert TIME.sub("<time>", text) == "Resource 2: This is a plaintext resource created at <time>"
            r = await client.call_tool("get-resource-reference", {"resourceId": 0})
            assert r.is_error and texts(r) == ["Invalid resourceId: 0. Must be a finite positive integer."]
            r = await client.call_tool("get-structured-content", {"location": "Chicago"})
            assert texts(r) == ['{"temperature":36,"conditions":"Light rain / drizzle","humidity":82}']
            assert r.structured_content == {"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82}
            r = await client.call_tool("get-tiny-image", {})
            assert texts(r) == ["Here's the image you requested:", "The image above is the MCP logo."]
            assert base64.b64decode(r.content[1].data)[:8] == b"\x89PNG\r\n\x1a\n"
            r = await client.call_tool("trigger-long-running-operation", {"duration": 0.05, "steps": 1})
            assert texts(r) == ["Long running operation completed. Duration: 0.05 seconds, Steps: 1."]


async def test_client_capability_tools(transport: str, http_server: Server) -> None:
    peer = Peer()
    with anyio.fail_after(30):
        async with connect(transport, peer, http_server.http_url or "") as client:
            r = await client.call_tool("trigger-sampling-request", {"prompt": "hello"})
            (text,) = texts(r)
            assert text.startswith("LLM sampling result: \n{")
            assert json.loads(text.split("\n", 1)[1])["content"]["text"] == "sampled"
            r = await client.call_tool("trigger-elicitation-request", {})
            assert texts(r)[:2] == [
                "✅ User provided the requested information!",
                "User inputs:\n- Name: Ada\n- Agreed to terms: true\n- Favorite Integer: 7",
            ]
            assert texts(r)[2].startswith("\nRaw result: {\n")
            peer.elicit_action = "decline"
            r = await client.call_tool("trigger-elicitation-request", {})
            assert texts(r)[0] == "❌ User declined to provide the requested information."
            r = await client.call_tool("get-roots-list", {})
            assert texts(r) == [
                "Current MCP Roots (2 total):\n\n1. work\n   URI: file:///work\n\n2. Unnamed Root\n   URI: file:///tmp\n\n"
                "Note: This server demonstrates the roots protocol capability but doesn't actually access files. "
                "The roots are provided by the MCP client and can be used by servers that need file system access."
            ]


async def test_resources_templates_prompts_completions(transport: str, http_server: Server) -> None:
    with anyio.fail_after(30):
        async with connect(transport, Peer(), http_server.http_url or "") as client:
            resources = (await client.list_resources()).resources
            assert [r.name for r in resources] == [
                "architecture.md",
                "extension.md",
                "features.md",
                "how-it-works.md",
                "instructions.md",
                "startup.md",
                "structure.md",
            ]
            assert str(resources[0].uri) == "demo://resource/static/document/architecture.md"
            (doc,) = (await client.read_resource("demo://resource/static/document/instructions.md")).contents
            assert "🎉 Server instructions are working!" in doc.text
            assert client.instructions is not None and "🎉 Server instructions are working!" in client.instructions
            templates = (await client.list_resource_templates()).resource_templates
            assert [(t.name, t.uri_template) for t in templates] == [
                ("Dynamic Text Resource", "demo://resource/dynamic/text/{resourceId}"),
                ("Dynamic Blob Resource", "demo://resource/dynamic/blob/{resourceId}"),
            ]
            (blob,) = (await client.read_resource("demo://resource/dynamic/blob/4")).contents
            decoded = base64.b64decode(blob.blob).decode()
            assert TIME.sub("<time>", decoded) == "Resource 4: This is a base64 blob created at <time>"
            prompts = (await client.list_prompts()).prompts
            assert [p.name for p in prompts] == [
                "simple-prompt",
                "args-prompt",
                "completable-prompt",
                "resource-prompt",
            ]
            r = await client.get_prompt("args-prompt", {"city": "Austin", "state": "TX"})
            assert r.messages[0].content == TextContent(type="text", text="What's weather in Austin, TX?")
            r = await client.get_prompt("completable-prompt", {"department": "Sales", "name": "Eve"})
            assert r.messages[0].content == TextContent(
                type="text", text="Please promote Eve to the head of the Sales team."
            )
            r = await client.get_prompt("resource-prompt", {"resourceType": "Text", "resourceId": "3"})
            assert r.messages[0].content == TextContent(
                type="text",
                text="This prompt includes the Text resource with id: 3. Please analyze the following resource:",
            )
            ref = PromptReference(type="ref/prompt", name="completable-prompt")
            c = await client.complete(ref, {"name": "department", "value": "E"})
            assert c.completion.values == ["Engineering"]
            c = await client.complete(ref, {"name": "name", "value": ""}, context_arguments={"department": "Support"})
            assert c.completion.values == ["John", "Kim", "Lee"]
            tref = ResourceTemplateReference(type="ref/resource", uri="demo://resource/dynamic/text/{resourceId}")
            assert (await client.complete(tref, {"name": "resourceId", "value": "12"})).completion.values == ["12"]
            assert (await client.complete(tref, {"name": "resourceId", "value": "abc"})).completion.values == []


async def test_session_resources_are_per_session(http_server: Server) -> None:
    data = "data:text/plain;base64," + base64.b64encode(b"Hello world").decode()
    with anyio.fail_after(30):
        async with (
            connect("http", Peer(), http_server.http_url or "") as a,
            connect("http", Peer(), http_server.http_url or "") as b,
        ):
            r = await a.call_tool("gzip-file-as-resource", {"name": "hello.gz", "data": data, "outputType": "resource"})
            resource = r.content[0].resource
            assert resource.blob == "H4sIAAAAAAAAA/NIzcnJVyjPL8pJAQBSntaLCwAAAA=="
            uri = "demo://resource/session/hello.gz"
            assert uri in [str(x.uri) for x in (await a.list_resources()).resources]
            assert uri not in [str(x.uri) for x in (await b.list_resources()).resources]
            r = await a.call_tool("gzip-file-as-resource", {"data": "file:///etc/passwd"})
            assert r.is_error and texts(r) == [
                "Error processing file file:///etc/passwd: Unsupported URL protocol for file:///etc/passwd. "
                "Only http, https, and data URLs are supported."
            ]


async def test_timers_are_per_session_and_follow_the_log_level(http_server: Server) -> None:
    peer_a, peer_b = Peer(), Peer()
    with anyio.fail_after(30):
        async with (
            connect("http", peer_a, http_server.http_url or "") as a,
            connect("http", peer_b, http_server.http_url or "") as b,
        ):
            await b.set_logging_level("emergency")
            r = await a.call_tool("toggle-simulated-logging", {})
            assert texts(r)[0].startswith("Started simulated, random-leveled logging for session ")
            while len(peer_a.logs) < 3:
                await anyio.sleep(0.01)
            assert not peer_b.logs  # b never turned it on
            r = await a.call_tool("toggle-simulated-logging", {})
            assert texts(r)[0].startswith("Stopped simulated logging for session ")
            await a.subscribe_resource("demo://resource/static/document/features.md")
            r = await a.call_tool("toggle-subscriber-updates", {})
            assert texts(r)[0].endswith("Client will receive updates for any resources the it is subscribed to.")

            def updates() -> int:
                return len(
                    [n for n in peer_a.notifications if getattr(n, "method", "") == "notifications/resources/updated"]
                )

            while updates() < 2:
                await anyio.sleep(0.01)
            await a.call_tool("toggle-subscriber-updates", {})


async def test_get_env_redacts_secrets() -> None:
    env = {**os.environ, "MY_API_TOKEN": "s3cr3t", "PLAIN_SETTING": "visible"}
    with anyio.fail_after(30):
        async with connect("stdio", Peer(), "", env=env) as client:
            (text,) = texts(await client.call_tool("get-env", {}))
            shown = json.loads(text)
            assert shown["MY_API_TOKEN"] == "<redacted>" and shown["PLAIN_SETTING"] == "visible"
            assert text.startswith("{\n  ")


class HelloWorld(http.server.BaseHTTPRequestHandler):
    """Answers every GET with `Hello world` (the local servers `gzip-file-as-resource` fetches)."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "11")
        self.end_headers()
        self.wfile.write(b"Hello world")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def local_file_server() -> Iterator[str]:
    """A loopback HTTP server whose every GET answers `Hello world`."""
    import threading

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), HelloWorld)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/README.md"
    httpd.shutdown()
    httpd.server_close()


async def test_gzip_fetches_http_within_limits(local_file_server: str) -> None:
    url = local_file_server
    with anyio.fail_after(30):
        async with connect("stdio", Peer(), "") as client:
            r = await client.call_tool("gzip-file-as-resource", {"name": "r.gz", "data": url, "outputType": "resource"})
            assert r.content[0].resource.blob == "H4sIAAAAAAAAA/NIzcnJVyjPL8pJAQBSntaLCwAAAA=="
            r = await client.call_tool("gzip-file-as-resource", {"data": url})
            assert r.content[0].type == "resource_link"
            assert str(r.content[0].uri) == "demo://resource/session/README.md.gz"
        env = {**os.environ, "GZIP_MAX_FETCH_SIZE": "5", "GZIP_ALLOWED_DOMAINS": "127.0.0.1"}
        async with connect("stdio", Peer(), "", env=env) as client:
            r = await client.call_tool("gzip-file-as-resource", {"data": url})
            assert texts(r) == [f"Error processing file {url}: Content-Length for {url} exceeds max of 5: 11"]
        env = {**os.environ, "GZIP_ALLOWED_DOMAINS": "example.com"}
        async with connect("stdio", Peer(), "", env=env) as client:
            r = await client.call_tool("gzip-file-as-resource", {"data": url})
            assert texts(r) == [f"Error processing file {url}: Domain 127.0.0.1 is not in the allowed domains list."]


@pytest.fixture
def local_tls_server(tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """A loopback HTTPS server (a certificate for 127.0.0.1 signed by a certificate authority made
    here) whose every GET answers `Hello world`; with the environment that makes a client trust
    that authority (`SSL_CERT_FILE`)."""
    import datetime
    import ipaddress
    import ssl
    import threading

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    valid = (now - datetime.timedelta(days=1), now + datetime.timedelta(days=1))

    def certificate(subject: str, key: Any, issuer: str, issuer_key: Any, ca: bool) -> Any:
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(valid[0])
            .not_valid_after(valid[1])
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if not ca:
            san = x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
            builder = builder.add_extension(san, critical=False)
        return builder.sign(issuer_key, hashes.SHA256())

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = certificate("everything-mcp test CA", ca_key, "everything-mcp test CA", ca_key, True)
    leaf = certificate("127.0.0.1", key, "everything-mcp test CA", ca_key, False)
    pem = serialization.Encoding.PEM
    (tmp_path / "ca.pem").write_bytes(ca.public_bytes(pem))
    (tmp_path / "cert.pem").write_bytes(leaf.public_bytes(pem) + ca.public_bytes(pem))
    (tmp_path / "key.pem").write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), HelloWorld)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield (
        f"https://127.0.0.1:{httpd.server_address[1]}/README.md",
        {**os.environ, "SSL_CERT_FILE": str(tmp_path / "ca.pem")},
    )
    httpd.shutdown()
    httpd.server_close()


async def test_gzip_fetches_https_with_rustls_within_limits(local_tls_server: tuple[str, dict[str, str]]) -> None:
    url, trusting = local_tls_server
    with anyio.fail_after(30):
        async with connect("stdio", Peer(), "", env=trusting) as client:
            r = await client.call_tool("gzip-file-as-resource", {"name": "r.gz", "data": url, "outputType": "resource"})
            assert r.content[0].resource.blob == "H4sIAAAAAAAAA/NIzcnJVyjPL8pJAQBSntaLCwAAAA=="
        # The reference's limits hold for https as for http.
        env = {**trusting, "GZIP_MAX_FETCH_SIZE": "5"}
        async with connect("stdio", Peer(), "", env=env) as client:
            r = await client.call_tool("gzip-file-as-resource", {"data": url})
            assert texts(r) == [f"Error processing file {url}: Content-Length for {url} exceeds max of 5: 11"]
        env = {**trusting, "GZIP_ALLOWED_DOMAINS": "example.com"}
        async with connect("stdio", Peer(), "", env=env) as client:
            r = await client.call_tool("gzip-file-as-resource", {"data": url})
            assert texts(r) == [f"Error processing file {url}: Domain 127.0.0.1 is not in the allowed domains list."]
        # A certificate nobody vouches for is refused, with rustls's reason.
        untrusting = {k: v for k, v in trusting.items() if k != "SSL_CERT_FILE"}
        async with connect("stdio", Peer(), "", env=untrusting) as client:
            r = await client.call_tool("gzip-file-as-resource", {"data": url})
            (text,) = texts(r)
            assert text.startswith(f"Error processing file {url}: fetch failed") and "certificate" in text, text


def test_url_elicitation_error_path_then_request_path() -> None:
    from conftest import WAIT

    with Server() as srv:
        conn = srv.connect()

        def rpc(id: int, method: str, params: dict[str, Any]) -> None:
            conn.send(json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))

        def recv() -> Any:
            return json.loads(conn.recv(timeout=WAIT) or "null")

        caps = {"elicitation": {"form": {}, "url": {}}}
        rpc(
            0,
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": caps, "clientInfo": {"name": "t", "version": "1"}},
        )
        recv()
        conn.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        assert recv()["method"] == "notifications/tools/list_changed"  # trigger-elicitation-request
        assert recv()["method"] == "notifications/tools/list_changed"  # trigger-url-elicitation
        assert recv()["method"] == "notifications/tools/list_changed"  # simulate-research-query
        args = {"url": "https://example.com/auth", "elicitationId": "e-1", "errorPath": True}
        rpc(1, "tools/call", {"name": "trigger-url-elicitation", "arguments": args})
        error = recv()["error"]
        assert error["code"] == -32042
        assert error["message"] == "MCP error -32042: This request requires browser-based authorization."
        (elicitation,) = error["data"]["elicitations"]
        assert elicitation["mode"] == "url" and elicitation["url"] == "https://modelcontextprotocol.io"
        rpc(2, "tools/call", {"name": "trigger-url-elicitation", "arguments": args})  # the retry proceeds
        ask = recv()
        assert ask["method"] == "elicitation/create"
        assert ask["params"] == {
            "mode": "url",
            "url": "https://example.com/auth",
            "message": "Please open the link to complete this action.",
            "elicitationId": "e-1",
        }
        conn.send(json.dumps({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept"}}))
        result = recv()["result"]
        assert result["content"][0]["text"] == (
            "✅ User completed the URL elicitation flow.\nElicitation ID: e-1\nURL: https://example.com/auth"
        )


# --- the stateless era (2026-07-28): per-session features have no session ----------------------


def test_per_session_features_explain_themselves_in_the_stateless_era() -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    with Server() as srv:
        conn = srv.connect()

        def call(id: int, name: str, arguments: dict[str, Any]) -> Any:
            params = {"name": name, "arguments": arguments, "_meta": meta}
            conn.send(json.dumps({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
            answer = json.loads(conn.recv(10.0) or "null")
            assert answer["id"] == id
            return answer["result"]

        for i, tool in enumerate(["toggle-simulated-logging", "toggle-subscriber-updates"]):
            r = call(i, tool, {})
            assert r["isError"] is True
            (block,) = r["content"]
            assert block["text"].startswith(f"{tool} needs a session, and protocol 2026-07-28 has none")
        data = "data:text/plain;base64,SGVsbG8gd29ybGQ="
        r = call(5, "gzip-file-as-resource", {"name": "h.gz", "data": data})
        resource, why = r["content"]
        assert resource == {
            "type": "resource",
            "resource": {
                "uri": "demo://resource/session/h.gz",
                "mimeType": "application/gzip",
                "blob": "H4sIAAAAAAAAA/NIzcnJVyjPL8pJAQBSntaLCwAAAA==",
            },
        }
        assert why["type"] == "text" and "Returned inline instead of as a resource link" in why["text"]
        r = call(6, "gzip-file-as-resource", {"name": "h.gz", "data": data, "outputType": "resource"})
        assert len(r["content"]) == 1
        assert conn.recv(0.2) is None  # no resources/list_changed: nothing was kept
