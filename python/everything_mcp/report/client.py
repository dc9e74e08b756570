"""One client's report as incremental state: :class:`ClientFold` pairs answers with their requests
and hands each record to the families of :data:`everything_mcp.report.checks.CATALOG` that read
records of its direction and kind. Its size grows with what a client has open and with the
proof its checks cite, not with its traffic (docs/report.md, "The live report")."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from ..traffic import TrafficRecord
from .model import ANSWERS, Check, Family, Route
from .result import ClientReport

Key = tuple[str, str, "str | None", "str | None", str]
"""A client: ``(name, version, era, revision, transport)``."""

HTTP_TRANSPORTS = ("http", "sse")

FAR = 1 << 62
"""A seq after every other."""


class ClientFold:
    """The state of one client's checks, folded a record at a time (in wire order)."""

    def __init__(self, key: Key) -> None:
        from .checks import CATALOG

        self.key = key
        self.families: list[Family] = [family() for family in CATALOG]
        self.waiting_server: dict[tuple[str, Any], list[TrafficRecord]] = {}
        """The client's requests the server has not answered yet, by (connection, id)."""
        self.waiting_client: dict[tuple[str, Any], list[TrafficRecord]] = {}
        """The server's requests the client has not answered yet, by (connection, id)."""
        self.version = 0
        """Records folded so far: a finished report is good while it has not moved."""
        self.members: set[str] = set()
        """Its connections."""
        self.first = FAR
        """The seq of its connections' first record: the clients are in that order."""
        self.lone = False
        """It has frames of ``conn: "-"`` (a GET without a session no initialize took)."""
        self.orphan = False
        """Its one connection moved to another client and left what it had here."""
        self._finished: dict[tuple[str, ...] | None, tuple[int, Key, ClientReport]] = {}
        self._routes = self._route()

    @property
    def http(self) -> bool:
        """Whether the client spoke HTTP (the auth flow is graded for every such client)."""
        return self.key[4] in HTTP_TRANSPORTS

    def _route(self) -> dict[Route, list[Callable[[TrafficRecord], None]]]:
        routes: dict[Route, list[Callable[[TrafficRecord], None]]] = {}
        for family in self.families:
            for route in family.routes:
                routes.setdefault(route, []).append(family.add)
        return routes

    def copy(self, key: Key) -> ClientFold:
        """An independent copy (named `key`): what the auth flow alone gave becomes a new HTTP
        client's start, and a provisional client is finished on a copy."""
        twin = copy.copy(self)
        twin.key = key
        twin.families = copy.deepcopy(self.families)
        twin.waiting_server = {k: list(v) for k, v in self.waiting_server.items()}
        twin.waiting_client = {k: list(v) for k, v in self.waiting_client.items()}
        twin.members = set(self.members)
        twin._finished = {}
        twin._routes = twin._route()
        return twin

    def add(self, r: TrafficRecord) -> None:
        """Folds record `r` (the records of a client come in wire order)."""
        self.version += 1
        for add in self._routes.get((r.dir, r.kind), ()):
            add(r)
        if r.kind == "request":
            waiting = self.waiting_server if r.dir == "in" else self.waiting_client
            waiting.setdefault((r.conn, r.id), []).append(r)
        elif r.kind in ANSWERS:
            waiting = self.waiting_server if r.dir == "out" else self.waiting_client
            # The first answer after a request with its connection and id is its answer (a
            # client that numbers its requests per stream reuses an id on one connection).
            for request in waiting.pop((r.conn, r.id), ()):
                for family in self.families:
                    if r.dir == "out":
                        family.answered(request, r)
                    else:
                        family.client_answered(request, r)

    def finish(self, rows: tuple[str, ...] | None = None) -> ClientReport:
        """The client's checks and latencies (the state stays as it is); with `rows`, a check
        for each of them (those of the other era not applicable: the rows of a matrix)."""
        done = self._finished.get(rows)
        if done is not None and done[:2] == (self.version, self.key):
            return done[2]
        if rows is not None:
            from .checks import DESCRIPTIONS
            from .result import aligned

            report = self.finish()
            report = aligned(report, rows, {c.id: c.description for c in report.checks} | DESCRIPTIONS)
            self._finished[rows] = (self.version, self.key, report)
            return report
        from .checks import ORDER, lifecycle_ids
        from .latency import Latency

        name, version, era, revision, transport = self.key
        checks: list[Check] = []
        latency: dict[str, dict[str, Any]] = {}
        for family in self.families:
            if isinstance(family, Latency):
                latency = family.table()
            else:
                checks += family.finish(self)
        # The lifecycle's checks depend on the era: those of the other era are not the client's.
        wanted = lifecycle_ids(era)
        checks = [c for c in checks if not c.id.startswith("lifecycle.") or c.id in wanted]
        checks.sort(key=lambda c: ORDER.get(c.id, len(ORDER)))
        report = ClientReport(name, version, era, revision, transport, tuple(checks), latency)
        self._finished[None] = (self.version, self.key, report)
        return report
