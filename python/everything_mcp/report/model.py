"""What a check is and what it reads: a :class:`Check` (an id, a description, a status, the
``seq`` of the records that prove it and a detail for a person) and a client's
:class:`ClientTraffic`. A step the client
never attempted is "not exercised", never "failed": most agents need a model to decide to
subscribe or re-read. A check of the other era (a handshake check of a 2026-07-28 client, or
the reverse) is "not applicable": it appears only in a report whose clients are of both eras, so
that every client has every row of the matrix."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..traffic import TrafficRecord

Status = Literal["pass", "fail", "not exercised", "not applicable"]


@dataclass(frozen=True)
class Check:
    """One check of one client."""

    id: str
    """Stable id, e.g. ``subscription.read``."""
    description: str
    """What it asks of the client."""
    status: Status
    """``pass``, ``fail``, ``not exercised`` or ``not applicable`` (a check of the other era)."""
    seqs: tuple[int, ...] = ()
    """The records that prove it (their ``seq``)."""
    detail: str = ""
    """A short summary for a person (``accept 2, decline 1``); empty when there is none."""

    def to_json(self) -> dict[str, Any]:
        """The check as ``--json`` writes it (``detail`` always present, ``""`` when none)."""
        return {
            "id": self.id,
            "description": self.description,
            "status": self.status,
            "seqs": list(self.seqs),
            "detail": self.detail,
        }


@dataclass
class ClientTraffic:
    """The records of one client (its frames and the server's to it), in wire order."""

    records: list[TrafficRecord] = field(default_factory=list)
    _index: tuple[dict[Any, list[TrafficRecord]], dict[Any, list[TrafficRecord]]] | None = field(
        default=None, init=False, repr=False
    )
    _frames: dict[tuple[str, str | None, str | None], list[TrafficRecord]] | None = field(
        default=None, init=False, repr=False
    )

    def frames(self, direction: str, method: str | None = None, kind: str | None = None) -> list[TrafficRecord]:
        """Its records going `direction`, of `method` and `kind` when given (a fresh list)."""
        return list(self._by_frame().get((direction, method, kind), ()))

    def _by_frame(self) -> dict[tuple[str, str | None, str | None], list[TrafficRecord]]:
        """The records by direction, method and kind (None: any), in wire order: built once, on
        the first lookup. The catalog asks for some two hundred such lists per client; a scan of
        the records for each took 1.7 of the 4.4 s a report of 100k records took."""
        if self._frames is None:
            by: dict[tuple[str, str | None, str | None], list[TrafficRecord]] = {}
            for r in self.records:
                for key in (
                    (r.dir, None, None),
                    (r.dir, r.method, None),
                    (r.dir, None, r.kind),
                    (r.dir, r.method, r.kind),
                ):
                    by.setdefault(key, []).append(r)
            self._frames = by
        return self._frames

    def requests(self, method: str | None = None) -> list[TrafficRecord]:
        """The client's requests (of `method`)."""
        return self.frames("in", method, "request")

    def answer_from_client(self, request: TrafficRecord) -> TrafficRecord | None:
        """The client's answer to the server's `request`, if it sent one."""
        return _first_after(self._answers()[0].get((request.conn, request.id), ()), request.seq)

    def answered(self, request: TrafficRecord) -> TrafficRecord | None:
        """The server's answer to `request`, if it went out."""
        return _first_after(self._answers()[1].get((request.conn, request.id), ()), request.seq)

    def _answers(self) -> tuple[dict[Any, list[TrafficRecord]], dict[Any, list[TrafficRecord]]]:
        """The answers by connection and id (the client's, the server's: ids of the two
        directions are separate spaces), in wire order: built once, on the first lookup (the
        records are complete by then), so a check that looks up every request's answer reads
        the records once, not once per request."""
        if self._index is None:
            theirs: dict[Any, list[TrafficRecord]] = {}
            ours: dict[Any, list[TrafficRecord]] = {}
            for r in self.records:
                if r.kind in ("response", "error"):
                    (theirs if r.dir == "in" else ours).setdefault((r.conn, r.id), []).append(r)
            self._index = (theirs, ours)
        return self._index


def _first_after(answers: Sequence[TrafficRecord], seq: int) -> TrafficRecord | None:
    """The first of `answers` (in wire order) after record `seq`: by bisection, since a client
    that numbers its requests per stream reuses an id many times on one connection."""
    i = bisect.bisect_right(answers, seq, key=_seq)
    return answers[i] if i < len(answers) else None


def _seq(record: TrafficRecord) -> int:
    return record.seq


def check(
    id: str, description: str, proof: Sequence[TrafficRecord] | None, failed: bool = False, detail: str = ""
) -> Check:
    """`pass` with `proof`, `fail` when `failed` (with the proof given), else not exercised (and
    then without `detail`: there is nothing to sum up)."""
    seqs = tuple(r.seq for r in proof or ())
    if failed:
        return Check(id, description, "fail", seqs, detail)
    if not proof:
        return Check(id, description, "not exercised", seqs)
    return Check(id, description, "pass", seqs, detail)
