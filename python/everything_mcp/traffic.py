"""Recorded wire traffic: one :class:`TrafficRecord` per frame in or out.

The fields are those of the JSON-lines format written by ``--record`` (see
``docs/traffic-format.md``), so a record file and ``server.traffic`` read the same way.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal, overload

__all__ = ["TrafficRecord", "TrafficStats", "TrafficView", "load_records", "parse_record"]

Direction = Literal["in", "out"]
Era = Literal["handshake", "stateless"]
Kind = Literal["request", "notification", "response", "error", "batch", "invalid", "http"]


@dataclass(frozen=True, slots=True)
class TrafficRecord:
    """One frame as it crossed the wire."""

    v: int
    """Format version."""
    seq: int
    """Position in the recording, from 1, without gaps."""
    ts: str
    """Wall-clock time, RFC 3339 with microseconds, UTC."""
    t_ns: int
    """Monotonic nanoseconds since the server started."""
    dir: Direction
    """``"in"`` (client to server) or ``"out"``."""
    transport: str
    """``stdio``, ``http``, ``sse`` or ``memory``."""
    conn: str
    """Connection or session id."""
    stream: str | None
    """SSE stream id, where there is one."""
    event_id: str | None
    """The SSE event id an outgoing frame was sent under (resumable streams)."""
    http: dict[str, Any] | None
    """HTTP method, path, status and MCP headers, for HTTP frames."""
    raw: str
    """The exact frame text."""
    msg: Any
    """The parsed JSON, or None when the frame was not JSON."""
    error: str | None
    """Why the frame is invalid, if it is."""
    kind: Kind
    """What the frame was."""
    method: str | None
    """The method; for responses, the method of the request answered."""
    id: str | int | None
    """The request id, for requests and responses."""
    latency_ms: float | None
    """For responses: milliseconds since the request they answer."""
    era: Era | None = None
    """``"handshake"`` or ``"stateless"``: the era of the exchange (None when unknown, e.g.
    before ``initialize``, and in format-1 files, which predate the field)."""
    revision: str | None = None
    """The protocol revision of the exchange, e.g. ``"2026-07-28"`` (None when unknown)."""
    task: str | None = None
    """The id of the task the frame is about: ``tasks/*`` requests and their answers,
    ``notifications/tasks/status``, the ``CreateTaskResult`` that started it, and a
    handshake-era task's requests to the client (related-task ``_meta``); None otherwise (and
    in files written before the field existed)."""
    fault: dict[str, str] | None = None
    """The fault rule that acted on the frame, ``{"rule": id, "action": name}`` (the action's
    name: ``"error"``, ``"drop"``, ``"delay"``, ``"duplicate"``, ``"expire_session"``, …; see
    docs/faults.md), on the request a rule hit and on the frames it changed or sent; None when
    none did (the field is absent from the JSON then)."""

    @property
    def result(self) -> Any:
        """The ``result`` of a response (None otherwise)."""
        return self.msg.get("result") if isinstance(self.msg, dict) else None

    @property
    def params(self) -> Any:
        """The ``params`` of a request or notification (None otherwise)."""
        return self.msg.get("params") if isinstance(self.msg, dict) else None


_FIELDS = frozenset(f.name for f in fields(TrafficRecord))


@dataclass(frozen=True, slots=True)
class TrafficStats:
    """What a server's memory holds of its traffic, and what its bound dropped
    (``srv.traffic.stats``; ``GET /_control/traffic/stats`` has the same members)."""

    kept: int
    """Records in memory now."""
    kept_bytes: int
    """The bytes they hold (each record's frame text, error, id, method, task and HTTP metadata)."""
    dropped: int
    """Records the bound dropped since the last clear or reset: the traffic since then that
    ``srv.traffic`` no longer has (a ``record=`` file still has them)."""
    dropped_total: int
    """Records the bound dropped since the server started."""
    keep_traffic: int | None
    """The bound in records (``keep_traffic``; None: no limit)."""
    keep_traffic_bytes: int | None
    """The bound in bytes (``keep_traffic_bytes``; None: no limit)."""

    def note(self) -> str | None:
        """One line saying what was dropped, or None when nothing was."""
        if not self.dropped:
            return None
        bound = ", ".join(
            f"{name}={value:,}"
            for name, value in (("keep_traffic", self.keep_traffic), ("keep_traffic_bytes", self.keep_traffic_bytes))
            if value is not None
        )
        records = "record was" if self.dropped == 1 else "records were"
        return f"{self.dropped:,} earlier {records} dropped from memory by its bound ({bound})"


def parse_record(line: str) -> TrafficRecord:
    """One JSON line of the traffic format as a :class:`TrafficRecord` (unknown fields ignored)."""
    data = json.loads(line)
    return TrafficRecord(**{k: v for k, v in data.items() if k in _FIELDS})


def load_records(path: str | Path) -> list[TrafficRecord]:
    """Every record of a ``--record`` file, in order."""
    with open(path, encoding="utf-8") as f:
        return [parse_record(line) for line in f if line.strip()]


class TrafficView(Sequence[TrafficRecord]):
    """The live recording of a server: a sequence of :class:`TrafficRecord` (a fresh snapshot on
    every access) with filters, waits and order assertions."""

    def __init__(self, server: Any) -> None:
        self._server = server

    def _records(self, since: int = 0) -> list[TrafficRecord]:
        records: list[TrafficRecord] = self._server.traffic_since(since)
        return records

    @overload
    def __getitem__(self, index: int) -> TrafficRecord: ...
    @overload
    def __getitem__(self, index: slice) -> list[TrafficRecord]: ...
    def __getitem__(self, index: int | slice) -> TrafficRecord | list[TrafficRecord]:
        return self._records()[index]

    def __len__(self) -> int:
        return len(self._records())

    def __iter__(self) -> Iterator[TrafficRecord]:
        # One read (Sequence's own __iter__ would read every record again for each index).
        return iter(self._records())

    def snapshot(self) -> tuple[list[TrafficRecord], int]:
        """The records and how many the memory bound dropped since the last clear, from one read
        (what ``srv.report()`` reports on: each record seen or counted, none twice)."""
        lines, dropped = self._server._core.traffic_read(0)
        return [parse_record(line) for line in lines], dropped

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, (list, tuple, TrafficView)) else NotImplemented

    def __repr__(self) -> str:
        stats = self.stats
        dropped = f", {stats.dropped:,} dropped" if stats.dropped else ""
        return f"TrafficView({stats.kept} records{dropped})"

    @property
    def stats(self) -> TrafficStats:
        """What the memory holds and what its bound (``keep_traffic``, ``keep_traffic_bytes``)
        dropped."""
        return TrafficStats(**self._server._core.traffic_stats())

    @property
    def dropped(self) -> int:
        """How many records the memory bound dropped since the last clear (``stats.dropped``):
        ``srv.traffic`` lacks them."""
        return self.stats.dropped

    __hash__ = None  # type: ignore[assignment]

    def filter(
        self,
        method: str | None = None,
        *,
        kind: str | None = None,
        dir: str | None = None,
        conn: str | None = None,
        era: str | None = None,
        revision: str | None = None,
        task: str | bool | None = None,
    ) -> list[TrafficRecord]:
        """Records matching every given criterion (``era``: ``"handshake"`` or
        ``"stateless"``; ``revision``: e.g. ``"2026-07-28"``; ``task``: a task id, or ``True``
        for every frame about some task)."""
        return [
            r for r in self._records()
            if (method is None or r.method == method) and (kind is None or r.kind == kind)
            and (dir is None or r.dir == dir) and (conn is None or r.conn == conn)
            and (era is None or r.era == era) and (revision is None or r.revision == revision)
            and (task is None or (r.task is not None if task is True else r.task == task))
        ]  # fmt: skip

    def requests(self, method: str | None = None, **criteria: Any) -> list[TrafficRecord]:
        """Requests (from the client unless ``dir="out"``)."""
        return self.filter(method, kind="request", dir=criteria.pop("dir", "in"), **criteria)

    def notifications(self, method: str | None = None, **criteria: Any) -> list[TrafficRecord]:
        """Notifications in either direction (``dir=`` narrows it)."""
        return self.filter(method, kind="notification", **criteria)

    def responses(self, method: str | None = None, **criteria: Any) -> list[TrafficRecord]:
        """Success responses (to the client unless ``dir="in"``)."""
        return self.filter(method, kind="response", dir=criteria.pop("dir", "out"), **criteria)

    def clear(self) -> None:
        """Forget what was recorded so far (a ``--record`` file keeps it)."""
        self._server._core.clear_traffic()

    def to_jsonl(self, path: str | Path) -> None:
        """Write the recording as JSON lines (the ``--record`` format)."""
        with open(path, "w", encoding="utf-8") as f:
            for line in self._server._core.traffic(0):
                f.write(line + "\n")

    def wait_for(
        self,
        method: str,
        timeout: float = 5.0,
        where: Callable[[TrafficRecord], bool] | None = None,
        **params: Any,
    ) -> TrafficRecord:
        """The first record of ``method`` whose ``params`` contain ``params`` (and that ``where``
        accepts, when given), waiting for it up to ``timeout`` seconds (the GIL is released;
        Ctrl-C works). Raises ``AssertionError`` with a table of what arrived instead."""
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            # Count first, then read: a frame recorded in between is read now, never skipped.
            count = self._server._core.traffic_count()
            for r in self._records(seen):
                seen = max(seen, r.seq)
                if r.method == method and r.kind in ("request", "notification") and _matches(r.params, params):
                    if where is None or where(r):
                        return r
            seen = max(seen, count)
            remaining = deadline - time.monotonic()
            # False: the deadline passed, or the server stopped with nothing new (none will come).
            if remaining <= 0 or not self._server._core.wait_traffic(seen, remaining):
                want = method + (f" with {params}" if params else "") + (" that `where` accepts" if where else "")
                raise AssertionError(f"no {want} within {timeout} s; the traffic was:\n{self.table()}")

    async def await_for(
        self,
        method: str,
        timeout: float = 5.0,
        where: Callable[[TrafficRecord], bool] | None = None,
        **params: Any,
    ) -> TrafficRecord:
        """:meth:`wait_for` for async tests (asyncio or trio, through anyio)."""
        import anyio

        return await anyio.to_thread.run_sync(lambda: self.wait_for(method, timeout, where, **params))

    def assert_order(self, *methods: str) -> None:
        """Assert that records of ``methods`` happened in this order (as a subsequence: other
        traffic may come in between). Raises ``AssertionError`` with the traffic table."""
        it = iter(r.method for r in self._records())
        for i, m in enumerate(methods):
            if not any(seen == m for seen in it):
                got = " -> ".join(methods[:i]) or "(start)"
                raise AssertionError(f"expected {m!r} after {got}; the traffic was:\n{self.table()}")

    def table(self, limit: int = 60) -> str:
        """A compact table of the recording (the last ``limit`` records)."""
        rows = self._records()[-limit:]
        note = self.stats.note()
        head = [f"  ({note})"] if note else []
        if not rows:
            return "\n".join([*head, "  (nothing recorded)"])
        lines = [*head, f"  {'seq':>4} {'dir':<3} {'kind':<12} {'id':<6} {'era':<9} method / error"]
        for r in rows:
            what = (r.method or r.error or "") + (f" [task {r.task[:8]}]" if r.task else "")
            lines.append(f"  {r.seq:>4} {r.dir:<3} {r.kind:<12} {r.id!s:<6} {r.era or '-':<9} {what}")
        return "\n".join(lines)


def _matches(actual: Any, expected: dict[str, Any]) -> bool:
    """Whether the JSON ``actual`` contains every key of ``expected`` with an equal value."""
    if not expected:
        return True
    return isinstance(actual, dict) and all(k in actual and actual[k] == v for k, v in expected.items())
