"""The lab page (`/_lab/`, docs/report.md) and what it reads: the control API's report and
triggers, the listener's `lab` option, the CLI's `report --html` and `report --serve --follow`.
The pages are opened in headless Chromium (tests/browser.py) and driven like a person would:
the checklist is read from the DOM, a frame is clicked to see its JSON, a trigger button is
clicked and the official client receives the notification it sends."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, types

from everything_mcp import ConfigError, Server, load_records

from browser import chromium_page, keep_screenshot
from conftest import SERVER_CMD, WAIT, climb_the_ladder

pytestmark = pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")

STATUS = "test://review/status"


@pytest.fixture
def lab() -> Iterator[Server]:
    """The everything and review-lab catalogs over HTTP; the review lab's update waits an hour,
    so only its trigger sends it within a test."""
    with Server(catalogs=["everything", "review-lab"], update_delay=3600) as srv:
        srv.start_http()
        yield srv


def control(srv: Server) -> httpx.Client:
    return httpx.Client(base_url=f"{srv.base_url}/_control", timeout=WAIT)


# --- the listener and the control API -------------------------------------------------------


def test_the_page_is_served_self_contained_with_a_policy_that_forbids_the_network(lab: Server) -> None:
    with httpx.Client(base_url=lab.base_url or "", timeout=WAIT) as http:
        page = http.get("/_lab/")
        assert page.status_code == 200
        assert page.headers["content-type"] == "text/html; charset=utf-8"
        policy = page.headers["content-security-policy"]
        assert "default-src 'none'" in policy and "connect-src 'self'" in policy
        assert '<script id="lab-data" type="application/json">null</script>' in page.text
        assert "http://" not in page.text and "https://" not in page.text
        moved = http.get("/_lab")
        assert (moved.status_code, moved.headers["location"]) == (308, "/_lab/")
        # The same Host guard as /mcp.
        assert http.get("/_lab/", headers={"Host": "evil.example"}).status_code == 403


@pytest.mark.parametrize(
    ("host", "options", "served"),
    [
        (None, {"lab": False}, False),
        (None, {"control": False}, False),
        ("0.0.0.0", {}, False),  # not loopback: off unless asked
        ("0.0.0.0", {"lab": True}, True),
    ],
)
def test_the_lab_option(host: str | None, options: dict[str, Any], served: bool) -> None:
    with Server(catalogs=["none"]) as srv:
        srv.start_http(host, **options)
        assert httpx.get(f"{srv.base_url}/_lab/", timeout=WAIT).status_code == (200 if served else 404)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_the_control_api_serves_the_report_of_srv_report(lab: Server, mode: str) -> None:
    async def drive() -> None:
        async with Client(lab.http_url or "", mode=mode) as client:  # type: ignore[arg-type]
            await client.list_resources()
            await client.read_resource(STATUS)

    anyio.run(drive)
    with control(lab) as api:
        got = api.get("/report")
    assert got.status_code == 200
    assert got.headers["cache-control"] == "no-store"
    assert got.json() == lab.report().to_json()
    mine = got.json()["clients"][0]
    assert (mine["client"]["name"], mine["transport"], mine["levels"]["subscription"]) == ("mcp", "http", 3)


def test_triggers_from_the_control_api_and_python(lab: Server) -> None:
    with control(lab) as api:
        assert api.get("/triggers").json() == {"triggers": ["review-lab.update"]}
        assert lab.trigger_names == ["review-lab.update"]
        assert api.post("/triggers/review-lab.update").json() == {"fired": 0}
        with httpx.Client(timeout=WAIT) as http:
            session = handshake(http, lab.http_url or "")
            post(http, lab.http_url or "", session, 2, "resources/subscribe", {"uri": STATUS})
            assert api.post("/triggers/review-lab.update").json() == {"fired": 1}
            # The update waits for the session's standalone stream.
            headers = {"accept": "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
            with http.stream("GET", lab.http_url or "", headers=headers) as stream:
                events = (json.loads(line[6:]) for line in stream.iter_lines() if line.startswith("data: {"))
                update = next(e for e in events if e.get("method") == "notifications/resources/updated")
            assert update["params"] == {"uri": STATUS}
            assert lab.trigger("review-lab.update") == 0  # sent already
        unknown = api.post("/triggers/nope")
        assert unknown.status_code == 404
        assert (
            unknown.json()["error"]["message"] == 'no trigger "nope"; the loaded catalogs offer ["review-lab.update"]'
        )
    with pytest.raises(ConfigError, match="no trigger"):
        lab.trigger("nope")


def handshake(http: httpx.Client, url: str) -> str:
    """A raw handshake-era session; its id."""
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    }
    answer = http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}, headers=ACCEPT)
    session = answer.headers["mcp-session-id"]
    headers = {**ACCEPT, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    return session


ACCEPT = {"accept": "application/json, text/event-stream"}


def post(http: httpx.Client, url: str, session: str, id: int, method: str, params: dict[str, Any]) -> None:
    headers = {**ACCEPT, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    answer = http.post(url, json={"jsonrpc": "2.0", "id": id, "method": method, "params": params}, headers=headers)
    assert answer.status_code == 200, answer.text


# --- recorded runs and the CLI ---------------------------------------------------------------


def record_a_run(path: Path, mode: str = "legacy") -> None:
    """A run of the official client over stdio, recorded to `path`: it lists, reads, subscribes,
    is told of the update, re-reads and unsubscribes."""
    with Server(catalogs=["none"], record=str(path)) as srv:
        anyio.run(climb_the_ladder, srv, mode)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SERVER_CMD, *args], capture_output=True, text=True, timeout=WAIT * 3)


def test_report_html_is_one_file_with_the_records_and_the_report(tmp_path: Path) -> None:
    run, out = tmp_path / "run.jsonl", tmp_path / "run.html"
    record_a_run(run)
    done = cli("report", str(run), "--html", str(out))
    assert done.returncode == 0, done.stderr
    text = out.read_text(encoding="utf-8")
    assert "http://" not in text and "https://" not in text
    data = json.loads(text.split('<script id="lab-data" type="application/json">', 1)[1].split("</script>", 1)[0])
    assert [r["seq"] for r in data["records"]] == [r.seq for r in load_records(run)]
    assert data["report"]["clients"][0]["levels"] == {"subscription": 7}


def test_the_html_report_in_chromium(tmp_path: Path) -> None:
    """The checklist's DOM, a click on a frame showing its JSON, and a screenshot."""
    run, out = tmp_path / "run.jsonl", tmp_path / "run.html"
    record_a_run(run)
    assert cli("report", str(run), "--html", str(out)).returncode == 0
    records = load_records(run)
    read = next(r for r in records if r.method == "resources/read" and r.kind == "request")
    with chromium_page() as page:
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(out.as_uri())
        client = page.locator("[data-client]")
        assert client.count() == 1
        label = client.get_attribute("data-client") or ""
        assert label.startswith("mcp ") and label.endswith(" (handshake, stdio)"), label
        assert page.locator("[data-level]").first.get_attribute("data-level") == "7"
        for check in ("subscription.read", "subscription.notified", "subscription.changed", "lifecycle.initialized"):
            assert page.locator(f'[data-check="{check}"]').get_attribute("data-status") == "pass", check
        assert page.locator('[data-check="cancel.sent"]').get_attribute("data-status") == "not exercised"
        assert page.locator("#status").inner_text().strip().lower() == "file"
        assert page.locator("#btn-review-update").is_hidden()
        page.locator(f'.frame[data-seq="{read.seq}"]').click()
        shown = json.loads(page.locator("#detail-json").inner_text())
        assert shown == read.msg
        keep_screenshot(page, "report-html.png")
        assert errors == []


