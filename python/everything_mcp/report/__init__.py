"""What did this client actually do? Checks computed from traffic (docs/report.md).

``report(records)`` (or ``srv.report()``, or ``python -m everything_mcp report FILE.jsonl…``)
groups the records by client (its ``clientInfo``, era and transport) and evaluates the catalog of
:mod:`everything_mcp.report.checks` for each: the subscription ladder, the lifecycle, re-lists
after ``list_changed``, reactions to injected faults, malformed frames. Several record files give a
compatibility matrix (``--markdown``: clients as columns, checks as rows).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TextIO

from ..traffic import TrafficRecord
from .auth import take_auth_flow
from .checks import CATALOG, LIFECYCLE, lifecycle, not_applicable
from .files import RecordError, each_file
from .http import attribute_sessionless_gets
from .ladder import level
from .latency import latency as latency_of
from .model import Check, ClientTraffic

__all__ = [
    "SCHEMA_VERSION",
    "Check",
    "ClientReport",
    "LiveReport",
    "RecordError",
    "Report",
    "html",
    "load_files",
    "of_files",
    "of_records",
    "report",
    "reports_of_files",
    "write_html",
]

SCHEMA_VERSION = 2
"""The version of ``--json``'s schema (raised when a change would break a reader). 2: a check's
status may be ``not applicable`` (every client of a report lists every check of any of its
clients), and ``dropped`` says how many records the checks did not see."""

DROPPED_HINT = "raise keep_traffic_bytes / --keep-traffic-bytes"
"""How to keep more records in memory (the note of a report whose checks missed some)."""

ENVELOPE_CLIENT = "io.modelcontextprotocol/clientInfo"


@dataclass(frozen=True)
class ClientReport:
    """The checks of one client."""

    name: str
    """Its ``clientInfo.name`` (``?`` when it sent none)."""
    version: str
    """Its ``clientInfo.version``."""
    era: str | None
    """``handshake`` or ``stateless``."""
    revision: str | None
    """The revision it spoke."""
    transport: str
    """``stdio``, ``http``, ``sse`` or ``memory``."""
    checks: tuple[Check, ...]
    """Every check, in catalog order (in a report of clients of both eras, the other era's
    checks too, ``not applicable``)."""
    latency: dict[str, dict[str, Any]] = field(default_factory=dict)
    """How long the server took to answer it, per method: ``{"count", "p50_ms", "max_ms"}``
    (not a check: a measure)."""

    @property
    def label(self) -> str:
        """``name version (era, transport)``, a matrix column's title."""
        return f"{self.name} {self.version} ({self.era or '?'}, {self.transport})"

    def check(self, id: str) -> Check:
        """The check `id`."""
        for c in self.checks:
            if c.id == id:
                return c
        raise KeyError(id)

    def level(self, ladder: str = "subscription") -> int:
        """How far up `ladder` the client went (the subscription ladder: 0-7)."""
        return level(self.checks, ladder)

    def assert_level(self, ladder: str, at_least: int) -> None:
        """Fails with the checks of `ladder` unless the client reached `at_least`."""
        reached = self.level(ladder)
        if reached < at_least:
            table = "\n".join(f"  {c.id}: {c.status}" for c in self.checks if c.id.startswith(f"{ladder}."))
            raise AssertionError(f"{self.label} reached {ladder} level {reached}, not {at_least}:\n{table}")

    def to_json(self) -> dict[str, Any]:
        return {
            "client": {"name": self.name, "version": self.version},
            "era": self.era,
            "revision": self.revision,
            "transport": self.transport,
            "levels": {"subscription": self.level()},
            "checks": [c.to_json() for c in self.checks],
            "latency": self.latency,
        }


def rows(clients: tuple[ClientReport, ...]) -> tuple[str, ...]:
    """Every check of any of `clients`, in catalog order: the rows of their matrix (the
    lifecycle's checks of both eras together)."""
    seen = dict.fromkeys(c.id for client in clients for c in client.checks)
    return tuple([id for id in LIFECYCLE if id in seen] + [id for id in seen if id not in LIFECYCLE])


def align(clients: tuple[ClientReport, ...]) -> tuple[ClientReport, ...]:
    """`clients`, each with a check for every row of their matrix: those it has not (a check of
    the other era) ``not applicable``."""
    ids = rows(clients)
    descriptions = {c.id: c.description for client in clients for c in client.checks}
    aligned = []
    for client in clients:
        if [c.id for c in client.checks] != list(ids):
            have = {c.id: c for c in client.checks}
            checks = tuple(
                have.get(id) or Check(id, descriptions[id], "not applicable", (), not_applicable(id)) for id in ids
            )
            client = replace(client, checks=checks)
        aligned.append(client)
    return tuple(aligned)


