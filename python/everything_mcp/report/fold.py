"""Records into clients, one record at a time: :class:`ReportFold` is the one way a report is
computed. ``report(records)`` folds every record and finishes; the live report
(:class:`everything_mcp.report.LiveReport`) folds the records recorded since its last call
into the same state and finishes again, so the two cannot differ. Finishing reads the state
without changing it and costs in proportion to the clients and their checks (a client whose
records have not changed since the last finish is not read again).

A client is its ``clientInfo`` (name and version), era, revision and transport; the era and
revision are the last its connection spoke. A connection's records go to the client it names,
and what a record of its client needs later (an answer to pair, a first read to compare) is
kept in that client's state, not the record itself. Three kinds of record reach a client late:

- A connection that changes identity (a ``clientInfo`` first named after a probe, a fallback
  to the handshake after ``-32022``) moves to another client with its past. A connection keeps
  its own records until it is settled (it has named its client, spoken an era and had a
  request answered with a result) or the recording has gone on for ``AGE`` records since its
  first: moved before then, its past is folded again where it belongs (and the client it left
  is folded again from its other connections' records, when they are all kept too). A
  connection alone in its client takes the client's state with it. Otherwise (a settled
  connection that changes identity while its client has other connections) the records it
  had stay where they were folded.
- A ``GET`` without a session (``conn: "-"``) goes to the connection whose HTTP
  ``initialize`` is the next one: until then it is kept, and shown under the client ``?``.
- The auth flow (:func:`everything_mcp.report.auth.in_flow`) belongs to no connection and is
  graded for every HTTP client: it is folded into each of them, and into the state a new HTTP
  client starts from.

Records given late are folded after records with later seqs. The checks that read them take
the first by seq, so the result is the same; a check that reads one record after another
(``faults.reaction`` after a fault on a ``GET`` without a session, say) reads them in the order
they were given.

What it costs (``bench/report_live.py``, ``bench.report``'s traffic of six clients of both eras,
2-core machine): 100 new records on top of 100,000 fold and finish in 3-4 ms, and
``GET /_control/report`` answers in 6 ms, where recomputing the report over every record took
1.1 s and 0.86 s; a process fed the 100,000 records peaks at 31 MB (22 of them the interpreter)
where keeping them took 356 MB. The full report of those records: 2.3 s, was 4.3 s.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from ..traffic import TrafficRecord
from .auth import in_flow
from .client import HTTP_TRANSPORTS, ClientFold, Key
from .http import attributable, sessionless, status
from .result import ClientReport, Report, rows

ENVELOPE_CLIENT = "io.modelcontextprotocol/clientInfo"

AGE = 256
"""Records of the recording after a connection's first during which it keeps its own records
(for a move: a probe and its fallback take a few)."""

NOBODY: Key = ("?", "?", None, None, "http")
"""The client of the auth flow when no HTTP client has come yet."""


def _seq(r: TrafficRecord) -> int:
    return r.seq


class Conn:
    """What the report knows of one connection."""

    def __init__(self, name: str, first: TrafficRecord, born: int) -> None:
        self.name = name
        self.first = first.seq
        """Its first record: the clients are in the order of their first connection."""
        self.transport = first.transport
        self.info: dict[str, Any] = {}
        self.era: str | None = None
        self.revision: str | None = None
        self.spoke = False
        """It sent a frame (a connection of only the server's frames is no client)."""
        self.ok = False
        """The server answered one of its requests with a result."""
        self.key: Key | None = None
        """The client it is folded into."""
        self.log: list[TrafficRecord] | None = []
        """Its records, while it may still move (see the module's docstring)."""
        self.born = born

    def learn(self, r: TrafficRecord) -> None:
        """Who sent request `r`: the first ``clientInfo`` (of an ``initialize``, or of a
        2026-07-28 envelope), the last era and revision."""
        params = r.params if isinstance(r.params, dict) else {}
        if not self.info:
            if r.method == "initialize":
                self.info = _object(params.get("clientInfo"))
            else:
                meta = params.get("_meta")
                if isinstance(meta, dict) and ENVELOPE_CLIENT in meta:
                    self.info = _object(meta[ENVELOPE_CLIENT])
        self.era, self.revision = r.era or self.era, r.revision or self.revision

    def identity(self) -> Key:
        info = self.info
        return (str(info.get("name", "?")), str(info.get("version", "?")), self.era, self.revision, self.transport)

    @property
    def settled(self) -> bool:
        return bool(self.info) and self.era is not None and self.ok


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class Sessionless:
    """The records of ``conn: "-"``: the ``GET``\\ s without a session waiting for the next
    ``initialize``, and the refusals waiting for their ``GET``."""

    def __init__(self, first: TrafficRecord) -> None:
        self.first = first.seq
        self.key: Key | None = None
        """Its client (``?``), from its first record that stays."""
        self.gets: list[TrafficRecord] = []
        """GETs no HTTP initialize has followed yet."""
        self.refusals: list[TrafficRecord] = []
        """Refusals a waiting GET may take (the first after it with its status)."""
        self.given: list[tuple[TrafficRecord, str]] = []
        """GETs given to a connection whose refusal has not come yet: (GET, connection)."""


class ReportFold:
    """The report of the records folded so far (see the module's docstring)."""

    def __init__(self) -> None:
        self.conns: dict[str, Conn] = {}
        self.groups: dict[Key, ClientFold] = {}
        self.sessionless: dict[str, Sessionless] = {}
        self.flow = ClientFold(NOBODY)
        """The auth flow alone: the start of every new HTTP client."""
        self.flow_seen = False
        self.count = 0
        """Records folded."""
        self.young: deque[Conn] = deque()
        """The connections that keep their records, oldest first."""
        self.dropped = 0
        """Records the checks did not see (the server's memory bound dropped them)."""

    # --- folding

    def add(self, r: TrafficRecord) -> None:
        """Folds record `r` (records come in seq order)."""
        self.count += 1
        while self.young and self.count - self.young[0].born > AGE:
            self.young.popleft().log = None
        lone = self._sessionless(r) if sessionless(r.conn) else None
        if in_flow(r):
            self.flow_seen = True
            self.flow.add(r)
            for group in self.groups.values():
                if group.http:
                    group.add(r)
            return
        if lone is not None:
            self._lone(lone, r)
            return
        conn = self.conns.get(r.conn)
        if conn is None:
            conn = self.conns[r.conn] = Conn(r.conn, r, self.count)
            self.young.append(conn)
        was = conn.key
        if r.dir == "in":
            conn.spoke = True
            if r.kind == "request":
                conn.learn(r)
        elif r.kind == "response":
            conn.ok = True
        new = [r]
        if r.dir == "in" and r.kind == "request" and r.method == "initialize" and r.transport == "http":
            new = [*self._attribute(conn.name), r]
        if conn.log is not None:
            conn.log.extend(new)
            if len(new) > 1:
                conn.log.sort(key=_seq)
        if conn.spoke:
            key = conn.identity()
            if was is None:
                self._join(conn, key, conn.log if conn.log is not None else new)
            elif key != was:
                self._move(conn, was, key, new)
            else:
                for record in new:
                    self.groups[key].add(record)
        if conn.log is not None and conn.settled:
            conn.log = None

    def _group(self, key: Key) -> ClientFold:
        """The client `key`, made if it is new (an HTTP client starts with the auth flow)."""
        group = self.groups.get(key)
        if group is None:
            group = self._fresh(key)
            self.groups[key] = group
        return group

    def _fresh(self, key: Key) -> ClientFold:
        return self.flow.copy(key) if self.flow_seen and key[4] in HTTP_TRANSPORTS else ClientFold(key)

    def _join(self, conn: Conn, key: Key, records: list[TrafficRecord]) -> None:
        group = self._group(key)
        group.members.add(conn.name)
        group.first = min(group.first, conn.first)
        conn.key = key
        for record in records:
            group.add(record)

    def _move(self, conn: Conn, was: Key, key: Key, new: list[TrafficRecord]) -> None:
        """`conn` now names client `key` (it named `was`): see the module's docstring."""
        old = self.groups[was]
        old.members.discard(conn.name)
        alone = not old.members and not old.lone
        if alone and key not in self.groups:
            # Its client was its own: the state moves with it.
            del self.groups[was]
            old.key = key
            self.groups[key] = old
            old.members.add(conn.name)
            conn.key = key
            for record in new:
                old.add(record)
            return
        others = [self.conns[name] for name in old.members]
        if conn.log is not None and not old.lone and all(c.log is not None for c in others):
            if others:
                self.groups[was] = self._refold(was, others)
            else:
                del self.groups[was]
            self._join(conn, key, conn.log)
            return
        if alone:
            old.orphan = True  # what it had stays, shown under its former identity
        self._join(conn, key, new)

    def _refold(self, key: Key, conns: list[Conn]) -> ClientFold:
        """The client `key` folded again from the records its connections keep."""
        group = self._fresh(key)
        group.members = {c.name for c in conns}
        group.first = min(c.first for c in conns)
        for record in sorted((r for c in conns for r in c.log or ()), key=_seq):
            group.add(record)
        return group

    # --- conn "-"

    def _sessionless(self, r: TrafficRecord) -> Sessionless:
        lone = self.sessionless.get(r.conn)
        if lone is None:
            lone = self.sessionless[r.conn] = Sessionless(r)
        return lone

    def _lone(self, lone: Sessionless, r: TrafficRecord) -> None:
        """A record of ``conn: "-"`` (not of the auth flow)."""
        if lone.key is None:
            lone.key = ("?", "?", None, None, r.transport)
        if attributable(r):
            lone.gets.append(r)
            return
        if r.dir == "out":
            for i, (get, owner) in enumerate(lone.given):
                if status(get) == status(r):
                    del lone.given[i]
                    self._give(owner, r)
                    return
            if any(status(get) == status(r) for get in lone.gets):
                lone.refusals.append(r)
                return
        self._stay(lone, r)

    def _stay(self, lone: Sessionless, r: TrafficRecord) -> None:
        """`r` stays under ``conn: "-"``, the client ``?``."""
        assert lone.key is not None
        group = self._group(lone.key)
        group.first = min(group.first, lone.first)
        if r.dir == "in":
            group.lone = True
        group.add(r)

    def _give(self, name: str, r: TrafficRecord) -> None:
        """A refusal that came after its GET was given to connection `name`."""
        conn = self.conns[name]
        if conn.log is not None:
            conn.log.append(r)
        if conn.key is not None:
            self.groups[conn.key].add(r)

    def _attribute(self, owner: str) -> list[TrafficRecord]:
        """The GETs without a session (and their refusals) that the HTTP initialize of
        connection `owner` takes: every one waiting, each with the first waiting refusal after it
        with its status (a GET whose refusal has not come yet takes it when it does)."""
        taken: list[TrafficRecord] = []
        for lone in self.sessionless.values():
            for get in lone.gets:
                refusal = next((r for r in lone.refusals if r.seq > get.seq and status(r) == status(get)), None)
                taken.append(get)
                if refusal is None:
                    lone.given.append((get, owner))
                else:
                    lone.refusals.remove(refusal)
                    taken.append(refusal)
            lone.gets = []
            # No GET is left to take the other refusals.
            for refusal in lone.refusals:
                self._stay(lone, refusal)
            lone.refusals = []
        return sorted(taken, key=_seq)

    # --- finishing

    def finish(self) -> Report:
        """The report of the records folded so far (the state stays as it is)."""
        shown = [g for g in self.groups.values() if g.members or g.lone or g.orphan]
        for lone in self.sessionless.values():
            if lone.gets and lone.key is not None:
                # The GETs no initialize has followed yet are the client `?`'s, for now.
                group = self.groups.get(lone.key)
                view = (group or self._fresh(lone.key)).copy(lone.key)
                view.first = min(view.first, lone.first)
                view.lone = True
                for record in sorted(lone.gets + lone.refusals, key=_seq):
                    view.add(record)
                shown = [g for g in shown if g.key != lone.key] + [view]
        shown.sort(key=lambda g: g.first)
        if self.flow_seen and not any(g.http for g in shown):
            # A client that never got as far as an MCP session is graded on its flow alone.
            shown.append(self.flow)
        clients = tuple(g.finish() for g in shown)
        ids = rows(clients)
        return Report(tuple(g.finish(ids) for g in shown) if _mixed(clients, ids) else clients, self.dropped)


def _mixed(clients: tuple[ClientReport, ...], ids: tuple[str, ...]) -> bool:
    """Whether some client lacks a row of the matrix (clients of both eras)."""
    return any(len(c.checks) != len(ids) for c in clients)
