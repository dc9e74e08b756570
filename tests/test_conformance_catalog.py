"""The `conformance` catalog, independent of the official suite: every fixture's exact result
with the official `mcp` client over stdio and Streamable HTTP (sampling and elicitation answered
by the client's callbacks), plus the raw-HTTP probes (DNS rebinding, SEP-1699 reconnection)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import (
    AudioContent,
    CreateMessageResult,
    ElicitResult,
    EmbeddedResource,
    ImageContent,
    PromptReference,
    TextContent,
    TextResourceContents,
)

from everything_mcp import Server

from conftest import WAIT, init_params, texts

IMAGE = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
AUDIO = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]


@pytest.fixture
def http_server() -> Iterator[Server]:
    with Server(catalogs=["conformance"]) as srv:
        srv.start_http()
        yield srv


class Seen:
    """What the client's callbacks received."""

    def __init__(self) -> None:
        self.sampling: list[Any] = []
        self.elicitation: list[Any] = []
        self.logs: list[Any] = []

    async def sample(self, context: Any, params: Any) -> CreateMessageResult:
        self.sampling.append(params)
        return CreateMessageResult(
            role="assistant",
            content=TextContent(type="text", text="This is a test response from the client"),
            model="test-model",
            stop_reason="endTurn",
        )

    async def elicit(self, context: Any, params: Any) -> ElicitResult:
        self.elicitation.append(params)
        return ElicitResult(action="accept", content={"response": "hello"})

    async def log(self, params: Any) -> None:
        self.logs.append(params)


@asynccontextmanager
async def connect(transport: str, seen: Seen, http_url: str) -> AsyncIterator[Client]:
    target: Any
    if transport == "stdio":
        target = StdioServerParameters(
            command=sys.executable, args=["-m", "everything_mcp", "stdio", "--catalog", "conformance"]
        )
    else:
        target = http_url
    client = Client(
        target,
        mode="legacy",
        read_timeout_seconds=10,
        sampling_callback=seen.sample,
        elicitation_callback=seen.elicit,
        logging_callback=seen.log,
    )
    async with client:
        yield client


async def test_content_tools(transport: str, http_server: Server) -> None:
    seen = Seen()
    with anyio.fail_after(30):
        async with connect(transport, seen, http_server.http_url or "") as client:
            names = [t.name for t in (await client.list_tools()).tools]
            assert names[:3] == ["test_simple_text", "test_image_content", "test_audio_content"]
            assert texts(await client.call_tool("test_simple_text", None)) == [
                "This is a simple text response for testing."
            ]
            r = await client.call_tool("test_image_content", {})
            assert r.content == [ImageContent(type="image", data=IMAGE, mime_type="image/png")]
            r = await client.call_tool("test_audio_content", {})
            assert r.content == [AudioContent(type="audio", data=AUDIO, mime_type="audio/wav")]
            r = await client.call_tool("test_embedded_resource", {})
            (block,) = r.content
            assert isinstance(block, EmbeddedResource)
            assert block.resource == TextResourceContents(
                uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."
            )
            r = await client.call_tool("test_multiple_content_types", {})
            assert [c.type for c in r.content] == ["text", "image", "resource"]
            assert texts(r) == ["Multiple content types test:"]
            assert json.loads(r.content[2].resource.text) == {"test": "data", "value": 123}
            r = await client.call_tool("test_error_handling", {})
            assert r.is_error is True
            assert texts(r) == ["This tool intentionally returns an error for testing"]


async def test_logging_and_progress(transport: str, http_server: Server) -> None:
    seen = Seen()
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        progress.append((p, total, message))

    with anyio.fail_after(30):
        async with connect(transport, seen, http_server.http_url or "") as client:
            await client.set_logging_level("debug")
            r = await client.call_tool("test_tool_with_logging", {})
            assert texts(r) == ["Tool with logging executed successfully"]
            assert [(m.level, m.data, m.logger) for m in seen.logs] == [
                ("info", "Tool execution started", None),
                ("info", "Tool processing data", None),
                ("info", "Tool execution completed", None),
            ]
            r = await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
            assert progress == [
                (0.0, 100.0, "Completed step 0 of 100"),
                (50.0, 100.0, "Completed step 50 of 100"),
                (100.0, 100.0, "Completed step 100 of 100"),
            ]
            (token,) = texts(r)
            assert token.isdigit()  # String(progressToken) of the client's numeric token


