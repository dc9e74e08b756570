"""The report over many records: how long `everything_mcp.report` takes on a large record file,
and how much memory it needs.

The record file is real traffic: an in-process `Server(record=FILE)` (the default `everything`
catalog plus one resource, `bench://status`, whose text changes with every update) is driven by
raw clients until the file holds N records (100,000 by default). Most clients are in-process
connections (`srv.connect()`, transport `memory`): handshake-era sessions that `initialize`,
send `notifications/initialized`, re-list the tools after the `tools/list_changed` that follows,
list and read the resources, subscribe to `bench://status`, ping, call `echo` (5-40 times, one
call with a progress token) and `get-sum`, cancel an answered request, receive
`notifications/resources/updated`, read again and unsubscribe. One session in five is a
2026-07-28 client doing the same with the envelope (`server/discover` first, no ping, and a
`subscriptions/listen` stream instead of `resources/subscribe`); one in ten is a handshake-era
session over Streamable HTTP (httpx) that lists, reads, calls and ends with `DELETE`, without
subscribing. Sessions run in waves of 50 that share one update. Six client names make six
report columns of a few hundred connections each, as a long run against several agents would.

Then, each round, in fresh processes (resident memory is a process's own):

- `everything_mcp.report.of_files([FILE])`, timed (wall and CPU) inside the process after its
  imports; its peak RSS, and the peak after the imports alone (the import's share);
- `python -m everything_mcp report FILE --json`, timed from spawn to exit (interpreter start,
  imports, the report and its JSON on stdout), wall and CPU, and its peak RSS.

Peak RSS is the child's own `ru_maxrss` from `os.wait4`, taken by a bare launcher process (see
`LAUNCHER`): `getrusage(RUSAGE_CHILDREN)` here would be the maximum over every child waited for,
and any child's figure includes the process it was forked from. CPU time is given beside wall
time because it is steadier on a shared machine. The CLI's JSON is checked (its client columns
are the ones generated, each at the subscription level its traffic reaches), so a fast wrong
report is not a figure.

There is no peer: no other MCP server computes a client report from traffic, so the figures are
absolute (seconds, MB) and records per second.

    python -m bench.report [N]          # one round, printed as JSON
    python -m bench.run --only report   # in the benchmarks' tables (--smoke: 1,000 records)

The live report's refresh (100 new records on top of N) is `bench.report_live`'s.
"""

from __future__ import annotations

import json
import math
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HANDSHAKE = "2025-11-25"
STATELESS = "2026-07-28"
STATUS_URI = "bench://status"
"""The resource every subscribing client reads, subscribes to and reads again after its update."""

WAVE = 50
"""Sessions open at once; each wave shares one `notifications/resources/updated`."""

WAIT = 30.0
"""Seconds any one answer may take while generating."""

MEMORY_CLIENTS = (("claude-code", "2.0.14"), ("codex-mcp-client", "0.46.0"), ("gemini-cli-mcp-client", "0.9.0"))
"""Handshake-era clients on in-process connections."""
STATELESS_CLIENTS = (("opencode", "0.15.3"), ("goose", "1.9.1"))
"""2026-07-28 clients on in-process connections."""
HTTP_CLIENT = ("copilot-cli", "0.0.339")
"""The handshake-era client over Streamable HTTP."""

API_CHILD = """\
import json, sys, time
from everything_mcp.report import of_files
hwm = [line for line in open("/proc/self/status") if line.startswith("VmHWM:")]
t, cpu = time.perf_counter(), time.process_time()
report = of_files([sys.argv[1]])
seconds, cpu_s = time.perf_counter() - t, time.process_time() - cpu
imported_kb = int(hwm[0].split()[1])
print(json.dumps({"seconds": seconds, "cpu_s": cpu_s, "imported_kb": imported_kb, "clients": len(report.clients)}))
"""
"""The `of_files` measurement, run as `python -c API_CHILD FILE`: wall and CPU seconds, and the
peak RSS after the imports (`VmHWM`: this process's own, from its exec on)."""

