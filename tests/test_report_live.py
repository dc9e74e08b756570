"""The report of a server's traffic as it comes (docs/report.md, "The live report"): a report
whose checks did not see every record says so, in every format; the live report adds up what it
missed."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from everything_mcp import Server, TrafficRecord
from everything_mcp.report import LiveReport, html, report
from everything_mcp.report.webpage import record_json

from browser import chromium_page
from report_support import Raw

NOTE = (
    "note: the checks saw only part of the traffic: 1,234 records were dropped from memory before they were"
    " read (raise keep_traffic_bytes / --keep-traffic-bytes)"
)


def line(record: TrafficRecord) -> str:
    """A record as the server's memory gives it to the live report (a JSON line)."""
    return json.dumps(record_json(record), ensure_ascii=False)


@pytest.fixture(scope="module")
def records() -> Iterator[list[TrafficRecord]]:
    """A raw client's handshake, a tools/list and a ping, over an in-process connection."""
    with Server(catalogs=["everything"]) as srv:
        raw = Raw(srv)
        raw.handshake()
        raw.recv()  # the tools/list_changed the catalog announces
        raw.request(1, "tools/list")
        raw.request(2, "ping")
        yield list(srv.traffic)


def test_a_report_of_every_record_has_no_note(records: list[TrafficRecord]) -> None:
    whole = report(records)
    assert whole.dropped == 0
    assert whole.to_json()["dropped"] == 0  # always there
    assert json.loads(whole.dumps())["dropped"] == 0
    assert whole.table().startswith("raw 1 (handshake, memory)  subscription level 1/7\n")
    assert "note" not in whole.markdown()


def test_a_report_says_how_many_records_its_checks_did_not_see(records: list[TrafficRecord]) -> None:
    partial = report(records, dropped=1234)
    assert partial.dropped == 1234
    assert partial.table().splitlines()[:3] == [NOTE, "", "raw 1 (handshake, memory)  subscription level 1/7"]
    assert partial.table(color=True).splitlines()[0] == f"\x1b[1;33m{NOTE}\x1b[0m"
    matrix = partial.markdown().splitlines()
    assert matrix[0].startswith("| check | raw 1 (handshake, memory) |")
    assert matrix[-2:] == ["", NOTE]  # under the matrix
    assert partial.to_json()["dropped"] == 1234
    assert json.loads(partial.dumps())["dropped"] == 1234
    assert report(records, dropped=1).note().startswith("note: the checks saw only part of the traffic: 1 record was")


def test_the_html_page_notes_the_records_dropped(records: list[TrafficRecord]) -> None:
    page = html([records], title="run", dropped=1234)
    data = json.loads(page.split('<script id="lab-data" type="application/json">', 1)[1].split("</script>", 1)[0])
    assert data["report"]["dropped"] == 1234
    assert data["title"] == f"run \N{EM DASH} {NOTE}"
    assert (
        json.loads(html([records], title="run").split('type="application/json">', 1)[1].split("</script>")[0])["title"]
        == "run"
    )
    with chromium_page() as browser:
        browser.set_content(page)
        assert browser.locator("#title").inner_text() == f"run \N{EM DASH} {NOTE}"


def test_the_live_report_adds_up_the_records_it_missed(records: list[TrafficRecord]) -> None:
    """`missed` is how many records the server's memory dropped before this live report read
    them, since its last update."""
    lines = [line(r) for r in records]
    live = LiveReport()
    first = json.loads(live.update(lines[:3], 0))
    assert first["dropped"] == 0
    assert first == report(records[:3]).to_json()
    second = json.loads(live.update(lines[5:], 2))
    assert second["dropped"] == 2
    assert json.loads(live.update([], 3))["dropped"] == 5
