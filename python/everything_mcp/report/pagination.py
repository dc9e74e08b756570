"""Pagination: a client follows ``nextCursor`` to the last page of every list it started, and
stops at a page that repeats its cursor instead of looping.

Folded as the pages come: a page with a ``nextCursor`` waits for a request of that cursor after
it (those that never get one are where the client stopped), and a page that repeats its own
cursor waits for a request of it after its own request (a loop)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..traffic import TrafficRecord
from .model import Check, Family, hashable, params, result, verdict

if TYPE_CHECKING:
    from .client import ClientFold

Page = tuple[int, int, int, str]
"""A page with a `nextCursor`: (its request's seq, its answer's seq, its number, its method)."""


def _cursor(r: TrafficRecord) -> Any:
    return hashable(params(r).get("cursor"))


def _next(answer: TrafficRecord) -> Any:
    """A page's `nextCursor` (None for an error or an empty cursor: the end)."""
    return hashable(result(answer).get("nextCursor") or None)


class Pagination(Family):
    """`pagination.followed`: every page with a `nextCursor` (other than its own cursor,
    repeated) was followed by a request for that cursor, so each list went on to a page
    without one (or to an error, or to a repeated cursor, which `pagination.stops_at_repeat`
    judges). `pagination.stops_at_repeat`: no page whose `nextCursor` repeated its request's
    cursor was asked for again."""

    routes = frozenset({("in", "request")})

    def __init__(self) -> None:
        self.page_of: dict[tuple[str, Any], int] = {}
        """The page number a cursor leads to, per list method (learnt from the answers)."""
        self.numbers: dict[int, int] = {}
        """The page number of each list request not answered yet, by seq."""
        self.reached: dict[str, int] = {}
        """The furthest page of each method."""
        self.waiting: dict[tuple[str, Any], list[Page]] = {}
        """The pages whose `nextCursor` was not asked for yet (after them), by (method, cursor)."""
        self.followed: tuple[int, int] | None = None
        """The first page followed (by its request's seq) and the request that followed it."""
        self.moving: set[str] = set()
        """The methods with a page that led to another cursor."""
        self.repeated: int | None = None
        """The first page (by its request's seq) whose `nextCursor` repeated its own cursor."""
        self.repeats: dict[tuple[str, Any], list[int]] = {}
        """Those pages not asked for again yet: their requests' seqs, by (method, cursor)."""
        self.looped: tuple[int, int] | None = None
        """The first repeated page asked for again (by its request's seq), and that request."""
        self.since: dict[int, int] = {}
        """For each list request not answered yet, the first later request of its cursor."""
        self.open: dict[tuple[str, Any], list[int]] = {}
        """The list requests not answered yet, by (method, cursor)."""

    def add(self, r: TrafficRecord) -> None:
        method = r.method
        if not method or not method.endswith("/list"):
            return
        cursor = _cursor(r)
        key = (method, cursor)
        number = self.page_of.get(key, 1) if cursor is not None else 1
        self.numbers[r.seq] = number
        self.reached[method] = max(self.reached.get(method, 0), number)
        for page in self.waiting.pop(key, ()):
            if self.followed is None or page[0] < self.followed[0]:
                self.followed = (page[0], r.seq)
        for seq in self.repeats.pop(key, ()):
            if self.looped is None or seq < self.looped[0]:
                self.looped = (seq, r.seq)
        for seq in self.open.get(key, ()):
            self.since.setdefault(seq, r.seq)
        self.open.setdefault(key, []).append(r.seq)

    def answered(self, request: TrafficRecord, answer: TrafficRecord) -> None:
        method = request.method
        if not method or not method.endswith("/list"):
            return
        cursor = _cursor(request)
        key = (method, cursor)
        number = self.numbers.pop(request.seq, 1)
        later = self.since.pop(request.seq, None)
        waiting = self.open.get(key)
        if waiting is not None:
            waiting.remove(request.seq)
            if not waiting:
                del self.open[key]
        following = _next(answer)
        if following is None:
            return
        self.page_of.setdefault((method, following), number + 1)
        if following == cursor:
            if self.repeated is None or request.seq < self.repeated:
                self.repeated = request.seq
            if later is not None:
                if self.looped is None or request.seq < self.looped[0]:
                    self.looped = (request.seq, later)
            else:
                self.repeats.setdefault(key, []).append(request.seq)
        else:
            self.moving.add(method)
            self.waiting.setdefault((method, following), []).append((request.seq, answer.seq, number, method))

    def finish(self, client: ClientFold) -> list[Check]:
        stopped = sorted(page for pages in self.waiting.values() for page in pages)
        return [
            verdict(
                "pagination.followed",
                "follows nextCursor to the last page of every list",
                [answer for _, answer, _, _ in stopped] or ([self.followed[1]] if self.followed else []),
                failed=bool(stopped),
                detail="; ".join(f"{method} stopped after page {n}" for _, _, n, method in stopped)
                or "; ".join(f"{m} to page {self.reached[m]}" for m in sorted(self.moving)),
            ),
            verdict(
                "pagination.stops_at_repeat",
                "stops at a cursor that repeats instead of looping",
                None if self.repeated is None else [self.looped[1] if self.looped is not None else self.repeated],
                failed=self.looped is not None,
            ),
        ]
