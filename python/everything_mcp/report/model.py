"""What a check is and what it reads: a :class:`Check` (an id, a description, a status and the
``seq`` of the records that prove it) and a client's :class:`ClientTraffic`. A step the client
never attempted is "not exercised", never "failed": most agents need a model to decide to
subscribe or re-read."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..traffic import TrafficRecord

Status = Literal["pass", "fail", "not exercised"]


@dataclass(frozen=True)
class Check:
    """One check of one client."""

    id: str
    """Stable id, e.g. ``subscription.read``."""
    description: str
    """What it asks of the client."""
    status: Status
    """``pass``, ``fail`` or ``not exercised``."""
    seqs: tuple[int, ...] = ()
    """The records that prove it (their ``seq``)."""


@dataclass
class ClientTraffic:
    """The records of one client (its frames and the server's to it), in wire order."""

    records: list[TrafficRecord] = field(default_factory=list)

    def frames(self, direction: str, method: str | None = None, kind: str | None = None) -> list[TrafficRecord]:
        """Its records going `direction`, of `method` and `kind` when given."""
        return [
            r
            for r in self.records
            if r.dir == direction and (method is None or r.method == method) and (kind is None or r.kind == kind)
        ]

    def requests(self, method: str | None = None) -> list[TrafficRecord]:
        """The client's requests (of `method`)."""
        return self.frames("in", method, "request")

    def answer_from_client(self, request: TrafficRecord) -> TrafficRecord | None:
        """The client's answer to the server's `request`, if it sent one."""
        for r in self.records:
            if r.seq > request.seq and r.dir == "in" and r.kind in ("response", "error") and r.id == request.id:
                return r
        return None

    def answered(self, request: TrafficRecord) -> TrafficRecord | None:
        """The server's answer to `request`, if it went out."""
        for r in self.records:
            if (
                r.seq > request.seq
                and r.dir == "out"
                and r.kind in ("response", "error")
                and r.id == request.id
                and r.conn == request.conn
            ):
                return r
        return None


def check(id: str, description: str, proof: Sequence[TrafficRecord] | None, failed: bool = False) -> Check:
    """`pass` with `proof`, `fail` when `failed` (with the proof given), else not exercised."""
    seqs = tuple(r.seq for r in proof or ())
    if failed:
        return Check(id, description, "fail", seqs)
    return Check(id, description, "pass" if proof else "not exercised", seqs)
