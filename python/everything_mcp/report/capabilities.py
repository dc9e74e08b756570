"""``lifecycle.capabilities``: the client capabilities it declared against those it used.

A client declares its capabilities in ``initialize`` (``params.capabilities``, the handshake) or
in every request's envelope (``_meta["io.modelcontextprotocol/clientCapabilities"]``,
2026-07-28). It uses one when it answers a server's question with a result (``sampling``,
``elicitation``, ``roots``: a server → client request, or in 2026-07-28 an ``inputResponses``
entry of a multi-round retry or of ``tasks/update``), and when it sends
``notifications/roots/list_changed`` (``roots.listChanged``). Each use is compared with the
latest declaration of its connection when it happens."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..traffic import TrafficRecord
from .model import EVERY, Check, Family, hashable, params, verdict

if TYPE_CHECKING:
    from .client import ClientFold

ENVELOPE_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
"""The envelope member of a 2026-07-28 request that carries the client's capabilities."""

ASKS = {"sampling/createMessage": "sampling", "elicitation/create": "elicitation", "roots/list": "roots"}
"""The server's questions, and the capability a client needs to answer one with a result."""

LIST_CHANGED = "notifications/roots/list_changed"


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _declaration(r: TrafficRecord) -> dict[str, Any] | None:
    """The capabilities `r` declares: an ``initialize``'s, or a request's envelope's; None when
    it declares none."""
    if r.dir != "in" or r.kind not in ("request", "notification"):
        return None
    p = params(r)
    if r.method == "initialize" and "capabilities" in p:
        return _object(p["capabilities"])
    meta = _object(p.get("_meta"))
    return _object(meta[ENVELOPE_CAPABILITIES]) if ENVELOPE_CAPABILITIES in meta else None


def _allows(declared: dict[str, Any] | None, capability: str) -> bool:
    if declared is None:
        return False
    if capability == "roots.listChanged":
        return _object(declared.get("roots")).get("listChanged") is True
    return declared.get(capability) is not None


class Capabilities(Family):
    """Fails when the client used a capability it had not declared (on that connection, by the
    time of the use): answered with a result a question it cannot have been asked, or announced
    a change of roots it never said would change."""

    routes = frozenset(r for r in EVERY if r[0] == "out") | {("in", "request"), ("in", "notification")}

    def __init__(self) -> None:
        self.declared: dict[str, dict[str, Any]] = {}
        """The latest declaration of each connection."""
        self.names: set[str] = set()
        """Every capability any declaration named."""
        self.first_use: int | None = None
        self.undeclared: list[tuple[int, str]] = []
        """The uses of a capability not declared: (seq, what it did without declaring what)."""
        self.by_state: dict[Any, dict[str, Any]] = {}
        """The questions of an input_required answer, by its requestState (2026-07-28)."""
        self.by_task: dict[str, dict[str, Any]] = {}
        """The questions of a task, by its id."""

    def _use(self, r: TrafficRecord, capability: str, what: str) -> None:
        if self.first_use is None:
            self.first_use = r.seq
        if not _allows(self.declared.get(r.conn), capability):
            self.undeclared.append((r.seq, f"{what} without declaring {capability}"))

    def add(self, r: TrafficRecord) -> None:
        # Most frames carry neither member: a look at the text spares reading them.
        questions = "inputRequests" in r.raw
        if r.dir == "out":
            if questions:
                body = _object(r.result) or _object(r.params)
                asked = _object(body.get("inputRequests"))
                if asked and body.get("requestState") is not None:
                    self.by_state[hashable(body["requestState"])] = asked
                if asked and r.task:
                    self.by_task[r.task] = asked
            return
        declared = _declaration(r)
        if declared is not None:
            self.declared[r.conn] = declared
            self.names.update(declared)
        if r.kind == "request" and (questions or "inputResponses" in r.raw):
            p = params(r)
            responses = _object(p.get("inputResponses"))
            here = self.by_state.get(hashable(p.get("requestState"))) or self.by_task.get(str(p.get("taskId"))) or {}
            for key, response in responses.items():
                method = _object(here.get(key)).get("method")
                if method in ASKS and isinstance(response, dict):
                    self._use(r, ASKS[method], f"answered {method} ({key}) with a result")
        if r.kind == "notification" and r.method == LIST_CHANGED:
            self._use(r, "roots.listChanged", f"sent {LIST_CHANGED}")

    def client_answered(self, request: TrafficRecord, answer: TrafficRecord) -> None:
        if request.method in ASKS and answer.kind == "response":
            self._use(answer, ASKS[request.method], f"answered {request.method} with a result")

    def finish(self, client: ClientFold) -> list[Check]:
        if self.undeclared:
            detail = "; ".join(dict.fromkeys(why for _, why in self.undeclared))
        else:
            detail = "declared " + (", ".join(sorted(self.names)) or "nothing")
        return [
            verdict(
                "lifecycle.capabilities",
                "uses only the client capabilities it declared (sampling, elicitation, roots, roots.listChanged)",
                [seq for seq, _ in self.undeclared] or ([self.first_use] if self.first_use is not None else []),
                failed=bool(self.undeclared),
                detail=detail,
            )
        ]
