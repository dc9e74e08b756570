"""`subscriptions/listen` at scale: many listen streams open on one server, what each costs in
resident memory, and how long one `notifications/tools/list_changed` takes to reach them all.

The streams are opened over one stdio pipe of the CLI (`python -m everything_mcp stdio --catalog
conformance`): a listen stream is the same core object on every transport, and one pipe measures
the server's own cost per stream without 10,000 TCP connections of a load generator's. The change
is triggered by the conformance fixture `test_trigger_tool_change`, called on the same pipe; the
time runs from writing that call to reading the last tagged notification. Only our server has
the stateless era among the contenders, so there are no peer figures.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from .pipe import read_until, rss_kb, serving

ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
"""The 2026-07-28 envelope every request of the benchmark carries."""


def _request(id_: int | str, method: str, params: dict[str, Any]) -> bytes:
    frame = {"jsonrpc": "2.0", "id": id_, "method": method, "params": {**params, "_meta": ENVELOPE}}
    return (json.dumps(frame) + "\n").encode()


def measure(streams: int, timeout: float = 300.0) -> dict[str, float]:
    """Opens `streams` listen streams; returns KB of resident memory per stream and the ms for one
    `list_changed` to reach them all."""
    deadline = time.monotonic() + timeout
    # The default bound (1,024 open streams) is below the benchmark's 10,000: raised to fit.
    with serving("--catalog", "conformance", "--max-listen-streams", str(max(streams, 1024))) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        # One answered request first, so the baseline is a server that has served the era.
        proc.stdin.write(_request(0, "server/discover", {}))
        proc.stdin.flush()
        discovered = json.loads(proc.stdout.readline() or "{}")
        if "result" not in discovered:
            raise RuntimeError(f"server/discover was not answered with a result: {discovered}")
        before = rss_kb(proc.pid)
        filter_ = {"notifications": {"toolsListChanged": True}}
        proc.stdin.write(b"".join(_request(f"listen-{i}", "subscriptions/listen", filter_) for i in range(streams)))
        proc.stdin.flush()
        read_until(
            proc.stdout,
            streams,
            lambda f: f.get("method") == "notifications/subscriptions/acknowledged",
            "notifications/subscriptions/acknowledged",
            deadline,
        )
        after = rss_kb(proc.pid)
        t = time.perf_counter()
        proc.stdin.write(_request(1, "tools/call", {"name": "test_trigger_tool_change", "arguments": {}}))
        proc.stdin.flush()
        read_until(
            proc.stdout,
            streams,
            lambda f: f.get("method") == "notifications/tools/list_changed",
            "notifications/tools/list_changed",
            deadline,
        )
        fanout_ms = (time.perf_counter() - t) * 1000
        return {"kb_per_stream": (after - before) / streams, "fanout_ms": fanout_ms}


if __name__ == "__main__":
    print(measure(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000))
