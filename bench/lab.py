"""The live lab page's update cost with many frames: the lab page (docs/report.md, "The live lab
page") and the HTML report holding N records (100,000 by default), opened in headless Chromium.

The records are real traffic, the same as `bench.report`'s (its `MemoryClient` and
`http_session`, waves of 50 sessions, six client names): they drive an in-process
`Server(keep_traffic=N + 1000, record=FILE)` until it holds at least N records, so the server's
memory and its record file hold the same traffic. Each round starts a fresh server and measures:

- `GET /_control/report` on it (httpx, wall time): the first call, whose
  `everything_mcp.report.LiveReport` parses all N records, then, after about 100 more records (a
  new session's handshake and pings), a second call, which parses only those but checks them all
  again. Both answers are checked (the generated clients are in them).
- The live page, `/_lab/` of the same server (its listener serves it by default): from
  `page.goto` until `#count` shows every record in memory, which is the traffic stream's catch-up
  (`GET /_control/traffic/stream` from seq 0). Then one real request at a time (a `ping` on an
  in-process session; its request and answer are two records): from just before it is sent to
  the page showing them (a `MutationObserver` on `#count` stamps the wall clock, `Date.now()`, the
  same clock as Python's `time.time()`, at millisecond resolution). Then `window.lab.ingest`
  is called with one record 200 times, one per animation frame, exactly as records arriving live
  are batched: the page's own `stats.lastFlushMs` (the count, the spacer, following the tail, the
  window of rows) and `stats.lastRenderMs` (the rows put in the DOM; part of the flush) for each.
  Last, after a garbage collection, the page's JS heap (CDP `Performance.getMetrics`,
  `JSHeapUsedSize`) and its DOM element count (`document.getElementsByTagName('*')`): the list is
  virtualised, so the DOM holds the rows in view and not N of them. In live mode the page also
  asks for the report, at most once a second while frames arrive, so the server computes it
  meanwhile, as it does for a person watching.
- The HTML report, after the server has stopped: `python -m everything_mcp report FILE --html
  OUT` on the round's file as it was at N records (wall and CPU time, peak RSS, through
  `bench.report.run_measured`), the size of OUT, and OUT opened as a `file://` URL: the page's
  own `window.lab.stats.loadMs` (parsing the embedded records, the first render, the checklist)
  and the wall time from `page.goto` until `#count` shows N.

Chromium is Debian's `/usr/bin/chromium` driven by Playwright's sync API, launched as
`tests/browser.py` launches it (both take its flags from `bench/chromium.py`). Without
Chromium or the `playwright` package the browser figures are skipped, with the reason, and the
others are still measured.

There is no peer: no other MCP server has a live page of its traffic, so the figures are absolute
(milliseconds, MB, DOM elements).

    python -m bench.lab [N]          # one round, printed as JSON
    python -m bench.run --only lab   # in the benchmarks' tables (--smoke: 1,000 records)
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from . import report as report_bench
from .chromium import CHROMIUM, CHROMIUM_ARGS, HEIGHT, WIDTH

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

    from everything_mcp import Server

HEADROOM = 1000
"""Records the server keeps beyond N: the last wave's overshoot, the extra records and the pings
must not push any of the N out of memory."""

EXTRA = 100
"""Records added between the two `GET /_control/report` calls."""

PINGS = 20
"""Real requests timed from sending to the page showing them, per round."""

FRAMES = 200
"""`window.lab.ingest` calls, one per animation frame, per round."""

TIMEOUT_S = 600.0
"""Any one wait (a page to catch up or load, a command, a report) fails after this."""

INGEST = """async (frames) => {
  const lab = window.lab, stats = lab.stats;
  const last = lab.records[lab.records.length - 1];
  let seq = typeof last.seq === "number" ? last.seq : lab.records.length;
  const nextFrame = () => new Promise((resolve) => requestAnimationFrame(resolve));
  const flush = [], render = [];
  await nextFrame();
  for (let i = 0; i < frames; i++) {
    const flushes = stats.flushes, renders = stats.renders;
    lab.ingest([Object.assign({}, last, { seq: ++seq })]);
    await nextFrame();  // the flush was requested first, so it ran earlier in this frame
    if (stats.flushes !== flushes + 1) throw new Error(`frame ${i}: ${stats.flushes - flushes} flushes`);
    flush.push(stats.lastFlushMs);
    if (stats.renders !== renders) render.push(stats.lastRenderMs);
  }
  return { flush, render, count: Number(document.getElementById("count").textContent) };
}"""
"""Runs in the page: `frames` records ingested one per animation frame; each flush's and render's
milliseconds, as the page measures them (`stats`), and the count shown at the end."""

WATCH_COUNT = """() => {
  const el = document.getElementById("count");
  const seen = window.labBench = { shown: [] };
  new MutationObserver(() => seen.shown.push([Date.now(), Number(el.textContent)]))
    .observe(el, { childList: true, characterData: true, subtree: true });
}"""
"""Runs in the page: every change of `#count` from now on, as (wall-clock ms, count shown)."""


class Unavailable(Exception):
    """Headless Chromium cannot run here; the message says why."""


def unavailable() -> str | None:
    """Why headless Chromium cannot run here, or None when it can (as far as can be seen
    without starting it)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as e:
        return f"the playwright package is not installed ({e})"
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        return f"{CHROMIUM} is missing (Debian's `chromium` package)"
    return None


