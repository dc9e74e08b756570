"""Every report is a fold (docs/report.md, "The live report"): `report(records)` folds every
record into the checks' state and reads the report off it; the live report folds the records
recorded since its last call into the same state. Folded in chunks of any size, the live report
equals the full report of the same records at every chunk boundary, over real recordings: every
scenario of the report's own tests (test_report*.py: the official client in both eras, raw
clients, faults, sessionless GETs, the auth flow), the benchmark's traffic of six clients of both
eras, and connections that change identity late. And it keeps the state, not the records."""

from __future__ import annotations

import inspect
import json
import random
import tempfile
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from everything_mcp import Server, TrafficRecord, load_records
from everything_mcp.report import LiveReport, report
from everything_mcp.report.webpage import record_json

from conftest import WAIT

pytestmark = pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")

SEED = 28
SIZES = (1, 1, 2, 3, 5, 8, 13, 21, 55)
"""The chunk sizes drawn: a record at a time often, so an answer comes in the chunk after its
request and a connection names its client after its first frames were folded."""


def lines_of(records: list[TrafficRecord]) -> list[str]:
    return [json.dumps(record_json(r), ensure_ascii=False) for r in records]


def assert_folds_alike(records: list[TrafficRecord], rng: random.Random, sizes: tuple[int, ...] = SIZES) -> int:
    """Feeds `records` to a live report in chunks of random `sizes`; at every boundary its
    report is the full report of the records so far. Returns the number of boundaries."""
    lines = lines_of(records)
    live = LiveReport()
    at = boundaries = 0
    while at < len(records):
        size = rng.choice(sizes)
        got = json.loads(live.update(lines[at : at + size], 0))
        at = min(at + size, len(records))
        boundaries += 1
        assert got == report(records[:at]).to_json(), f"after {at} of {len(records)} records"
    return boundaries


def scenarios() -> Iterator[tuple[str, Callable[[], Any]]]:
    """Every test of the report's own test modules that needs no fixture but `mode` (both
    modes) or `tmp_path`, ready to run."""
    import test_report
    import test_report_auth
    import test_report_checks
    import test_report_habits

    for module in (test_report, test_report_checks, test_report_habits, test_report_auth):
        for name, test in sorted(vars(module).items()):
            if not name.startswith("test_") or not callable(test):
                continue
            params = list(inspect.signature(test).parameters)
            if not set(params) <= {"mode", "tmp_path"}:
                continue
            for mode in ("legacy", "auto") if "mode" in params else (None,):
                kwargs: dict[str, Any] = {"mode": mode} if mode else {}
                yield f"{module.__name__}.{name}[{mode}]", lambda test=test, kwargs=kwargs: run(test, kwargs)


