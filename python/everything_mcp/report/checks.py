"""The catalog of checks a report computes from traffic records (docs/report.md): the lifecycle
(and the capabilities declared, :mod:`.capabilities`), the subscription ladder (:mod:`.ladder`),
re-lists after ``list_changed``, the server's questions answered and cancellation (:mod:`.asks`),
progress tokens, pagination (:mod:`.pagination`), stream resumption, HTTP habits (:mod:`.http`),
the reactions to injected faults (:mod:`.faults`), the errors the client caused
(:mod:`.errors`), the authorization flow (:mod:`.auth`), an MCP Apps host's (:mod:`.apps`) and the server's latency
(:mod:`.latency`). ``CATALOG`` is the one list of families, ``ORDER`` the one order of checks."""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING

from ..traffic import TrafficRecord
from . import apps
from .asks import Asks
from .auth import Auth
from .capabilities import Capabilities
from .errors import Errors
from .faults import Faults
from .http import HttpHabits
from .ladder import Subscription
from .latency import Latency
from .model import EVERY, Check, Family, earlier, first, meta, verdict
from .pagination import Pagination

if TYPE_CHECKING:
    from .client import ClientFold

LIST_KINDS = ("tools", "resources", "prompts")
"""The lists whose ``list_changed`` a client should follow with a re-list."""

ENVELOPE_VERSION = "io.modelcontextprotocol/protocolVersion"
"""The envelope member of a 2026-07-28 request that names its revision."""

HANDSHAKE_ONLY = ("lifecycle.initialize", "lifecycle.initialized")
STATELESS_ONLY = ("lifecycle.envelope",)

DESCRIPTIONS = {
    "lifecycle.initialize": "initialize sent and a revision negotiated",
    "lifecycle.initialized": "notifications/initialized sent after the initialize result, before other requests",
    "lifecycle.envelope": "every request carries the 2026-07-28 envelope (its revision in _meta)",
}
"""The lifecycle's checks of one era (a client of the other has them "not applicable")."""

ORDER: dict[str, int] = {
    id: i
    for i, id in enumerate(
        [
            *HANDSHAKE_ONLY,
            *STATELESS_ONLY,
            "lifecycle.capabilities",
            "subscription.connected",
            "subscription.discovered",
            "subscription.read",
            "subscription.subscribed",
            "subscription.notified",
            "subscription.reread",
            "subscription.changed",
            "subscription.closed",
            *(f"list_changed.{kind}" for kind in LIST_KINDS),
            "asks.sampling",
            "asks.elicitation",
            "asks.roots",
            "asks.mrtr_retried",
            "progress.token",
            "cancel.sent",
            "cancel.honoured",
            "pagination.followed",
            "pagination.stops_at_repeat",
            "stream.resumed",
            "http.protocol_version_header",
            "http.standalone_get_conflict",
            "http.get_before_initialize",
            "faults.retry_503",
            "faults.new_session_after_404",
            "faults.fallback_after_32022",
            "faults.reaction",
            "errors.malformed",
            "errors.unknown_method",
            "errors.invalid_arguments",
            "auth.discovery",
            "auth.pkce_s256",
            "auth.resource",
            "auth.scope",
            "auth.refresh",
            "auth.step_up",
            "auth.callback",
            "auth.mismatch",
            "auth.offline_access",
            "auth.migration",
            "auth.faults",
            "auth.recovers",
            *apps.ORDER,
        ]
    )
}
"""Every check, in the order a client's checks and the matrix's rows are in: the lifecycle's
checks of both eras together, then the ladder and the rest."""


def lifecycle_ids(era: str | None) -> frozenset[str]:
    """The lifecycle checks of a client of `era` (a client whose era is not known yet is graded
    as a handshake-era one)."""
    skip = HANDSHAKE_ONLY if era == "stateless" else STATELESS_ONLY
    return frozenset(id for id in ORDER if id.startswith("lifecycle.") and id not in skip)


def not_applicable(id: str) -> str:
    """Why check `id` is not a client's (the detail of a "not applicable" check)."""
    if id in STATELESS_ONLY or id in apps.STATELESS_ONLY:
        return "not applicable: 2026-07-28 only"
    if id in apps.HANDSHAKE_ONLY:
        return "not applicable: handshake era only"
    if id.startswith("apps."):
        return "not applicable: not an MCP Apps host"
    return "not applicable: handshake era only"