@contextmanager
def chromium() -> Iterator[Browser]:
    """A fresh headless Chromium; raises `Unavailable` when it cannot run or does not start."""
    if why := unavailable():
        raise Unavailable(why)
    from playwright.sync_api import Error, sync_playwright

    with sync_playwright() as pw:
        try:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        except Error as e:
            lines = str(e).strip().splitlines()
            raise Unavailable(f"{CHROMIUM} did not start: {lines[0] if lines else type(e).__name__}") from e
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def maybe_chromium(wanted: bool) -> Iterator[Browser | None]:
    """`chromium()` when `wanted`, else None."""
    if not wanted:
        yield None
        return
    with chromium() as browser:
        yield browser


@contextmanager
def new_page(browser: Browser) -> Iterator[Page]:
    """A page (1400 x 900) in a context of its own, closed afterwards."""
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    context.set_default_timeout(TIMEOUT_S * 1000)
    try:
        yield context.new_page()
    finally:
        context.close()


def wait_count(page: Page, at_least: int) -> int:
    """Waits until the page's `#count` shows at least `at_least` (polled every animation frame);
    returns what it shows."""
    shows = "(n) => Number(document.getElementById('count').textContent) >= n"
    page.wait_for_function(shows, arg=at_least, polling="raf", timeout=TIMEOUT_S * 1000)
    shown: int = page.evaluate("Number(document.getElementById('count').textContent)")
    return shown


def heap_mb(page: Page) -> float:
    """The page's used JS heap after a garbage collection, MB (CDP `Performance.getMetrics`)."""
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("HeapProfiler.collectGarbage")
        cdp.send("Performance.enable")
        metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
        return float(metrics["JSHeapUsedSize"]) / 1024 / 1024
    finally:
        cdp.detach()


def dom_elements(page: Page) -> tuple[int, int]:
    """The page's DOM elements, and how many of them are rows of the diagram."""
    counts: list[int] = page.evaluate(
        "[document.getElementsByTagName('*').length, document.getElementById('rows').children.length]"
    )
    return counts[0], counts[1]


# --------------------------------------------------------------------------------------------------
# The server and its traffic


class Tape:
    """How many records a server has written to its record file so far, counted by reading the
    file's new lines. A frame reaches its connection just before its record is written (both
    under the recorder's lock), so an answer already read may not be counted yet: `settled`
    waits for that."""

    def __init__(self, path: Path) -> None:
        path.touch()
        self.file: IO[bytes] = open(path, "rb")  # closed by close()
        self.records = 0

    def count(self) -> int:
        self.records += report_bench.count_lines(self.file)
        return self.records

    def settled(self, quiet: float = 0.05) -> int:
        """The count once no record has been written for `quiet` seconds (the traffic has stopped);
        an error if it never stops within `TIMEOUT_S`."""
        count, deadline = self.count(), time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            time.sleep(quiet)
            if (now := self.count()) == count:
                return count
            count = now
        raise RuntimeError(f"the tape was still growing after {TIMEOUT_S} s ({count} records)")

    def close(self) -> None:
        self.file.close()


