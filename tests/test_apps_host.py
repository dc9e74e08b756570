"""The `apps` catalog rendered by a real host (docs/apps.md): headless Chromium, the official
`AppBridge` (@modelcontextprotocol/ext-apps) and the official TypeScript client in each era
(legacy: initialize at 2025-11-25; modern: 2026-07-28), with a sandbox proxy on a second origin
(tests/apps_host/, built by scripts/apps_host.sh). The well-behaved host passes every check it
can; each deliberately broken host fails exactly the checks named for it, in the view and in
the report; every view of the catalog renders."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from apps_host.serve import ERAS, HostPages, apps_host

from everything_mcp import Server
from everything_mcp.report.apps import SUBMIT
from everything_mcp.traffic import TrafficRecord

from browser import chromium, keep_screenshot, new_page

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.timeout(300)

ERA_CHECK = {"legacy": "apps.same_session", "modern": "apps.declared_every_request"}
"""The server-vantage check of each era's host (the other is not applicable), which the host that
drops the capability fails."""

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
"""The checks each broken host must fail, and no other (in both eras). `drop-capability` fails its
era's check (`ERA_CHECK`): see `test_each_broken_host_fails_exactly_its_checks`."""

WINDOW = 4
"""How many views `render_all` keeps rendering at once. A view's self-test is mostly its own
timers, but the pages are CPU-bound on two cores beyond this (the 24 views of an era: 16 s with
2 at once, 12.5 s with 3, 14 s with 4 and 14.5 s with 6, on a loaded machine)."""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One Chromium for the module's tests, each page in a browser context of its own: launching
    and closing one (with Playwright's driver) per test cost 1 to 2 s of each of its 18 tests.
    Module scope, not session: see tests/browser.py (this module runs no event loop)."""
    with chromium() as browser:
        yield browser


@pytest.fixture(scope="module")
def pages() -> Iterator[HostPages]:
    """The test host, served once for the module: stopping its two servers took up to a second
    per test (each `serve_forever` looks for the shutdown every 0.5 s)."""
    with apps_host() as pages:
        yield pages


@pytest.fixture(scope="module")
def idle_pages(browser: Browser) -> list[Page]:
    """The module's pages between tests, each in a browser context of its own (closed with the
    browser). A test takes them before opening new ones: a new context and page cost 0.25 s of
    CPU and 0.55 s on a loaded machine, about 30 of them in the module, where navigating a page
    again costs a fraction (its renderer is running, its script compiled). Nothing is kept
    between tests in them: the host and the views use no cookies and no storage, caching is off
    (`apps_host`), and a page is emptied (about:blank) when it is given back."""
    return []


@pytest.fixture
def open_page(browser: Browser, idle_pages: list[Page]) -> Iterator[Callable[[], Page]]:
    """Opens a page for the test, each in a browser context of its own (a page holds an SSE
    stream open, and a context has six connections to a server): an idle one of the module's,
    or a new one. After the test each is emptied and kept for the next (closed if that fails)."""
    from playwright.sync_api import Error as PlaywrightError

    taken: list[Page] = []

    def open() -> Page:
        page = idle_pages.pop() if idle_pages else new_page(browser)
        taken.append(page)
        return page

    yield open
    for page in taken:
        try:
            page.goto("about:blank")
        except PlaywrightError:
            page.context.close()
        else:
            idle_pages.append(page)


@contextlib.contextmanager
def apps_server(**options: Any) -> Iterator[Server]:
    """An in-process server of the `apps` catalog serving HTTP."""
    with Server(catalogs=["apps"], **options) as srv:
        srv.start_http()
        yield srv


@pytest.fixture
def srv() -> Iterator[Server]:
    with apps_server() as srv:
        yield srv


@dataclass
class Rendering:
    """A view the host is rendering in `page`, from `srv`."""

    srv: Server
    page: Page


def start(pages: HostPages, open_page: Callable[[], Page], srv: Server, **how: Any) -> Rendering:
    """Opens the host page that renders a view from `srv` as `how` says (`HostPages.url`: `tool`,
    `args`, `era`, `variant`) in a page of its own; `finish` waits for the rest."""
    page = open_page()
    page.goto(pages.url(srv.http_url, **how), wait_until="commit")
    return Rendering(srv, page)


def finish(pages: HostPages, *renderings: Rendering) -> list[dict[str, Any]]:
    """Waits for each host's summary (`HostPages.done`: ok, the View initialized), then for its
    server's view results, then tears every View down at once and waits for each answer and each
    view's last teardown submission; returns the summaries. The renderings run side by side: a render is
    mostly the View's own timers (3 s, of which about 0.6 s of CPU), so five take about as long
    as one."""
    summaries = []
    for r in renderings:
        summary = pages.done(r.page, timeout_ms=60_000)
        assert summary["ok"] and summary["initialized"], (summary, pages.log(r.page))
        summaries.append(summary)
    for r in renderings:
        r.srv.apps.wait(timeout=20)
    for r in renderings:
        pages.send_teardown(r.page)
    for r in renderings:
        assert pages.teardown(r.page)["acked"]
    settled: dict[int, set[tuple[Any, ...]]] = {}
    for r in renderings:
        seen = settled.setdefault(id(r.srv), set())
        last = r.srv.traffic.wait_for(
            "tools/call", 10, where=lambda t, seen=seen: last_teardown(t) not in (None, *seen), name=SUBMIT
        )
        seen.add(last_teardown(last))
    return summaries


def last_teardown(r: TrafficRecord) -> tuple[Any, ...] | None:
    """The view (view, variant, correlation id) whose last teardown submission `r` is: its
    `teardown.waited` passed or was not exercised; None for any other record. A view asked by
    request posts `fail` at once, then `pass` 300 ms later, and answers the host after that
    second post or 1 s: under load the host may have its answer before the post lands."""
    args = r.params.get("arguments") if isinstance(r.params, dict) else None
    if not isinstance(args, dict) or args.get("phase") != "teardown":
        return None
    waited = [c for c in args.get("checks") or () if isinstance(c, dict) and c.get("id") == "teardown.waited"]
    if not any(c.get("status") != "fail" for c in waited):
        return None
    return (args.get("view"), args.get("variant"), args.get("correlationId"))


def failed(srv: Server) -> set[str]:
    return {id for id, c in srv.apps.results().items() if c.status == "fail"}


@pytest.mark.parametrize("era", ERAS)
def test_the_well_behaved_host_passes_every_check_it_can(
    srv: Server, pages: HostPages, open_page: Callable[[], Page], era: str
) -> None:
    rendering = start(pages, open_page, srv, era=era)
    finish(pages, rendering)
    keep_screenshot(rendering.page, f"apps-view-{era}.png")
    assert failed(srv) == set()
    srv.apps.assert_checks(passed=[*PASSED_BY_THE_GOOD_HOST, ERA_CHECK[era]])


@pytest.mark.parametrize("era", ERAS)
def test_each_broken_host_fails_exactly_its_checks(pages: HostPages, open_page: Callable[[], Page], era: str) -> None:
    """Each broken host, on a server of its own, fails exactly its checks; all rendered at once
    (one at a time, the ten took 45 s of the workers' time). The host that drops the capability
    makes its view's calls through a second client without the UI extension: in 2026-07-28 the
    requests lose the capability; in the handshake era they come on another session."""
    expected = {**BROKEN, "drop-capability": {ERA_CHECK[era]}}
    with contextlib.ExitStack() as stack:
        servers = {variant: stack.enter_context(apps_server()) for variant in expected}
        finish(pages, *(start(pages, open_page, srv, era=era, variant=variant) for variant, srv in servers.items()))
        got = {variant: failed(srv) for variant, srv in servers.items()}
        wrong = [variant for variant in expected if got[variant] != expected[variant]]
        assert got == expected, "\n".join(f"{variant}:\n{servers[variant].report().table()}" for variant in wrong)


@pytest.mark.parametrize("era", ERAS)
def test_partial_input_cancellation_and_permissions(
    srv: Server, pages: HostPages, open_page: Callable[[], Page], era: str
) -> None:
    """The three views side by side, on one server: the large input streamed in partials, the
    permissions, and a slow call the host cancels as soon as its View is initialized."""
    slow = open_page()
    slow.goto(pages.url(srv.http_url, tool="apps_slow", args={"delayMs": 60_000}, era=era), wait_until="commit")
    renderings = [
        start(pages, open_page, srv, tool="apps_large_input", args={"text": "x" * 2000}, era=era),
        start(pages, open_page, srv, tool="apps_view_permissions", era=era),
    ]
    slow.wait_for_function("window.__host && window.__host.state.initialized", timeout=15_000)
    slow.evaluate("window.__host.cancel()")
    finish(pages, *renderings)
    assert pages.done(slow)["cancelled"]
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


def render_all(
    srv: Server, pages: HostPages, open_page: Callable[[], Page], tools: list[str], era: str
) -> dict[str, dict[str, Any]]:
    """Renders each of `tools`, `WINDOW` at a time, each page in a browser context of its own (a
    page holds an SSE stream open, and one context's six connections to the server would be taken
    by six pages); returns the host's summary of each. A page whose view is done goes on to the
    next tool (the navigation ends the view, as closing the page did): a new context per view
    took twice the CPU (the 24 views of an era: 13.5 s instead of 7.6) and twice the time."""
    summaries: dict[str, dict[str, Any]] = {}
    todo = deque(tools)
    idle: list[Page] = []
    busy: deque[tuple[str, Page]] = deque()
    while todo or busy:
        while todo and len(busy) < WINDOW:
            tool = todo.popleft()
            page = idle.pop() if idle else open_page()
            page.goto(pages.url(srv.http_url, tool=tool, era=era), wait_until="commit")
            busy.append((tool, page))
        tool, page = busy.popleft()
        summaries[tool] = pages.done(page, timeout_ms=60_000)
        idle.append(page)
    return summaries


def assert_rendered(srv: Server, summaries: dict[str, dict[str, Any]], no_view: set[str]) -> None:
    """Each tool's view rendered (nothing for those of `no_view`) and posted its final results,
    and no check failed."""
    for tool, summary in summaries.items():
        assert summary["ok"], (tool, summary)
        assert summary["rendered"] is (tool not in no_view), (tool, summary)
    views = {
        "negative/" + tool.removeprefix("apps_negative_").replace("_", "-") if tool in NEGATIVE else "selftest"
        for tool in set(summaries) - no_view
    }
    wait_for_final_results(srv, views, timeout=60)
    assert failed(srv) == set(), srv.report().table()


def wait_for_final_results(srv: Server, views: set[str], timeout: float) -> None:
    """Waits until each of `views` (`view` of a submission: "selftest", "negative/malformed")
    posted its final results: `srv.apps.wait(view=...)` for each, in one pass over the traffic.
    Each wait reads the whole traffic again, 7 MB after an era's 24 views (their HTML, read
    again and again): 0.4 s a wait, 9 s of the test."""
    missing = set(views)

    def posted(record: TrafficRecord) -> bool:
        arguments = record.params.get("arguments") if isinstance(record.params, dict) else None
        if isinstance(arguments, dict) and arguments.get("phase") == "final":
            missing.discard(arguments.get("view"))
        return not missing

    if missing:
        try:
            srv.traffic.wait_for("tools/call", timeout, where=posted, name="apps_submit_results")
        except AssertionError as e:
            raise AssertionError(f"no final results from the views {sorted(missing)}") from e


@pytest.mark.parametrize("era", ERAS)
def test_every_view_of_the_catalog_renders(
    srv: Server, pages: HostPages, open_page: Callable[[], Page], era: str
) -> None:
    """Every view (each variant of the self-testing view, each negative view) renders and passes
    what it checks; the negative views pass their own check (the host survives them); the
    wrong MIME type renders nothing. (The negative view without a handshake, the slowest, is
    rendered first. Split in halves the two eras took 170 s of the workers' time instead of
    110.)"""
    tools = list(NEGATIVE) + [name for name in srv.tool_names if name.startswith("apps_view_")]
    assert_rendered(srv, render_all(srv, pages, open_page, tools, era), {"apps_view_wrong_mime"})
    srv.apps.assert_checks(passed=list(NEGATIVE.values()))


def test_every_linkage_visibility_and_result_renders(
    srv: Server, pages: HostPages, open_page: Callable[[], Page]
) -> None:
    """Every tool linked to the self-testing view renders it (the flat key, both keys,
    annotations, no arguments, each visibility and result kind), and the links that go nowhere
    (not ui://, a URI that resolves to nothing) render nothing."""
    tools = [name for name in srv.tool_names if name.startswith(("apps_link_", "apps_vis_", "apps_result_"))]
    tools += ["apps_no_args"]
    assert_rendered(srv, render_all(srv, pages, open_page, tools, "legacy"), {"apps_link_not_ui", "apps_link_missing"})


def test_the_matrix_grades_two_hosts_side_by_side(
    tmp_path: Path, pages: HostPages, open_page: Callable[[], Page]
) -> None:
    """The well-behaved host in 2026-07-28 and the host without a proxy frame in the handshake
    era, one recording (the two rendered at once): the CLI's matrix has a column each, and the
    HTML report shows each host's apps checks (the screenshot in docs/apps.md)."""
    record = tmp_path / "hosts.jsonl"
    with apps_server(record=str(record)) as srv:
        modern = start(pages, open_page, srv, era="modern")
        # The matrix's columns come in the order the hosts first spoke: this one first.
        srv.traffic.wait_for("server/discover", timeout=20)
        finish(pages, modern, start(pages, open_page, srv, era="legacy", variant="no-proxy"))
    out = tmp_path / "hosts.html"
    report = [sys.executable, "-m", "everything_mcp", "report", str(record)]
    # The HTML report made while the markdown one is (each is a Python start-up and a fold).
    with subprocess.Popen([*report, "--html", str(out)]) as html:
        done = subprocess.run([*report, "--markdown"], capture_output=True, text=True, timeout=60, check=True)
        assert html.wait(timeout=60) == 0
    rows = {line.split(" | ")[0].lstrip("| "): line for line in done.stdout.splitlines()}
    head = done.stdout.splitlines()[0]
    assert "(stateless, http)" in head.split(" | ")[1] and "(handshake, http)" in head.split(" | ")[2], head
    assert rows["apps.view.sandbox.proxy_frame"] == "| apps.view.sandbox.proxy_frame | pass | FAIL |"
    assert rows["apps.same_session"] == "| apps.same_session | n/a | pass |"
    assert rows["apps.declared_every_request"] == "| apps.declared_every_request | pass | n/a |"
    page = open_page()
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