@dataclass(frozen=True)
class Report:
    """The clients a set of records shows, each with its checks."""

    clients: tuple[ClientReport, ...]
    dropped: int = 0
    """Records the checks did not see: the server's memory bound dropped them before they were
    read (0 for record files, which hold every record)."""

    def __post_init__(self) -> None:
        # Every client has every row of the matrix, whoever made the report.
        object.__setattr__(self, "clients", align(tuple(self.clients)))

    def client(self, name: str | None = None) -> ClientReport:
        """The one client (named `name`, when several)."""
        found = [c for c in self.clients if name is None or c.name == name]
        if len(found) != 1:
            raise LookupError(f"{len(found)} clients named {name!r} in {[c.label for c in self.clients]}")
        return found[0]

    def _only(self, what: str) -> ClientReport:
        """The report's one client, for `what` (a LookupError naming the clients otherwise)."""
        if len(self.clients) == 1:
            return self.clients[0]
        if not self.clients:
            raise LookupError(f"{what}: the report has no client (no client traffic)")
        labels = ", ".join(repr(c.label) for c in self.clients)
        raise LookupError(
            f"{what} is for a report of one client; this one has {len(self.clients)}: {labels}"
            " (pick one: report.client(NAME))"
        )

    def level(self, ladder: str = "subscription") -> int:
        """How far up `ladder` the report's one client went (:meth:`ClientReport.level`)."""
        return self._only("level()").level(ladder)

    def assert_level(self, ladder: str, at_least: int) -> None:
        """Fails with the checks of `ladder` unless the report's one client reached `at_least`
        (:meth:`ClientReport.assert_level`); a report of no client, or of several, is a
        LookupError that names them."""
        self._only("assert_level()").assert_level(ladder, at_least)

    def note(self) -> str:
        """What a person should know before reading the checks ('' when nothing)."""
        if not self.dropped:
            return ""
        records = "record was" if self.dropped == 1 else "records were"
        return (
            f"note: the checks saw only part of the traffic: {self.dropped:,} {records} dropped from memory"
            f" before they were read ({DROPPED_HINT})"
        )

    def to_json(self) -> dict[str, Any]:
        """The report as ``--json`` writes it (``docs/report.md`` has the schema)."""
        return {"version": SCHEMA_VERSION, "dropped": self.dropped, "clients": [c.to_json() for c in self.clients]}

    def dumps(self) -> str:
        """``--json``'s text."""
        return json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n"

    def table(self, color: bool = False) -> str:
        """A readable table: one block per client, a line per check (with `color`, ANSI colours:
        pass green, fail red, not exercised and not applicable dim)."""
        mark = {"pass": "ok  ", "fail": "FAIL", "not exercised": "-   ", "not applicable": "n/a "}
        paint = {"pass": "32", "fail": "1;31", "not exercised": "2", "not applicable": "2"}

        def ink(text: str, code: str) -> str:
            return f"\x1b[{code}m{text}\x1b[0m" if color else text

        blocks = [ink(self.note(), "1;33")] if self.dropped else []
        for c in self.clients:
            lines = [ink(f"{c.label}  subscription level {c.level()}/7", "1")]
            lines += [
                ink(f"  {mark[k.status]} {k.id:<30}", paint[k.status])
                + f" {k.description}"
                + (f": {k.detail}" if k.detail else "")
                for k in c.checks
            ]
            lines += [
                f"  latency  {m:<30} n={v['count']:<6} p50 {v['p50_ms']} ms  max {v['max_ms']} ms"
                for m, v in c.latency.items()
            ]
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks) + "\n"

    def markdown(self) -> str:
        """The compatibility matrix: checks as rows, clients as columns (a check of the other
        era is ``n/a``)."""
        cell = {"pass": "pass", "fail": "FAIL", "not exercised": "-", "not applicable": "n/a"}
        head = "| check | " + " | ".join(c.label for c in self.clients) + " |"
        rule = "| --- |" + " --- |" * len(self.clients)
        table = ["| subscription level | " + " | ".join(str(c.level()) for c in self.clients) + " |"]
        for id in rows(self.clients):
            table.append(f"| {id} | " + " | ".join(cell[c.check(id).status] for c in self.clients) + " |")
        note = ["", self.note()] if self.dropped else []
        return "\n".join([head, rule, *table, *note]) + "\n"


def _identity(records: Sequence[TrafficRecord]) -> tuple[str, str, str | None, str | None, str]:
    """Who sent a connection's records: (name, version, era, revision, transport). The era and
    revision are the last the client spoke (a client that fell back to the handshake after
    `-32022` is reported in the handshake era)."""
    info: dict[str, Any] = {}
    era = revision = None
    for r in records:
        if r.dir != "in" or r.kind != "request":
            continue
        params = r.params if isinstance(r.params, dict) else {}
        if not info and r.method == "initialize":
            info = params.get("clientInfo") or {}
        elif not info and ENVELOPE_CLIENT in (params.get("_meta") or {}):
            info = params["_meta"][ENVELOPE_CLIENT] or {}
        era, revision = r.era or era, r.revision or revision
    transport = records[0].transport if records else "?"
    return str(info.get("name", "?")), str(info.get("version", "?")), era, revision, transport


