"""How long the server took to answer a client, per method: not a check, a measure. From the
``latency_ms`` of the server's answers (responses and errors) to the client's requests.

The median is exact without keeping every latency: the table shows them rounded to the
microsecond, and rounding keeps their order, so the median of the rounded values is the
rounded median. Each method keeps a count per distinct rounded value and where its median is,
which moves by at most one value per answer: some 60 bytes per distinct value (7,267 values,
430 KB, for the 41 methods of the six clients of ``bench.report``'s 100,000 records), which stops
growing once the latencies' range is covered, where a float per answer would keep growing
(400 KB at 100,000 records as 8-byte floats, 4 MB at a million)."""

from __future__ import annotations

import math
from bisect import bisect_left
from typing import TYPE_CHECKING, Any

from ..traffic import TrafficRecord
from .model import Check, Family

if TYPE_CHECKING:
    from .client import ClientFold


class Median:
    """The count, median (by nearest rank: the lower middle value of an even count) and maximum
    of values added one at a time, from a count per distinct value."""

    def __init__(self) -> None:
        self.values: list[float] = []
        """The distinct values, ascending."""
        self.counts: dict[float, int] = {}
        self.count = 0
        self.at = -1
        """The index in `values` of the median."""
        self.below = 0
        """How many values are below the median's."""

    def add(self, value: float) -> None:
        if value in self.counts:
            self.counts[value] += 1
        else:
            self.counts[value] = 1
            i = bisect_left(self.values, value)
            self.values.insert(i, value)
            if i <= self.at:
                self.at += 1
        self.count += 1
        if self.at < 0:
            self.at = 0
        elif value < self.values[self.at]:
            self.below += 1
        rank = math.ceil(self.count / 2)
        # The median is the value of rank `rank` (from 1): move to it, one value at a time.
        while self.below >= rank:
            self.at -= 1
            self.below -= self.counts[self.values[self.at]]
        while self.below + self.counts[self.values[self.at]] < rank:
            self.below += self.counts[self.values[self.at]]
            self.at += 1

    @property
    def median(self) -> float:
        return self.values[self.at]

    @property
    def maximum(self) -> float:
        return self.values[-1]


class Latency(Family):
    """``{method: {"count", "p50_ms", "max_ms"}}``, methods in alphabetical order. ``p50_ms`` is
    the median by nearest rank (the lower of the two middle values of an even count: a latency
    that was measured), both rounded to the microsecond."""

    routes = frozenset({("out", "response"), ("out", "error")})

    def __init__(self) -> None:
        self.by_method: dict[str, Median] = {}

    def add(self, r: TrafficRecord) -> None:
        if r.method and r.latency_ms is not None:
            median = self.by_method.get(r.method)
            if median is None:
                median = self.by_method[r.method] = Median()
            median.add(round(float(r.latency_ms), 3))

    def table(self) -> dict[str, dict[str, Any]]:
        return {
            method: {"count": m.count, "p50_ms": m.median, "max_ms": m.maximum}
            for method, m in sorted(self.by_method.items())
        }

    def finish(self, client: ClientFold) -> list[Check]:
        return []
