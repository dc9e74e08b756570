"""The stateless era (2026-07-28) on the wire, with raw frames: Streamable HTTP over a real
loopback socket to a `python -m everything_mcp http --catalog conformance` subprocess (httpx),
and the same error codes over stdio. Every error code and HTTP status of the era: -32602
(envelope missing or incomplete), -32022 (unsupported version, with data), -32020 (each header
case), -32601/404 (removed and unknown methods, id kept), 405 for GET/DELETE, 202 for
notifications, JSON vs SSE answers, and `X-Accel-Buffering: no` on streams."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest

from conftest import STATELESS, WAIT, StdioServer, cli_http_server, envelope

V2026 = STATELESS
ACCEPT_BOTH = "application/json, text/event-stream"
ENVELOPE = envelope(client=None)


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with cli_http_server("--catalog", "conformance") as url:
        yield url


@pytest.fixture
def http(url: str) -> Iterator[httpx.Client]:
    with httpx.Client(timeout=WAIT) as client:
        yield client


def rpc(
    id: int, method: str, params: dict[str, Any] | None = None, meta: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A stateless request: `params` with the envelope (or `meta` instead) as `_meta`."""
    p = dict(params or {})
    p["_meta"] = ENVELOPE if meta is None else meta
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": p}


def headers(method: str | None, name: str | None = None, **extra: str) -> dict[str, str]:
    """The headers a 2026 client sends for `method` (and `Mcp-Name`), plus `extra`."""
    h = {"accept": ACCEPT_BOTH, "content-type": "application/json", "mcp-protocol-version": V2026}
    if method is not None:
        h["mcp-method"] = method
    if name is not None:
        h["mcp-name"] = name
    h.update(extra)
    return h


def assert_error(r: httpx.Response, status: int, code: int, id: Any) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/json"
    assert "mcp-session-id" not in r.headers
    body: dict[str, Any] = r.json()
    assert body["error"]["code"] == code, body
    assert body["id"] == id, body
    return body


def test_a_request_with_its_headers_gets_a_json_result(http: httpx.Client, url: str) -> None:
    r = http.post(url, json=rpc(1, "tools/list"), headers=headers("tools/list"))
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    assert "mcp-session-id" not in r.headers
    result = r.json()["result"]
    assert result["resultType"] == "complete"
    names = [t["name"] for t in result["tools"]]
    assert {"test_logging_tool", "test_header_param"} <= set(names)


def test_envelope_errors_are_minus_32602_with_400(http: httpx.Client, url: str) -> None:
    bare = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    assert_error(http.post(url, json=bare, headers=headers("tools/list")), 400, -32602, 2)
    no_caps = rpc(3, "tools/list", meta={"io.modelcontextprotocol/protocolVersion": V2026})
    assert_error(http.post(url, json=no_caps, headers=headers("tools/list")), 400, -32602, 3)


