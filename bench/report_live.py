"""The live report's cost: a refresh after 100 new records on top of N (100,000 by default), and
what the live report keeps (docs/report.md, "The live report").

The records are `bench.report`'s real traffic (six clients of both eras, waves of 50 sessions).
Two measurements:

- In a fresh process, `everything_mcp.report.LiveReport` fed a record file of N records + 1,000,
  read a chunk at a time (nothing else holds the lines): the first N in updates of 1,000 lines
  (their total, and the rate), then 10 refreshes of 100 records each, timed one by one (the
  update: the lines parsed, folded, and the report's JSON text made). Wall and CPU time, and the
  process's peak RSS (`bench.report.run_measured`), which holds the interpreter (about 22 MB after
  the imports) and whatever the live report keeps.
- Through a server (`GET /_control/report`): an in-process `Server(keep_traffic=N + 1000)` holding
  N records of that traffic (`bench.lab.loaded_server`), asked for its report once (the live
  report reads all N), then after each 100 more records of a new session of the largest client
  (`claude-code`, some 350 connections), 10 times: the wall time of each GET (httpx, loopback),
  which adds the core's handing over of the new records and the HTTP exchange (on a connection
  kept open: a new httpx client per GET would add some 20 ms of its own).

    python -m bench.report_live [N]     # one round, printed as JSON
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from . import report as report_bench

EXTRA = 100
"""Records added before each refresh."""

REFRESHES = 10

LIVE_CHILD = """\
import json, sys, time
from everything_mcp.report import LiveReport
path, extra, refreshes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(path, encoding="utf-8") as f:
    total = sum(1 for _ in f)
held = extra * refreshes
live, chunk, tail = LiveReport(), [], []
t, cpu = time.perf_counter(), time.process_time()
with open(path, encoding="utf-8") as f:
    for i, line in enumerate(f):
        if i >= total - held:
            tail.append(line)
            continue
        chunk.append(line)
        if len(chunk) == 1000:
            live.update(chunk, 0)
            chunk = []
live.update(chunk, 0)
first_s, first_cpu_s = time.perf_counter() - t, time.process_time() - cpu
times, cpus = [], []
for k in range(refreshes):
    t, cpu = time.perf_counter(), time.process_time()
    text = live.update(tail[k * extra:(k + 1) * extra], 0)
    times.append((time.perf_counter() - t) * 1000)
    cpus.append((time.process_time() - cpu) * 1000)
clients = len(json.loads(text)["clients"])
print(json.dumps({"first_s": first_s, "first_cpu_s": first_cpu_s, "refresh_ms": times, "refresh_cpu_ms": cpus,
                  "records": total - held, "clients": clients}))
"""
"""`python -c LIVE_CHILD FILE EXTRA REFRESHES`: the in-process measurement, as JSON."""


def measure_in_process(path: Path, timeout: float = 600.0) -> dict[str, float]:
    """The live report in a fresh process (see the module's docstring)."""
    cmd = [sys.executable, "-c", LIVE_CHILD, str(path), str(EXTRA), str(REFRESHES)]
    run = report_bench.run_measured(cmd, timeout)
    got = json.loads(run.stdout)
    refresh = got["refresh_ms"]
    return {
        "records": got["records"],
        "first_s": got["first_s"],
        "first_cpu_s": got["first_cpu_s"],
        "first_records_per_s": got["records"] / got["first_s"],
        "refresh_ms": statistics.median(refresh),
        "refresh_max_ms": max(refresh),
        "refresh_cpu_ms": statistics.median(got["refresh_cpu_ms"]),
        "rss_mb": run.max_rss_mb,
        "clients": got["clients"],
    }


def measure_endpoint(records: int, tmp: Path) -> dict[str, float]:
    """`GET /_control/report` of a server holding `records` records (see the module's
    docstring)."""
    import httpx

    from .lab import CLIENT_NAMES, loaded_server, ping

    with loaded_server(records, tmp / "server.jsonl") as (srv, tape), httpx.Client(timeout=600) as http:
        url = f"{srv.base_url}/_control/report"

        def get_report() -> float:
            """One GET on a kept connection (a new httpx client per call costs some 20 ms of its
            own), wall ms; checked to show every client."""
            t = time.perf_counter()
            answer = http.get(url)
            ms = (time.perf_counter() - t) * 1000
            answer.raise_for_status()
            if not CLIENT_NAMES <= {c["client"]["name"] for c in answer.json()["clients"]}:
                raise RuntimeError(f"the report does not show every client: {answer.text[:200]}")
            return ms

        http.get(f"{srv.base_url}/_control/").raise_for_status()  # the connection, opened
        kept = tape.settled()
        first = get_report()
        name, version = report_bench.MEMORY_CLIENTS[0]
        client = report_bench.MemoryClient(srv, name, version, "handshake")
        hello = {"protocolVersion": report_bench.HANDSHAKE, "capabilities": {}, "clientInfo": client.info}
        client.send("initialize", hello)
        client.expect(1)
        client.send("notifications/initialized", notify=True)
        client.expect(0, "notifications/tools/list_changed")
        refreshes = []
        for _ in range(REFRESHES):
            target = tape.settled() + EXTRA
            while tape.count() < target:
                ping(client)
            tape.settled()
            refreshes.append(get_report())
        client.conn.close()
    return {
        "server_records": kept,
        "server_first_ms": first,
        "server_refresh_ms": statistics.median(refreshes),
        "server_refresh_max_ms": max(refreshes),
    }


def measure(records: int, log: Any = print) -> dict[str, float]:
    """One round of both measurements over `records` records."""
    with tempfile.TemporaryDirectory(prefix="bench-report-live-") as tmp:
        path = Path(tmp) / "records.jsonl"
        t = time.perf_counter()
        count, _ = report_bench.generate(path, records + EXTRA * REFRESHES)
        log(f"{count:,} records generated in {time.perf_counter() - t:.1f} s")
        figures = measure_in_process(path)
        log(f"in process: {figures}")
        figures |= measure_endpoint(records, Path(tmp))
        return figures


if __name__ == "__main__":
    print(json.dumps(measure(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000), indent=1))
