"""The `apps` catalog rendered by a real host (docs/apps.md): headless Chromium, the official
`AppBridge` (@modelcontextprotocol/ext-apps) and the official TypeScript client in each era
(legacy: initialize at 2025-11-25; modern: 2026-07-28), with a sandbox proxy on a second origin
(tests/apps_host/, built by scripts/apps_host.sh). The well-behaved host passes every check it
can; each deliberately broken host fails exactly the checks named for it, in the view and in
the report; every view of the catalog renders."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from apps_host.serve import ERAS, HostPages, apps_host

from everything_mcp import Server

from browser import chromium_page, keep_screenshot

pytestmark = pytest.mark.timeout(300)

ERA_CHECK = {"legacy": "apps.same_session", "modern": "apps.declared_every_request"}
"""The server-vantage check of each era's host (the other is not applicable)."""

PASSED_BY_THE_GOOD_HOST = [
    "declared",
    "resource_read",
    "view_results",
    *(
        f"view.{id}"
        for id in (
            "handshake.result_fields",
            "handshake.quiet_before_initialized",
            "handshake.malformed_refused",
            "input.tool_input_once",
            "input.before_result",
            "result.nonce",
            "proxy.app_only_allowed",
            "proxy.model_only_refused",
            "proxy.unknown_tool_error",
            "proxy.resources_read",
            "proxy.logging",
            "request.open_link",
            "request.message",
            "request.update_model_context",
            "request.display_mode",
            "request.display_mode_undeclared",
            "request.download_file",
            "context.host_context_merged",
            "context.size_changed_obeyed",
            "sandbox.proxy_frame",
            "sandbox.distinct_origin",
            "csp.connect_declared",
            "csp.connect_undeclared",
            "csp.resource_script",
            "csp.frame",
            "teardown.received",
            "teardown.waited",
            "era2026.input_required",
            "era2026.task",
        )
    ),
]
"""What the well-behaved host passes with `apps_selftest` (partial input, cancellation and
permissions need their own tools: see the tests below)."""

BROKEN = {
    "early-input": {"apps.view.handshake.quiet_before_initialized"},
    "forward-model-only": {"apps.view.proxy.model_only_refused"},
    "no-proxy": {"apps.view.sandbox.proxy_frame", "apps.view.sandbox.distinct_origin"},
    "ignore-csp": {"apps.view.csp.connect_undeclared", "apps.view.csp.frame"},
}
"""The checks each broken host must fail, and no other (in both eras). `drop-capability` is
per era: see `test_a_host_that_drops_the_capability`."""


@pytest.fixture
def srv() -> Iterator[Server]:
    with Server(catalogs=["apps"]) as srv:
        srv.start_http()
        yield srv


def render(srv: Server, pages: HostPages, page: Any, tool: str = "apps_selftest", **how: Any) -> dict[str, Any]:
    """Renders `tool`'s view in `page`, waits for the view's final results and tears it down;
    returns the host's summary."""
    page.goto(pages.url(srv.http_url, tool=tool, **how))
    summary = pages.done(page)
    assert summary["ok"] and summary["initialized"], (summary, pages.log(page))
    srv.apps.wait(timeout=20)
    assert pages.teardown(page)["acked"]
    srv.apps.wait(phase="teardown", timeout=10)
    return summary


def failed(srv: Server) -> set[str]:
    return {id for id, c in srv.apps.results().items() if c.status == "fail"}


@pytest.mark.parametrize("era", ERAS)
def test_the_well_behaved_host_passes_every_check_it_can(srv: Server, era: str) -> None:
    with apps_host() as pages, chromium_page() as page:
        render(srv, pages, page, era=era)
        keep_screenshot(page, f"apps-view-{era}.png")
    assert failed(srv) == set()
    srv.apps.assert_checks(passed=[*PASSED_BY_THE_GOOD_HOST, ERA_CHECK[era]])


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("variant", sorted(BROKEN))
def test_a_broken_host_fails_exactly_its_checks(srv: Server, variant: str, era: str) -> None:
    with apps_host() as pages, chromium_page() as page:
        render(srv, pages, page, era=era, variant=variant)
    assert failed(srv) == BROKEN[variant], srv.report().table()


@pytest.mark.parametrize(("era", "fails"), [("legacy", "apps.same_session"), ("modern", "apps.declared_every_request")])
def test_a_host_that_drops_the_capability(srv: Server, era: str, fails: str) -> None:
    """Its view's calls go through a second client without the UI extension: in 2026-07-28 the
    requests lose the capability; in the handshake era they come on another session."""
    with apps_host() as pages, chromium_page() as page:
        render(srv, pages, page, era=era, variant="drop-capability")
    assert failed(srv) == {fails}, srv.report().table()


@pytest.mark.parametrize("era", ERAS)
def test_partial_input_cancellation_and_permissions(srv: Server, era: str) -> None:
    with apps_host() as pages, chromium_page() as page:
        render(srv, pages, page, tool="apps_large_input", args={"text": "x" * 2000}, era=era)
        render(srv, pages, page, tool="apps_view_permissions", era=era)
        page.goto(pages.url(srv.http_url, tool="apps_slow", args={"delayMs": 60_000}, era=era))
        page.wait_for_function("window.__host && window.__host.state.initialized", timeout=15_000)
        page.evaluate("window.__host.cancel()")
        assert pages.done(page)["cancelled"]
        srv.apps.wait(variant="slow", timeout=20)
    srv.apps.assert_checks(passed=["view.input.partial_stops", "view.result.cancelled", "view.permissions.allow"])
    assert failed(srv) == set()


