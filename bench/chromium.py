"""Debian's Chromium as the browser tests (tests/browser.py) and the lab page's benchmark
(bench/lab.py) launch it through Playwright: never `playwright install`, no downloads."""

from __future__ import annotations

from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
"""Debian's Chromium (the `chromium` package; scripts/test installs it as root)."""

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
]
"""Headless in a container (no sandbox, no GPU) and off the network: without the
background-networking flags it tries Google's services at start, and in a closed network its
connections are refused. Pages that are not in front run their timers on time: the MCP Apps
views render side by side in one browser (tests/test_apps_host.py), and a background page's
timers were clamped until eight pages took 20 s instead of 4."""

WIDTH, HEIGHT = 1400, 900
"""The page's viewport, in CSS pixels."""