async def test_sampling_and_elicitation(transport: str, http_server: Server) -> None:
    seen = Seen()
    with anyio.fail_after(30):
        async with connect(transport, seen, http_server.http_url or "") as client:
            r = await client.call_tool("test_sampling", {"prompt": "Test prompt for sampling"})
            assert texts(r) == ["LLM response: This is a test response from the client"]
            (asked,) = seen.sampling
            assert asked.max_tokens == 100
            assert asked.messages[0].role == "user"
            assert asked.messages[0].content.text == "Test prompt for sampling"

            r = await client.call_tool("test_elicitation", {"message": "Please provide your information"})
            assert texts(r) == ['User response: action=accept, content={"response":"hello"}']
            assert seen.elicitation[0].message == "Please provide your information"
            assert seen.elicitation[0].requested_schema["required"] == ["response"]

            r = await client.call_tool("test_elicitation_sep1034_defaults", {})
            assert texts(r) == ['Elicitation completed: action=accept, content={"response":"hello"}']
            props = seen.elicitation[1].requested_schema["properties"]
            assert {k: (v["type"], v["default"]) for k, v in props.items()} == {
                "name": ("string", "John Doe"),
                "age": ("integer", 30),
                "score": ("number", 95.5),
                "status": ("string", "active"),
                "verified": ("boolean", True),
            }
            await client.call_tool("test_elicitation_sep1330_enums", {})
            props = seen.elicitation[2].requested_schema["properties"]
            assert props["titledSingle"]["oneOf"][0] == {"const": "value1", "title": "First Option"}
            assert props["legacyEnum"]["enumNames"] == ["Option One", "Option Two", "Option Three"]
            assert props["untitledMulti"]["items"] == {"type": "string", "enum": ["option1", "option2", "option3"]}
            assert props["titledMulti"]["items"]["anyOf"][2] == {"const": "value3", "title": "Third Choice"}


async def test_resources_prompts_and_completion(transport: str, http_server: Server) -> None:
    seen = Seen()
    with anyio.fail_after(30):
        async with connect(transport, seen, http_server.http_url or "") as client:
            resources = (await client.list_resources()).resources
            assert [(r.uri, r.name) for r in resources] == [
                ("test://static-text", "static-text"),
                ("test://static-binary", "static-binary"),
                ("test://watched-resource", "watched-resource"),
                ("test://stateless-static-text", "Stateless Static Text"),
            ]
            templates = (await client.list_resource_templates()).resource_templates
            assert [(t.uri_template, t.name, t.mime_type) for t in templates] == [
                ("test://template/{id}/data", "template", "application/json")
            ]
            (text,) = (await client.read_resource("test://static-text")).contents
            assert text.text == "This is the content of the static text resource."
            (blob,) = (await client.read_resource("test://static-binary")).contents
            assert (blob.blob, blob.mime_type) == (IMAGE, "image/png")
            (data,) = (await client.read_resource("test://template/123/data")).contents
            assert data.text == '{"id":"123","templateTest":true,"data":"Data for ID: 123"}'
            with pytest.warns(Warning):
                await client.subscribe_resource("test://watched-resource")
                await client.unsubscribe_resource("test://watched-resource")

            prompts = (await client.list_prompts()).prompts
            assert [p.name for p in prompts] == [
                "test_simple_prompt",
                "test_prompt_with_arguments",
                "test_prompt_with_embedded_resource",
                "test_prompt_with_image",
                "test_input_required_result_prompt",
            ]
            r = await client.get_prompt("test_simple_prompt")
            assert r.messages[0].content == TextContent(type="text", text="This is a simple prompt for testing.")
            r = await client.get_prompt("test_prompt_with_arguments", {"arg1": "testValue1", "arg2": "testValue2"})
            assert r.messages[0].content == TextContent(
                type="text", text="Prompt with arguments: arg1='testValue1', arg2='testValue2'"
            )
            r = await client.get_prompt(
                "test_prompt_with_embedded_resource", {"resourceUri": "test://example-resource"}
            )
            assert [m.content.type for m in r.messages] == ["resource", "text"]
            r = await client.get_prompt("test_prompt_with_image")
            assert r.messages[0].content == ImageContent(type="image", data=IMAGE, mime_type="image/png")
            c = await client.complete(
                PromptReference(type="ref/prompt", name="test_prompt_with_arguments"), {"name": "arg1", "value": "test"}
            )
            assert c.completion.values == []


def test_json_schema_2020_12_is_listed_verbatim(http_server: Server) -> None:
    conn = http_server.connect()
    conn.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init_params()}))
    conn.recv(timeout=WAIT)
    conn.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
    tools = json.loads(conn.recv(timeout=WAIT) or "")["result"]["tools"]
    (tool,) = [t for t in tools if t["name"] == "json_schema_2020_12_tool"]
    schema = tool["inputSchema"]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$defs"]["address"]["$anchor"] == "addressDef"
    assert schema["properties"]["address"] == {"$ref": "#/$defs/address"}
    assert schema["allOf"] == [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}]
    assert (schema["then"], schema["else"], schema["additionalProperties"]) == (
        {"required": ["phone"]},
        {"required": ["email"]},
        False,
    )
    conn.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "test_simple_text"}}))
    reply = json.loads(conn.recv(timeout=WAIT) or "")
    assert reply["result"] == {"content": [{"type": "text", "text": "This is a simple text response for testing."}]}