NEGATIVE = {
    "apps_negative_no_handshake": "view.negative.no_handshake_quiet",
    "apps_negative_malformed": "view.negative.malformed_survived",
    "apps_negative_unknown_method": "view.negative.unknown_method_32601",
    "apps_negative_early_calls": "view.negative.early_calls_refused",
    "apps_negative_size_flood": "view.negative.size_flood_survived",
}


def render_all(srv: Server, tools: list[str], era: str) -> dict[str, dict[str, Any]]:
    """Renders each of `tools` in a page of its own (each in its own browser context: a page
    holds an SSE stream open, and one context's six connections to the server would be taken
    by six pages), four at a time (more only queue on two cores); returns the host's summary of
    each."""
    summaries: dict[str, dict[str, Any]] = {}
    with apps_host() as pages, chromium_page() as first:
        browser = first.context.browser
        assert browser is not None
        for start in range(0, len(tools), 4):
            batch = {tool: browser.new_context().new_page() for tool in tools[start : start + 4]}
            for tool, page in batch.items():
                page.goto(pages.url(srv.http_url, tool=tool, era=era), wait_until="commit")
            for tool, page in batch.items():
                summaries[tool] = pages.done(page, timeout_ms=60_000)
            for page in batch.values():
                page.context.close()
    return summaries


def assert_rendered(srv: Server, summaries: dict[str, dict[str, Any]], no_view: set[str]) -> None:
    """Each tool's view rendered (nothing for those of `no_view`) and posted its final results,
    and no check failed."""
    for tool, summary in summaries.items():
        assert summary["ok"], (tool, summary)
        assert summary["rendered"] is (tool not in no_view), (tool, summary)
    for tool in set(summaries) - no_view:
        view = "negative/" + tool.removeprefix("apps_negative_").replace("_", "-") if tool in NEGATIVE else "selftest"
        srv.apps.wait(view=view, timeout=60)
    assert failed(srv) == set(), srv.report().table()


@pytest.mark.parametrize("era", ERAS)
def test_every_view_of_the_catalog_renders(srv: Server, era: str) -> None:
    """Every view (each variant of the self-testing view, each negative view) renders and passes
    what it checks; the negative views pass their own check (the host survives them); the
    wrong MIME type renders nothing. (About a minute: longer than the suite's 50 s before
    faulthandler prints the threads' stacks, which is a notice, not a failure; split in halves
    the two eras took 170 s of the workers' time instead of 110.)"""
    tools = [name for name in srv.tool_names if name.startswith("apps_view_")] + list(NEGATIVE)
    assert_rendered(srv, render_all(srv, tools, era), {"apps_view_wrong_mime"})
    srv.apps.assert_checks(passed=list(NEGATIVE.values()))


def test_every_linkage_visibility_and_result_renders(srv: Server) -> None:
    """Every tool linked to the self-testing view renders it (the flat key, both keys,
    annotations, no arguments, each visibility and result kind), and the links that go nowhere
    (not ui://, a URI that resolves to nothing) render nothing."""
    tools = [name for name in srv.tool_names if name.startswith(("apps_link_", "apps_vis_", "apps_result_"))]
    tools += ["apps_no_args"]
    assert_rendered(srv, render_all(srv, tools, "legacy"), {"apps_link_not_ui", "apps_link_missing"})


def test_the_matrix_grades_two_hosts_side_by_side(tmp_path: Path) -> None:
    """The well-behaved host in 2026-07-28 and the host without a proxy frame in the handshake
    era, one recording: the CLI's matrix has a column each, and the HTML report shows each
    host's apps checks (the screenshot in docs/apps.md)."""
    record = tmp_path / "hosts.jsonl"
    with Server(catalogs=["apps"], record=str(record)) as srv:
        srv.start_http()
        with apps_host() as pages, chromium_page() as page:
            render(srv, pages, page, era="modern")
            render(srv, pages, page, era="legacy", variant="no-proxy")
    done = subprocess.run(
        [sys.executable, "-m", "everything_mcp", "report", str(record), "--markdown"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    rows = {line.split(" | ")[0].lstrip("| "): line for line in done.stdout.splitlines()}
    head = done.stdout.splitlines()[0]
    assert "(stateless, http)" in head.split(" | ")[1] and "(handshake, http)" in head.split(" | ")[2], head
    assert rows["apps.view.sandbox.proxy_frame"] == "| apps.view.sandbox.proxy_frame | pass | FAIL |"
    assert rows["apps.same_session"] == "| apps.same_session | n/a | pass |"
    assert rows["apps.declared_every_request"] == "| apps.declared_every_request | pass | n/a |"
    out = tmp_path / "hosts.html"
    assert (
        subprocess.run(
            [sys.executable, "-m", "everything_mcp", "report", str(record), "--html", str(out)], timeout=60
        ).returncode
        == 0
    )
    with chromium_page() as page:
        page.goto(out.as_uri())
        clients = page.locator("[data-client]")
        assert clients.count() == 2
        statuses = [
            clients.nth(i).locator('[data-check="apps.view.sandbox.proxy_frame"]').get_attribute("data-status")
            for i in range(2)
        ]
        assert statuses == ["pass", "fail"]
        page.locator('[data-check="apps.view.handshake.result_fields"]').first.scroll_into_view_if_needed()
        keep_screenshot(page, "apps-matrix.png")
