"""The catalog of checks a report computes from traffic records (docs/report.md): the lifecycle
(and the capabilities declared, :mod:`.capabilities`), the subscription ladder (:mod:`.ladder`),
re-lists after ``list_changed``, the server's questions answered, multi-round retries, progress
tokens, cancellation, pagination (:mod:`.pagination`), stream resumption, HTTP habits
(:mod:`.http`), the reactions to injected faults (:mod:`.faults`) and the errors the client
caused, and the authorization flow (:mod:`.auth`). ``CATALOG`` is the one list."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from ..traffic import TrafficRecord
from .auth import auth
from .capabilities import capabilities
from .faults import faults
from .http import http_habits
from .ladder import subscription
from .model import Check, ClientTraffic, check
from .pagination import pagination

LIST_KINDS = ("tools", "resources", "prompts")
"""The lists whose ``list_changed`` a client should follow with a re-list."""

HANDSHAKE_ONLY = ("lifecycle.initialize", "lifecycle.initialized")
STATELESS_ONLY = ("lifecycle.envelope",)
LIFECYCLE = (*HANDSHAKE_ONLY, *STATELESS_ONLY, "lifecycle.capabilities")
"""The lifecycle's checks of both eras, in the order of a matrix's rows."""


def not_applicable(id: str) -> str:
    """Why check `id` is not a client's (the detail of a "not applicable" check)."""
    return "not applicable: 2026-07-28 only" if id in STATELESS_ONLY else "not applicable: handshake era only"


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
            ),
            *capabilities(t),
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
        *capabilities(t),
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


def _how_answered(method: str, answers: list[TrafficRecord], unanswered: int) -> str:
    """How the client answered the server's `method` requests: for `elicitation/create` the
    actions of its results (`accept 2, decline 1`), else `result N, error M`; and how many it
    left unanswered."""
    results = [a for a in answers if a.kind == "response"]
    errors = len(answers) - len(results)
    if method == "elicitation/create":
        actions = Counter(str((a.result or {}).get("action", "no action")) for a in results)
        order = ["accept", "decline", "cancel", *sorted(set(actions) - {"accept", "decline", "cancel"})]
        parts = [f"{k} {actions[k]}" for k in order if actions[k]] + ([f"error {errors}"] if errors else [])
    else:
        parts = [f"result {len(results)}", f"error {errors}"]
    return ", ".join(parts + ([f"unanswered {unanswered}"] if unanswered else []))


