"""The catalog of checks a report computes from traffic records (docs/report.md): each check
has an id, a description, a status (``pass``, ``fail`` or ``not exercised``) and the ``seq``
numbers of the records that prove it. A step the client never attempted is "not exercised",
never "failed": most agents need a model to decide to subscribe or re-read."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..traffic import TrafficRecord

Status = Literal["pass", "fail", "not exercised"]

LIST_KINDS = ("tools", "resources", "prompts")
"""The lists whose ``list_changed`` a client should follow with a re-list."""


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


def _check(id: str, description: str, proof: Sequence[TrafficRecord] | None, failed: bool = False) -> Check:
    """`pass` with `proof`, `fail` when `failed` (with the proof given), else not exercised."""
    seqs = tuple(r.seq for r in proof or ())
    if failed:
        return Check(id, description, "fail", seqs)
    return Check(id, description, "pass" if proof else "not exercised", seqs)


def lifecycle(t: ClientTraffic, era: str | None) -> list[Check]:
    """The handshake (or, in 2026-07-28, the envelope on every request)."""
    if era == "stateless":
        requests = t.frames("in", kind="request")
        bare = [
            r
            for r in requests
            if "io.modelcontextprotocol/protocolVersion" not in ((r.params or {}).get("_meta") or {})
        ]
        return [
            _check(
                "lifecycle.envelope",
                "every request carries the 2026-07-28 envelope (its revision in _meta)",
                bare or requests,
                failed=bool(bare),
            )
        ]
    initialize = t.frames("in", "initialize", "request")
    answer = t.answered(initialize[0]) if initialize else None
    negotiated = [initialize[0], answer] if answer is not None and answer.kind == "response" else []
    initialized = t.frames("in", "notifications/initialized")
    later = [
        r
        for r in t.frames("in", kind="request")
        if r.method not in ("initialize", "ping") and answer and r.seq > answer.seq
    ]
    skipped = bool(negotiated) and not initialized and bool(later)
    return [
        _check("lifecycle.initialize", "initialize sent and a revision negotiated", negotiated),
        _check(
            "lifecycle.initialized",
            "notifications/initialized sent after the initialize result, before other requests",
            later[:1] if skipped else initialized,
            failed=skipped,
        ),
    ]


def _contents(record: TrafficRecord | None) -> str:
    result = record.result if record is not None else None
    return repr(result.get("contents")) if isinstance(result, dict) else ""


def subscription(t: ClientTraffic) -> list[Check]:
    """The subscription ladder, levels 1-7 (0 is a client that never connected)."""
    connected = t.frames("in")[:1]
    listed = [r for r in t.frames("in", "resources/list", "request") if t.answered(r) is not None]
    reads = t.frames("in", "resources/read", "request")
    subscribes = t.frames("in", "resources/subscribe", "request") + [
        r for r in t.frames("in", "subscriptions/listen", "request") if (r.params or {}).get("resourceSubscriptions")
    ]
    updates = t.frames("out", "notifications/resources/updated")
    first = updates[0] if updates else None
    uri = (first.params or {}).get("uri") if first else None
    rereads = [r for r in reads if first and r.seq > first.seq and (r.params or {}).get("uri") == uri]
    before = [r for r in reads if first and r.seq < first.seq and (r.params or {}).get("uri") == uri]
    changed = [
        r
        for r in rereads
        if before and _contents(t.answered(r)) and _contents(t.answered(r)) != _contents(t.answered(before[0]))
    ]
    closed = t.frames("in", "resources/unsubscribe", "request") + [
        r for r in t.records if r.dir == "in" and r.kind == "http" and (r.http or {}).get("method") == "DELETE"
    ]
    return [
        _check("subscription.connected", "level 1: connected (sent a frame)", connected),
        _check("subscription.discovered", "level 2: listed the resources", listed[:1]),
        _check("subscription.read", "level 3: read a resource", reads[:1]),
        _check(
            "subscription.subscribed",
            "level 4: subscribed (resources/subscribe, or a listen stream naming it)",
            subscribes[:1],
        ),
        _check("subscription.notified", "level 5: received notifications/resources/updated", updates[:1]),
        _check("subscription.reread", "level 6: read the resource again after the update", rereads[:1]),
        _check(
            "subscription.changed",
            "level 7: saw the new version (the re-read differs from the first read)",
            changed[:1],
        ),
        _check("subscription.closed", "unsubscribed or closed its session cleanly", closed[:1]),
    ]


def list_changed(t: ClientTraffic) -> list[Check]:
    """After a `list_changed`, the client lists again."""
    checks = []
    for kind in LIST_KINDS:
        notes = t.frames("out", f"notifications/{kind}/list_changed")
        if not notes:
            checks.append(
                _check(f"list_changed.{kind}", f"re-lists {kind} after notifications/{kind}/list_changed", None)
            )
            continue
        relist = [r for r in t.frames("in", f"{kind}/list", "request") if r.seq > notes[0].seq]
        checks.append(
            _check(
                f"list_changed.{kind}",
                f"re-lists {kind} after notifications/{kind}/list_changed",
                relist[:1] or notes[:1],
                failed=not relist,
            )
        )
    return checks


def faults(t: ClientTraffic) -> list[Check]:
    """The client's reaction to injected faults."""
    hit = [
        r
        for r in t.frames("in", kind="request")
        if r.fault and r.fault.get("action") == "http_status" and (r.http or {}).get("status") == 503
    ]
    retried = [r for r in t.frames("in", kind="request") if hit and r.seq > hit[0].seq and r.method == hit[0].method]
    return [
        _check(
            "faults.retry_503",
            "retries a request answered 503 by a fault rule",
            (retried[:1] or hit[:1]) if hit else None,
            failed=bool(hit) and not retried,
        )
    ]


def errors(t: ClientTraffic) -> list[Check]:
    """Errors the client caused: frames that are not valid JSON-RPC."""
    invalid = t.frames("in", kind="invalid")
    sent = t.frames("in")
    return [_check("errors.malformed", "sends only valid JSON-RPC frames", invalid or sent[:1], failed=bool(invalid))]


CATALOG: tuple[Callable[[ClientTraffic], list[Check]], ...] = (subscription, list_changed, faults, errors)
"""The checks every client gets, after its lifecycle checks."""


def level(checks: Sequence[Check], ladder: str = "subscription") -> int:
    """How far up `ladder` the client went: its first checks that pass, in order (levels 1-7)."""
    n = 0
    for c in checks:
        if c.id.startswith(f"{ladder}.") and c.id != f"{ladder}.closed":
            if c.status != "pass":
                break
            n += 1
    return n