def drive(srv: Server, tape: Tape, records: int, rng: random.Random, status: dict[str, int]) -> None:
    """Drives `srv` with `bench.report`'s traffic (see `bench.report.generate`: the same sessions,
    in waves of 50 that share one update of `bench://status`) until it has recorded at least
    `records` frames."""
    import httpx

    url = srv.http_url
    assert url is not None
    sessions = 0
    of_era = {"handshake": 0, "stateless": 0}
    with httpx.Client(timeout=report_bench.WAIT) as http:
        while (written := tape.count()) < records:
            per_session = written / sessions if sessions else 70
            wave: list[report_bench.MemoryClient] = []
            for _ in range(max(1, min(report_bench.WAVE, math.ceil((records - written) / per_session)))):
                sessions += 1
                if sessions % 10 == 0:
                    report_bench.http_session(http, url, rng)
                    continue
                era = "stateless" if sessions % 5 == 0 else "handshake"
                names = report_bench.STATELESS_CLIENTS if era == "stateless" else report_bench.MEMORY_CLIENTS
                name, version = names[of_era[era] % len(names)]
                of_era[era] += 1
                client = report_bench.MemoryClient(srv, name, version, era)
                client.start(rng)
                wave.append(client)
            status["version"] += 1
            reached = srv.notify_resource_updated(report_bench.STATUS_URI)
            if reached != len(wave):
                raise RuntimeError(f"the update reached {reached} subscribers, not {len(wave)}")
            for client in wave:
                client.finish()


CLIENT_NAMES = frozenset(
    name for name, _ in (*report_bench.MEMORY_CLIENTS, *report_bench.STATELESS_CLIENTS, report_bench.HTTP_CLIENT)
)
"""The client names of the generated traffic: every report must show them all."""


@contextmanager
def loaded_server(records: int, path: Path, seed: int = 21) -> Iterator[tuple[Server, Tape]]:
    """An in-process server over HTTP (the lab page on, as by default on loopback) whose memory
    holds at least `records` records of real traffic, also written to `path`; yields it and the
    count of its records."""
    from everything_mcp import Server

    path.unlink(missing_ok=True)
    status = {"version": 0}
    with Server(record=str(path), keep_traffic=records + HEADROOM) as srv:

        @srv.resource(report_bench.STATUS_URI, name="status", description="Changes with every update.")
        def bench_status() -> str:
            return f"status version {status['version']}"

        srv.start_http()
        tape = Tape(path)
        try:
            drive(srv, tape, records, random.Random(seed), status)
            yield srv, tape
        finally:
            tape.close()


def get_report(srv: Server, names: frozenset[str]) -> float:
    """`GET /_control/report`, wall ms; raises unless it answers a report naming every client of
    `names`."""
    import httpx

    t = time.perf_counter()
    answer = httpx.get(f"{srv.base_url}/_control/report", timeout=TIMEOUT_S)
    ms = (time.perf_counter() - t) * 1000
    answer.raise_for_status()
    shown = {c["client"]["name"] for c in answer.json()["clients"]}
    if not names <= shown:
        raise RuntimeError(f"the report shows the clients {sorted(shown)}, not {sorted(names)}")
    return ms


def session(srv: Server) -> report_bench.MemoryClient:
    """One more handshake-era session on an in-process connection, initialized."""
    client = report_bench.MemoryClient(srv, "bench-lab", "1", "handshake")
    hello = {"protocolVersion": report_bench.HANDSHAKE, "capabilities": {}, "clientInfo": client.info}
    client.send("initialize", hello)
    client.expect(1)
    client.send("notifications/initialized", notify=True)
    client.expect(0, "notifications/tools/list_changed")  # the catalog's research task appears
    return client


def ping(client: report_bench.MemoryClient) -> None:
    client.send("ping")
    client.expect(1)


# --------------------------------------------------------------------------------------------------
# The measurements