def test_dns_rebinding_probe(http_server: Server) -> None:
    port = (http_server.base_url or "").rsplit(":", 1)[1]
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init_params()})
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    with httpx.Client(timeout=WAIT) as http:
        evil = {**headers, "host": "evil.example.com", "origin": "http://evil.example.com"}
        assert http.post(http_server.http_url or "", content=body, headers=evil).status_code == 403
        good = {**headers, "host": f"127.0.0.1:{port}", "origin": f"http://127.0.0.1:{port}"}
        assert http.post(http_server.http_url or "", content=body, headers=good).status_code == 200


def test_reconnection_closes_the_stream_and_the_result_arrives_on_resume(http_server: Server) -> None:
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    with httpx.Client(base_url=http_server.base_url or "", timeout=WAIT) as http:
        r = http.post(
            "/mcp", json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init_params()}, headers=headers
        )
        session = r.headers["mcp-session-id"]
        headers["mcp-session-id"] = session
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "test_reconnection", "arguments": {}},
        }
        r = http.post("/mcp", json=call, headers=headers)
        # The stream ends after the priming event, without the result.
        assert r.text.startswith("id: ") and '"result"' not in r.text
        priming_id = r.text.split("\n")[0][len("id: ") :]
        assert "retry: 1000" in r.text
        resumed = http.get(
            "/mcp", headers={"accept": "text/event-stream", "mcp-session-id": session, "last-event-id": priming_id}
        )
        data = [line[len("data: ") :] for line in resumed.text.split("\n") if line.startswith("data: ")]
        assert json.loads(data[-1])["result"]["content"][0]["text"].startswith(
            "Reconnection test completed successfully."
        )


def test_nothing_is_asked_of_a_client_that_did_not_declare_it() -> None:
    with Server(catalogs=["conformance"]) as srv:
        conn = srv.connect()
        conn.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init_params()}))
        conn.recv(timeout=WAIT)
        call = {"name": "test_sampling", "arguments": {"prompt": "p"}}
        conn.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}))
        reply = json.loads(conn.recv(timeout=WAIT) or "")
        assert reply["result"]["content"][0]["text"] == (
            'Sampling not supported or error: the client did not declare the "sampling" capability '
            "needed for sampling/createMessage"
        )
        assert not [r for r in srv.traffic if r.method == "sampling/createMessage"]


CLIENT_EXTENSIONS = {
    "io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]},
    "com.example/conformance": {"nested": {"enabled": False, "limit": 0}, "values": ["a", 2, None]},
    "com.example/empty": {},
}
SERVER_EXTENSIONS = {
    "io.modelcontextprotocol/ui": {},
    "com.example/conformance": {"nested": {"enabled": True, "limit": 3}, "values": [None, "b", 4]},
    "com.example/empty": {},
}


@pytest.mark.parametrize("version", ["2025-11-25", "2024-11-05"])
def test_the_legacy_extension_negotiation_in_the_handshake_era(version: str) -> None:
    """The suite's `server-legacy-extensions` fixture: the server's extensions in the
    `initialize` result, each setting unchanged, and a tool echoing the client's."""
    with Server(catalogs=["conformance"]) as srv:
        conn = srv.connect()
        params = {**init_params(version), "capabilities": {"extensions": CLIENT_EXTENSIONS}}
        conn.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}))
        initialized = json.loads(conn.recv(WAIT) or "")
        assert initialized["result"]["capabilities"]["extensions"] == SERVER_EXTENSIONS
        conn.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        call = {"name": "test_legacy_extension_capabilities", "arguments": {}}
        conn.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}))
        answer = json.loads(conn.recv(WAIT) or "")
        assert json.loads(answer["result"]["content"][0]["text"]) == {"extensions": CLIENT_EXTENSIONS}


def test_the_extensions_in_the_stateless_era_are_read_from_each_request() -> None:
    """In 2026-07-28 the fixture's settings are not declared (`server/discover`'s schema refuses
    the `null` in one of them), and the tool echoes the extensions of the request that calls it
    (none declared: an empty object)."""
    from conftest import envelope

    with Server(catalogs=["conformance"]) as srv:
        conn = srv.connect()
        discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": envelope()}}
        conn.send(json.dumps(discover))
        capabilities = json.loads(conn.recv(WAIT) or "")["result"]["capabilities"]
        assert not set(SERVER_EXTENSIONS) & set(capabilities.get("extensions", {}))
        for id, declared in [(2, {"extensions": CLIENT_EXTENSIONS}), (3, {})]:
            call = {"name": "test_legacy_extension_capabilities", "arguments": {}, "_meta": envelope(declared)}
            conn.send(json.dumps({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": call}))
            answer = json.loads(conn.recv(WAIT) or "")
            echoed = json.loads(answer["result"]["content"][0]["text"])
            assert echoed == {"extensions": declared.get("extensions", {})}, id
