"""Headless Chromium for the browser tests: Debian's `/usr/bin/chromium` driven by Playwright.

A plain module (not a conftest): a browser test imports it.

    from browser import artifact_dir, chromium_page

    def test_button(http_server):               # a plain `def`: no asyncio / anyio mark
        with chromium_page() as page:
            page.goto(f"{http_server.base_url}/some/page")
            page.get_by_role("button", name="Go").click()
            page.screenshot(path=artifact_dir() / "button.png")

- **Sync tests only.** This uses Playwright's sync API, which refuses to run inside a running
  asyncio event loop (it drives its own loop on a greenlet). The suite's `pytest.mark.anyio` and
  pytest-asyncio tests run in such a loop, so a browser test is a plain `def`; an in-process
  `Server` serves from its own threads, so nothing needs a loop in the test. `chromium_page()`
  says so clearly if it is entered from inside a loop.
- **No browser download.** `playwright install` is never run: the browser is Debian's Chromium
  (`scripts/test` installs the `chromium` package with apt-get when it runs as root), launched
  with `executable_path`. The flags below keep it off the network: without the
  background-networking ones it tries Google's services at start, and in a closed network its
  connections are refused.
- **Skipped, or failed under CI.** Without Chromium or the `playwright` package the test is
  skipped with the reason; when the environment variable `CI` is set (`CI=true`), it fails
  instead, since CI must run the browser tests.
- **One browser per call, or one per module.** Each `chromium_page()` launches and closes its own
  Chromium (with Playwright's driver, about a second), so the tests are independent under
  pytest-xdist (`-n 2`). A module of many browser tests can share one: `chromium()` in a
  module-scoped fixture, and `chromium_page(browser)` (or `new_page(browser)`) per test, each in a
  fresh browser context. Only in a module without asyncio: while Playwright's sync API is open it
  leaves its event loop marked as running in the test's thread, so `anyio.run` and the asyncio
  tests fail ("Cannot run the event loop while another loop is running") until it is closed, and
  pytest closes a module's fixtures before the next module's tests.
- **Artifacts.** `artifact_dir()` is `target/test-artifacts/` under the repository root (git
  ignores `target/`): screenshots kept after the run, e.g. by CI.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import pytest

from bench.chromium import CHROMIUM, CHROMIUM_ARGS, HEIGHT, WIDTH

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

TIMEOUT_MS = 10_000
"""Every Playwright wait (a click, a locator, a navigation) fails after this, well inside the
suite's per-test timeout, so a stuck page reads as a Playwright error and not a pytest timeout."""

ROOT = Path(__file__).resolve().parent.parent


def artifact_dir() -> Path:
    """`target/test-artifacts/` under the repository root, created if missing: screenshots and
    other files a test keeps for after the run."""
    path = ROOT / "target" / "test-artifacts"
    path.mkdir(parents=True, exist_ok=True)
    return path


DOCS_IMAGES = ROOT / "docs" / "img"
"""Where the docs' screenshots are (taken by the browser tests)."""


def keep_screenshot(page: Page, name: str) -> Path:
    """A screenshot of `page` kept as a test artifact; with EVERYTHING_MCP_DOCS_IMAGES=1 it also
    replaces the one of that name the docs show (docs/img/)."""
    path = artifact_dir() / name
    page.screenshot(path=path)
    if os.environ.get("EVERYTHING_MCP_DOCS_IMAGES") == "1":
        DOCS_IMAGES.mkdir(exist_ok=True)
        shutil.copy(path, DOCS_IMAGES / name)
    return path


def in_ci() -> bool:
    """Whether the environment variable `CI` is set (to anything but empty, 0, false or no)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def unavailable(why: str) -> NoReturn:
    """Skips the test because headless Chromium cannot run, or fails it under CI."""
    message = f"headless Chromium not available: {why}; scripts/test installs it with apt-get as root"
    if in_ci():
        pytest.fail(f"{message} (CI is set, so the browser tests must run)", pytrace=False)
    pytest.skip(message)


@contextlib.contextmanager
def chromium() -> Iterator[Browser]:
    """A fresh headless Chromium, driven by Playwright's sync API; the browser and Playwright are
    closed afterwards. Skips the test (fails it under CI) when Chromium or Playwright is missing
    or Chromium does not start."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no running loop: a plain sync test, as it should be
        pass
    else:
        raise RuntimeError(
            "chromium() and chromium_page() use Playwright's sync API, which cannot run inside an "
            "asyncio event loop: write the browser test as a plain `def` (no asyncio / anyio mark)"
        )
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError as e:
        unavailable(f"the playwright package is not installed ({e}; pip install '.[test]')")
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        unavailable(f"{CHROMIUM} is missing (Debian's `chromium` package)")
    with sync_playwright() as pw:
        try:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        except Error as e:
            lines = str(e).strip().splitlines()
            unavailable(f"{CHROMIUM} did not start: {lines[0] if lines else type(e).__name__}")
        try:
            yield browser
        finally:
            browser.close()


def new_page(browser: Browser) -> Page:
    """A page (1400 x 900, every wait bounded by `TIMEOUT_MS`) in a new browser context of
    `browser`: nothing shared with the other pages (cookies, storage, connections). Closing its
    context (`page.context.close()`) closes it."""
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    context.set_default_timeout(TIMEOUT_MS)
    return context.new_page()


@contextlib.contextmanager
def chromium_page(browser: Browser | None = None) -> Iterator[Page]:
    """A Playwright sync `Page` (`new_page`) in `browser`, or in a fresh headless Chromium
    (`chromium()`) when none is given; the page and its context are closed afterwards, and the
    browser it launched. Skips the test (fails it under CI) when Chromium or Playwright is
    missing or Chromium does not start."""
    if browser is None:
        with chromium() as launched, chromium_page(launched) as page:
            yield page
        return
    page = new_page(browser)
    try:
        yield page
    finally:
        page.context.close()