def measure_live(srv: Server, tape: Tape, browser: Browser, client: report_bench.MemoryClient) -> dict[str, float]:
    """The live page of `srv`: its catch-up, real pings to the screen, ingested frames, memory."""
    base = srv.base_url
    assert base is not None
    kept = tape.settled()
    with new_page(browser) as page:
        page.goto("about:blank")  # the renderer's start is not the page's
        t = time.perf_counter()
        page.goto(f"{base}/_lab/", wait_until="commit")
        shown = wait_count(page, kept)
        catchup_s = time.perf_counter() - t
        if shown != kept:
            raise RuntimeError(f"the page shows {shown} records, the server holds {kept}")
        page.evaluate(WATCH_COUNT)
        pings: list[float] = []
        for i in range(1, PINGS + 1):
            target = kept + 2 * i  # the request and its answer (nothing else is running)
            sent = time.time() * 1000
            ping(client)
            wait_count(page, target)
            seen: list[list[float]] = page.evaluate("window.labBench.shown.splice(0)")
            pings.append(next(at for at, count in seen if count >= target) - sent)
        if (recorded := tape.settled()) != kept + 2 * PINGS:
            raise RuntimeError(f"{PINGS} pings made {recorded - kept} records, not {2 * PINGS}")
        got: dict[str, Any] = page.evaluate(INGEST, FRAMES)
        if got["count"] != recorded + FRAMES:
            raise RuntimeError(f"the page shows {got['count']} records after ingesting {FRAMES} on {recorded}")
        flush, render = got["flush"], got["render"]
        elements, rows = dom_elements(page)
        return {
            "live_records": kept,
            "live_catchup_s": catchup_s,
            "live_ping_ms": statistics.median(pings),
            "live_ping_max_ms": max(pings),
            "live_flush_ms": statistics.median(flush),
            "live_flush_max_ms": max(flush),
            "live_render_ms": statistics.median(render) if render else 0.0,
            "live_render_max_ms": max(render) if render else 0.0,
            "live_heap_mb": heap_mb(page),
            "live_dom_elements": elements,
            "live_rows": rows,
        }


def measure_html(path: Path, records: int, out: Path, browser: Browser | None) -> dict[str, float]:
    """`report FILE --html OUT` on `path` (which holds `records` records), and OUT in Chromium."""
    cmd = [sys.executable, "-m", "everything_mcp", "report", str(path), "--html", str(out)]
    run = report_bench.run_measured(cmd, TIMEOUT_S)
    figures = {
        "html_records": records,
        "html_mb": out.stat().st_size / 1024 / 1024,
        "html_s": run.seconds,
        "html_cpu_s": run.cpu_s,
        "html_rss_mb": run.max_rss_mb,
    }
    if browser is None:
        return figures
    with new_page(browser) as page:
        page.goto("about:blank")
        t = time.perf_counter()
        page.goto(out.as_uri(), wait_until="commit")
        shown = wait_count(page, records)
        figures["html_shown_ms"] = (time.perf_counter() - t) * 1000
        if shown != records:
            raise RuntimeError(f"the HTML report shows {shown} records, its file has {records}")
        figures["html_load_ms"] = float(page.evaluate("window.lab.stats.loadMs"))
    return figures


def measure_once(records: int, tmp: Path, log: Callable[[str], None], with_browser: bool) -> dict[str, float]:
    """One round on a fresh server of `records` records: the report endpoint, the live page, the
    HTML report. Raises `Unavailable` (before measuring anything) when Chromium cannot run."""
    path, at_n, out = tmp / "records.jsonl", tmp / "records-at-n.jsonl", tmp / "report.html"
    t = time.perf_counter()
    with maybe_chromium(with_browser) as browser:
        with loaded_server(records, path) as (srv, tape):
            kept = tape.settled()
            shutil.copyfile(path, at_n)
            log(f"{kept:,} records in memory in {time.perf_counter() - t:.1f} s")
            figures: dict[str, float] = {"records": kept}
            figures["report_first_ms"] = get_report(srv, CLIENT_NAMES)
            client = session(srv)
            while tape.count() < kept + EXTRA:
                ping(client)
            figures["report_extra"] = tape.settled() - kept
            figures["report_second_ms"] = get_report(srv, CLIENT_NAMES | {"bench-lab"})
            if browser is not None:
                figures |= measure_live(srv, tape, browser, client)
            client.conn.close()
        # The server has stopped: the HTML report is a file, opened with nothing behind it.
        figures |= measure_html(at_n, kept, out, browser)
    log(", ".join(f"{k} {v:,.2f}" for k, v in figures.items()))
    return figures


def measure(
    records: int, rounds: int = 1, log: Callable[[str], None] | None = None
) -> tuple[list[dict[str, float]], str | None]:
    """`rounds` rounds of `records` records each; each round's figures, and why the browser
    figures were skipped (None: they were measured)."""
    say = log or (lambda _line: None)
    skipped = unavailable()
    results = []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory(prefix="bench-lab-") as tmp:
            try:
                results.append(measure_once(records, Path(tmp), say, skipped is None))
            except Unavailable as e:  # Chromium is there but does not start: once is enough
                skipped = str(e)
                results.append(measure_once(records, Path(tmp), say, False))
    if skipped:
        say(f"browser figures skipped: {skipped}")
    return results, skipped


if __name__ == "__main__":
    got, why = measure(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000, log=print)
    print(json.dumps({"rounds": got, "skipped": why}, indent=1))