def test_the_html_report_of_both_eras_shows_the_other_eras_checks_as_not_applicable(tmp_path: Path) -> None:
    """Clients of both eras in one page: each lists the other era's lifecycle checks, dimmed as
    "not applicable" and counted in neither its pass nor its "not exercised" tally."""
    legacy, current, out = tmp_path / "legacy.jsonl", tmp_path / "current.jsonl", tmp_path / "both.html"
    record_a_run(legacy, "legacy")
    with Server(catalogs=["everything"], record=str(current)) as srv:

        async def list_tools() -> None:
            from mcp import StdioServerParameters

            with anyio.fail_after(WAIT):
                async with Client(StdioServerParameters(**srv.stdio_params), mode="auto") as client:
                    await client.list_tools()

        anyio.run(list_tools)
    done = cli("report", str(legacy), str(current), "--html", str(out))
    assert done.returncode == 0, done.stderr
    with chromium_page() as page:
        page.goto(out.as_uri())
        handshake = page.locator('[data-client$="(handshake, stdio)"]')
        stateless = page.locator('[data-client$="(stateless, stdio)"]')
        assert (handshake.count(), stateless.count()) == (1, 1)
        status = 'data-status="not applicable"'
        assert handshake.locator(f'[data-check="lifecycle.envelope"][{status}]').count() == 1
        for check in ("lifecycle.initialize", "lifecycle.initialized"):
            assert stateless.locator(f'[data-check="{check}"][{status}]').count() == 1
            assert handshake.locator(f'[data-check="{check}"]').get_attribute("data-status") == "pass"
        for client in (handshake, stateless):
            exercised = client.locator('[data-status="not exercised"]').count()
            tally = client.locator(".tally").inner_text()
            assert tally.endswith(f"\u00b7 {exercised} not exercised"), tally


