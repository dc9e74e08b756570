"""Pagination: a client follows ``nextCursor`` to the last page of every list it started, and
stops at a page that repeats its cursor instead of looping."""

from __future__ import annotations

from bisect import bisect_right

from ..traffic import TrafficRecord
from .model import Check, ClientTraffic, check


def _cursor(r: TrafficRecord) -> object:
    return (r.params or {}).get("cursor")


def _next(answer: TrafficRecord | None) -> object:
    """A page's `nextCursor` (None for an error, a missing answer, or an empty cursor: the end)."""
    result = answer.result if answer is not None else None
    return (result.get("nextCursor") or None) if isinstance(result, dict) else None


def _first_after(seqs: list[int], seq: int) -> int | None:
    """The first of `seqs` (ascending) after `seq`."""
    i = bisect_right(seqs, seq)
    return seqs[i] if i < len(seqs) else None


def pagination(t: ClientTraffic) -> list[Check]:
    """`pagination.followed`: every page with a `nextCursor` (other than its own cursor,
    repeated) was followed by a request for that cursor, so each list went on to a page
    without one (or to an error, or to a repeated cursor, which `pagination.stops_at_repeat`
    judges). `pagination.stops_at_repeat`: no page whose `nextCursor` repeated its request's
    cursor was asked for again."""
    requests = [r for r in t.requests() if r.method and r.method.endswith("/list")]
    by_cursor: dict[tuple[str | None, object], list[int]] = {}
    """The `seq` of the requests for each (method, cursor), ascending."""
    page_of: dict[tuple[str | None, object], int] = {}
    """The page number a cursor leads to, per list method (learnt from the answers in order)."""
    pages: list[tuple[TrafficRecord, TrafficRecord, int]] = []
    """Every page with a `nextCursor`: its request, its answer and its number."""
    reached: dict[str, int] = {}
    """The furthest page of each method."""
    for r in requests:
        number = page_of.get((r.method, _cursor(r)), 1) if _cursor(r) is not None else 1
        by_cursor.setdefault((r.method, _cursor(r)), []).append(r.seq)
        reached[r.method or ""] = max(reached.get(r.method or "", 0), number)
        answer = t.answered(r)
        cursor = _next(answer)
        if answer is not None and cursor is not None:
            pages.append((r, answer, number))
            page_of.setdefault((r.method, cursor), number + 1)
    repeated = [r for r, a, _ in pages if _cursor(r) == _next(a)]
    moving = [(r, a, n) for r, a, n in pages if _cursor(r) != _next(a)]
    followed = []
    stopped = []
    for r, a, n in moving:
        after = _first_after(by_cursor.get((r.method, _next(a)), []), a.seq)
        if after is not None:
            followed.append(after)
        else:
            stopped.append((a, f"{r.method} stopped after page {n}"))
    looped = [
        seq for r in repeated if (seq := _first_after(by_cursor.get((r.method, _cursor(r)), []), r.seq)) is not None
    ]
    by_seq = {r.seq: r for r in requests}
    return [
        check(
            "pagination.followed",
            "follows nextCursor to the last page of every list",
            [a for a, _ in stopped] or [by_seq[s] for s in followed[:1]],
            failed=bool(stopped),
            detail="; ".join(why for _, why in stopped)
            or "; ".join(f"{m} to page {reached[m]}" for m in sorted({r.method or "" for r, _, _ in moving})),
        ),
        check(
            "pagination.stops_at_repeat",
            "stops at a cursor that repeats instead of looping",
            ([by_seq[s] for s in looped[:1]] or repeated[:1]) if repeated else None,
            failed=bool(looped),
        ),
    ]
