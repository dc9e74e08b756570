"""The browser-test infrastructure (tests/browser.py): a page served by a real loopback HTTP
server, opened in headless Chromium, a click that changes the DOM, a screenshot kept as an
artifact; and the helper's skip / fail / misuse paths."""

from __future__ import annotations

import asyncio
import contextlib
import struct
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import browser
from browser import artifact_dir, chromium_page
from conftest import WAIT

PAGE = b"""<!doctype html>
<html>
<head><meta charset="utf-8"><title>browser smoke</title></head>
<body>
  <p id="status">waiting</p>
  <button id="go">Go</button>
  <script>
    let clicks = 0;
    document.getElementById("go").addEventListener("click", () => {
      clicks += 1;
      document.getElementById("status").textContent = `clicked ${clicks}`;
    });
  </script>
</body>
</html>
"""


@contextlib.contextmanager
def serving(body: bytes) -> Iterator[tuple[str, list[str]]]:
    """`body` as `text/html` at `/` of an HTTP server on a free loopback port, in a thread; yields
    its URL and the paths requested so far (anything but `/` is a 404)."""
    requested: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requested.append(self.path)
            if self.path != "/":
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass  # quiet

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", requested
    finally:
        server.shutdown()
        server.server_close()
        thread.join(WAIT)


def png_size(path: Path) -> tuple[int, int]:
    """Width and height of a PNG file (its IHDR chunk)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_a_click_changes_the_page_and_a_screenshot_is_kept() -> None:
    with serving(PAGE) as (url, requested), chromium_page() as page:
        page.goto(url)
        assert "/" in requested
        assert page.title() == "browser smoke"
        assert page.locator("#status").inner_text() == "waiting"
        page.get_by_role("button", name="Go").click()
        assert page.locator("#status").inner_text() == "clicked 1"
        page.get_by_role("button", name="Go").click()
        assert page.locator("#status").inner_text() == "clicked 2"
        assert page.viewport_size == {"width": 1400, "height": 900}
        shot = artifact_dir() / "browser-smoke.png"
        shot.unlink(missing_ok=True)
        page.screenshot(path=shot)
    assert shot.parent == browser.ROOT / "target" / "test-artifacts"
    assert png_size(shot) == (1400, 900)


def test_without_chromium_the_test_is_skipped(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(browser, "CHROMIUM", tmp_path / "chromium")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"headless Chromium not available: .*apt-get as root"):
        with chromium_page():
            pass


def test_without_chromium_under_ci_the_test_fails(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(browser, "CHROMIUM", tmp_path / "chromium")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"headless Chromium not available: .*CI is set"):
        with chromium_page():
            pass


def test_inside_an_event_loop_it_says_to_write_a_sync_test() -> None:
    async def misuse() -> None:
        with chromium_page():
            pass

    with pytest.raises(RuntimeError, match="plain `def`"):
        asyncio.run(misuse())