def test_the_live_page_while_the_official_client_subscribes(lab: Server) -> None:
    """A person's view: the checklist turns green as the client goes up the ladder, the "update
    now" button makes the server send the update, and the client receives it."""
    subscribed, notified, finish = threading.Event(), threading.Event(), threading.Event()
    failure: list[BaseException] = []

    async def drive() -> None:
        async def on_message(message: object) -> None:
            if isinstance(getattr(message, "root", message), types.ResourceUpdatedNotification):
                notified.set()

        with anyio.fail_after(WAIT * 3):
            async with Client(lab.http_url or "", mode="legacy", message_handler=on_message) as client:
                await client.list_resources()
                await client.read_resource(STATUS)
                await client.subscribe_resource(STATUS)
                subscribed.set()
                await anyio.to_thread.run_sync(lambda: notified.wait(WAIT))
                await client.read_resource(STATUS)
                await anyio.to_thread.run_sync(lambda: finish.wait(WAIT))

    thread = in_thread(drive, failure)
    try:
        with chromium_page() as page:
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{lab.base_url}/_lab/")
            page.wait_for_selector("#status:text-is('live')")
            assert subscribed.wait(WAIT)
            page.wait_for_selector('[data-check="subscription.subscribed"][data-status="pass"]')
            assert page.locator('[data-check="subscription.notified"]').get_attribute("data-status") == "not exercised"
            page.fill("#resource-uri", STATUS)
            page.click("#btn-review-update")
            page.wait_for_selector("#action-result:has-text('fired')")
            assert notified.wait(WAIT), "the client never received the update"
            page.wait_for_selector('[data-check="subscription.changed"][data-status="pass"]')
            assert page.locator("[data-level]").first.get_attribute("data-level") == "7"
            update = lab.traffic.wait_for("notifications/resources/updated", timeout=WAIT)
            page.locator(f'.frame[data-seq="{update.seq}"]').click()
            assert json.loads(page.locator("#detail-json").inner_text()) == update.msg
            keep_screenshot(page, "lab-live.png")
            assert errors == []
    finally:
        finish.set()
        thread.join(WAIT)
    assert not failure, failure


