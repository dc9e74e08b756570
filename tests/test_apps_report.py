"""The report's `apps.*` checks (docs/apps.md, "Grading"): the server's vantage on a host (the
extension declared, and on every 2026-07-28 request; the view read; the view's calls on the
model's session) and the checks a view posted, merged over views; `srv.apps` and `assert_apps`.
The host here speaks raw frames; tests/test_apps_host.py renders the views in a real one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from apps_support import HOST_CAPABILITIES, MIME, UI, Conn

from everything_mcp import Server

from conftest import WAIT, init_params


def submit(host: Conn, correlation: str | None, checks: list[dict[str, str]], variant: str = "default") -> None:
    arguments = {
        "view": "selftest",
        "variant": variant,
        "correlationId": correlation,
        "phase": "final",
        "checks": checks,
    }
    answer = host.request("tools/call", {"name": "apps_submit_results", "arguments": arguments})
    assert "isError" not in answer["result"], answer


def render(host: Conn, view_host: Conn | None = None) -> str:
    """The model's call, the view read, and the view's own calls (on `view_host` when given):
    what a host does when it renders `apps_selftest`. Returns the correlation id."""
    call = host.request("tools/call", {"name": "apps_selftest", "arguments": {}})["result"]
    host.request("resources/read", {"uri": "ui://everything-mcp/selftest"})
    correlation: str = call["structuredContent"]["correlationId"]
    view = view_host or host
    view.request("tools/call", {"name": "apps_app_only", "arguments": {}})
    submit(view, correlation, [{"id": "result.nonce", "status": "pass", "evidence": "all three agree"}])
    return correlation


def test_a_well_behaved_handshake_host_passes_the_server_checks() -> None:
    with Server(catalogs=["apps"]) as srv:
        render(Conn(srv, "handshake", declared=True))
        results = srv.apps.results()
        assert {id: c.status for id, c in results.items()} == {
            "apps.declared": "pass",
            "apps.resource_read": "pass",
            "apps.same_session": "pass",
            "apps.view_results": "pass",
            "apps.view.result.nonce": "pass",
        }
        assert results["apps.resource_read"].detail == "1 of 1 views read"
        assert results["apps.view.result.nonce"].detail == "selftest: all three agree"
        srv.apps.assert_checks(passed=["declared", "same_session", "view.result.nonce"])


def test_the_view_on_another_session_fails_same_session() -> None:
    """ext-apps#481: a host that opens a second session for its views."""
    with Server(catalogs=["apps"]) as srv:
        model = Conn(srv, "handshake", declared=True)
        render(model, view_host=Conn(srv, "handshake", declared=True))
        check = srv.apps.results()["apps.same_session"]
        assert check.status == "fail"
        assert check.detail.startswith("the model's call on memory-1, the view's on memory-2")
        with pytest.raises(AssertionError, match=r"expected apps\.same_session pass"):
            srv.apps.assert_checks(passed=["same_session"])


def test_a_2026_host_that_drops_the_capability_fails_every_request() -> None:
    with Server(catalogs=["apps"]) as srv:
        host = Conn(srv, "stateless", declared=True)
        host.tools()
        host.request("tools/call", {"name": "apps_app_only", "arguments": {}}, capabilities={})
        results = srv.apps.results()
        assert results["apps.declared"].status == "pass"
        every = results["apps.declared_every_request"]
        assert (every.status, every.detail) == ("fail", "1 of 2 requests without it after it was declared")
        assert "apps.same_session" not in results


def test_a_declaration_without_the_mime_type_fails() -> None:
    with Server(catalogs=["apps"]) as srv:
        conn = srv.connect()
        params = {**init_params(), "capabilities": {"extensions": {UI: {}}}}
        conn.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}))
        json.loads(conn.recv(WAIT) or "")
        check = srv.apps.results()["apps.declared"]
        assert (check.status, check.detail) == ("fail", "mimeTypes: None")


def test_a_failure_in_any_variant_fails_the_merged_check_and_a_later_post_replaces_an_earlier() -> None:
    with Server(catalogs=["apps"]) as srv:
        host = Conn(srv, "handshake", declared=True)
        blocked = {"id": "csp.connect_undeclared", "status": "pass", "evidence": "blocked"}
        submit(host, None, [blocked, {"id": "teardown.waited", "status": "fail", "evidence": "first"}])
        submit(host, None, [{"id": "teardown.waited", "status": "pass", "evidence": "then"}])
        submit(host, None, [{**blocked, "status": "fail", "evidence": "loaded"}], variant="meta-conflict")
        results = srv.apps.results()
        assert results["apps.view.teardown.waited"].status == "pass"
        undeclared = results["apps.view.csp.connect_undeclared"]
        assert (undeclared.status, undeclared.detail) == ("fail", "selftest/meta-conflict: loaded")
        srv.report().apps_host().assert_apps(failed=["view.csp.connect_undeclared"])


def test_a_client_that_is_no_apps_host_has_no_apps_checks() -> None:
    with Server(catalogs=["apps"]) as srv:
        Conn(srv, "handshake", declared=False).tools()
        render(Conn(srv, "handshake", declared=True, name="host"))
        report = srv.report()
        plain, host = report.clients
        assert not plain.apps_host and host.apps_host
        assert plain.check("apps.declared").detail == "not applicable: not an MCP Apps host"
        markdown = report.markdown()
        assert "| apps.view.result.nonce | n/a | pass |" in markdown


def test_the_capabilities_constant_matches_the_spec() -> None:
    assert HOST_CAPABILITIES == {"extensions": {UI: {"mimeTypes": [MIME]}}}


def test_the_control_api_and_the_cli_reach_the_same_results(tmp_path: Path) -> None:
    """`GET /_control/report` and `report FILE --json` carry the host's apps checks as
    `srv.apps.results()` has them."""
    record = tmp_path / "host.jsonl"
    with Server(catalogs=["apps"], record=str(record)) as srv:
        srv.start_http()
        render(Conn(srv, "handshake", declared=True, name="host"))
        expected = {id: c.status for id, c in srv.apps.results().items()}
        with httpx.Client(timeout=WAIT) as http:
            live = http.get(f"{srv.base_url}/_control/report").json()
    (client,) = live["clients"]
    assert {c["id"]: c["status"] for c in client["checks"] if c["id"].startswith("apps.")} == expected
    done = subprocess.run(
        [sys.executable, "-m", "everything_mcp", "report", str(record), "--json"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    (client,) = json.loads(done.stdout)["clients"]
    assert {c["id"]: c["status"] for c in client["checks"] if c["id"].startswith("apps.")} == expected
