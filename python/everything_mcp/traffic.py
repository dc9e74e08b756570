"""Recorded wire traffic: one :class:`TrafficRecord` per frame in or out.

The fields are those of the JSON-lines format written by ``--record`` (see
``docs/traffic-format.md``), so a record file and ``server.traffic`` read the same way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

__all__ = ["TrafficRecord", "load_records", "parse_record"]

Direction = Literal["in", "out"]
Kind = Literal["request", "notification", "response", "error", "batch", "invalid"]


@dataclass(frozen=True, slots=True)
class TrafficRecord:
    """One frame as it crossed the wire."""

    v: int
    """Format version."""
    seq: int
    """Position in the recording, from 1, without gaps."""
    ts: str
    """Wall-clock time, RFC 3339 with microseconds, UTC."""
    t_ns: int
    """Monotonic nanoseconds since the server started."""
    dir: Direction
    """``"in"`` (client to server) or ``"out"``."""
    transport: str
    """``stdio``, ``http``, ``sse`` or ``memory``."""
    conn: str
    """Connection or session id."""
    stream: str | None
    """SSE stream id, where there is one."""
    event_id: str | None
    """The SSE event id an outgoing frame was sent under (resumable streams)."""
    http: dict[str, Any] | None
    """HTTP method, path, status and MCP headers, for HTTP frames."""
    raw: str
    """The exact frame text."""
    msg: Any
    """The parsed JSON, or None when the frame was not JSON."""
    error: str | None
    """Why the frame is invalid, if it is."""
    kind: Kind
    """What the frame was."""
    method: str | None
    """The method; for responses, the method of the request answered."""
    id: str | int | None
    """The request id, for requests and responses."""
    latency_ms: float | None
    """For responses: milliseconds since the request they answer."""

    @property
    def result(self) -> Any:
        """The ``result`` of a response (None otherwise)."""
        return self.msg.get("result") if isinstance(self.msg, dict) else None

    @property
    def params(self) -> Any:
        """The ``params`` of a request or notification (None otherwise)."""
        return self.msg.get("params") if isinstance(self.msg, dict) else None


_FIELDS = frozenset(f.name for f in fields(TrafficRecord))


def parse_record(line: str) -> TrafficRecord:
    """One JSON line of the traffic format as a :class:`TrafficRecord` (unknown fields ignored)."""
    data = json.loads(line)
    return TrafficRecord(**{k: v for k, v in data.items() if k in _FIELDS})


def load_records(path: str | Path) -> list[TrafficRecord]:
    """Every record of a ``--record`` file, in order."""
    with open(path, encoding="utf-8") as f:
        return [parse_record(line) for line in f if line.strip()]
