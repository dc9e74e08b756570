"""The subscription ladder (levels 1-7): connected, discovered the resource, read it,
subscribed (or ``listen``ed, in 2026-07-28), notified, re-read after the notification, saw the
new version; and whether it closed cleanly."""

from __future__ import annotations

from collections.abc import Sequence

from ..traffic import TrafficRecord
from .model import Check, ClientTraffic, check


def _contents(record: TrafficRecord | None) -> str:
    result = record.result if record is not None else None
    return repr(result.get("contents")) if isinstance(result, dict) else ""


def subscription(t: ClientTraffic) -> list[Check]:
    """The subscription ladder, levels 1-7 (0 is a client that never connected)."""
    connected = t.frames("in")[:1]
    listed = [r for r in t.frames("in", "resources/list", "request") if t.answered(r) is not None]
    reads = t.frames("in", "resources/read", "request")
    subscribes = t.frames("in", "resources/subscribe", "request") + [
        r
        for r in t.frames("in", "subscriptions/listen", "request")
        if ((r.params or {}).get("notifications") or {}).get("resourceSubscriptions")
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
        check("subscription.connected", "level 1: connected (sent a frame)", connected),
        check("subscription.discovered", "level 2: listed the resources", listed[:1]),
        check("subscription.read", "level 3: read a resource", reads[:1]),
        check(
            "subscription.subscribed",
            "level 4: subscribed (resources/subscribe, or a listen stream naming it)",
            subscribes[:1],
        ),
        check("subscription.notified", "level 5: received notifications/resources/updated", updates[:1]),
        check("subscription.reread", "level 6: read the resource again after the update", rereads[:1]),
        check(
            "subscription.changed",
            "level 7: saw the new version (the re-read differs from the first read)",
            changed[:1],
        ),
        check("subscription.closed", "unsubscribed or closed its session cleanly", closed[:1]),
    ]


def level(checks: Sequence[Check], ladder: str = "subscription") -> int:
    """How far up `ladder` the client went: its first checks that pass, in order (levels 1-7)."""
    n = 0
    for c in checks:
        if c.id.startswith(f"{ladder}.") and c.id != f"{ladder}.closed":
            if c.status != "pass":
                break
            n += 1
    return n
