"""What a check is and how a family of checks is computed.

A :class:`Check` has an id, a description, a status, the ``seq`` of the records that prove it and
a detail for a person. A step the client never attempted is "not exercised", never "failed":
most agents need a model to decide to subscribe or re-read. A check of the other era (a
handshake check of a 2026-07-28 client, or the reverse) is "not applicable": it appears only in a
report whose clients are of both eras, so every client has every row of the matrix.

A :class:`Family` computes some checks of one client as incremental state: the client's records
are folded into it one at a time, in wire order (``add``), it hears of every answer paired to its
request (``answered``, ``client_answered``), and ``finish`` reads its checks off the state
without changing it, so a report can be finished, then folded further and finished again
(:mod:`everything_mcp.report.fold`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from ..traffic import TrafficRecord

if TYPE_CHECKING:
    from .client import ClientFold

Status = Literal["pass", "fail", "not exercised", "not applicable"]

STATUSES: tuple[Status, ...] = ("pass", "fail", "not exercised", "not applicable")


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


def verdict(id: str, description: str, proof: Sequence[int] | None, failed: bool = False, detail: str = "") -> Check:
    """`pass` with `proof` (the records' seqs), `fail` when `failed` (with the proof given), else
    not exercised (and then without `detail`: there is nothing to sum up)."""
    seqs = tuple(proof or ())
    if failed:
        return Check(id, description, "fail", seqs, detail)
    if not seqs:
        return Check(id, description, "not exercised")
    return Check(id, description, "pass", seqs, detail)


def check(
    id: str, description: str, proof: Sequence[TrafficRecord] | None, failed: bool = False, detail: str = ""
) -> Check:
    """:func:`verdict` with the records themselves as the proof."""
    return verdict(id, description, [r.seq for r in proof or ()], failed, detail)


def earlier(seq: int | None, other: int) -> int:
    """The smaller of a first seq so far (None: none yet) and `other`."""
    return other if seq is None or other < seq else seq


def first(*seqs: int | None) -> list[int]:
    """The proof of a check: the first of `seqs` that was seen (None: not seen), or none."""
    return next(([s] for s in seqs if s is not None), [])


Route = tuple[str, str]
"""A record's (``dir``, ``kind``)."""

DIRS = ("in", "out")
KINDS = ("request", "notification", "response", "error", "batch", "invalid", "http")
EVERY: frozenset[Route] = frozenset((d, k) for d in DIRS for k in KINDS)
"""Every record."""
ANSWERS = ("response", "error")


class Family:
    """Some checks of one client, as incremental state (see the module's docstring)."""

    routes: ClassVar[frozenset[Route]] = frozenset()
    """The records `add` is given (by direction and kind); the others never reach it."""

    def add(self, r: TrafficRecord) -> None:
        """Folds record `r` of the client (records come in wire order)."""

    def answered(self, request: TrafficRecord, answer: TrafficRecord) -> None:
        """The server answered the client's `request` (the first answer with its connection and
        id after it): told as the answer is folded."""

    def client_answered(self, request: TrafficRecord, answer: TrafficRecord) -> None:
        """The client answered the server's `request`."""

    def finish(self, client: ClientFold) -> list[Check]:
        """The checks, read off the state (which stays as it is)."""
        raise NotImplementedError


def params(r: TrafficRecord) -> dict[str, Any]:
    """A request's or notification's ``params`` (empty when they are not an object)."""
    value = r.params
    return value if isinstance(value, dict) else {}


def result(r: TrafficRecord | None) -> dict[str, Any]:
    """A response's ``result`` (empty when there is none or it is not an object)."""
    value = r.result if r is not None else None
    return value if isinstance(value, dict) else {}


def meta(r: TrafficRecord) -> dict[str, Any]:
    """A request's ``params._meta`` (empty when there is none)."""
    value = params(r).get("_meta")
    return value if isinstance(value, dict) else {}


AUTH_CONN = "auth"
"""The connection the auth lab records its exchanges on (the authorization server's endpoints
and the metadata: no MCP connection's); ``FILE:auth`` when several record files are read
together (:func:`everything_mcp.report.load_files` names connections so)."""


def auth_conn(conn: str) -> bool:
    """Whether `conn` is the auth lab's."""
    return conn == AUTH_CONN or conn.endswith(":" + AUTH_CONN)


def hashable(value: Any) -> Any:
    """`value` as a dictionary key: itself, or its JSON-ish text when it is a list or an object
    (an id, a cursor or a requestState a client made up)."""
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value