def test_the_live_page_follows_a_2026_client(lab: Server) -> None:
    """The official client in its default mode (2026-07-28, no session): the page shows its
    requests and its checklist as they come."""

    async def drive() -> None:
        async with Client(lab.http_url or "") as client:
            await client.list_resources()
            await client.read_resource(STATUS)

    with chromium_page() as page:
        page.goto(f"{lab.base_url}/_lab/")
        page.wait_for_selector("#status:text-is('live')")
        failure: list[BaseException] = []
        in_thread(drive, failure).join(WAIT)
        assert not failure, failure
        page.wait_for_selector('[data-check="lifecycle.envelope"][data-status="pass"]')
        page.wait_for_selector('[data-level="3"]')
        read = lab.traffic.wait_for("resources/read", timeout=WAIT)
        page.locator(f'.frame[data-seq="{read.seq}"]').click()
        assert json.loads(page.locator("#detail-json").inner_text()) == read.msg


def in_thread(main: Callable[[], Any], failure: list[BaseException]) -> threading.Thread:
    """Runs the async `main` on its own event loop in a thread (Playwright's sync API owns the
    test's thread); an exception is kept in `failure`."""

    def run() -> None:
        try:
            anyio.run(main)
        except BaseException as e:  # reported by the test
            failure.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_report_serve_follow_watches_a_growing_record_file(tmp_path: Path) -> None:
    """`report FILE --serve --follow`: the page of a stdio session's record file grows with it."""
    whole, growing = tmp_path / "whole.jsonl", tmp_path / "growing.jsonl"
    record_a_run(whole)
    lines = whole.read_text(encoding="utf-8").splitlines(keepends=True)
    growing.write_text("".join(lines[:3]), encoding="utf-8")
    proc = subprocess.Popen(
        [*SERVER_CMD, "report", str(growing), "--serve", "--follow", "--port", "0"],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    try:
        url = json.loads(proc.stderr.readline())["url"]
        assert url.endswith("/_lab/")
        with chromium_page() as page:
            page.goto(url)
            page.wait_for_selector("#count:text-is('3')")
            with growing.open("a", encoding="utf-8") as f:
                f.write("".join(lines[3:]))
            page.wait_for_selector(f"#count:text-is('{len(lines)}')")
            page.wait_for_selector('[data-check="subscription.changed"][data-status="pass"]')
            # No server behind this page: its buttons are hidden, and a call is refused.
            assert page.locator("#btn-review-update").is_hidden()
        refused = httpx.post(url.replace("/_lab/", "/_control/notify"), json={}, timeout=WAIT)
        assert refused.status_code == 501
    finally:
        proc.terminate()
        assert proc.wait(timeout=WAIT) == 0
        proc.stderr.close()


def test_the_cli_keeps_the_traffic_for_the_lab_and_no_lab_keeps_none() -> None:
    from conftest import cli_http_server

    for args, served in (((), True), (("--no-lab",), False)):
        with cli_http_server(*args) as url, httpx.Client(timeout=WAIT) as http:
            base = url.removesuffix("/mcp")
            handshake(http, url)
            assert http.get(f"{base}/_lab/").status_code == (200 if served else 404)
            clients = http.get(f"{base}/_control/report").json()["clients"]
            assert [c["client"]["name"] for c in clients] == (["raw"] if served else [])


ANSI_STYLE = {
    "1": "font-weight:bold",
    "32": "color:#1a7f37",
    "1;31": "font-weight:bold;color:#cf222e",
    "2": "color:#8c959f",
}


def terminal_html(text: str) -> str:
    """The coloured table as a terminal would show it, for its screenshot."""
    import html
    import re

    out, style = [], None
    for part in re.split(r"(\x1b\[[0-9;]*m)", text):
        if part.startswith("\x1b["):
            code = part[2:-1]
            style = None if code == "0" else ANSI_STYLE[code]
        elif part:
            escaped = html.escape(part)
            out.append(f'<span style="{style}">{escaped}</span>' if style else escaped)
    body = "".join(out)
    return f'<pre style="font:13px/1.35 monospace;background:#fff;margin:0;padding:12px">{body}</pre>'


def test_the_terminal_table_in_colour(tmp_path: Path) -> None:
    run = tmp_path / "run.jsonl"
    record_a_run(run)
    coloured = cli("report", str(run), "--color", "always")
    assert coloured.returncode == 0, coloured.stderr
    assert "\x1b[32m  ok   subscription.read" in coloured.stdout
    assert "\x1b[2m  -    cancel.sent" in coloured.stdout
    plain = cli("report", str(run))  # auto: stdout is a pipe here
    assert "\x1b[" not in plain.stdout
    assert plain.stdout == cli("report", str(run), "--color", "never").stdout
    with chromium_page() as page:
        page.set_viewport_size({"width": 1200, "height": 900})
        page.set_content(terminal_html(coloured.stdout))
        keep_screenshot(page, "report-table.png")


def test_the_control_report_folds_what_it_reads_and_counts_what_memory_dropped(tmp_path: Path) -> None:
    """Each call folds only the records recorded since the last one, so what it read stays in
    the report after the memory bound drops it; records dropped before a call could read them
    are counted in `dropped`; a reset starts it over. The record file has every record, so the
    expected report is the batch report of exactly the records the calls read."""
    from everything_mcp.report import report

    run = tmp_path / "run.jsonl"
    with Server(catalogs=["everything"], keep_traffic=6, record=str(run)) as srv:
        srv.start_http()
        url = srv.http_url or ""
        with control(srv) as api, httpx.Client(timeout=WAIT) as http:
            assert api.get("/report").json() == {"version": 2, "dropped": 0, "clients": []}
            session = handshake(http, url)
            assert api.get("/report").json() == srv.report().to_json()
            for id in range(2, 6):  # read as they come: past the keep limit, nothing is missed
                post(http, url, session, id, "ping", {})
                assert api.get("/report").json() == report(load_records(run)).to_json()
            assert srv.traffic.dropped > 0
            read_through = srv.traffic[-1].seq
            for id in range(6, 12):  # past the keep limit between two calls
                post(http, url, session, id, "ping", {})
            first_kept = srv.traffic[0].seq
            missed = first_kept - read_through - 1
            assert missed > 0
            read = [r for r in load_records(run) if not read_through < r.seq < first_kept]
            live = api.get("/report").json()
            assert live == report(read, dropped=missed).to_json()
            assert live["dropped"] == missed
            srv.reset()
            assert api.get("/report").json() == {"version": 2, "dropped": 0, "clients": []}
            post(http, url, session, 20, "ping", {})
            assert api.get("/report").json() == srv.report().to_json()


def test_the_page_sends_the_control_token_from_its_fragment() -> None:
    """With `--control-token T` the page is opened at `/_lab/#token=T`; without it, the
    checklist says what the API answered."""
    with Server(catalogs=["none"]) as srv:
        srv.start_http(control_token="s3cret")
        with chromium_page() as page:
            page.goto(f"{srv.base_url}/_lab/")
            page.wait_for_selector("#checklist:has-text('401')")
            page.goto(f"{srv.base_url}/_lab/#token=s3cret")
            page.reload()
            page.wait_for_selector("#status:text-is('live')")
            with httpx.Client(timeout=WAIT) as http:
                handshake(http, srv.http_url or "")
            page.wait_for_selector('[data-client^="raw 1"] [data-check="lifecycle.initialized"][data-status="pass"]')


def test_the_page_data_cannot_end_its_script_element(tmp_path: Path) -> None:
    """A frame whose text holds `</script>` or `<!--` stays data: the page's JSON parses back to
    the very record."""
    from everything_mcp.report import html

    run = tmp_path / "run.jsonl"
    with Server(catalogs=["everything"], record=str(run)) as srv:
        conn = srv.connect()
        call = {"name": "echo", "arguments": {"message": "</script><!-- é"}}
        conn.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}, ensure_ascii=False))
        assert conn.recv(WAIT)
        conn.close()
    records = load_records(run)
    page = html([records])
    assert page.count("</script>") == page.count("<script")
    data = json.loads(page.split('<script id="lab-data" type="application/json">', 1)[1].split("</script>", 1)[0])
    assert [r["raw"] for r in data["records"]] == [r.raw for r in records]
    assert "</script><!-- é" in data["records"][0]["raw"]
