"""The `apps` catalog on the wire (docs/apps.md): the UI extension declared in both eras, the
`gate` / `always` / `off` modes read per request in 2026-07-28, the views' metadata on the list
entry and the read item, the injected configuration, and the probe assets served with CORS."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from apps_support import HOST_CAPABILITIES, MIME, UI, Conn

from everything_mcp import Server

from conftest import WAIT, StdioServer, init_params


@pytest.fixture
def srv() -> Iterator[Server]:
    with Server(catalogs=["apps"]) as srv:
        srv.start_http()
        yield srv


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_a_host_that_declared_the_extension_sees_the_views_and_the_app_only_tools(srv: Server, era: str) -> None:
    host = Conn(srv, era, declared=True)
    if era == "handshake":
        assert host.initialize["result"]["capabilities"]["extensions"] == {UI: {}}
    else:
        discover = host.request("server/discover")["result"]
        assert discover["capabilities"]["extensions"][UI] == {}
    tools = host.tools()
    assert tools["apps_selftest"]["_meta"] == {"ui": {"resourceUri": "ui://everything-mcp/selftest"}}
    assert tools["apps_link_flat"]["_meta"] == {"ui/resourceUri": "ui://everything-mcp/selftest"}
    assert tools["apps_app_only"]["_meta"] == {"ui": {"visibility": ["app"]}}
    assert tools["apps_model_only"]["_meta"] == {"ui": {"visibility": ["model"]}}
    assert "apps_submit_results" in tools


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_under_gate_a_client_without_the_extension_gets_plain_tools(srv: Server, era: str) -> None:
    client = Conn(srv, era, declared=False)
    tools = client.tools()
    assert "_meta" not in tools["apps_selftest"]
    assert "_meta" not in tools["apps_link_both"]
    assert not {"apps_app_only", "apps_submit_results", "apps_vis_empty"} & set(tools)
    # The app-only tools are still served: a view's call reaches them whatever its host declared.
    call = client.request("tools/call", {"name": "apps_app_only", "arguments": {}})
    assert call["result"]["structuredContent"] == {"reached": True, "tool": "apps_app_only"}


def test_in_2026_the_gate_reads_each_request(srv: Server) -> None:
    """The same connection, one request with the extension and the next without: each is
    answered as it declares (a host that loses the capability between requests sees it)."""
    host = Conn(srv, "stateless", declared=True)
    assert "_meta" in host.tools()["apps_selftest"]
    assert "_meta" not in host.tools(capabilities={})["apps_selftest"]
    read = host.request("resources/read", {"uri": "ui://everything-mcp/selftest"}, capabilities={})
    assert "_meta" not in read["result"]["contents"][0]


@pytest.mark.parametrize(("mode", "shown", "declared"), [("always", True, True), ("off", False, False)])
def test_the_always_and_off_modes(mode: str, shown: bool, declared: bool) -> None:
    with Server(catalogs=["apps"], apps=mode) as srv:
        client = Conn(srv, "handshake", declared=False)
        assert (UI in client.initialize["result"]["capabilities"].get("extensions", {})) is declared
        assert ("_meta" in client.tools()["apps_selftest"]) is shown
        read = client.request("resources/read", {"uri": "ui://everything-mcp/selftest"})
        assert ("_meta" in read["result"]["contents"][0]) is shown


def test_a_linked_result_carries_a_nonce_three_ways(srv: Server) -> None:
    host = Conn(srv, "handshake", declared=True)
    result = host.request("tools/call", {"name": "apps_selftest", "arguments": {}})["result"]
    structured = result["structuredContent"]
    nonce, correlation = structured["nonce"], structured["correlationId"]
    assert re.fullmatch("[0-9a-f]{32}", nonce) and re.fullmatch("[0-9a-f]{32}", correlation)
    assert result["_meta"] == {"everything-mcp/nonce": nonce, "everything-mcp/correlationId": correlation}
    assert result["content"][0]["text"] == (
        f"everything-mcp apps: apps_selftest for ui://everything-mcp/selftest; nonce {nonce}; correlation {correlation}"
    )
    again = host.request("tools/call", {"name": "apps_selftest", "arguments": {}})["result"]
    assert again["structuredContent"]["nonce"] != nonce


def config_of(text: str) -> Any:
    found = re.search(r'<script type="application/json" id="everything-mcp-config">(.*?)</script>', text, re.S)
    assert found, "no configuration in the page"
    return json.loads(found.group(1))


def test_a_view_is_read_with_its_configuration_and_declared_origins(srv: Server) -> None:
    base = srv.base_url
    port = base.rsplit(":", 1)[1]
    host = Conn(srv, "handshake", declared=True)
    listed = {r["uri"]: r for r in host.request("resources/list")["result"]["resources"]}
    selftest = listed["ui://everything-mcp/selftest"]
    csp = {"connectDomains": [base], "resourceDomains": [base]}
    assert selftest["mimeType"] == MIME
    assert selftest["_meta"] == {"ui": {"csp": csp, "prefersBorder": True}}
    item = host.request("resources/read", {"uri": "ui://everything-mcp/selftest"})["result"]["contents"][0]
    assert item["_meta"] == {"ui": {"csp": csp, "prefersBorder": True}}
    config = config_of(item["text"])
    assert config["probes"] == {"declared": base, "undeclared": f"http://localhost:{port}"}
    assert config["expect"] == {
        "connectDeclared": "allowed",
        "connectUndeclared": "blocked",
        "scriptDeclared": "allowed",
        "frameDeclared": "blocked",
        "permissions": [],
        "displayModes": ["inline", "fullscreen"],
    }
    assert config["view"] == "selftest" and config["variant"] == "default"


def test_the_variants_place_their_metadata_as_named(srv: Server) -> None:
    base = srv.base_url
    undeclared = "http://localhost:" + base.rsplit(":", 1)[1]
    host = Conn(srv, "handshake", declared=True)
    listed = {r["uri"]: r for r in host.request("resources/list")["result"]["resources"]}

    def read(name: str) -> Any:
        return host.request("resources/read", {"uri": f"ui://everything-mcp/view/{name}"})["result"]["contents"][0]

    assert "ui://everything-mcp/view/unlisted" not in listed
    assert config_of(read("unlisted")["text"])["variant"] == "unlisted"
    assert "_meta" in listed["ui://everything-mcp/view/meta-list-only"] and "_meta" not in read("meta-list-only")
    assert "_meta" not in listed["ui://everything-mcp/view/meta-read-only"] and "_meta" in read("meta-read-only")
    conflict = listed["ui://everything-mcp/view/meta-conflict"]["_meta"]["ui"]["csp"]["connectDomains"]
    assert conflict == [undeclared]
    assert read("meta-conflict")["_meta"]["ui"]["csp"]["connectDomains"] == [base]
    assert config_of(read("meta-conflict")["text"])["expect"]["connectDeclared"] == "allowed"
    assert config_of(read("no-csp")["text"])["expect"]["connectDeclared"] == "blocked"
    assert config_of(read("frame-domains")["text"])["expect"]["frameDeclared"] == "allowed"
    permissions = config_of(read("permissions")["text"])["expect"]["permissions"]
    assert permissions == ["camera", "microphone", "geolocation", "clipboardWrite"]
    blob = read("blob")
    assert "text" not in blob and config_of(base64.b64decode(blob["blob"]).decode())["variant"] == "blob"
    assert read("wrong-mime")["mimeType"] == "text/html"
    assert read("changing")["text"] != read("changing")["text"]


def test_in_2026_the_ttl_variant_may_be_cached_a_minute(srv: Server) -> None:
    host = Conn(srv, "stateless", declared=True)
    cached = host.request("resources/read", {"uri": "ui://everything-mcp/view/ttl"})["result"]
    assert (cached["ttlMs"], cached["cacheScope"]) == (60000, "private")
    plain = host.request("resources/read", {"uri": "ui://everything-mcp/selftest"})["result"]
    assert (plain["ttlMs"], plain["cacheScope"]) == (0, "private")


def test_without_an_http_listener_the_probes_are_null() -> None:
    with Server(catalogs=["apps"]) as srv:
        host = Conn(srv, "handshake", declared=True)
        item = host.request("resources/read", {"uri": "ui://everything-mcp/selftest"})["result"]["contents"][0]
        assert config_of(item["text"])["probes"] == {"declared": None, "undeclared": None}
        assert item["_meta"]["ui"]["csp"] == {"connectDomains": [], "resourceDomains": []}


def test_the_probe_assets_are_served_to_any_origin(srv: Server) -> None:
    base = srv.base_url
    with httpx.Client(timeout=WAIT) as http:
        ping = http.get(f"{base}/_apps/ping?probe=connect-declared", headers={"Origin": "null"})
        assert ping.status_code == 200
        assert ping.json() == {"ok": True, "probe": "connect-declared"}
        assert ping.headers["access-control-allow-origin"] == "*"
        script = http.get(f"{base}/_apps/probe.js?probe=script", headers={"Origin": "http://elsewhere.example"})
        assert script.headers["content-type"] == "text/javascript"
        assert script.text == '(window.__everythingMcpProbes = window.__everythingMcpProbes || {})["script"] = true;\n'
        assert http.get(f"{base}/_apps/pixel.png").headers["content-type"] == "image/png"
        assert http.get(f"{base}/_apps/nothing").status_code == 404
        # The MCP endpoint keeps its guard.
        assert http.post(f"{base}/mcp", json={}, headers={"Origin": "null"}).status_code == 403


def test_the_submission_tool_checks_its_arguments(srv: Server) -> None:
    host = Conn(srv, "handshake", declared=True)
    checks = [{"id": "handshake.result_fields", "status": "pass", "evidence": "all four"}]
    ok = host.request(
        "tools/call", {"name": "apps_submit_results", "arguments": {"view": "selftest", "checks": checks}}
    )
    assert ok["result"]["content"][0]["text"] == "recorded 1 checks of view selftest (0 failed)"
    bad = host.request(
        "tools/call", {"name": "apps_submit_results", "arguments": {"view": "selftest", "checks": [{"id": 1}]}}
    )
    assert bad["result"]["isError"] is True


def test_a_stdio_server_serves_the_probes_on_its_control_port() -> None:
    """`stdio --control-port`: the views' probe origins are the control listener's, and it
    serves the probe assets."""
    server = StdioServer("stdio", "--catalog", "apps", "--control-port", "0")
    try:
        assert server.proc.stderr is not None
        control = json.loads(server.proc.stderr.readline())
        base = control["url"].removesuffix("/_control/")
        params = {**init_params(), "capabilities": HOST_CAPABILITIES}
        server.request(0, "initialize", params)
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        read = server.request(1, "resources/read", {"uri": "ui://everything-mcp/selftest"})
        config = config_of(read["result"]["contents"][0]["text"])
        assert config["probes"]["declared"] == base
        with httpx.Client(timeout=WAIT) as http:
            assert http.get(f"{base}/_apps/ping?probe=stdio").json() == {"ok": True, "probe": "stdio"}
    finally:
        server.stop()