def asks(t: ClientTraffic) -> list[Check]:
    """The server's questions answered (`sampling`, `elicitation`, `roots`), and in 2026-07-28
    the multi-round retry that carries the answers and the `requestState` back."""
    checks = []
    # A question the server cancelled is not to be answered (cancel.honoured judges that).
    withdrawn = _withdrawn(t)
    for name, method in [
        ("sampling", "sampling/createMessage"),
        ("elicitation", "elicitation/create"),
        ("roots", "roots/list"),
    ]:
        asked = t.frames("out", method, "request")
        unanswered = [r for r in asked if t.answer_from_client(r) is None and (r.conn, r.id) not in withdrawn]
        answers = [a for r in asked if (a := t.answer_from_client(r)) is not None]
        checks.append(
            check(
                f"asks.{name}",
                f"answers the server's {method}",
                unanswered[:1] or answers[:1],
                failed=bool(unanswered),
                detail=_how_answered(method, answers, len(unanswered)),
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


def _withdrawn(t: ClientTraffic) -> dict[tuple[str, object], TrafficRecord]:
    """The server's requests to the client that the server cancelled, by (connection, id): an
    outgoing `notifications/cancelled` naming the id of an earlier outgoing request of its
    connection. The value is the cancel."""
    withdrawn: dict[tuple[str, object], TrafficRecord] = {}
    asked = t.frames("out", kind="request")
    for cancel in t.frames("out", "notifications/cancelled", "notification"):
        id = (cancel.params or {}).get("requestId")
        if any(r.conn == cancel.conn and r.id == id and r.seq < cancel.seq for r in asked):
            withdrawn.setdefault((cancel.conn, id), cancel)
    return withdrawn


def cancel_honoured(t: ClientTraffic) -> Check:
    """`cancel.honoured`: after the server cancelled one of its own requests to the client, the
    client sent no answer to it."""
    withdrawn = _withdrawn(t)
    answers = [r for r in t.frames("in") if r.kind in ("response", "error")]
    late = []
    for (conn, id), cancel in withdrawn.items():
        late += [a for a in answers if a.conn == conn and a.id == id and a.seq > cancel.seq][:1]
    return check(
        "cancel.honoured",
        "does not answer a request of the server's after the server cancelled it",
        late or list(withdrawn.values())[:1],
        failed=bool(late),
        detail=f"{len(late)} of {len(withdrawn)} cancelled requests answered after the cancel",
    )


def habits(t: ClientTraffic) -> list[Check]:
    """Progress tokens, cancellation, pagination, stream resumption, the revision header."""
    requests = t.requests()
    tokens = [r for r in requests if "progressToken" in ((r.params or {}).get("_meta") or {})]
    cancels = t.frames("in", "notifications/cancelled")
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
        cancel_honoured(t),
        *pagination(t),
        check("stream.resumed", "resumes an SSE stream with Last-Event-ID", resumed[:1]),
        check(
            "http.protocol_version_header",
            "sends MCP-Protocol-Version on every request after initialize (handshake era over HTTP)",
            headerless[:1] or after_init[:1],
            failed=bool(headerless),
        ),
    ]


DISCOVER = "server/discover"
"""A 2.x client's probe for the stateless era: a handshake-only server refuses it with
`-32601`, and the client falls back to `initialize`. Not a mistake."""


def _error(r: TrafficRecord | None) -> dict[str, object]:
    """The `error` member of an error answer (empty for anything else)."""
    error = (r.msg or {}).get("error") if r is not None and r.kind == "error" and isinstance(r.msg, dict) else None
    return error if isinstance(error, dict) else {}


def _scripted(request: TrafficRecord, answer: TrafficRecord) -> bool:
    """Whether a fault rule hit `request` or made `answer`: then the answer is not the client's
    doing (a rule's `error` or `result` answers instead of the server)."""
    return bool(request.fault or answer.fault)


def _refused_arguments(answer: TrafficRecord) -> bool:
    """Whether `answer` refuses its request's arguments: `-32602` saying "Invalid arguments"
    (a prompt's), or an `isError` tool result saying it (the server checks a tool's arguments
    against its `inputSchema` and answers `MCP error -32602: Input validation error: Invalid
    arguments for tool …`, as the reference server does)."""
    error = _error(answer)
    if error:
        return error.get("code") == -32602 and "Invalid arguments" in str(error.get("message", ""))
    result = answer.result if isinstance(answer.result, dict) else {}
    texts = [str(c.get("text", "")) for c in result.get("content") or [] if isinstance(c, dict)]
    return result.get("isError") is True and any("Invalid arguments" in text for text in texts)


def errors(t: ClientTraffic) -> list[Check]:
    """Errors the client caused: frames that are not valid JSON-RPC, methods the server does not
    have, arguments a tool or prompt refused."""
    invalid = t.frames("in", kind="invalid")
    sent = t.frames("in")
    requests = t.requests()
    unknown = [
        (r, a)
        for r in requests
        if r.method != DISCOVER
        and (a := t.answered(r)) is not None
        and a.kind == "error"
        and not _scripted(r, a)
        and _error(a).get("code") == -32601
    ]
    calls = [(r, a) for r in requests if r.method in ("tools/call", "prompts/get") and (a := t.answered(r))]
    # A look at the text first: most answers do not say it.
    refused = [
        (r, a) for r, a in calls if "Invalid arguments" in a.raw and not _scripted(r, a) and _refused_arguments(a)
    ]
    return [
        check("errors.malformed", "sends only valid JSON-RPC frames", invalid or sent[:1], failed=bool(invalid)),
        check(
            "errors.unknown_method",
            "sends only methods the server has (no -32601; a server/discover probe aside)",
            [a for _, a in unknown] or requests[:1],
            failed=bool(unknown),
            detail=", ".join(dict.fromkeys(f"-32601 for {r.method}" for r, _ in unknown)),
        ),
        check(
            "errors.invalid_arguments",
            "calls tools and prompts with valid arguments (none refused: -32602 or an isError result)",
            [a for _, a in refused] or [a for _, a in calls[:1]],
            failed=bool(refused),
            detail=", ".join(dict.fromkeys(f"{r.method} {(r.params or {}).get('name')}" for r, _ in refused)),
        ),
    ]


CATALOG: tuple[Callable[[ClientTraffic], list[Check]], ...] = (
    subscription,
    list_changed,
    asks,
    habits,
    http_habits,
    faults,
    errors,
    auth,
)
"""The checks every client gets, after its lifecycle checks (which depend on its era)."""
