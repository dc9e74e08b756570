"""Serves the MCP Apps test host (built by scripts/apps_host.sh into .cache/apps-host/dist/) on
two loopback origins: the host page on one port, its sandbox proxy on another (the spec wants
them on different origins). A plain module: a browser test imports it (tests/ is on sys.path).

    import pytest
    from apps_host.serve import apps_host
    from browser import chromium_page

    @pytest.mark.everything_mcp(catalogs=["apps"])
    def test_selftest(everything_mcp):                    # a plain `def`, as every browser test
        with apps_host() as pages, chromium_page() as page:
            page.goto(pages.url(everything_mcp.http_url, era="modern"))
            summary = pages.done(page)                    # window.__host.done's summary
            assert summary["ok"] and summary["initialized"], pages.log(page)
            assert pages.teardown(page)["acked"]          # ui/resource-teardown, awaited (3 s)
        everything_mcp.apps.assert_checks(passed=["apps.view.handshake.result_fields"])

`apps_host()` skips the test when the bundle is missing (fails it when CI is set, as
tests/browser.py does for Chromium). The page's query parameters are documented at the top of
tests/apps_host/host.ts.
"""

from __future__ import annotations

import contextlib
import functools
import json
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Page

ROOT = Path(__file__).resolve().parent.parent.parent
DIST = ROOT / ".cache" / "apps-host" / "dist"
"""Where scripts/apps_host.sh puts host.html, host.js, sandbox.html and sandbox.js."""

VARIANTS = ("good", "early-input", "forward-model-only", "no-proxy", "ignore-csp", "drop-capability")
ERAS = ("legacy", "modern")


class _Quiet(SimpleHTTPRequestHandler):
    """Static files, uncached, without a line on stderr per request."""

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _missing(why: str) -> None:
    from browser import in_ci

    message = f"the MCP Apps test host is not built: {why}; run scripts/apps_host.sh"
    if in_ci():
        pytest.fail(f"{message} (CI is set, so the MCP Apps host tests must run)", pytrace=False)
    pytest.skip(message)


class HostPages:
    """The two origins serving the host; `url()` builds a host page's address."""

    def __init__(self, host_origin: str, sandbox_origin: str) -> None:
        self.host_origin = host_origin
        self.sandbox_origin = sandbox_origin

    def url(
        self,
        server: str,
        *,
        tool: str = "apps_selftest",
        args: dict[str, Any] | None = None,
        variant: str = "good",
        era: str = "legacy",
        **extra: str | int,
    ) -> str:
        """The host page for the MCP endpoint `server` (http://127.0.0.1:PORT/mcp): it calls
        `tool` with `args` in `era` (legacy: initialize, 2025-11-25; modern: 2026-07-28) and
        renders its View as the `variant` host does. `extra`: more query parameters (`wait`,
        `theme`)."""
        if variant not in VARIANTS:
            raise ValueError(f"variant is one of {VARIANTS}, not {variant!r}")
        if era not in ERAS:
            raise ValueError(f"era is one of {ERAS}, not {era!r}")
        query = {
            "server": server,
            "tool": tool,
            "args": json.dumps(args or {}),
            "sandbox": f"{self.sandbox_origin}/sandbox.html",
            "variant": variant,
            "era": era,
            **{k: str(v) for k, v in extra.items()},
        }
        return f"{self.host_origin}/host.html?{urlencode(query)}"

    @staticmethod
    def done(page: Page, timeout_ms: int = 20_000) -> dict[str, Any]:
        """Waits for the host's `window.__host.done` and returns its summary (`ok`, `error`,
        `era`, `protocolVersion`, `initialized`, `rendered`, `result`, `policy`, ...)."""
        page.wait_for_function("window.__host !== undefined", timeout=timeout_ms)
        page.wait_for_function("document.documentElement.dataset.done !== undefined", timeout=timeout_ms)
        return page.evaluate("window.__host.done")

    @staticmethod
    def log(page: Page) -> list[dict[str, Any]]:
        """The host's log: each step, each bridge message both ways (`kind` "view->host" /
        "host->view", `msg` the message) and each MCP request it posted ("mcp", "mcp-view")."""
        return page.evaluate("window.__host.log")

    @staticmethod
    def teardown(page: Page) -> dict[str, Any]:
        """Sends ui/resource-teardown (unless `send_teardown` did) and waits for the View's answer
        (3 s at most): `{"acked": bool, "ms": int}`."""
        return page.evaluate("window.__teardown ?? window.__host.teardown()")

    @staticmethod
    def send_teardown(page: Page) -> None:
        """Sends ui/resource-teardown without waiting for the answer (`teardown` waits for it):
        several views are torn down at once, each answering 300 ms after it was sent at the
        earliest."""
        page.evaluate("() => { window.__teardown = window.__host.teardown(); }")


@contextlib.contextmanager
def apps_host() -> Iterator[HostPages]:
    """Serves the built host on two ports of 127.0.0.1 (host page and sandbox proxy) from
    threads, for the duration of the block. Skips the test (fails it under CI) when the bundle
    is missing."""
    for name in ("host.html", "host.js", "sandbox.html", "sandbox.js"):
        if not (DIST / name).is_file():
            _missing(f"{DIST / name} is missing")
    handler = functools.partial(_Quiet, directory=str(DIST))
    servers = [ThreadingHTTPServer(("127.0.0.1", 0), handler) for _ in range(2)]
    threads = []
    for server in servers:
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, name="apps-host-static", daemon=True)
        thread.start()
        threads.append(thread)
    try:
        host, sandbox = (f"http://127.0.0.1:{s.server_address[1]}" for s in servers)
        yield HostPages(host, sandbox)
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
        for thread in threads:
            thread.join(timeout=5)