class Lifecycle(Family):
    """The handshake (``lifecycle.initialize``, ``.initialized``), or in 2026-07-28 the envelope
    on every request (``lifecycle.envelope``). Both are folded; the client's era picks."""

    routes = frozenset(r for r in EVERY if r[0] == "in")

    def __init__(self) -> None:
        self.initialize: int | None = None
        """The first initialize."""
        self.negotiated: tuple[int, str] | None = None
        """Its answer: (seq, kind)."""
        self.initialized = array("q")
        self.later: int | None = None
        """The first request (not initialize, not ping) after the initialize's answer."""
        self.requests = array("q")
        """Every request not of the handshake era (the envelope's proof)."""
        self.bare = array("q")
        """Those without the envelope's revision."""

    def add(self, r: TrafficRecord) -> None:
        if r.method == "notifications/initialized":
            self.initialized.append(r.seq)
        if r.kind != "request":
            return
        if r.method == "initialize" and self.initialize is None:
            self.initialize = r.seq
        elif self.negotiated is not None and self.later is None and r.method not in ("initialize", "ping"):
            self.later = r.seq
        if r.era != "handshake":
            self.requests.append(r.seq)
            if ENVELOPE_VERSION not in meta(r):
                self.bare.append(r.seq)

    def answered(self, request: TrafficRecord, answer: TrafficRecord) -> None:
        if request.seq == self.initialize:
            self.negotiated = (answer.seq, answer.kind)

    def finish(self, client: ClientFold) -> list[Check]:
        proof = []
        if self.initialize is not None and self.negotiated is not None and self.negotiated[1] == "response":
            proof = [self.initialize, self.negotiated[0]]
        skipped = bool(proof) and not self.initialized and self.later is not None
        return [
            verdict("lifecycle.initialize", DESCRIPTIONS["lifecycle.initialize"], proof),
            verdict(
                "lifecycle.initialized",
                DESCRIPTIONS["lifecycle.initialized"],
                [self.later] if skipped and self.later is not None else self.initialized,
                failed=skipped,
            ),
            verdict(
                "lifecycle.envelope",
                DESCRIPTIONS["lifecycle.envelope"],
                self.bare or self.requests,
                failed=bool(self.bare),
            ),
        ]


class ListChanged(Family):
    """After a `list_changed`, the client lists again."""

    routes = frozenset({("out", "notification"), ("out", "request"), ("in", "request")})

    def __init__(self) -> None:
        self.notes: dict[str, int] = {}
        """The first `list_changed` of each kind."""
        self.relists: dict[str, int] = {}
        """The first re-list of each kind after it."""

    def add(self, r: TrafficRecord) -> None:
        method = r.method or ""
        if r.dir == "out":
            if method.startswith("notifications/") and method.endswith("/list_changed"):
                kind = method[len("notifications/") : -len("/list_changed")]
                if kind in LIST_KINDS and kind not in self.notes:
                    self.notes[kind] = r.seq
        elif r.kind == "request" and method.endswith("/list"):
            kind = method[: -len("/list")]
            if kind in self.notes and kind not in self.relists:
                self.relists[kind] = r.seq

    def finish(self, client: ClientFold) -> list[Check]:
        checks = []
        for kind in LIST_KINDS:
            note, relist = self.notes.get(kind), self.relists.get(kind)
            checks.append(
                verdict(
                    f"list_changed.{kind}",
                    f"re-lists {kind} after notifications/{kind}/list_changed",
                    None if note is None else [relist if relist is not None else note],
                    failed=note is not None and relist is None,
                )
            )
        return checks


class Habits(Family):
    """Progress tokens, cancellation sent, stream resumption, the revision header."""

    routes = frozenset(r for r in EVERY if r[0] == "in")

    def __init__(self) -> None:
        self.token: int | None = None
        self.cancel: int | None = None
        self.resumed: int | None = None
        self.after_initialize: int | None = None
        self.headerless: int | None = None

    def add(self, r: TrafficRecord) -> None:
        if r.method == "notifications/cancelled" and self.cancel is None:
            self.cancel = r.seq
        headers = (r.http or {}).get("headers") or {}
        if headers.get("last-event-id"):
            # A GET without a session may be given to its client after later records: the first
            # by seq, not the first seen.
            self.resumed = earlier(self.resumed, r.seq)
        if r.kind != "request":
            return
        if self.token is None and "progressToken" in meta(r):
            self.token = r.seq
        if r.transport == "http" and r.era == "handshake" and r.method != "initialize" and r.http is not None:
            if self.after_initialize is None:
                self.after_initialize = r.seq
            if self.headerless is None and "mcp-protocol-version" not in headers:
                self.headerless = r.seq

    def finish(self, client: ClientFold) -> list[Check]:
        return [
            verdict("progress.token", "asks for progress (a progressToken in a request's _meta)", first(self.token)),
            verdict("cancel.sent", "cancels a request it gave up on (notifications/cancelled)", first(self.cancel)),
            verdict("stream.resumed", "resumes an SSE stream with Last-Event-ID", first(self.resumed)),
            verdict(
                "http.protocol_version_header",
                "sends MCP-Protocol-Version on every request after initialize (handshake era over HTTP)",
                first(self.headerless) or first(self.after_initialize),
                failed=self.headerless is not None,
            ),
        ]


CATALOG: tuple[type[Family], ...] = (
    Lifecycle,
    Capabilities,
    Subscription,
    ListChanged,
    Asks,
    Habits,
    Pagination,
    HttpHabits,
    Faults,
    Errors,
    Auth,
    apps.Apps,
    Latency,
)
"""The families every client gets: their checks, sorted by ``ORDER``."""
