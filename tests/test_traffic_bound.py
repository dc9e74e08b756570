"""The traffic kept in memory is bounded by bytes as well as by records (`keep_traffic_bytes`,
`--keep-traffic-bytes`; docs/traffic-format.md): 1 MiB `echo` calls over real HTTP fill a
small bound, and what was dropped is counted and shown wherever the traffic is read: the
`srv.traffic` view, its table, the report, `GET /_control/traffic`, its stream and its stats.
(The resident memory of the default server under 2,000 such calls is `bench.memory_bound`'s.)"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from everything_mcp import DEFAULTS, Server

from conftest import WAIT, cli_http_server, init_params

MIB = 1024 * 1024
BOUND = 4 * MIB
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


class Session:
    """A raw handshake-era session over HTTP."""

    def __init__(self, http: httpx.Client, url: str) -> None:
        self.http, self.url = http, url
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init_params()}
        answer = http.post(url, json=init, headers=ACCEPT)
        assert answer.status_code == 200, answer.text
        self.headers = {
            **ACCEPT,
            "mcp-session-id": answer.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-11-25",
        }
        done = http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=self.headers)
        assert done.status_code == 202

    def echo(self, id: int, size: int) -> None:
        """`echo` of a `size`-byte message; asserts the answer is its echo."""
        message = f"{id:08d}" + "x" * (size - 8)
        call = {"name": "echo", "arguments": {"message": message}}
        body = {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": call}
        answer = self.http.post(self.url, json=body, headers=self.headers)
        assert answer.status_code == 200
        assert answer.text.count(message) == 1, answer.text[:200]


@pytest.fixture
def bounded() -> Iterator[tuple[Server, Session]]:
    """An in-process server over HTTP keeping at most `BOUND` bytes of traffic, fed ten 1 MiB
    echoes (twenty records of a bit over 1 MiB each, with the handshake's three before)."""
    with Server(keep_traffic_bytes=BOUND) as srv, httpx.Client(timeout=WAIT) as http:
        srv.start_http()
        session = Session(http, srv.http_url or "")
        for id in range(1, 11):
            session.echo(id, MIB)
        yield srv, session


def test_the_memory_keeps_the_newest_records_within_its_bytes_and_counts_the_rest(
    bounded: tuple[Server, Session],
) -> None:
    srv, _ = bounded
    stats = srv.traffic.stats
    records = list(srv.traffic)
    assert (stats.keep_traffic, stats.keep_traffic_bytes) == (10_000, BOUND)
    assert stats.kept == len(records) == 3  # an echo's request and answer are 1 MiB each
    assert BOUND - 2 * MIB < stats.kept_bytes <= BOUND
    assert stats.dropped == stats.dropped_total == 23 - 3
    # The newest, in order, without a gap: every record up to the first kept was dropped.
    assert [r.seq for r in records] == [21, 22, 23]
    assert [(r.id, r.kind) for r in records] == [(9, "response"), (10, "request"), (10, "response")]
    assert srv.traffic.dropped == 20
    assert repr(srv.traffic) == "TrafficView(3 records, 20 dropped)"


def test_what_was_dropped_is_said_where_the_traffic_is_read(bounded: tuple[Server, Session]) -> None:
    srv, _ = bounded
    bound = f"keep_traffic=10,000, keep_traffic_bytes={BOUND:,}"
    note = f"20 earlier records were dropped from memory by its bound ({bound})"
    assert srv.traffic.table().splitlines()[0] == f"  ({note})"
    with pytest.raises(AssertionError) as failed:
        srv.traffic.wait_for("tools/list", timeout=0.01)
    assert note in str(failed.value)
    assert srv.report().dropped == 20
    assert srv.report().to_json()["dropped"] == 20


def test_the_control_api_says_what_memory_holds_and_dropped(bounded: tuple[Server, Session]) -> None:
    srv, _ = bounded
    with httpx.Client(base_url=f"{srv.base_url}/_control", timeout=WAIT) as api:
        assert api.get("/traffic/stats").json() == dataclasses.asdict(srv.traffic.stats)
        kept = api.get("/traffic")
        assert (kept.headers["everything-mcp-missed"], kept.headers["everything-mcp-through"]) == ("20", "23")
        assert [json.loads(line)["seq"] for line in kept.text.splitlines()] == [21, 22, 23]
        newest = api.get("/traffic", params={"since": 21})
        assert (newest.headers["everything-mcp-missed"], newest.headers["everything-mcp-through"]) == ("0", "23")
        assert [json.loads(line)["seq"] for line in newest.text.splitlines()] == [22, 23]
        assert api.get("/traffic", params={"since": 5}).headers["everything-mcp-missed"] == "15"
        srv.reset()  # forgotten, not missed; `through` is the next read's `since`
        after = api.get("/traffic", params={"since": 23})
        assert (after.text, after.headers["everything-mcp-missed"], after.headers["everything-mcp-through"]) == (
            "",
            "0",
            "23",
        )


def test_the_traffic_stream_says_what_it_could_not_send(bounded: tuple[Server, Session]) -> None:
    srv, _ = bounded
    with (
        httpx.Client(base_url=f"{srv.base_url}/_control", timeout=WAIT) as api,
        api.stream("GET", "/traffic/stream", params={"since": 2}) as stream,
    ):
        events = sse_events(stream.iter_lines(), 4)
    # Its id is the seq it accounts through: a resume after it announces nothing again.
    assert events[0] == {"event": "dropped", "id": "20", "data": '{"missed":18}'}
    assert [(e["event"], e["id"]) for e in events[1:]] == [("message", "21"), ("message", "22"), ("message", "23")]


def sse_events(lines: Iterator[str], count: int) -> list[dict[str, Any]]:
    """The first `count` events of an SSE stream, each as its fields."""
    events: list[dict[str, Any]] = []
    event: dict[str, Any] = {}
    for line in lines:
        if not line:
            if event:
                events.append(event)
                event = {}
            if len(events) == count:
                return events
        elif not line.startswith(":"):
            name, _, value = line.partition(": ")
            event[name] = value
    raise AssertionError(f"the stream ended after {events}")


def test_a_reset_forgets_without_counting_and_the_total_stays(bounded: tuple[Server, Session]) -> None:
    srv, session = bounded
    srv.reset()
    assert (srv.traffic.stats.kept, srv.traffic.dropped, srv.traffic.stats.dropped_total) == (0, 0, 20)
    assert repr(srv.traffic) == "TrafficView(0 records)"
    session.echo(11, 3 * MIB)  # its request and answer cannot both be kept
    stats = srv.traffic.stats
    assert (stats.kept, stats.dropped, stats.dropped_total) == (1, 1, 21)
    assert [r.kind for r in srv.traffic] == ["response"]


def test_a_record_larger_than_the_whole_bound_is_dropped_and_counted() -> None:
    with Server(keep_traffic_bytes=MIB) as srv, httpx.Client(timeout=WAIT) as http:
        srv.start_http()
        session = Session(http, srv.http_url or "")
        session.echo(1, 2 * MIB)
        stats = srv.traffic.stats
        assert (stats.kept, stats.dropped) == (0, 5)
        assert srv.traffic.table() == (
            "  (5 earlier records were dropped from memory by its bound"
            f" (keep_traffic=10,000, keep_traffic_bytes={MIB:,}))\n  (nothing recorded)"
        )


def test_the_defaults_bound_the_memory_by_bytes_in_process_and_in_the_cli() -> None:
    assert DEFAULTS["keep_traffic_bytes"] == 64 * MIB
    with Server() as srv:
        stats = srv.traffic.stats
        assert (stats.keep_traffic, stats.keep_traffic_bytes) == (10_000, 64 * MIB)
    for args, bound in [
        ((), {"keep_traffic": 100_000, "keep_traffic_bytes": 64 * MIB}),  # the lab page's
        (("--keep-traffic-bytes", "1000"), {"keep_traffic": 100_000, "keep_traffic_bytes": 1000}),
        (("--no-lab", "--keep-traffic", "7"), {"keep_traffic": 7, "keep_traffic_bytes": 64 * MIB}),
    ]:
        with cli_http_server(*args) as url:
            stats = httpx.get(url.replace("/mcp", "/_control/traffic/stats"), timeout=WAIT).json()
            assert {k: stats[k] for k in bound} == bound, args


def test_the_lab_page_says_what_memory_dropped(bounded: tuple[Server, Session]) -> None:
    """The page's header counts the records the stream announced as dropped, and its checklist
    starts with the report's note."""
    from browser import chromium_page

    srv, _ = bounded
    with chromium_page() as page:
        page.goto(f"{srv.base_url}/_lab/")
        page.wait_for_selector("#status:text-is('live')")
        page.wait_for_selector("#dropped:text-is('20 dropped')")
        assert page.text_content("#count") == "3"
        note = page.wait_for_selector(".report-note")
        assert note is not None
        assert note.get_attribute("data-dropped") == "20"
        assert note.text_content() == (
            "note: the checks saw only part of the traffic: 20 records were dropped from memory before"
            " they were read (raise keep_traffic_bytes / --keep-traffic-bytes)"
        )
