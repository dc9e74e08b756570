"""How long the server took to answer a client, per method: not a check, a measure. From the
``latency_ms`` of the server's answers (responses and errors) to the client's requests."""

from __future__ import annotations

import math
from typing import Any

from .model import ClientTraffic


def latency(t: ClientTraffic) -> dict[str, dict[str, Any]]:
    """``{method: {"count", "p50_ms", "max_ms"}}``, methods in alphabetical order. ``p50_ms`` is
    the median by nearest rank (the lower of the two middle values of an even count: a latency
    that was measured), both rounded to the microsecond."""
    by_method: dict[str, list[float]] = {}
    for r in t.records:
        if r.dir == "out" and r.kind in ("response", "error") and r.method and r.latency_ms is not None:
            by_method.setdefault(r.method, []).append(float(r.latency_ms))
    out: dict[str, dict[str, Any]] = {}
    for method in sorted(by_method):
        values = sorted(by_method[method])
        out[method] = {
            "count": len(values),
            "p50_ms": round(values[math.ceil(len(values) / 2) - 1], 3),
            "max_ms": round(values[-1], 3),
        }
    return out
