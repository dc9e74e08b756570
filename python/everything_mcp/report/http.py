"""Streamable HTTP habits seen in the ``GET /mcp`` exchanges (``kind: "http"`` records): a
standalone stream opened again and again while one is open (``409``), and a ``GET`` sent
without a session, before ``initialize``.

A ``GET`` without ``Mcp-Session-Id`` is refused outside any session: its records have
``conn: "-"``, which names no client. The report (:mod:`everything_mcp.report.fold`) gives each
such ``GET`` (and the refusal answering it) to the HTTP connection whose ``initialize`` is the
next one of the recording, the client that went on to open a session."""

from __future__ import annotations

from bisect import insort
from typing import TYPE_CHECKING

from ..traffic import TrafficRecord
from .model import Check, Family, auth_conn, earlier, verdict

if TYPE_CHECKING:
    from .client import ClientFold

NO_SESSION = "-"
"""The ``conn`` of an HTTP request refused outside any session (``FILE:-`` when several record
files are read together: :func:`everything_mcp.report.load_files` names connections so)."""

TIMES = "\N{MULTIPLICATION SIGN}"
"""The multiplication sign of a count in a detail (``f"409 {TIMES}2"``)."""


def sessionless(conn: str) -> bool:
    """Whether `conn` names no session (an HTTP request refused outside any)."""
    return conn == NO_SESSION or conn.endswith(":" + NO_SESSION)


def is_get(r: TrafficRecord) -> bool:
    """A ``GET`` of the MCP endpoint over Streamable HTTP (its exchange's record)."""
    return r.dir == "in" and r.kind == "http" and r.transport == "http" and (r.http or {}).get("method") == "GET"


def status(r: TrafficRecord) -> object:
    """The HTTP status a record was answered with (or answered)."""
    return (r.http or {}).get("status")


def attributable(r: TrafficRecord) -> bool:
    """A ``GET`` without a session that the next ``initialize`` takes (one naming the stateless
    revision, answered ``405``, is a stateless client's: it never initializes)."""
    return is_get(r) and status(r) != 405


def _has_session(r: TrafficRecord) -> bool:
    return "mcp-session-id" in ((r.http or {}).get("headers") or {})


class HttpHabits(Family):
    """The standalone stream opened once (not again and again, `409`), and no `GET` before a
    session. A `GET` without a session reaches its client when the next `initialize` does, after
    records with later seqs: every list here is kept in seq order."""

    routes = frozenset({("in", "http")})

    def __init__(self) -> None:
        self.sessionless: list[int] = []
        self.streams = 0
        self.first_stream: int | None = None
        self.conflicts: list[int] = []

    def add(self, r: TrafficRecord) -> None:
        # A GET naming the stateless revision is 405 (it has no session to name): not a
        # handshake habit, and not counted. The auth lab's GETs (metadata, /authorize) are not
        # of the MCP endpoint.
        if not is_get(r) or status(r) == 405 or auth_conn(r.conn):
            return
        if not _has_session(r):
            insort(self.sessionless, r.seq)
            return
        self.streams += 1
        self.first_stream = earlier(self.first_stream, r.seq)
        if status(r) == 409:
            insort(self.conflicts, r.seq)

    def finish(self, client: ClientFold) -> list[Check]:
        first = [] if self.first_stream is None else [self.first_stream]
        once = first + [seq for seq in self.conflicts if seq != self.first_stream]
        many = len(self.conflicts) >= 2
        return [
            verdict(
                "http.standalone_get_conflict",
                "does not open the standalone stream (GET /mcp) again and again while one is open (409)",
                self.conflicts if many else once,
                failed=many,
                detail=f"409 {TIMES}{len(self.conflicts)}",
            ),
            verdict(
                "http.get_before_initialize",
                "sends GET /mcp only with its session (Mcp-Session-Id), after initialize",
                self.sessionless or first,
                failed=bool(self.sessionless),
                detail=f"GET without a session {TIMES}{len(self.sessionless)}"
                if self.sessionless
                else f"GET with its session {TIMES}{self.streams}",
            ),
        ]