LAUNCHER = """\
import json, os, sys, time
t = time.perf_counter()
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - t
with open(sys.argv[1], "w") as f:
    cpu_s = usage.ru_utime + usage.ru_stime
    exit = os.waitstatus_to_exitcode(status)
    json.dump({"seconds": seconds, "cpu_s": cpu_s, "max_rss_kb": usage.ru_maxrss, "exit": exit}, f)
"""
"""`python -S -c LAUNCHER RESULT CMD...`: runs CMD and writes its wall time, CPU time, peak RSS and
exit status to RESULT. A child's `ru_maxrss` counts the memory of the process it was forked from up
to its exec (Linux keeps the larger), so measured from this process (the server's generator and
everything imported) every child would read at least our own RSS; the launcher is a bare
interpreter of about 10 MB, well below what it measures."""


# --------------------------------------------------------------------------------------------------
# The record file


@dataclass(frozen=True)
class Expected:
    """What the report of the generated file must show: per client column (name, era,
    transport), the subscription level its traffic reaches."""

    levels: dict[tuple[str, str, str], int | None] = field(default_factory=dict)
    """None: any level."""


class MemoryClient:
    """One client on an in-process connection, in either era: frames written raw, answers read
    until what a step waits for has arrived."""

    def __init__(self, srv: Any, name: str, version: str, era: str) -> None:
        self.conn = srv.connect()
        self.info = {"name": name, "version": version}
        self.stateless = era == "stateless"
        self.next_id = 0

    def send(self, method: str, params: dict[str, Any] | None = None, *, notify: bool = False) -> int:
        """Sends a request (or, with `notify`, a notification); returns its id."""
        params = dict(params or {})
        if self.stateless:
            meta = params.setdefault("_meta", {})
            meta["io.modelcontextprotocol/protocolVersion"] = STATELESS
            meta["io.modelcontextprotocol/clientCapabilities"] = {}
            meta["io.modelcontextprotocol/clientInfo"] = self.info
        frame: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params:
            frame["params"] = params
        if not notify:
            self.next_id += 1
            frame["id"] = self.next_id
        self.conn.send(json.dumps(frame))
        return self.next_id

    def expect(self, answers: int, notification: str | None = None) -> list[dict[str, Any]]:
        """Reads until `answers` answers (results) and, if given, one `notification` have arrived;
        returns the answers. An error answer fails the run."""
        got: list[dict[str, Any]] = []
        seen = notification is None
        while len(got) < answers or not seen:
            line = self.conn.recv(WAIT)
            if line is None:
                raise TimeoutError(f"{self.info['name']}: {len(got)} of {answers} answers, {notification} seen: {seen}")
            frame = json.loads(line)
            if "error" in frame:
                raise RuntimeError(f"{self.info['name']}: error answer {frame}")
            if "result" in frame:
                got.append(frame)
            elif frame.get("method") == notification:
                seen = True
        return got

    def start(self, rng: random.Random) -> None:
        """Everything up to waiting for the update: handshake (or discovery), lists, a read, the
        subscription, a ping (handshake), the tool calls, a cancellation of an answered request."""
        if self.stateless:
            self.send("server/discover")
            self.expect(1)
        else:
            hello = {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": self.info}
            self.send("initialize", hello)
            self.expect(1)
            self.send("notifications/initialized", notify=True)
            self.expect(0, "notifications/tools/list_changed")  # the catalog's research task appears
        self.send("tools/list")
        self.send("resources/list")
        self.send("resources/read", {"uri": STATUS_URI})
        if self.stateless:
            listen = {"notifications": {"resourceSubscriptions": [STATUS_URI]}}
            self.send("subscriptions/listen", listen)
            self.expect(3, "notifications/subscriptions/acknowledged")
        else:
            self.send("resources/subscribe", {"uri": STATUS_URI})
            self.expect(4)
        if not self.stateless:
            self.send("ping")  # the 2026-07-28 era has no ping
        calls = rng.randint(5, 40)
        for i in range(calls):
            params: dict[str, Any] = {"name": "echo", "arguments": {"message": f"call {i} of {calls}"}}
            if i == 0:
                params["_meta"] = {"progressToken": f"p-{self.next_id + 1}"}
            self.send("tools/call", params)
        last = self.send("tools/call", {"name": "get-sum", "arguments": {"a": rng.randint(0, 99), "b": 7}})
        self.expect(calls + 1 + (not self.stateless))
        self.send("notifications/cancelled", {"requestId": last, "reason": "answered already"}, notify=True)

    def finish(self) -> None:
        """After the update: wait for it, read again, unsubscribe (handshake), close."""
        self.expect(0, "notifications/resources/updated")
        self.send("resources/read", {"uri": STATUS_URI})
        if self.stateless:
            self.expect(1)
        else:
            self.send("resources/unsubscribe", {"uri": STATUS_URI})
            self.expect(2)
        self.conn.close()


def http_session(client: Any, url: str, rng: random.Random) -> None:
    """One handshake-era session over Streamable HTTP with an httpx client: no subscription, and
    `DELETE` at the end."""
    accept = {"Accept": "application/json, text/event-stream"}

    def post(frame: dict[str, Any], headers: dict[str, str]) -> Any:
        r = client.post(url, json=frame, headers={**accept, **headers})
        r.raise_for_status()
        if "id" not in frame:
            return None
        body = r.text
        if r.headers.get("content-type", "").startswith("text/event-stream"):
            answers = [
                json.loads(line[5:]) for line in body.splitlines() if line.startswith("data:") and line[5:].strip()
            ]
            answer = next(a for a in answers if a.get("id") == frame["id"])
        else:
            answer = json.loads(body)
        if "result" not in answer:
            raise RuntimeError(f"http: error answer {answer}")
        return r

    name, version = HTTP_CLIENT
    hello = {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": name, "version": version}}
    r = post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}, {})
    session = {"Mcp-Session-Id": r.headers["mcp-session-id"], "MCP-Protocol-Version": HANDSHAKE}
    post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    requests: list[tuple[str, dict[str, Any]]] = [("tools/list", {}), ("resources/list", {})]
    requests.append(("resources/read", {"uri": STATUS_URI}))
    calls = rng.randint(5, 20)
    requests += [("tools/call", {"name": "echo", "arguments": {"message": f"http call {i}"}}) for i in range(calls)]
    for i, (method, params) in enumerate(requests, start=1):
        post({"jsonrpc": "2.0", "id": i, "method": method, "params": params}, session)
    client.delete(url, headers=session).raise_for_status()


