"""What did this client actually do? Checks computed from traffic (docs/report.md).

``report(records)`` (or ``srv.report()``, or ``python -m everything_mcp report FILE.jsonl…``)
groups the records by client (its ``clientInfo``, era and transport) and evaluates the catalog of
:mod:`everything_mcp.report.checks` for each: the subscription ladder, the lifecycle, re-lists
after ``list_changed``, reactions to injected faults, malformed frames. Several record files give a
compatibility matrix (``--markdown``: clients as columns, checks as rows).

Every report is a fold (:mod:`everything_mcp.report.fold`): the records go into the checks'
state one at a time, and the report is read off it. :class:`LiveReport` keeps that state between
calls, so each call costs in proportion to the records recorded since the last.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TextIO

from ..traffic import TrafficRecord, parse_record
from .files import RecordError, each_file
from .fold import ReportFold
from .model import Check
from .result import SCHEMA_VERSION, ClientReport, Report

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


def report(records: Iterable[TrafficRecord], dropped: int = 0) -> Report:
    """The report of `records` (a server's traffic, or a record file's); `dropped` is how many
    records the checks did not see (the server's memory bound dropped them before they were
    read: the report says so)."""
    fold = ReportFold()
    fold.dropped = dropped
    for r in records:
        fold.add(r)
    return fold.finish()


def reports_of_files(paths: Iterable[str]) -> list[Report]:
    """The report of each record file (``--record``), read a record at a time (nothing is kept
    but the checks' state); several files are named as :func:`load_files` names them. A line
    that is not a record is a :class:`RecordError` naming its file and line."""
    return [report(records) for _, records in each_file(paths)]


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
    ``GET /_control/report`` and the lab page shows). It keeps the checks' state, not the
    records: each update folds only the records recorded since the last, and the report of a
    client none of them reached is not computed again."""

    def __init__(self) -> None:
        self._fold = ReportFold()
        self._texts: dict[int, tuple[ClientReport, str]] = {}

    def update(self, lines: Sequence[str], missed: int) -> str:
        """Folds `lines` (the JSON lines of the records recorded since the last update) and
        returns the report as ``--json`` writes it (without its indentation). `missed` is how
        many records the server's memory bound dropped before this report could read them,
        since the last update: the report says its checks did not see them."""
        for line in lines:
            self._fold.add(parse_record(line))
        self._fold.dropped += missed
        return self.dumps(self._fold.finish())

    def dumps(self, report: Report) -> str:
        """`report`'s JSON text, each client's written once while it is unchanged."""
        texts = {}
        for client in report.clients:
            cached = self._texts.get(id(client))
            if cached is None or cached[0] is not client:
                cached = (client, json.dumps(client.to_json(), ensure_ascii=False, separators=(",", ":")))
            texts[id(client)] = cached
        self._texts = texts
        clients = ",".join(text for _, text in texts.values())
        return f'{{"version":{SCHEMA_VERSION},"dropped":{report.dropped},"clients":[{clients}]}}'