def run(test: Callable[..., Any], kwargs: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory(prefix="report-fold-") as tmp:
        if "tmp_path" in inspect.signature(test).parameters:
            kwargs = {**kwargs, "tmp_path": Path(tmp)}
        if inspect.iscoroutinefunction(test):
            anyio.run(lambda: test(**kwargs))
        else:
            test(**kwargs)


@pytest.fixture(scope="module")
def recordings() -> dict[str, list[TrafficRecord]]:
    """The traffic of every server of the report tests' scenarios, as it was when the test
    asked for its last report."""
    captured: dict[str, list[TrafficRecord]] = {}
    servers: dict[int, tuple[Server, str]] = {}
    running = [""]
    original = Server.report

    def capture(self: Server) -> Any:
        key = servers.setdefault(id(self), (self, f"{running[0]} #{len(servers)}"))[1]
        captured[key] = list(self.traffic)
        return original(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Server, "report", capture)
        for name, scenario in scenarios():
            running[0] = name
            scenario()
    return {name: records for name, records in captured.items() if records}


def test_the_report_tests_scenarios_fold_alike(recordings: dict[str, list[TrafficRecord]]) -> None:
    """Each recording folded a record at a time (every boundary), then in random chunks."""
    rng = random.Random(SEED)
    assert len(recordings) >= 40  # every scenario that asks a server for its report
    eras = {c.era for records in recordings.values() for c in report(records).clients}
    assert {"handshake", "stateless"} <= eras
    boundaries = 0
    for name, records in recordings.items():
        try:
            boundaries += assert_folds_alike(records, random.Random(), sizes=(1,))
            boundaries += assert_folds_alike(records, rng)
        except AssertionError as e:
            raise AssertionError(f"{name}: {e}") from None
    assert boundaries > sum(len(records) for records in recordings.values())


def test_the_benchmarks_traffic_folds_alike(tmp_path: Path) -> None:
    """Six clients of both eras over in-process connections and Streamable HTTP, in waves of
    sessions that run at once (bench/report.py), about 3,000 records."""
    from bench.report import generate

    path = tmp_path / "bench.jsonl"
    count, expected = generate(path, 3_000)
    records = load_records(path)
    assert len(records) == count
    assert {era for _, era, _ in expected.levels} == {"handshake", "stateless"}
    assert assert_folds_alike(records, random.Random(SEED)) > 100


async def _sequential_fallbacks(srv: Server, runs: int) -> None:
    with anyio.fail_after(WAIT):
        for _ in range(runs):
            async with Client(StdioServerParameters(**srv.stdio_params)) as client:
                await client.list_tools()


def test_connections_that_fall_back_one_after_another_make_one_client() -> None:
    """The official client, twice, against a server that refuses 2026-07-28 (`-32022`): each
    connection probes in the stateless era, then falls back to the handshake. Each moves, with
    its probe, to the handshake-era client the first one made."""
    with Server(catalogs=["everything"]) as srv:
        srv.faults.preset("version-skew")
        anyio.run(_sequential_fallbacks, srv, 2)
        records = list(srv.traffic)
    whole = report(records)
    ((mine),) = whole.clients
    assert (mine.era, mine.revision) == ("handshake", "2025-11-25")
    assert mine.check("faults.fallback_after_32022").status == "pass"
    assert assert_folds_alike(records, random.Random(), sizes=(1,)) == len(records)
    assert_folds_alike(records, random.Random(SEED))


def test_a_client_named_after_its_first_frames() -> None:
    """A raw client pings before it initializes (its first frames name no client), another
    client speaks meanwhile: once it names itself, its first frames are its own."""
    from report_support import Raw

    with Server(catalogs=["everything"]) as srv:
        late, other = Raw(srv, "late"), Raw(srv, "other")
        assert "result" in late.request(1, "ping")
        other.handshake()
        assert late.request(2, "tools/list")["error"]["code"] == -32600  # initialize first
        late.handshake()
        late.recv()  # the tools/list_changed the catalog announces
        other.request(3, "nope/nope")
        records = list(srv.traffic)
    names = [c.name for c in report(records).clients]
    assert names == ["late", "other"]
    assert report(records).client("late").check("subscription.connected").seqs == (records[0].seq,)
    assert assert_folds_alike(records, random.Random(), sizes=(1,)) == len(records)
    assert_folds_alike(records, random.Random(SEED))


def records_kept(root: object) -> int:
    """The traffic records reachable from `root` through containers and the report's own
    objects."""
    seen: set[int] = set()
    stack: list[object] = [root]
    kept = 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, TrafficRecord):
            kept += 1
        elif isinstance(obj, dict):
            stack += [*obj.keys(), *obj.values()]
        elif isinstance(obj, (list, tuple, set, frozenset, deque)):
            stack += list(obj)
        elif type(obj).__module__.startswith("everything_mcp.report") and hasattr(obj, "__dict__"):
            stack += list(vars(obj).values())
    return kept


def test_the_live_report_keeps_the_checks_state_not_the_records(tmp_path: Path) -> None:
    """Folded, the benchmark's traffic leaves no record in the live report (every request was
    answered, every connection settled): it keeps what its checks need, not a second copy of
    the traffic."""
    from bench.report import generate

    path = tmp_path / "bench.jsonl"
    generate(path, 2_000)
    lines = path.read_text().splitlines()
    live = LiveReport()
    for at in range(0, len(lines), 250):
        live.update(lines[at : at + 250], 0)
    assert records_kept(live) == 0
