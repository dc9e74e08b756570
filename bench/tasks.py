"""Tasks at scale: many tasks created and expired on one server, and what they cost in resident
memory. A task is kept for its TTL after it settles and then dropped; this checks that a server
which has created and forgotten 10,000 tasks holds no more than one that has created them once.

The tasks are created over one stdio pipe of the CLI (`python -m everything_mcp stdio --catalog
conformance --task-ttl 1`) by a 2026-07-28 client that declares the tasks extension: every
`tools/call` of the conformance fixture `slow_compute` (`seconds: 0`) is answered with a task
handle (any other answer fails the run), and the task settles at once. Round 1 creates N tasks
(all live: within their TTL), the TTL passes, round 2 creates N more (the first N have expired
and are swept). Resident memory is read after each round; only our server has tasks among the
contenders, so there are no peer figures.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from .pipe import read_until, rss_kb, serving

TTL_SECONDS = 1.0
"""The task TTL the server is started with (`--task-ttl`): short, so round 2 sees round 1 expired."""

ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
}
"""The 2026-07-28 envelope of every request: a client that takes tasks."""


def _calls(first_id: int, count: int) -> bytes:
    params = {"name": "slow_compute", "arguments": {"seconds": 0}, "_meta": ENVELOPE}
    return b"".join(
        (json.dumps({"jsonrpc": "2.0", "id": first_id + i, "method": "tools/call", "params": params}) + "\n").encode()
        for i in range(count)
    )


def _read_handles(out: Any, count: int, deadline: float) -> None:
    """Reads `count` answers; each must be a task handle (`resultType: "task"`)."""
    read_until(out, count, lambda f: f.get("result", {}).get("resultType") == "task", "task handles", deadline)


def measure(tasks: int, timeout: float = 300.0) -> dict[str, float]:
    """Creates `tasks` tasks, lets them expire, creates `tasks` more; returns KB per live task and
    the resident memory after each round (MB)."""
    deadline = time.monotonic() + timeout
    with serving("--catalog", "conformance", "--task-ttl", str(TTL_SECONDS)) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        # A few tasks first, so the baseline is a server that has served the code paths.
        proc.stdin.write(_calls(0, 100))
        proc.stdin.flush()
        _read_handles(proc.stdout, 100, deadline)
        time.sleep(TTL_SECONDS * 1.5)  # a bench, not a test: the TTL must pass
        before = rss_kb(proc.pid)
        proc.stdin.write(_calls(1_000, tasks))
        proc.stdin.flush()
        _read_handles(proc.stdout, tasks, deadline)
        # Each round is read at the same point: its tasks settled and past their TTL, not yet
        # swept (the next request sweeps them). Read at once after the handles, a round caught
        # its tasks still settling, and the two readings moved by 10-15% between runs of one build.
        time.sleep(TTL_SECONDS * 1.5)
        first = rss_kb(proc.pid)
        proc.stdin.write(_calls(1_000 + tasks, tasks))
        proc.stdin.flush()
        _read_handles(proc.stdout, tasks, deadline)
        time.sleep(TTL_SECONDS * 1.5)
        second = rss_kb(proc.pid)
        return {
            "kb_per_task": (first - before) / tasks,
            "rss_first_mb": first / 1024,
            "rss_second_mb": second / 1024,
        }


if __name__ == "__main__":
    print(measure(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000))
