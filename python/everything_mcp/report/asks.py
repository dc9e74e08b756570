"""The server's questions (``sampling/createMessage``, ``elicitation/create``, ``roots/list``)
answered, the multi-round retry of 2026-07-28 that carries the answers and the
``requestState`` back, and a question the server cancelled left unanswered
(``cancel.honoured``)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from ..traffic import TrafficRecord
from .model import Check, Family, earlier, hashable, params, result, verdict

if TYPE_CHECKING:
    from .client import ClientFold

ASKED = {"sampling/createMessage": "sampling", "elicitation/create": "elicitation", "roots/list": "roots"}
"""The server's questions, by the name of their check."""


def _key(r: TrafficRecord, id: Any) -> tuple[str, Any]:
    return (r.conn, hashable(id))


class Asks(Family):
    """``asks.*`` and ``cancel.honoured``."""

    routes = frozenset(
        {("out", "request"), ("out", "notification"), ("out", "response"), ("in", "request")}
        | {("in", "response"), ("in", "error")}
    )

    def __init__(self) -> None:
        self.results: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self.actions: Counter[str] = Counter()
        """The `action` of the elicitation results."""
        self.first_answer: dict[str, tuple[int, int]] = {}
        """Per question: (the seq of the first question answered, of its answer)."""
        self.asked: set[tuple[str, Any]] = set()
        """The server's requests so far, by (connection, id): what a cancel can withdraw."""
        self.withdrawn: dict[tuple[str, Any], int] = {}
        """The requests the server cancelled: the seq of the first cancel, in cancel order."""
        self.late: dict[tuple[str, Any], int] = {}
        """The first answer the client sent after the cancel."""
        self.round: int | None = None
        """The first input_required answer."""
        self.states: set[Any] = set()
        """The requestState of every input_required answer."""
        self.by_state: dict[Any, int] = {}
        """The first request that carried each requestState."""
        self.retry: int | None = None
        """The first request that carried the requestState of an input_required answer."""

    def add(self, r: TrafficRecord) -> None:
        if r.dir == "out":
            if r.kind == "request":
                self.asked.add(_key(r, r.id))
            elif r.kind == "notification" and r.method == "notifications/cancelled":
                key = _key(r, params(r).get("requestId"))
                if key in self.asked and key not in self.withdrawn:
                    self.withdrawn[key] = r.seq
            elif r.kind == "response" and result(r).get("resultType") == "input_required":
                if self.round is None:
                    self.round = r.seq
                state = hashable(result(r).get("requestState"))
                self.states.add(state)
                if state in self.by_state:
                    self.retry = earlier(self.retry, self.by_state[state])
        elif r.kind == "request":
            state = hashable(params(r).get("requestState"))
            self.by_state.setdefault(state, r.seq)
            if state in self.states:
                self.retry = earlier(self.retry, r.seq)
        else:
            key = _key(r, r.id)
            if key in self.withdrawn and key not in self.late and r.seq > self.withdrawn[key]:
                self.late[key] = r.seq

    def client_answered(self, request: TrafficRecord, answer: TrafficRecord) -> None:
        method = request.method or ""
        if method not in ASKED:
            return
        if answer.kind == "response":
            self.results[method] += 1
            if method == "elicitation/create":
                self.actions[str(result(answer).get("action", "no action"))] += 1
        else:
            self.errors[method] += 1
        first = self.first_answer.get(method)
        if first is None or request.seq < first[0]:
            self.first_answer[method] = (request.seq, answer.seq)

    def _how_answered(self, method: str, unanswered: int) -> str:
        """How the client answered the server's `method` requests: for `elicitation/create` the
        actions of its results (`accept 2, decline 1`), else `result N, error M`; and how many
        it left unanswered."""
        errors = self.errors[method]
        if method == "elicitation/create":
            actions = self.actions
            order = ["accept", "decline", "cancel", *sorted(set(actions) - {"accept", "decline", "cancel"})]
            parts = [f"{k} {actions[k]}" for k in order if actions[k]] + ([f"error {errors}"] if errors else [])
        else:
            parts = [f"result {self.results[method]}", f"error {errors}"]
        return ", ".join(parts + ([f"unanswered {unanswered}"] if unanswered else []))

    def finish(self, client: ClientFold) -> list[Check]:
        # A question the server cancelled is not to be answered (cancel.honoured judges that).
        open_asks = [
            r
            for waiting in client.waiting_client.values()
            for r in waiting
            if r.method in ASKED and _key(r, r.id) not in self.withdrawn
        ]
        checks = []
        for method, name in ASKED.items():
            unanswered = sorted(r.seq for r in open_asks if r.method == method)
            first = self.first_answer.get(method)
            checks.append(
                verdict(
                    f"asks.{name}",
                    f"answers the server's {method}",
                    unanswered[:1] or ([first[1]] if first else []),
                    failed=bool(unanswered),
                    detail=self._how_answered(method, len(unanswered)),
                )
            )
        checks.append(
            verdict(
                "asks.mrtr_retried",
                "retries an input_required answer with the answers and its requestState (2026-07-28)",
                None if self.round is None else [self.retry if self.retry is not None else self.round],
                failed=self.round is not None and self.retry is None,
            )
        )
        late = [self.late[key] for key in self.withdrawn if key in self.late]
        checks.append(
            verdict(
                "cancel.honoured",
                "does not answer a request of the server's after the server cancelled it",
                late or list(self.withdrawn.values())[:1],
                failed=bool(late),
                detail=f"{len(late)} of {len(self.withdrawn)} cancelled requests answered after the cancel",
            )
        )
        return checks
