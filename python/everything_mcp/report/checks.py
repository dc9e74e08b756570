"""The catalog of checks a report computes from traffic records (docs/report.md), beyond the
subscription ladder (:mod:`.ladder`): the lifecycle, re-lists after ``list_changed``, the
server's questions answered, multi-round retries, progress tokens, cancellation, pagination,
stream resumption, the reactions to injected faults and errors, and transport habits."""

from __future__ import annotations

from collections.abc import Callable

from .ladder import subscription
from .model import Check, ClientTraffic, check

LIST_KINDS = ("tools", "resources", "prompts")
"""The lists whose ``list_changed`` a client should follow with a re-list."""


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
            check(
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
        check("lifecycle.initialize", "initialize sent and a revision negotiated", negotiated),
        check(
            "lifecycle.initialized",
            "notifications/initialized sent after the initialize result, before other requests",
            later[:1] if skipped else initialized,
            failed=skipped,
        ),
    ]


def list_changed(t: ClientTraffic) -> list[Check]:
    """After a `list_changed`, the client lists again."""
    checks = []
    for kind in LIST_KINDS:
        notes = t.frames("out", f"notifications/{kind}/list_changed")
        if not notes:
            checks.append(
                check(f"list_changed.{kind}", f"re-lists {kind} after notifications/{kind}/list_changed", None)
            )
            continue
        relist = [r for r in t.frames("in", f"{kind}/list", "request") if r.seq > notes[0].seq]
        checks.append(
            check(
                f"list_changed.{kind}",
                f"re-lists {kind} after notifications/{kind}/list_changed",
                relist[:1] or notes[:1],
                failed=not relist,
            )
        )
    return checks


def faults(t: ClientTraffic) -> list[Check]:
    """The client's reaction to injected faults and refusals: a retry after a 503, a new
    session after a 404 one, a fallback after -32022."""
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
    ]


def asks(t: ClientTraffic) -> list[Check]:
    """The server's questions answered (`sampling`, `elicitation`, `roots`), and in 2026-07-28
    the multi-round retry that carries the answers and the `requestState` back."""
    checks = []
    for name, method in [
        ("sampling", "sampling/createMessage"),
        ("elicitation", "elicitation/create"),
        ("roots", "roots/list"),
    ]:
        asked = t.frames("out", method, "request")
        unanswered = [r for r in asked if t.answer_from_client(r) is None]
        answers = [a for r in asked if (a := t.answer_from_client(r)) is not None]
        checks.append(
            check(
                f"asks.{name}",
                f"answers the server's {method}",
                unanswered[:1] or answers[:1],
                failed=bool(unanswered),
            )
        )
    rounds = [r for r in t.frames("out", kind="response") if (r.result or {}).get("resultType") == "input_required"]
    states = {(r.result or {}).get("requestState") for r in rounds}
    retries = [r for r in t.requests() if (r.params or {}).get("requestState") in states]
    checks.append(
        check(
            "asks.mrtr_retried",
            "retries an input_required answer with the answers and its requestState (2026-07-28)",
            (retries[:1] or rounds[:1]) if rounds else None,
            failed=bool(rounds) and not retries,
        )
    )
    return checks


def habits(t: ClientTraffic) -> list[Check]:
    """Progress tokens, cancellation, pagination, stream resumption, the revision header."""
    requests = t.requests()
    tokens = [r for r in requests if "progressToken" in ((r.params or {}).get("_meta") or {})]
    cancels = t.frames("in", "notifications/cancelled")
    pages = [
        (r, a)
        for r in requests
        if r.method
        and r.method.endswith("/list")
        and (a := t.answered(r)) is not None
        and (a.result or {}).get("nextCursor")
    ]
    followed = [
        r2
        for _, a in pages
        for r2 in requests
        if r2.seq > a.seq and (r2.params or {}).get("cursor") == (a.result or {}).get("nextCursor")
    ]
    repeated = [r for r, a in pages if (r.params or {}).get("cursor") == (a.result or {}).get("nextCursor")]
    looped = [
        r2
        for r in repeated
        for r2 in requests
        if r2.seq > r.seq and (r2.params or {}).get("cursor") == (r.params or {}).get("cursor")
    ]
    resumed = [r for r in t.records if r.dir == "in" and (((r.http or {}).get("headers")) or {}).get("last-event-id")]
    after_init = [
        r
        for r in requests
        if r.transport == "http" and r.era == "handshake" and r.method != "initialize" and r.http is not None
    ]
    headerless = [r for r in after_init if "mcp-protocol-version" not in ((r.http or {}).get("headers") or {})]
    return [
        check("progress.token", "asks for progress (a progressToken in a request's _meta)", tokens[:1]),
        check("cancel.sent", "cancels a request it gave up on (notifications/cancelled)", cancels[:1]),
        check(
            "pagination.followed",
            "follows nextCursor to the next page",
            (followed[:1] or [pages[0][1]]) if pages else None,
            failed=bool(pages) and not followed,
        ),
        check(
            "pagination.stops_at_repeat",
            "stops at a cursor that repeats instead of looping",
            (looped[:1] or repeated[:1]) if repeated else None,
            failed=bool(looped),
        ),
        check("stream.resumed", "resumes an SSE stream with Last-Event-ID", resumed[:1]),
        check(
            "http.protocol_version_header",
            "sends MCP-Protocol-Version on every request after initialize (handshake era over HTTP)",
            headerless[:1] or after_init[:1],
            failed=bool(headerless),
        ),
    ]


def errors(t: ClientTraffic) -> list[Check]:
    """Errors the client caused: frames that are not valid JSON-RPC."""
    invalid = t.frames("in", kind="invalid")
    sent = t.frames("in")
    return [check("errors.malformed", "sends only valid JSON-RPC frames", invalid or sent[:1], failed=bool(invalid))]


CATALOG: tuple[Callable[[ClientTraffic], list[Check]], ...] = (subscription, list_changed, asks, habits, faults, errors)
"""The checks every client gets, after its lifecycle checks."""
