"""The client's reactions to injected faults (docs/faults.md) and to the server's refusals: a
retry after a ``503``, a new session after a ``404`` one, a fallback after ``-32022``, and what
it did after every fault rule that hit it (``faults.reaction``)."""

from __future__ import annotations

from ..traffic import TrafficRecord
from .model import Check, ClientTraffic, check


def faults(t: ClientTraffic) -> list[Check]:
    """The client's reaction to injected faults and refusals: a retry after a 503, a new
    session after a 404 one, a fallback after -32022, and its reaction to every rule."""
    requests = t.requests()
    hit = [
        r
        for r in requests
        if r.fault and r.fault.get("action") == "http_status" and (r.http or {}).get("status") == 503
    ]
    retried = [r for r in requests if hit and r.seq > hit[0].seq and r.method == hit[0].method]
    gone = [r for r in requests if (r.http or {}).get("status") == 404 and r.era == "handshake"]
    renewed = [r for r in t.requests("initialize") if gone and r.seq > gone[0].seq]
    refused = [r for r in t.frames("out", kind="error") if ((r.msg or {}).get("error") or {}).get("code") == -32022]
    fell_back = [r for r in t.requests("initialize") if refused and r.seq > refused[0].seq]
    return [
        check(
            "faults.retry_503",
            "retries a request answered 503",
            (retried[:1] or hit[:1]) if hit else None,
            failed=bool(hit) and not retried,
        ),
        check(
            "faults.new_session_after_404",
            "starts a new session (initialize) after its session answered 404",
            (renewed[:1] or gone[:1]) if gone else None,
            failed=bool(gone) and not renewed,
        ),
        check(
            "faults.fallback_after_32022",
            "falls back to the handshake (initialize) after -32022 (unsupported revision)",
            (fell_back[:1] or refused[:1]) if refused else None,
            failed=bool(refused) and not fell_back,
        ),
        reaction(t),
    ]


def _last_hit(marked: list[TrafficRecord]) -> TrafficRecord:
    """The frame a rule last acted on: its last request from the client, else its last frame
    from the client (a notification), else its last frame to the client (a rule of direction
    `out`)."""
    for keep in (
        lambda r: r.dir == "in" and r.kind == "request",
        lambda r: r.dir == "in",
        lambda r: True,
    ):
        found = [r for r in marked if keep(r)]
        if found:
            return found[-1]
    raise ValueError("no frame")


def _react(t: ClientTraffic, hit: TrafficRecord) -> tuple[str, TrafficRecord | None]:
    """What the client did after `hit`, and the frame that shows it (None: it sent nothing)."""
    later = [r for r in t.frames("in") if r.seq > hit.seq and r.kind in ("request", "notification")]
    if hit.dir == "in" and hit.kind == "request":
        for r in later:
            # Ids are the connection's, except in 2026-07-28, whose connections are not sessions.
            same = r.conn == hit.conn or hit.era == "stateless"
            if r.method == "notifications/cancelled" and same and (r.params or {}).get("requestId") == hit.id:
                return "cancelled", r
    if hit.dir == "in":
        for r in later:
            if r.method == hit.method:
                return "retried", r
    for r in later:
        if r.kind == "request":
            return "went on", r
    return "stopped", None


def reaction(t: ClientTraffic) -> Check:
    """`faults.reaction`: for every fault rule that acted on the client's traffic (its records'
    `fault` mark), what the client did after the rule's last hit: `cancelled` (it sent
    `notifications/cancelled` for that request), `retried` (it sent the same method again),
    `went on` (it sent other requests), `stopped` (it sent no request after it)."""
    by_rule: dict[str, list[TrafficRecord]] = {}
    for r in t.records:
        if r.fault:
            by_rule.setdefault(str(r.fault.get("rule")), []).append(r)
    reactions = []
    for rule, marked in by_rule.items():
        hit = _last_hit(marked)
        what, shown = _react(t, hit)
        reactions.append((f"{rule} {(hit.fault or {}).get('action')}: {what}", hit, shown))
    stopped = [hit for _, hit, shown in reactions if shown is None]
    return check(
        "faults.reaction",
        "goes on after every injected fault (retries, cancels or sends other requests; never stops)",
        stopped or [shown for _, _, shown in reactions if shown is not None],
        failed=bool(stopped),
        detail="; ".join(line for line, _, _ in reactions),
    )