def count_lines(f: Any) -> int:
    """Newlines in what `f` (a binary file open for reading) holds past where it was."""
    n = 0
    while chunk := f.read(1 << 20):
        n += chunk.count(b"\n")
    return n


def generate(path: Path, records: int, seed: int = 21) -> tuple[int, Expected]:
    """Writes at least `records` records of real traffic to `path` (the last wave is cut to what
    is missing, so it overshoots by about a session); returns how many, and what the report of
    them must show."""
    import httpx

    from everything_mcp import Server

    rng = random.Random(seed)
    expected = Expected()
    path.unlink(missing_ok=True)
    status = {"version": 0}
    with Server(record=str(path)) as srv:

        @srv.resource(STATUS_URI, name="status", description="Changes with every update.")
        def bench_status() -> str:
            return f"status version {status['version']}"

        url = srv.start_http()
        written = sessions = 0
        of_era = {"handshake": 0, "stateless": 0}
        path.touch()
        with open(path, "rb") as tail, httpx.Client(timeout=WAIT) as http:
            while written < records:
                per_session = written / sessions if sessions else 70
                wave: list[MemoryClient] = []
                for _ in range(max(1, min(WAVE, math.ceil((records - written) / per_session)))):
                    sessions += 1
                    if sessions % 10 == 0:
                        http_session(http, url, rng)
                        expected.levels[(HTTP_CLIENT[0], "handshake", "http")] = 3
                        continue
                    era = "stateless" if sessions % 5 == 0 else "handshake"
                    names = STATELESS_CLIENTS if era == "stateless" else MEMORY_CLIENTS
                    name, version = names[of_era[era] % len(names)]
                    of_era[era] += 1
                    client = MemoryClient(srv, name, version, era)
                    client.start(rng)
                    wave.append(client)
                    # A 2026-07-28 client subscribes with a listen stream, which the report's
                    # ladder does not count as level 4 yet (it looks for `resourceSubscriptions`
                    # in the listen request's params, not in their `notifications`): not pinned.
                    expected.levels[(name, era, "memory")] = 7 if era == "handshake" else None
                status["version"] += 1
                reached = srv.notify_resource_updated(STATUS_URI)
                if reached != len(wave):
                    raise RuntimeError(f"the update reached {reached} subscribers, not {len(wave)}")
                for client in wave:
                    client.finish()
                written += count_lines(tail)
    with open(path, "rb") as f:
        return count_lines(f), expected