def test_an_unsupported_version_is_minus_32022_with_data(http: httpx.Client, url: str) -> None:
    meta = {**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
    h = headers("tools/list", **{"mcp-protocol-version": "2099-01-01"})
    body = assert_error(http.post(url, json=rpc(4, "tools/list", meta=meta), headers=h), 400, -32022, 4)
    assert body["error"]["data"] == {"supported": [V2026], "requested": "2099-01-01"}


@pytest.mark.parametrize(
    ("case", "hdrs"),
    [
        ("missing version header", {"accept": ACCEPT_BOTH, "mcp-method": "tools/list"}),
        ("version header differs", headers("tools/list", **{"mcp-protocol-version": "2025-11-25"})),
        ("missing Mcp-Method", headers(None)),
        ("Mcp-Method differs", headers("prompts/list")),
        ("Mcp-Method case differs", headers("Tools/List")),
    ],
)
def test_each_header_case_is_minus_32020_with_400(
    http: httpx.Client, url: str, case: str, hdrs: dict[str, str]
) -> None:
    assert_error(http.post(url, json=rpc(5, "tools/list"), headers=hdrs), 400, -32020, 5)


def test_mcp_name_is_checked_and_decoded(http: httpx.Client, url: str) -> None:
    call = rpc(6, "tools/call", {"name": "test_simple_text", "arguments": {}})
    assert_error(http.post(url, json=call, headers=headers("tools/call")), 400, -32020, 6)
    assert_error(http.post(url, json=call, headers=headers("tools/call", "test_image_content")), 400, -32020, 6)
    assert_error(http.post(url, json=call, headers=headers("tools/call", "=?base64?!!?=")), 400, -32020, 6)
    # The Base64 sentinel is decoded. (Surrounding whitespace, which httpx will not send, is
    # covered by the Rust tests and the conformance suite.)
    for name in ["test_simple_text", "=?base64?dGVzdF9zaW1wbGVfdGV4dA==?="]:
        r = http.post(url, json=call, headers=headers("tools/call", name))
        assert r.status_code == 200 and "result" in r.json(), r.text
    read = rpc(7, "resources/read", {"uri": "test://static-text"})
    assert_error(http.post(url, json=read, headers=headers("resources/read", "test://other")), 400, -32020, 7)
    r = http.post(url, json=read, headers=headers("resources/read", "test://static-text"))
    assert r.status_code == 200, r.text


def test_mcp_param_headers_mirror_x_mcp_header_arguments(http: httpx.Client, url: str) -> None:
    call = rpc(8, "tools/call", {"name": "test_header_param", "arguments": {"region": "Hello"}})
    base = headers("tools/call", "test_header_param")
    for value in ["Hello", "=?base64?SGVsbG8=?="]:
        r = http.post(url, json=call, headers={**base, "Mcp-Param-Region": value})
        assert r.status_code == 200, r.text
        assert r.json()["result"]["content"][0]["text"] == "Region: Hello"
    assert_error(http.post(url, json=call, headers=base), 400, -32020, 8)
    for bad in ["hello", "=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?="]:
        assert_error(http.post(url, json=call, headers={**base, "mcp-param-region": bad}), 400, -32020, 8)


def test_unknown_resource_is_minus_32602_with_the_uri(http: httpx.Client, url: str) -> None:
    read = rpc(9, "resources/read", {"uri": "test://nope"})
    body = assert_error(http.post(url, json=read, headers=headers("resources/read", "test://nope")), 400, -32602, 9)
    assert body["error"]["data"] == {"uri": "test://nope"}


@pytest.mark.parametrize("method", ["ping", "initialize", "logging/setLevel", "resources/subscribe", "foo/bar"])
def test_removed_and_unknown_methods_are_404_keeping_the_id(http: httpx.Client, url: str, method: str) -> None:
    assert_error(http.post(url, json=rpc(10, method), headers=headers(method)), 404, -32601, 10)


def test_responses_and_batches_are_refused(http: httpx.Client, url: str) -> None:
    h = headers(None)
    assert_error(http.post(url, json={"jsonrpc": "2.0", "id": 1, "result": {}}, headers=h), 400, -32600, None)
    assert_error(http.post(url, json=[rpc(1, "tools/list")], headers=h), 400, -32600, None)


def test_notifications_are_202_without_mcp_method(http: httpx.Client, url: str) -> None:
    cancelled = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    r = http.post(url, json=cancelled, headers=headers(None))
    assert r.status_code == 202
    assert r.content == b""


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_get_and_delete_are_405_allow_post(http: httpx.Client, url: str, method: str) -> None:
    r = http.request(
        method, url, headers={"accept": "text/event-stream", "mcp-protocol-version": V2026, "mcp-session-id": "x"}
    )
    assert r.status_code == 405
    assert r.headers["allow"] == "POST"
    assert "mcp-session-id" not in r.headers


def test_session_and_last_event_id_are_ignored(http: httpx.Client, url: str) -> None:
    h = headers("tools/list", **{"mcp-session-id": "no-such-session", "last-event-id": "0-1"})
    r = http.post(url, json=rpc(11, "tools/list"), headers=h)
    assert r.status_code == 200, r.text
    assert "mcp-session-id" not in r.headers


def test_logs_reach_only_a_request_with_a_log_level(http: httpx.Client, url: str) -> None:
    call = {"name": "test_logging_tool", "arguments": {}}
    h = headers("tools/call", "test_logging_tool")
    quiet = http.post(url, json=rpc(12, "tools/call", call), headers=h)
    assert quiet.status_code == 200
    assert quiet.headers["content-type"] == "application/json"
    assert quiet.json()["result"]["content"][0]["text"] == "Logging evaluated"
    meta = {**ENVELOPE, "io.modelcontextprotocol/logLevel": "info"}
    loud = http.post(url, json=rpc(13, "tools/call", call, meta=meta), headers=h)
    assert loud.status_code == 200
    assert loud.headers["content-type"] == "text/event-stream"
    assert loud.headers["x-accel-buffering"] == "no"
    data = [json.loads(line[len("data: ") :]) for line in loud.text.split("\n") if line.startswith("data: ")]
    assert [m.get("method") for m in data] == ["notifications/message", None]
    assert data[0]["params"]["data"] == "Diagnostic trace logging activated"
    assert data[1]["id"] == 13 and data[1]["result"]["content"][0]["text"] == "Logging evaluated"
    # No event ids in this era: nothing can be resumed.
    assert not any(line.startswith("id:") for line in loud.text.split("\n"))


def test_the_same_error_codes_over_stdio(stdio: StdioServer) -> None:
    def error(id: int, method: str, **kw: Any) -> dict[str, Any]:
        reply = stdio.request(id, method, rpc(id, method, **kw)["params"])
        assert reply["id"] == id, reply
        return dict(reply["error"])

    assert stdio.request(1, "tools/list", rpc(1, "tools/list")["params"])["result"]["resultType"] == "complete"
    assert error(2, "tools/list", meta={"io.modelcontextprotocol/protocolVersion": V2026})["code"] == -32602
    unsupported = error(3, "tools/list", meta={**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2099-01-01"})
    assert unsupported["code"] == -32022
    assert unsupported["data"] == {"supported": [V2026], "requested": "2099-01-01"}
    assert error(4, "ping")["code"] == -32601
    assert error(5, "foo/bar")["code"] == -32601
    nope = error(6, "resources/read", params={"uri": "test://nope"})
    assert nope["code"] == -32602 and nope["data"] == {"uri": "test://nope"}


@pytest.mark.anyio
async def test_the_official_client_mirrors_x_mcp_header_arguments(url: str) -> None:
    """The `mcp` 2.x client in auto mode over HTTP: it lists the tools, learns that `region` is
    mirrored into `Mcp-Param-Region`, and its call passes the server's header checks."""
    from mcp import Client
    from mcp.types import TextContent

    with anyio.fail_after(20):
        async with Client(url, read_timeout_seconds=10) as client:
            assert client.protocol_version == V2026
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert tools["test_header_param"].input_schema["properties"]["region"]["x-mcp-header"] == "Region"
            for region in ["us-west1", "Hello, 世界", " padded "]:
                r = await client.call_tool("test_header_param", {"region": region})
                assert r.content == [TextContent(type="text", text=f"Region: {region}")]
            r = await client.read_resource("test://stateless-static-text")
            assert r.contents[0].text == "Static text content from the stateless draft path."  # type: ignore[union-attr]