def report(records: Iterable[TrafficRecord], dropped: int = 0) -> Report:
    """The report of `records` (a server's traffic, or a record file's); `dropped` is how many
    records the checks did not see (the server's memory bound dropped them before they were
    read: the report says so)."""
    by_conn: dict[str, list[TrafficRecord]] = {}
    for r in records:
        by_conn.setdefault(r.conn, []).append(r)
    # The auth lab's exchanges and the 401s before a token belong to no MCP connection: every
    # HTTP client is graded on them (docs/auth.md).
    auth_flow = take_auth_flow(by_conn)
    attribute_sessionless_gets(by_conn)  # a GET refused outside any session (conn "-")
    by_client: dict[tuple[str, str, str | None, str | None, str], ClientTraffic] = {}
    for conn_records in by_conn.values():
        if not any(r.dir == "in" for r in conn_records):
            continue
        key = _identity(conn_records)
        by_client.setdefault(key, ClientTraffic()).records.extend(conn_records)
    over_http = [traffic for (*_, transport), traffic in by_client.items() if transport in ("http", "sse")]
    for traffic in over_http:
        traffic.records.extend(auth_flow)
    if auth_flow and not over_http:
        # A client that never got as far as an MCP session is graded on its flow alone.
        by_client[("?", "?", None, None, "http")] = ClientTraffic(list(auth_flow))
    clients = []
    for (name, version, era, revision, transport), traffic in by_client.items():
        traffic.records.sort(key=lambda r: r.seq)
        checks = [*lifecycle(traffic, era)]
        for family in CATALOG:
            checks += family(traffic)
        clients.append(ClientReport(name, version, era, revision, transport, tuple(checks), latency_of(traffic)))
    return Report(tuple(clients), dropped)


def reports_of_files(paths: Iterable[str]) -> list[Report]:
    """The report of each record file (``--record``); several files are named as
    :func:`load_files` names them. A line that is not a record is a :class:`RecordError`
    naming its file and line."""
    return [report(records) for records in load_files(paths)]


def of_files(paths: Iterable[str]) -> Report:
    """The report of record files (``--record``), one client list across them all: several
    files (one per agent) give the matrix."""
    return Report(tuple(c for each in reports_of_files(paths) for c in each.clients))


def of_records(files: Iterable[Sequence[TrafficRecord]], dropped: int = 0) -> Report:
    """One client list across the records of several files (:func:`load_files`), each file
    reported on its own: the matrix."""
    return Report(tuple(c for records in files for c in report(records).clients), dropped)


def load_files(paths: Iterable[str]) -> list[list[TrafficRecord]]:
    """The records of each file; with several files, each file's ``seq`` numbers go on from the
    previous file's last (so one page can show them all) and its connections are named
    ``file:conn``. A line that is not a record is a :class:`RecordError` naming its file and
    line."""
    return [list(records) for _, records in each_file(paths)]


def html(files: Sequence[Sequence[TrafficRecord]], title: str = "everything-mcp report", dropped: int = 0) -> str:
    """The HTML report of the records of one or several files (:func:`load_files`): the
    checklist of every client and the sequence diagram, one self-contained page."""
    import io

    out = io.StringIO()
    write_html(out, files, title, dropped)
    return out.getvalue()


def write_html(
    out: TextIO, files: Sequence[Sequence[TrafficRecord]], title: str = "everything-mcp report", dropped: int = 0
) -> None:
    """:func:`html`, written to `out` a record at a time (a page of 100k records is 90 MB);
    `dropped` records the checks did not see are noted in its title."""
    from .webpage import write

    write(out, (r for records in files for r in records), of_records(files, dropped).to_json(), title)


class LiveReport:
    """The report of a server's records as they come (what the core serves at
    ``GET /_control/report`` and the lab page shows): it keeps the records it has read, so each
    update parses only the new ones."""

    def __init__(self) -> None:
        self.records: list[TrafficRecord] = []
        self.missed = 0

    def update(self, lines: Sequence[str], missed: int) -> str:
        """Reads `lines` (the JSON lines of the records recorded since the last update) and
        returns the report as ``--json`` writes it. `missed` is how many records the server's
        memory bound dropped before this report could read them, since the last update: the
        report says its checks did not see them."""
        from ..traffic import parse_record

        self.records.extend(parse_record(line) for line in lines)
        self.missed += missed
        return report(self.records, self.missed).dumps()
