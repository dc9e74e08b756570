"""The client's reactions to injected faults (docs/faults.md) and to the server's refusals: a
retry after a ``503``, a new session after a ``404`` one, a fallback after ``-32022``, and what
it did after every fault rule that hit it (``faults.reaction``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..traffic import TrafficRecord
from .model import EVERY, Check, Family, params, verdict

if TYPE_CHECKING:
    from .client import ClientFold


@dataclass
class Hit:
    """A frame a rule acted on, and what the client sent after it (the first of each)."""

    seq: int
    dir: str
    kind: str
    conn: str
    id: Any
    method: str | None
    era: str | None
    action: Any
    cancelled: int | None = None
    """A cancel of this request."""
    retried: int | None = None
    """The same method again."""
    went_on: int | None = None
    """Another request."""

    def react(self, r: TrafficRecord) -> None:
        """Hears of `r`, a later request or notification of the client."""
        if self.cancelled is None and self.dir == "in" and self.kind == "request":
            # Ids are the connection's, except in 2026-07-28, whose connections are not sessions.
            same = r.conn == self.conn or self.era == "stateless"
            if r.method == "notifications/cancelled" and same and params(r).get("requestId") == self.id:
                self.cancelled = r.seq
        if self.retried is None and self.dir == "in" and r.method == self.method:
            self.retried = r.seq
        if self.went_on is None and r.kind == "request":
            self.went_on = r.seq

    def reaction(self) -> tuple[str, int | None]:
        """What the client did after it, and the frame that shows it (None: it sent nothing)."""
        for what, seq in (("cancelled", self.cancelled), ("retried", self.retried), ("went on", self.went_on)):
            if seq is not None:
                return what, seq
        return "stopped", None


class Faults(Family):
    """The client's reaction to injected faults and refusals: a retry after a 503, a new
    session after a 404 one, a fallback after -32022, and its reaction to every rule."""

    routes = frozenset(EVERY)

    def __init__(self) -> None:
        self.hit: tuple[int, str | None] | None = None
        """The first request a rule answered 503: (seq, method)."""
        self.retried: int | None = None
        self.gone: int | None = None
        """The first request its session answered 404."""
        self.renewed: int | None = None
        self.refused: int | None = None
        """The first -32022."""
        self.fell_back: int | None = None
        self.rules: dict[str, list[Hit | None]] = {}
        """Per rule, in the order they first acted: its last hit on a request from the client,
        on a frame from it, on any frame."""

    def add(self, r: TrafficRecord) -> None:
        if r.dir == "in" and r.kind in ("request", "notification"):
            for hits in self.rules.values():
                for hit in hits:
                    if hit is not None:
                        hit.react(r)
        if r.fault:
            hit = Hit(r.seq, r.dir, r.kind, r.conn, r.id, r.method, r.era, r.fault.get("action"))
            hits = self.rules.setdefault(str(r.fault.get("rule")), [None, None, None])
            if r.dir == "in" and r.kind == "request":
                hits[0] = hit
            if r.dir == "in":
                hits[1] = hit
            hits[2] = hit
        if r.dir == "out":
            if r.kind == "error" and self.refused is None:
                error = r.msg.get("error") if isinstance(r.msg, dict) else None
                if isinstance(error, dict) and error.get("code") == -32022:
                    self.refused = r.seq
            return
        if r.kind != "request":
            return
        http = r.http or {}
        if self.hit is not None and self.retried is None and r.method == self.hit[1]:
            self.retried = r.seq
        if self.hit is None and r.fault and r.fault.get("action") == "http_status" and http.get("status") == 503:
            self.hit = (r.seq, r.method)
        if r.method == "initialize":
            if self.gone is not None and self.renewed is None:
                self.renewed = r.seq
            if self.refused is not None and self.fell_back is None:
                self.fell_back = r.seq
        if self.gone is None and http.get("status") == 404 and r.era == "handshake":
            self.gone = r.seq

    def _reaction(self) -> Check:
        """`faults.reaction`: for every fault rule that acted on the client's traffic (its
        records' `fault` mark), what the client did after the rule's last hit: `cancelled` (it
        sent `notifications/cancelled` for that request), `retried` (it sent the same method
        again), `went on` (it sent other requests), `stopped` (it sent no request after it)."""
        lines, stopped, shown = [], [], []
        for rule, hits in self.rules.items():
            hit = next(h for h in hits if h is not None)
            what, seq = hit.reaction()
            lines.append(f"{rule} {hit.action}: {what}")
            if seq is None:
                stopped.append(hit.seq)
            else:
                shown.append(seq)
        return verdict(
            "faults.reaction",
            "goes on after every injected fault (retries, cancels or sends other requests; never stops)",
            stopped or shown,
            failed=bool(stopped),
            detail="; ".join(lines),
        )

    def finish(self, client: ClientFold) -> list[Check]:
        def then(first: int | None, after: int | None) -> list[int] | None:
            return None if first is None else [after if after is not None else first]

        return [
            verdict(
                "faults.retry_503",
                "retries a request answered 503",
                then(self.hit[0] if self.hit else None, self.retried),
                failed=self.hit is not None and self.retried is None,
            ),
            verdict(
                "faults.new_session_after_404",
                "starts a new session (initialize) after its session answered 404",
                then(self.gone, self.renewed),
                failed=self.gone is not None and self.renewed is None,
            ),
            verdict(
                "faults.fallback_after_32022",
                "falls back to the handshake (initialize) after -32022 (unsupported revision)",
                then(self.refused, self.fell_back),
                failed=self.refused is not None and self.fell_back is None,
            ),
            self._reaction(),
        ]
