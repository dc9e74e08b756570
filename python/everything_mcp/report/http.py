"""Streamable HTTP habits seen in the ``GET /mcp`` exchanges (``kind: "http"`` records): a
standalone stream opened again and again while one is open (``409``), and a ``GET`` sent
without a session, before ``initialize``.

A ``GET`` without ``Mcp-Session-Id`` is refused outside any session: its records have
``conn: "-"``, which names no client. :func:`attribute_sessionless_gets` gives each such
``GET`` (and the refusal answering it) to the HTTP connection whose ``initialize`` is the
next one of the recording, the client that went on to open a session."""

from __future__ import annotations

from bisect import bisect_right

from ..traffic import TrafficRecord
from .model import Check, ClientTraffic, check

NO_SESSION = "-"
"""The ``conn`` of an HTTP request refused outside any session (``FILE:-`` when several record
files are read together: :func:`everything_mcp.report.load_files` names connections so)."""


TIMES = "\N{MULTIPLICATION SIGN}"
"""The multiplication sign of a count in a detail (``f"409 {TIMES}2"``)."""


def sessionless(conn: str) -> bool:
    """Whether `conn` names no session (an HTTP request refused outside any)."""
    return conn == NO_SESSION or conn.endswith(":" + NO_SESSION)


def _is_get(r: TrafficRecord) -> bool:
    return r.dir == "in" and r.kind == "http" and r.transport == "http" and (r.http or {}).get("method") == "GET"


def _status(r: TrafficRecord) -> object:
    return (r.http or {}).get("status")


def attribute_sessionless_gets(by_conn: dict[str, list[TrafficRecord]]) -> None:
    """Moves every ``GET`` of ``conn: "-"`` and the refusal that answered it (the next ``out``
    record of ``conn: "-"`` with the same status) to the connection of the next HTTP
    ``initialize`` (by ``seq``) of another connection; a ``GET`` no ``initialize`` follows
    stays where it is. ``conn: "-"`` goes when nothing is left in it."""
    inits = sorted(
        (r.seq, conn)
        for conn, records in by_conn.items()
        if not sessionless(conn)
        for r in records
        if r.dir == "in" and r.kind == "request" and r.method == "initialize" and r.transport == "http"
    )
    for conn in [c for c in by_conn if sessionless(c)]:
        _attribute(by_conn, conn, inits)


def _attribute(by_conn: dict[str, list[TrafficRecord]], sessionless: str, inits: list[tuple[int, str]]) -> None:
    orphans = by_conn[sessionless]
    moved: set[int] = set()
    # A GET naming the stateless revision (405) is a stateless client's: it never initializes.
    for get in [r for r in orphans if _is_get(r) and _status(r) != 405]:
        i = bisect_right(inits, (get.seq, ""))
        if i == len(inits):
            continue
        owner = inits[i][1]
        refusal = next(
            (
                r
                for r in orphans
                if r.dir == "out" and r.seq > get.seq and r.seq not in moved and _status(r) == _status(get)
            ),
            None,
        )
        for r in (get, refusal):
            if r is not None:
                by_conn[owner].append(r)
                moved.add(r.seq)
    by_conn[sessionless] = [r for r in orphans if r.seq not in moved]
    if not by_conn[sessionless]:
        del by_conn[sessionless]


def _has_session(r: TrafficRecord) -> bool:
    return "mcp-session-id" in ((r.http or {}).get("headers") or {})


def http_habits(t: ClientTraffic) -> list[Check]:
    """The standalone stream opened once (not again and again, `409`), and no `GET` before a
    session."""
    # A GET naming the stateless revision is 405 (it has no session to name): not a handshake
    # habit, and not counted.
    gets = [r for r in t.records if _is_get(r) and _status(r) != 405]
    sessionless = [r for r in gets if not _has_session(r)]
    streams = [r for r in gets if _has_session(r)]
    conflicts = [r for r in streams if _status(r) == 409]
    once = streams[:1] + [r for r in conflicts if r is not streams[0]] if streams else []
    return [
        check(
            "http.standalone_get_conflict",
            "does not open the standalone stream (GET /mcp) again and again while one is open (409)",
            conflicts if len(conflicts) >= 2 else once,
            failed=len(conflicts) >= 2,
            detail=f"409 {TIMES}{len(conflicts)}",
        ),
        check(
            "http.get_before_initialize",
            "sends GET /mcp only with its session (Mcp-Session-Id), after initialize",
            sessionless or streams[:1],
            failed=bool(sessionless),
            detail=f"GET without a session {TIMES}{len(sessionless)}"
            if sessionless
            else f"GET with its session {TIMES}{len(streams)}",
        ),
    ]
