"""``lifecycle.capabilities``: the client capabilities it declared against those it used.

A client declares its capabilities in ``initialize`` (``params.capabilities``, the handshake) or
in every request's envelope (``_meta["io.modelcontextprotocol/clientCapabilities"]``,
2026-07-28). It uses one when it answers a server's question with a result (``sampling``,
``elicitation``, ``roots``: a server → client request, or in 2026-07-28 an ``inputResponses``
entry of a multi-round retry or of ``tasks/update``), and when it sends
``notifications/roots/list_changed`` (``roots.listChanged``)."""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

from ..traffic import TrafficRecord
from .model import Check, ClientTraffic, check

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
    params = _object(r.params)
    if r.method == "initialize" and "capabilities" in params:
        return _object(params["capabilities"])
    meta = _object(params.get("_meta"))
    return _object(meta[ENVELOPE_CAPABILITIES]) if ENVELOPE_CAPABILITIES in meta else None


def _uses(t: ClientTraffic) -> list[tuple[TrafficRecord, str, str]]:
    """Every use of a capability: (the record that shows it, the capability, what it did)."""
    uses = []
    for asked in t.frames("out", kind="request"):
        answer = t.answer_from_client(asked) if asked.method in ASKS else None
        if answer is not None and answer.kind == "response":
            uses.append((answer, ASKS[asked.method or ""], f"answered {asked.method} with a result"))
    # 2026-07-28: the questions of an input_required answer (by its requestState) or of a task
    # (by its id), answered in a later request's inputResponses.
    by_state: dict[Any, dict[str, Any]] = {}
    by_task: dict[str, dict[str, Any]] = {}
    for r in t.records:
        # Most frames carry neither member: a look at the text spares reading them.
        if "inputRequests" not in r.raw and "inputResponses" not in r.raw:
            continue
        if r.dir == "out":
            body = _object(r.result) or _object(r.params)
            questions = _object(body.get("inputRequests"))
            if questions and body.get("requestState") is not None:
                by_state[body["requestState"]] = questions
            if questions and r.task:
                by_task[r.task] = questions
            continue
        if r.kind != "request":
            continue
        params = _object(r.params)
        responses = _object(params.get("inputResponses"))
        asked_here = by_state.get(params.get("requestState")) or by_task.get(str(params.get("taskId"))) or {}
        for key, response in responses.items():
            method = _object(asked_here.get(key)).get("method")
            if method in ASKS and isinstance(response, dict):
                uses.append((r, ASKS[method], f"answered {method} ({key}) with a result"))
    for note in t.frames("in", LIST_CHANGED, "notification"):
        uses.append((note, "roots.listChanged", f"sent {LIST_CHANGED}"))
    return sorted(uses, key=lambda u: u[0].seq)


def _allows(declared: dict[str, Any], capability: str) -> bool:
    if capability == "roots.listChanged":
        return _object(declared.get("roots")).get("listChanged") is True
    return declared.get(capability) is not None


def capabilities(t: ClientTraffic) -> list[Check]:
    """Fails when the client used a capability it had not declared (on that connection, by the
    time of the use): answered with a result a question it cannot have been asked, or announced
    a change of roots it never said would change."""
    by_conn: dict[str, tuple[list[int], list[dict[str, Any]]]] = {}
    """Per connection, the `seq` of its declarations and what they declared, in wire order."""
    for r in t.records:
        if (declared := _declaration(r)) is not None:
            seqs, caps = by_conn.setdefault(r.conn, ([], []))
            seqs.append(r.seq)
            caps.append(declared)
    uses = _uses(t)
    undeclared = []
    for record, capability, what in uses:
        seqs, caps = by_conn.get(record.conn, ([], []))
        latest = bisect_right(seqs, record.seq) - 1
        if latest < 0 or not _allows(caps[latest], capability):
            undeclared.append((record, f"{what} without declaring {capability}"))
    names = sorted({name for _, caps in by_conn.values() for declared in caps for name in declared})
    if undeclared:
        detail = "; ".join(dict.fromkeys(why for _, why in undeclared))
    else:
        detail = "declared " + (", ".join(names) or "nothing")
    return [
        check(
            "lifecycle.capabilities",
            "uses only the client capabilities it declared (sampling, elicitation, roots, roots.listChanged)",
            [r for r, _ in undeclared] or [r for r, _, _ in uses[:1]],
            failed=bool(undeclared),
            detail=detail,
        )
    ]
