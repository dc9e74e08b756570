"""What the server keeps of large traffic: the CLI's `http` as it starts by default (the lab page
on, so the newest 100,000 records kept in memory, within `--keep-traffic-bytes`, 64 MiB by
default) fed N `echo` calls of SIZE bytes each on one session, its resident memory sampled
after every call (docs/benchmarks.md, "Memory under large traffic").

Each call is a new request id; any answer that is not the echo of its message fails the run.
Printed: the server's RSS once it listens (`start_mb`), its peak and final RSS (`VmHWM`,
`VmRSS`), what `GET /_control/traffic/stats` says the memory holds and dropped, and the bound
the peak must stay under: the start, the ring's bytes, one session's replay store (16 MiB),
and `SLACK_MB` for the allocator and the frames in flight. `--before` runs the same with the
byte bound lifted (`--keep-traffic-bytes` of 1 TiB), the count-only ring the CLI had before;
`--in-process` runs an in-process `Server()` with its defaults (10,000 records, 64 MiB), as a
test suite holds it (`bench/peers/ours_in_process.py`); `--reference` runs the reference server
(`bench.side_by_side`'s pinned install), which keeps no traffic, fed alike: the ratio of the
peaks is what keeping the traffic costs.

    python -m bench.memory_bound [--calls N] [--size BYTES] [--before | --in-process | --reference]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from . import side_by_side
from .run import free_port, listening, rss_mb, stop

MIB = 1024 * 1024
STORE_MB = 16
"""One session's replay store, in MiB (`STORE_MAX_BYTES` in src/transport/http/sessions/store.rs):
the events a session keeps for `Last-Event-ID`, bounded apart from the traffic ring."""
SLACK_MB = 96
"""Allowed above the ring and the store: the allocator's retained pages and the frames in flight
(a request and its answer, each SIZE, parsed and serialized). Measured at 1 MiB frames: the
CLI peaked 61 MB above its start, ring and store, an in-process `Server` 73 MB."""
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def peak_mb(pid: int) -> float:
    """The process's peak resident memory (`VmHWM`)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for {pid}")


def answer_of(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC answer of a POST, whether sent as JSON or as one SSE event."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        frames = [json.loads(d) for d in data if d]
        return next(f for f in frames if "id" in f)
    answer: dict[str, Any] = response.json()
    return answer


def measure(calls: int, size: int, *extra: str, reference: bool = False, in_process: bool = False) -> dict[str, Any]:
    """One run: a fresh server (ours with `extra` flags, or the reference), `calls` echoes of
    `size` bytes; the figures."""
    port = free_port()
    cmd = [sys.executable, "-m", "everything_mcp", "http", "--port", str(port), *extra]
    env = None
    if in_process:
        cmd = [sys.executable, str(Path(__file__).parent / "peers" / "ours_in_process.py"), "--port", str(port), *extra]
    if reference:
        cmd, env = ["node", str(side_by_side.REF_ENTRY), "streamableHttp"], {**os.environ, "PORT": str(port)}
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        if not listening(proc, port):
            raise RuntimeError(f"the server did not listen: {proc.stderr.read().decode() if proc.stderr else ''}")
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(timeout=60) as http:
            start = rss_mb(proc.pid)
            init = {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            }
            r = http.post(
                f"{base}/mcp", json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}, headers=ACCEPT
            )
            r.raise_for_status()
            headers = {**ACCEPT, "mcp-session-id": r.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
            http.post(f"{base}/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
            highest = start
            t = time.perf_counter()
            for i in range(1, calls + 1):
                message = f"{i:08d}" + "x" * (size - 8)
                body = {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"message": message}},
                }
                answer = answer_of(http.post(f"{base}/mcp", json=body, headers=headers))
                text = (answer.get("result") or {}).get("content", [{}])[0].get("text", "")
                if answer.get("id") != i or not text.endswith(message):
                    raise RuntimeError(f"call {i}: not its echo: {json.dumps(answer)[:300]}")
                highest = max(highest, rss_mb(proc.pid))
            seconds = time.perf_counter() - t
            stats = None if reference else http.get(f"{base}/_control/traffic/stats").json()
        peak = max(highest, peak_mb(proc.pid))
        ring_mb = ((stats or {}).get("keep_traffic_bytes") or 0) / MIB
        return {
            "calls": calls,
            "size": size,
            "seconds": round(seconds, 2),
            "start_mb": round(start, 1),
            "peak_mb": round(peak, 1),
            "final_mb": round(rss_mb(proc.pid), 1),
            "bound_mb": None if reference else round(start + ring_mb + STORE_MB + SLACK_MB, 1),
            "stats": stats,
        }
    finally:
        stop(proc)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.memory_bound", description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2_000)
    parser.add_argument("--size", type=int, default=MIB)
    parser.add_argument("--before", action="store_true", help="the count-only ring: no byte bound")
    parser.add_argument("--in-process", action="store_true", help="an in-process Server() instead of the CLI")
    parser.add_argument("--reference", action="store_true", help="the reference server instead of ours")
    parser.add_argument("server_args", nargs="*", help="more flags for the server (after --)")
    ns = parser.parse_args(argv)
    extra = [*ns.server_args, *(["--keep-traffic-bytes", str(1 << 40)] if ns.before else [])]
    figures = measure(ns.calls, ns.size, *extra, reference=ns.reference, in_process=ns.in_process)
    print(json.dumps(figures, indent=1))
    within = ns.before or ns.reference or figures["peak_mb"] <= figures["bound_mb"]
    if not within:
        print(f"bench: peak {figures['peak_mb']} MB over the bound {figures['bound_mb']} MB", file=sys.stderr)
    stats = figures["stats"] or {}
    # Twice the bound in frames (a request and its answer each call) must have dropped some.
    overflowed = 2 * ns.calls * ns.size > (stats.get("keep_traffic_bytes") or 1 << 62)
    counted = not overflowed or stats.get("dropped", 0) > 0
    if not counted:
        print("bench: the traffic overflowed the bound and nothing was counted as dropped", file=sys.stderr)
    return 0 if within and counted else 1


if __name__ == "__main__":
    raise SystemExit(main())