# --------------------------------------------------------------------------------------------------
# The measurements


@dataclass(frozen=True)
class Run:
    seconds: float
    """Wall time, spawn to exit (the interpreter's start included)."""
    cpu_s: float
    """User + system CPU seconds: steadier than wall time on a busy machine."""
    max_rss_mb: float
    """The process's own peak resident set."""
    stdout: bytes


def run_measured(cmd: list[str], timeout: float) -> Run:
    """Runs `cmd` (through `LAUNCHER`; its stdout to a file, so no pipe can fill): its wall time
    from spawn to exit and its own peak RSS (`os.wait4`). Raises if it fails or outlives
    `timeout`."""
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.NamedTemporaryFile("r", suffix=".json") as result,
    ):
        launcher = [sys.executable, "-S", "-c", LAUNCHER, result.name, *cmd]
        proc = subprocess.Popen(launcher, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the launcher and what it runs
            proc.wait()
            raise
        out.seek(0)
        err.seek(0)
        got = json.loads(result.read() or "{}")
        if proc.returncode != 0 or got.get("exit") != 0:
            tail = err.read().decode(errors="replace")[-2000:]
            raise RuntimeError(f"{' '.join(cmd[:4])} failed ({got or proc.returncode}): {tail}")
        return Run(got["seconds"], got["cpu_s"], got["max_rss_kb"] / 1024, out.read())


def check_cli(stdout: bytes, expected: Expected) -> None:
    """The CLI's JSON shows exactly the generated clients, each at its expected level."""
    got = {
        (c["client"]["name"], c["era"], c["transport"]): c["levels"]["subscription"]
        for c in json.loads(stdout)["clients"]
    }
    want = {k: got.get(k) if level is None else level for k, level in expected.levels.items()}
    if got != want:
        raise RuntimeError(f"the report shows {got}, the traffic {want}")


def measure_once(path: Path, records: int, expected: Expected, timeout: float = 600.0) -> dict[str, float]:
    """One round: the API in a fresh process, then the CLI."""
    api = run_measured([sys.executable, "-c", API_CHILD, str(path)], timeout)
    inner = json.loads(api.stdout)
    if inner["clients"] != len(expected.levels):
        raise RuntimeError(f"of_files found {inner['clients']} clients, not {len(expected.levels)}")
    cli = run_measured([sys.executable, "-m", "everything_mcp", "report", str(path), "--json"], timeout)
    check_cli(cli.stdout, expected)
    return {
        "api_s": inner["seconds"],
        "api_cpu_s": inner["cpu_s"],
        "api_records_per_s": records / inner["seconds"],
        "api_rss_mb": api.max_rss_mb,
        "api_import_rss_mb": inner["imported_kb"] / 1024,
        "cli_s": cli.seconds,
        "cli_cpu_s": cli.cpu_s,
        "cli_records_per_s": records / cli.seconds,
        "cli_rss_mb": cli.max_rss_mb,
    }


@contextmanager
def record_file(records: int) -> Iterator[tuple[Path, int, Expected, float]]:
    """A generated record file of at least `records` records in a temporary folder: (path, its
    record count, what its report must show, seconds the generation took)."""
    with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
        path = Path(tmp) / "records.jsonl"
        t = time.perf_counter()
        count, expected = generate(path, records)
        yield path, count, expected, time.perf_counter() - t


def measure(records: int, rounds: int = 1, log: Callable[[str], None] | None = None) -> list[dict[str, float]]:
    """Generates a file of `records` records, then measures `rounds` rounds; each round's
    figures, with the file's size (`records`, `file_mb`) in each."""
    with record_file(records) as (path, count, expected, generated_s):
        file_mb = path.stat().st_size / 1024 / 1024
        if log:
            log(f"{count:,} records ({file_mb:.1f} MB) generated in {generated_s:.1f} s")
        return [{"records": count, "file_mb": file_mb, **measure_once(path, count, expected)} for _ in range(rounds)]


if __name__ == "__main__":
    print(json.dumps(measure(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000, log=print), indent=1))
